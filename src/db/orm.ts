// MikroORM on Postgres, committed migrations and the graphile-worker schema, applied on start.
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { Logger as WorkerLogger, runMigrations } from 'graphile-worker';
import { entities } from './entities.js';
import { migrationsList } from './migrations/index.js';

export type Orm = MikroORM;

export async function openDatabase(databaseUrl: string, options: { migrate: boolean; debug?: boolean }): Promise<Orm> {
  const orm = await MikroORM.init({
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
  if (options.migrate) await migrate(orm, databaseUrl);
  return orm;
}

export async function migrate(orm: Orm, databaseUrl: string): Promise<void> {
  await orm.getMigrator().up();
  await runMigrations({ connectionString: databaseUrl, logger: silentLogger });
}

export const silentLogger = new WorkerLogger(() => () => undefined);
