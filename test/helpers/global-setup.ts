// Starts one Postgres for the whole run (DATABASE_URL when set, else an embedded one) and a migrated template database
// that every test file clones.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { openDatabase } from '../../src/db/orm.js';
import { createLogger } from '../../src/lib/logger.js';
import { build } from '../../scripts/build.mjs';
import { TEMPLATE, withDatabase } from './template-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
  }
}

let embedded: EmbeddedDatabase | undefined;

export async function setup(project: TestProject): Promise<void> {
  // The process tests start Herald as `npm start` does, from dist/: compiled once here rather than by each start.
  await build();
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-'));
    fs.chmodSync(dataDir, 0o755);
    const port = 20000 + Math.floor(Math.random() * 20000);
    embedded = await startEmbeddedPostgres({ dataDir, port, logger: createLogger('warn') });
    adminUrl = embedded.adminUrl;
  }
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`drop database if exists ${TEMPLATE}`);
  await client.query(`create database ${TEMPLATE}`);
  await client.end();
  const orm = await openDatabase(withDatabase(adminUrl, TEMPLATE), { migrate: true });
  await orm.close();
  project.provide('adminUrl', adminUrl);
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
}
