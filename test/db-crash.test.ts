// kill -9 of the Postgres postmaster while a real Herald process publishes (thread items to a slowed platform, webhook
// deliveries, video generations checking a model queue), then Postgres started again: Herald left running, and Herald
// restarted gracefully right after, both publish every post due during the outage once and in order within a minute, and
// leave no job locked (before the fix, the jobs interrupted by the crash stayed locked by the live process for hours).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { createLogger } from '../src/lib/logger.js';
import { freePort, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { restCall } from './helpers/harness.js';
import { waitFor } from './helpers/posts.js';
import { startFakeServer, type FakeServer } from './helpers/fake-server.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { startFalFake, type FalFake } from './fakes/fal.js';

let dataDir: string;
let port: number;
let database: EmbeddedDatabase | undefined;
let herald: HeraldProcess | undefined;
let telegram: TelegramFake;
let fal: FalFake;
let receiver: FakeServer;
let env: Record<string, string>;
let apiKey: string;
let channelId: string;

const startDatabase = () => startEmbeddedPostgres({ dataDir, port, logger: createLogger('silent') });

/** SIGKILL to the postmaster alone: its backends end on their own, the data stays (crash recovery on the next start). */
async function killPostmaster(): Promise<void> {
  const pid = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGKILL');
  database = undefined;
}

/** Starts Postgres again once the killed one's backends have let go of its shared memory. */
async function restartDatabase(): Promise<void> {
  database = await waitFor(() => startDatabase().catch(() => undefined), 30_000);
}

/** One connection per question: Postgres goes away in this test. */
async function query<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database!.urlFor('herald') });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const rest = (method: string, route: string, body?: unknown) => restCall(`${herald!.url}/api/public/v1`, apiKey, method, route, body);

