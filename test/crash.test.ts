// Crashes of a real Herald process: kill -9 of its process group while posts are being published, and kill -9 of the
// node process alone (its embedded Postgres left to the watchdog); the next start goes on with nothing twice and nothing
// silently lost. Each test starts Herald twice and waits for the jobs of the killed one to be released (up to a minute),
// so it has more time than vitest's default.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestDatabase, restCall } from './helpers/harness.js';
import { freePort, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { waitFor } from './helpers/posts.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';

let telegram: TelegramFake;
const running: HeraldProcess[] = [];

beforeAll(async () => {
  telegram = await startTelegramFake();
});

afterAll(async () => {
  for (const process of running) await process.stop().catch(() => undefined);
  await telegram?.close();
});

const rest = (herald: HeraldProcess, apiKey: string, method: string, route: string, body?: unknown) => restCall(`${herald.url}/api/public/v1`, apiKey, method, route, body);

describe('kill -9 of the whole process group while posts are due', () => {
  it('publishes nothing twice after the restart, and every item not sent says why', async () => {
    const databaseUrl = await newTestDatabase();
    const env = { DATABASE_URL: databaseUrl, SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }), SWEEP_CRON: '* * * * *' };
    const first = await startHeraldProcess({ env });
    running.push(first);
    const apiKey = first.apiKey!;
    const channel = await rest(first, apiKey, 'POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
    expect(channel.status).toBe(200);
    const texts = Array.from({ length: 20 }, (_, index) => [`Crash ${index} one`, `Crash ${index} two`]);
    const created = await rest(first, apiKey, 'POST', '/posts', {
      type: 'schedule',
      date: new Date(Date.now() + 1500).toISOString(),
      shortLink: false,
      tags: [],
      posts: texts.map((entry) => ({ integration: { id: channel.body.id }, value: entry.map((content) => ({ content, image: [] })), settings: {} })),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // A slow platform: the kill lands while messages are in flight.
    telegram.server.setDelay(150);
    await waitFor(async () => (telegram.messages.length >= 8 ? true : undefined), 30_000);
    first.kill('group');
    await first.exited;
    telegram.server.setDelay(0);

    const second = await startHeraldProcess({ env });
    running.push(second);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // Everything settles: no item stays QUEUE.
      const rows = await waitFor(async () => {
        const result = await client.query<{ content: string; state: string; error: string | null; position: number }>(
          `select content, state, error, position from post where deleted_at is null order by root_post_id, position`,
        );
        return result.rows.every((row) => row.state !== 'QUEUE') ? result.rows : undefined;
      }, 60_000);
      expect(rows).toHaveLength(40);
      const received = new Map<string, number>();
      for (const message of telegram.messages) received.set(message.text ?? '', (received.get(message.text ?? '') ?? 0) + 1);
      // Nothing twice.
      for (const [text, count] of received) expect(count, text).toBe(1);
      for (const row of rows) {
        const sent = received.has(row.content);
        if (row.state === 'PUBLISHED') expect(sent, `${row.content} is PUBLISHED, so Telegram has it`).toBe(true);
        else {
          // Not silently lost: an item that did not go out (or whose outcome is unknown) is ERROR with the reason.
          expect(row.state).toBe('ERROR');
          expect(row.error, row.content).toMatch(/could not confirm|not attempted/i);
        }
      }
      const published = rows.filter((row) => row.state === 'PUBLISHED').length;
      expect(published).toBeGreaterThanOrEqual(30);
    } finally {
      await client.end();
    }
    await second.stop();
  }, 120_000);
});

describe('kill -9 of the node process alone, on the embedded Postgres', () => {
  it('the next start on the same data directory works, and the orphaned Postgres did not outlive Herald for long', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-crash-'));
    fs.chmodSync(home, 0o755);
    try {
      const env = { DATA_DIR: path.join(home, 'data'), EMBEDDED_POSTGRES_PORT: String(await freePort()) };
      const first = await startHeraldProcess({ env });
      running.push(first);
      const postmasterPid = Number(fs.readFileSync(path.join(home, 'data', 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
      first.kill('process');
      await first.exited;
      // The watchdog stops Postgres once its Herald is gone.
      await waitFor(async () => {
        try {
          process.kill(postmasterPid, 0);
          return undefined;
        } catch {
          return true;
        }
      }, 15_000);
      const second = await startHeraldProcess({ env });
      running.push(second);
      expect(second.stdout()).toContain('API key:   already created');
      const response = await fetch(`${second.url}/api/public/v1/is-connected`, { headers: { authorization: first.apiKey! } });
      expect(await response.json()).toEqual({ connected: true });
      await second.stop();
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
