// The migrated template database every test file clones, connection strings to other databases of the same server, and
// the clean-up of what a run leaves on disk. Shared by the global setup (which makes the template), the harness (which
// clones it) and the per-file hook (which drops the clones).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export const TEMPLATE = 'herald_template';

/** The connection string `url` with its database replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A name for a test's own database (`herald_<kind>_<pid>_…`): the pid is what `dropDatabasesOf` finds it by. */
export function testDatabaseName(kind: 'test' | 'upgrade' | 'restore', suffix: string | number): string {
  return `herald_${kind}_${process.pid}_${Date.now()}_${suffix}`;
}

/**
 * Drops every database a worker process made (each is a 10 MB copy of the template: a run makes about two hundred, so
 * kept to the end they filled a small disk). With force: a Herald process a test left running loses its connections.
 */
export async function dropDatabasesOf(adminUrl: string, pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname ~ $1', [`^herald_[a-z]+_${pid}_`]);
    for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * Removes a Herald data directory a test made, with its embedded Postgres cluster where the "postgres" system user
 * could not enter the directory and Herald put the cluster under /var/lib/herald/clusters (postgres-location.txt).
 */
export function removeDataDirectory(directory: string): void {
  for (const note of [path.join(directory, 'postgres-location.txt'), path.join(directory, 'data', 'postgres-location.txt')]) {
    const cluster = fs.existsSync(note) ? /is in (\S+)/.exec(fs.readFileSync(note, 'utf8'))?.[1] : undefined;
    if (cluster?.startsWith('/var/lib/herald/clusters/')) fs.rmSync(cluster, { recursive: true, force: true });
  }
  fs.rmSync(directory, { recursive: true, force: true });
}