/** Threads of two items, each `[first, second]`, due at `date`. */
async function schedule(texts: string[][], date: Date): Promise<void> {
  const created = await rest('POST', '/posts', {
    type: 'schedule',
    date: date.toISOString(),
    shortLink: false,
    tags: [],
    posts: texts.map((entry) => ({ integration: { id: channelId }, value: entry.map((content) => ({ content, image: [] })), settings: {} })),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
}

const threads = (name: string, count: number) => Array.from({ length: count }, (_, index) => [`${name} ${index} one`, `${name} ${index} two`]);

/**
 * Publishing load, then kill -9 of the postmaster while items are at the (slowed) platform, with the threads of `late`
 * falling due while Postgres is away; answers when Postgres accepts connections again.
 */
async function crashUnderLoad(running: string[][], late: string[][]): Promise<number> {
  const sentBefore = telegram.messages.length;
  const lateDue = Date.now() + 8000;
  await schedule(running, new Date(Date.now() + 500));
  await schedule(late, new Date(lateDue));
  telegram.server.setDelay(150);
  await waitFor(async () => (telegram.messages.length >= sentBefore + 4 ? true : undefined), 30_000);
  expect(Date.now(), 'the kill comes before the late threads are due').toBeLessThan(lateDue - 1000);
  await killPostmaster();
  await new Promise((resolve) => setTimeout(resolve, lateDue + 2000 - Date.now()));
  telegram.server.setDelay(0);
  await restartDatabase();
  return Date.now();
}

/**
 * Waits (at most a minute) until every item is settled and no job is locked; then checks that nothing went out twice,
 * that the items of each thread went out in order, that every thread due during the outage went out, and that only an
 * item whose platform call the crash interrupted may stop, with "could not confirm" (and the items after it, not attempted).
 */
async function expectSettled(running: string[][], late: string[][], since: number): Promise<void> {
  const texts = [...running, ...late];
  const rows = await waitFor(async () => {
    const items = await query<{ content: string; state: string; error: string | null }>(`select content, state, error from post where deleted_at is null`).catch(() => undefined);
    const locked = await query<{ n: number }>(`select count(*)::int as n from graphile_worker._private_jobs where locked_by is not null`).catch(() => undefined);
    if (!items || !locked || locked[0].n > 0 || items.some((item) => item.state === 'QUEUE')) return undefined;
    return items;
  }, 60_000);
  const sent = telegram.messages.map((message) => message.text ?? '');
  const state = new Map(rows.map((row) => [row.content, row]));
  let unconfirmed = 0;
  for (const [first, second] of texts) {
    for (const text of [first, second]) {
      const times = sent.filter((one) => one === text).length;
      expect(times, `${text} went out ${times} times`).toBeLessThanOrEqual(1);
      const item = state.get(text)!;
      if (item.state === 'PUBLISHED') expect(times, `${text} is PUBLISHED, so the platform has it`).toBe(1);
      else if (text === second && state.get(first)!.state !== 'PUBLISHED') expect(item.error, text).toMatch(/^Not attempted/);
      else {
        unconfirmed += 1;
        expect(item.error, text).toMatch(/^Could not confirm/);
      }
    }
    if (state.get(second)!.state === 'PUBLISHED') expect(sent.indexOf(first), `${first} before ${second}`).toBeLessThan(sent.indexOf(second));
  }
  // Only an item at the platform when Postgres died: at most one per worker slot.
  expect(unconfirmed).toBeLessThanOrEqual(4);
  for (const text of late.flat()) expect(state.get(text)!.state, text).toBe('PUBLISHED');
  expect(Date.now() - since).toBeLessThan(60_000);
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-db-crash-'));
  fs.chmodSync(dataDir, 0o755);
  port = await freePort();
  database = await startDatabase();
  await database.createDatabase('herald');
  [telegram, fal, receiver] = await Promise.all([startTelegramFake(), startFalFake(), startFakeServer()]);
  receiver.on('POST', '/hook', () => ({ status: 204 }));
  receiver.setDelay(100);
  env = {
    DATABASE_URL: database.urlFor('herald'),
    SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }),
    WORKER_CONCURRENCY: '4',
    // The fakes (webhook receiver, model files) are on 127.0.0.1.
    DISABLE_SSRF_PROTECTION: 'true',
    FAL_KEY: fal.key,
    FAL_PROXY_URL: fal.proxyUrl,
    GENERATION_TIMEOUT_SECONDS: '1',
    GENERATION_CHECK_SECONDS: '1',
  };
  herald = await startHeraldProcess({ env });
  apiKey = herald.apiKey!;
  const channel = await rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  expect(channel.status).toBe(200);
  channelId = channel.body.id;
  const webhook = await rest('POST', '/webhooks', { url: `${receiver.url}/hook`, events: ['post.published'] });
  expect(webhook.status, JSON.stringify(webhook.body)).toBeLessThan(300);
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await database?.stop();
  await Promise.all([telegram?.close(), fal?.close(), receiver?.close()]);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9 of the Postgres postmaster under publishing load', () => {
  it('Herald left running: everything due during the outage goes out once, in order, within a minute, and no job stays locked', async () => {
    // Two video generations waiting on the model's queue, re-checked every second.
    fal.hold = true;
    const generations = await Promise.all(['A lighthouse', 'A harbour'].map((prompt) => rest('POST', '/generate-video', { type: 'veo3', output: 'vertical', customParams: { prompt } })));
    for (const answer of generations) expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    await waitFor(async () => (fal.submits.length >= 2 ? true : undefined), 30_000);
    const running = threads('Running', 8);
    const late = threads('Running late', 4);
    const back = await crashUnderLoad(running, late);
    fal.hold = false;

    await expectSettled(running, late, back);
    expect(herald!.child.exitCode).toBeNull();
    // The generations finish from their recorded model requests: nothing submitted twice.
    const states = await waitFor(async () => {
      const rows = await query<{ state: string }>(`select state from generation`).catch(() => undefined);
      return rows?.every((row) => row.state === 'succeeded' || row.state === 'failed') ? rows : undefined;
    }, 30_000);
    expect(states.map((row) => row.state)).toEqual(['succeeded', 'succeeded']);
    expect(fal.submits).toHaveLength(2);
    // Every post.published event was delivered, each with its own delivery id (a delivery cut by the crash may come again
    // with the same id, which receivers de-duplicate).
    const published = await query<{ n: number; distinct: number }>(
      `select count(*)::int as n, count(distinct data::text)::int as distinct from webhook_event where type = 'post.published'`,
    );
    // Each event's delivery is made by a job of its own after the event: waited for until there is one per event, all delivered.
    const deliveries = await waitFor(async () => {
      const rows = await query<{ id: string; state: string }>(`select id, state from webhook_delivery`);
      return rows.length >= published[0].n && rows.every((row) => row.state === 'delivered') ? rows : undefined;
    }, 30_000);
    expect(published[0].n).toBe(published[0].distinct);
    expect(deliveries).toHaveLength(published[0].n);
    const received = new Set(receiver.requestsTo('POST', '/hook').map((request) => String(request.headers['webhook-id'])));
    expect([...received].sort()).toEqual(deliveries.map((row) => row.id).sort());
  }, 180_000);

  it('Herald restarted gracefully right after Postgres is back: the new process publishes everything, once, within a minute', async () => {
    const running = threads('Restarted', 8);
    const late = threads('Restarted late', 4);
    const back = await crashUnderLoad(running, late);
    await herald!.stop();
    herald = await startHeraldProcess({ env });

    await expectSettled(running, late, back);
  }, 180_000);
});
