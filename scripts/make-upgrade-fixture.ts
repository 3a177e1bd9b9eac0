// Makes test/fixtures/upgrade/e465ff6.sql: a plain SQL dump (pg_dump --column-inserts) of a database made by the
// migrations of the previous release (commit e465ff6) with an organization, a Telegram channel and two scheduled posts
// (a single post and a two-item thread) with their publish jobs, as that release stored them. test/upgrade.test.ts loads it
// and starts the current Herald on it.
//
//   npx tsx scripts/make-upgrade-fixture.ts        (as root, with Debian's postgresql-15 installed)
//
// Why Postgres 15 here: pg_dump must be at least as new as the server, the embedded Postgres package ships no pg_dump,
// and the machine's pg_dump is 15; a plain dump of 15 loads into the embedded 18. Run once; the output is committed.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { runMigrations } from 'graphile-worker';
import { migrationsList } from '../src/db/migrations/index.js';
import { silentLogger } from '../src/db/orm.js';
import { SecretBox, sha256 } from '../src/lib/crypto.js';

const RELEASE = 'e465ff6';
const BIN = '/usr/lib/postgresql/15/bin';
/** What the test uses to read the fixture's secrets and call its API (test/upgrade.test.ts repeats them). */
const FIXTURE = {
  encryptionKey: 'c3'.repeat(32),
  apiKey: 'hrld_upgrade-fixture-api-key-0000000000000000000000',
  botToken: '123456789:AAFakeTelegramBotTokenForHeraldTests',
  chatId: '-1001234567890',
};

const root = path.resolve(import.meta.dirname, '..');
const output = path.join(root, 'test/fixtures/upgrade', `${RELEASE}.sql`);

// The release's migrations: the names it listed, each file unchanged since (else this script must load the old sources).
const released = execFileSync('git', ['ls-tree', '--name-only', RELEASE, 'src/db/migrations/'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .map((file) => /(Migration\d+)\.ts$/.exec(file)?.[1])
  .filter((name): name is string => name !== undefined);
for (const name of released) {
  const changed = spawnSync('git', ['diff', '--quiet', RELEASE, '--', `src/db/migrations/${name}.ts`], { cwd: root });
  if (changed.status !== 0) throw new Error(`${name} changed since ${RELEASE}: load its old source instead.`);
}
const list = migrationsList.filter((migration) => released.includes(migration.name));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-upgrade-fixture-'));
fs.chmodSync(dir, 0o777);
const cluster = path.join(dir, 'cluster');
const port = String(20000 + Math.floor(Math.random() * 20000));
const asPostgres = (command: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', path.join(BIN, command), ...args], { stdio: 'inherit' });
asPostgres('initdb', ['-D', cluster, '-U', 'herald', '-A', 'trust']);
asPostgres('pg_ctl', ['-D', cluster, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-w', 'start']);
const url = (database: string) => `postgres://herald@127.0.0.1:${port}/${database}`;
try {
  const admin = new pg.Client({ connectionString: url('postgres') });
  await admin.connect();
  await admin.query('create database herald');
  await admin.end();

  const orm = await MikroORM.init({ clientUrl: url('herald'), entities: [], extensions: [Migrator], discovery: { warnWhenNoEntities: false }, migrations: { migrationsList: list, silent: true, transactional: true, snapshot: false, tableName: 'mikro_orm_migrations' } });
  await orm.getMigrator().up();
  await orm.close();
  await runMigrations({ connectionString: url('herald'), logger: silentLogger });

  const client = new pg.Client({ connectionString: url('herald') });
  await client.connect();
  const box = new SecretBox(FIXTURE.encryptionKey);
  const now = new Date();
  // Due a minute after the fixture was made: by the time the test runs, long due (a Herald down while it was upgraded).
  const due = new Date(now.getTime() + 60_000);
  await client.query(`insert into organization (id, name) values ('org_upgrade', 'Upgrade organization')`);
  await client.query(`insert into api_key (id, organization_id, key_hash, last_four) values ('key_upgrade', 'org_upgrade', $1, $2)`, [sha256(FIXTURE.apiKey), FIXTURE.apiKey.slice(-4)]);
  await client.query(
    `insert into integration (id, organization_id, provider_identifier, internal_id, name, profile, credentials) values ('int_upgrade', 'org_upgrade', 'telegram', $1, 'Herald Test Channel', 'herald_test', $2)`,
    [FIXTURE.chatId, box.sealJson({ accessToken: FIXTURE.botToken, data: { chatId: FIXTURE.chatId, username: 'herald_test' } })],
  );
  const post = (id: string, group: string, position: number, parent: string | null, content: string) =>
    client.query(
      `insert into post (id, organization_id, integration_id, group_id, parent_post_id, root_post_id, position, content, state, publish_date, creation_method)
       values ($1, 'org_upgrade', 'int_upgrade', $2, $3, $4, $5, $6, 'QUEUE', $7, 'api')`,
      [id, group, parent, parent ? 'post_upgrade_thread' : id, position, content, due],
    );
  await post('post_upgrade_single', 'group_upgrade_single', 0, null, '<p>Scheduled before the upgrade</p>');
  await post('post_upgrade_thread', 'group_upgrade_thread', 0, null, '<p>A thread from before the upgrade</p>');
  await post('post_upgrade_thread_2', 'group_upgrade_thread', 1, 'post_upgrade_thread', '<p>Its second item</p>');
  // As tools/internal/queue.ts of the release enqueued them.
  for (const id of ['post_upgrade_single', 'post_upgrade_thread']) {
    await client.query(`select graphile_worker.add_job('publish_post', json_build_object('postId', $1::text), run_at := $2::timestamptz, max_attempts := 8, job_key := $3, job_key_mode := 'replace')`, [id, due, `publish:${id}`]);
  }
  await client.end();

  const dump = execFileSync(path.join(BIN, 'pg_dump'), ['--column-inserts', '--no-owner', '--no-privileges', '-d', url('herald')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  fs.mkdirSync(path.dirname(output), { recursive: true });
  fs.writeFileSync(output, `-- Made by scripts/make-upgrade-fixture.ts on ${now.toISOString()}: the schema of Herald ${RELEASE} (migrations ${released.join(', ')}; graphile-worker 0.17), with scheduled posts.\n${dump}`);
  console.log(`Wrote ${output}`);
} finally {
  asPostgres('pg_ctl', ['-D', cluster, '-m', 'fast', '-w', 'stop']);
  fs.rmSync(dir, { recursive: true, force: true });
}
