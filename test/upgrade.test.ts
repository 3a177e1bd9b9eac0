// An upgrade from the previous release: a pg_dump of a database made by commit e465ff6's migrations, with a Telegram
// channel and scheduled posts (test/fixtures/upgrade/, made by scripts/make-upgrade-fixture.ts), is loaded into a fresh
// database; the current Herald starts on it (its later migrations run) and the posts publish, once, to a fake Telegram.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { restCall } from './helpers/harness.js';
import { startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { waitFor } from './helpers/posts.js';
import { testDatabaseName, withDatabase } from './helpers/template-database.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { migrationsList } from '../src/db/migrations/index.js';

// As scripts/make-upgrade-fixture.ts made the fixture.
const FIXTURE = {
  file: path.join(import.meta.dirname, 'fixtures/upgrade/e465ff6.sql'),
  encryptionKey: 'c3'.repeat(32),
  apiKey: 'hrld_upgrade-fixture-api-key-0000000000000000000000',
  botToken: '123456789:AAFakeTelegramBotTokenForHeraldTests',
  chatId: -1001234567890,
};

let telegram: TelegramFake;
let herald: HeraldProcess | undefined;
let dataDir: string;

beforeAll(async () => {
  telegram = await startTelegramFake({ token: FIXTURE.botToken, chat: { id: FIXTURE.chatId, title: 'Herald Test Channel', username: 'herald_test' } });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-upgrade-'));
});

afterAll(async () => {
  await herald?.stop();
  await telegram?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('upgrading a database of the previous release', () => {
  it('migrates it to the current schema and publishes the posts it had scheduled, once', async () => {
    const name = testDatabaseName('upgrade', 0);
    const admin = new pg.Client({ connectionString: inject('adminUrl') });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const databaseUrl = withDatabase(inject('adminUrl'), name);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // A plain dump with INSERTs: one multi-statement query loads it, as psql would. Its only psql meta-commands are
      // \restrict / \unrestrict (pg_dump 15.14+), which guard psql against meta-commands hidden in data: not for a driver.
      const dump = fs.readFileSync(FIXTURE.file, 'utf8');
      await client.query(dump.split('\n').filter((line) => !/^\\(un)?restrict /.test(line)).join('\n'));
      await client.query("select pg_catalog.set_config('search_path', 'public', false)");
      const before = await client.query<{ name: string }>('select name from mikro_orm_migrations order by id');
      expect(before.rows.length).toBeLessThan(migrationsList.length);

      herald = await startHeraldProcess({
        env: { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ENCRYPTION_KEY: FIXTURE.encryptionKey, SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) },
      });
      const after = await client.query<{ name: string }>('select name from mikro_orm_migrations order by id');
      expect(after.rows.map((row) => row.name)).toEqual(migrationsList.map((migration) => migration.name));

      const rows = await waitFor(async () => {
        const result = await client.query<{ id: string; state: string; error: string | null }>('select id, state, error from post order by id');
        return result.rows.every((row) => row.state !== 'QUEUE') ? result.rows : undefined;
      }, 60_000);
      expect(rows, JSON.stringify(rows)).toEqual([
        { id: 'post_upgrade_single', state: 'PUBLISHED', error: null },
        { id: 'post_upgrade_thread', state: 'PUBLISHED', error: null },
        { id: 'post_upgrade_thread_2', state: 'PUBLISHED', error: null },
      ]);
      const texts = telegram.messages.map((message) => message.text).sort();
      expect(texts).toEqual(['A thread from before the upgrade', 'Its second item', 'Scheduled before the upgrade']);
      const thread = telegram.messages.find((message) => message.text === 'A thread from before the upgrade')!;
      const second = telegram.messages.find((message) => message.text === 'Its second item')!;
      expect(second.reply_to_message_id).toBe(thread.message_id);

      // The release's API key and channel still work.
      const channels = await restCall(`${herald.url}/api/public/v1`, FIXTURE.apiKey, 'GET', '/integrations');
      expect(channels.status, JSON.stringify(channels.body)).toBe(200);
      expect(channels.body.map((channel: { id: string }) => channel.id)).toEqual(['int_upgrade']);
    } finally {
      await client.end();
    }
  }, 120_000);
});
