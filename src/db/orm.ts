// MikroORM on Postgres, committed migrations and the graphile-worker schema, applied on start.
import pg from 'pg';
import { MikroORM, PostgreSqlConnection, PostgreSqlPlatform } from '@mikro-orm/postgresql';
import { AbstractSqlDriver } from '@mikro-orm/knex';
import type { Configuration } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { Logger as WorkerLogger, runMigrations } from 'graphile-worker';
import { entities } from './entities.js';
import { migrationsList } from './migrations/index.js';
import { StartError } from '../errors.js';

export type Orm = MikroORM;

const TIMESTAMPTZ = 1184;
const parseTimestamp = pg.types.getTypeParser(TIMESTAMPTZ);

/**
 * The ORM's connections, reading a timestamptz as a Date in every row: MikroORM's own Postgres connection reads dates as
 * text (its entities convert them), so a raw query (`em.getConnection().execute`, `sqlOf`) handed a string where its row
 * type says Date. Parsed here, once for every query on these connections, instead of a conversion at each use.
 */
class HeraldConnection extends PostgreSqlConnection {
  override getConnectionOptions(): ReturnType<PostgreSqlConnection['getConnectionOptions']> {
    const options = super.getConnectionOptions() as { types?: pg.CustomTypesConfig & { setTypeParser(oid: number, parse: (text: string) => unknown): void } };
    options.types?.setTypeParser(TIMESTAMPTZ, parseTimestamp);
    return options as ReturnType<PostgreSqlConnection['getConnectionOptions']>;
  }
}

class HeraldDriver extends AbstractSqlDriver<HeraldConnection> {
  constructor(config: Configuration) {
    super(config, new PostgreSqlPlatform(), HeraldConnection, ['knex', 'pg']);
  }
}

export async function openDatabase(databaseUrl: string, options: { migrate: boolean; debug?: boolean }): Promise<Orm> {
  const orm = await MikroORM.init({
    driver: HeraldDriver,
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: false },
    migrations: { migrationsList, silent: true, transactional: true, allOrNothing: true, snapshot: false, tableName: 'mikro_orm_migrations' },
    pool: { min: 0, max: 10 },
    debug: options.debug ?? false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
  });
  const check = await orm.checkConnection();
  if (!check.ok) {
    await orm.close(true).catch(() => undefined);
    throw check.error ?? new Error(check.reason);
  }
  if (options.migrate) await migrate(orm, databaseUrl);
  return orm;
}

/**
 * Applies Herald's and graphile-worker's migrations. Several processes starting at once on one database take turns (a
 * session advisory lock held on a connection of its own), so each migration runs once.
 */
export async function migrate(orm: Orm, databaseUrl: string): Promise<void> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  lock.on('error', () => undefined);
  await lock.connect();
  try {
    await lock.query("select pg_advisory_lock(hashtext('herald:migrations'))");
    await orm.getMigrator().up();
    await runMigrations({ connectionString: databaseUrl, logger: silentLogger });
  } finally {
    await lock.end().catch(() => undefined);
  }
}

/** Why a connection to `databaseUrl` failed, as one sentence for a failed start (no password, no stack). */
export function databaseStartError(error: unknown, databaseUrl: string): StartError {
  let where = 'the database';
  try {
    const url = new URL(databaseUrl);
    where = `the database ${url.pathname.slice(1) || '(default)'} at ${url.hostname}:${url.port || 5432}`;
  } catch {
    /* keep the generic name */
  }
  const code = (error as { code?: string }).code;
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found',
    ETIMEDOUT: 'no answer',
    '28P01': 'wrong user name or password',
    '28000': 'this client is not allowed to connect',
    '3D000': 'the database does not exist',
    '53300': 'too many connections',
    '57P03': 'Postgres is starting up or shutting down',
  };
  const reason = (code && reasons[code]) ?? (error as Error).message?.split('\n')[0] ?? String(error);
  return new StartError(`Herald cannot connect to ${where} (${reason}): check DATABASE_URL and that Postgres is running and reachable.`);
}

export const silentLogger = new WorkerLogger(() => () => undefined);
