// Starts one Postgres for the whole run (DATABASE_URL when set, else an embedded one) and a migrated template database
// that every test file clones. What a run leaves on disk is removed: its data directory at the end, and at the start
// those of earlier runs that were killed (their owner process is gone).
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { alive } from '../../src/db/process-locks.js';
import { openDatabase } from '../../src/db/orm.js';
import { createLogger } from '../../src/lib/logger.js';
import { build } from '../../scripts/build.mjs';
import { TEMPLATE, removeDataDirectory, withDatabase } from './template-database.js';
import { needsBrowser, provideChromium, type ChromiumOutcome } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    /** The Chromium the console tests drive, or why there is none (test/helpers/chromium.ts). */
    chromium: ChromiumOutcome | null;
  }
}

/** Options of `vitest run` that take a value: what follows them is not a file filter. */
const VALUE_OPTIONS = new Set(['-t', '--testNamePattern', '-c', '--config', '-r', '--root', '--dir', '--project', '--reporter', '--shard', '--maxWorkers', '--outputFile', '--pool']);

/** The file filters of this run's command line (`vitest run test/a.test.ts b`), none for the whole suite. */
function fileFilters(argv: string[]): string[] {
  const filters: string[] = [];
  const args = argv.slice(2);
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (VALUE_OPTIONS.has(arg)) index++;
    else if (!arg.startsWith('-') && !['run', 'watch', 'related', 'dev'].includes(arg)) filters.push(arg);
  }
  return filters;
}

/** Chromium, found or installed once before any file runs, when one of the run's files drives a browser. */
async function chromiumForRun(project: TestProject): Promise<ChromiumOutcome | null> {
  const filters = fileFilters(process.argv);
  let { testFiles } = await project.globTestFiles(filters);
  if (testFiles.length === 0) ({ testFiles } = await project.globTestFiles());
  return needsBrowser(testFiles) ? provideChromium() : null;
}

let embedded: EmbeddedDatabase | undefined;
let dataDir: string | undefined;
const PREFIX = 'herald-test-run-';
const OWNER = 'owner.pid';

/** Data directories of earlier runs whose test runner is gone (killed, or a time-out): gigabytes each, kept forever. */
function removeAbandonedRuns(): void {
  for (const name of fs.readdirSync(os.tmpdir()).filter((entry) => entry.startsWith(PREFIX))) {
    const directory = path.join(os.tmpdir(), name);
    try {
      const ownerFile = path.join(directory, OWNER);
      if (fs.existsSync(ownerFile)) {
        const owner = Number(fs.readFileSync(ownerFile, 'utf8'));
        if (!(Number.isInteger(owner) && owner > 0 && alive(owner))) removeDataDirectory(directory);
      } else if (Date.now() - fs.statSync(directory).mtimeMs > 600_000) {
        // No owner yet: another run is making it, unless it is older than ten minutes.
        removeDataDirectory(directory);
      }
    } catch {
      // Removed meanwhile by another run, or not ours to remove: left alone.
    }
  }
}

export async function setup(project: TestProject): Promise<void> {
  // The process tests start Herald as `npm start` does, from dist/: compiled once here rather than by each start.
  const chromium = chromiumForRun(project);
  await build();
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    removeAbandonedRuns();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), PREFIX));
    fs.writeFileSync(path.join(dataDir, OWNER), String(process.pid));
    fs.chmodSync(dataDir, 0o755);
    const port = 20000 + Math.floor(Math.random() * 20000);
    embedded = await startEmbeddedPostgres({ dataDir, port, logger: createLogger('warn') });
    adminUrl = embedded.adminUrl;
    // Every clone of the template is written to the WAL (CREATE DATABASE's WAL_LOG strategy): checkpoints every 64 MB
    // keep it from growing to the default 1 GB.
    const settings = new pg.Client({ connectionString: adminUrl });
    await settings.connect();
    await settings.query("alter system set min_wal_size = '32MB'");
    await settings.query("alter system set max_wal_size = '64MB'");
    await settings.query('select pg_reload_conf()');
    await settings.end();
  }
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`drop database if exists ${TEMPLATE}`);
  await client.query(`create database ${TEMPLATE}`);
  await client.end();
  const orm = await openDatabase(withDatabase(adminUrl, TEMPLATE), { migrate: true });
  await orm.close();
  project.provide('adminUrl', adminUrl);
  project.provide('chromium', await chromium);
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  if (dataDir) removeDataDirectory(dataDir);
}
