// Posts due at one instant against a platform that takes its time (issue 34): waiting on the platform costs no CPU slot, so
// the worker at its defaults has more calls in flight than WORKER_CONCURRENCY, never more than the provider's limits
// (Provider.concurrency: per account, per platform), and a post whose slot is far off says which limit holds it and when it
// goes. Mastodon (no limit of its own: the defaults) for the bursts, behind a slow link; Telegram for the post held back.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { chainOf, createPost, waitFor } from './helpers/posts.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import type { Worker } from '../src/jobs/index.js';
import { findProvider } from '../providers/index.js';
import { PLATFORM_CONCURRENCY } from '../providers/shared.js';
import { publishChain } from '../tools/internal/publish.js';
import { forgetCallTimes, takeSlot } from '../tools/internal/publish-slots.js';

/**
 * A slow link in front of a fake platform (which keeps checking every call as it does): each create (`POST <path>`) is held
 * `latencyMs` before it is passed on, and the link counts how many are in flight at once.
 */
async function slowLink(target: string, path: string, latencyMs: number) {
  const link = { url: '', inFlight: 0, maxInFlight: 0, sends: 0, close: async () => undefined as void };
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const sending = request.method === 'POST' && request.url?.split('?')[0] === path;
    if (sending) {
      link.sends += 1;
      link.maxInFlight = Math.max(link.maxInFlight, ++link.inFlight);
      await new Promise((resolve) => setTimeout(resolve, latencyMs));
    }
    try {
      const headers = Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)) as [string, string][];
      const answer = await fetch(`${target}${request.url}`, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      response.end(Buffer.from(await answer.arrayBuffer()));
    } finally {
      if (sending) link.inFlight -= 1;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  link.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  link.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return link;
}

let mastodon: MastodonFake;
let telegram: TelegramFake;
let link: Awaited<ReturnType<typeof slowLink>>;
let herald: Herald;
let worker: Worker;
let channel: string;
let telegramChannel: string;
const provider = findProvider('mastodon')!;
const telegramProvider = findProvider('telegram')!;
const declared = { mastodon: provider.concurrency, telegram: telegramProvider.concurrency };

async function connect(identifier: string, fields: Record<string, string>): Promise<string> {
  const connected = await herald.rest('POST', `/integrations/${identifier}/connect`, fields);
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  return connected.body.id;
}

beforeAll(async () => {
  [mastodon, telegram] = await Promise.all([startMastodonFake(), startTelegramFake()]);
  link = await slowLink(mastodon.url, '/api/v1/statuses', 400);
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  channel = await connect('mastodon', { instance: link.url, accessToken: mastodon.token });
  telegramChannel = await connect('telegram', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  worker = await herald.startWorker();
});

afterEach(() => {
  provider.concurrency = declared.mastodon;
  telegramProvider.concurrency = declared.telegram;
  link.maxInFlight = 0;
});

afterAll(async () => {
  await worker?.stop();
  await herald?.stop();
  await link?.close();
  await Promise.all([mastodon?.close(), telegram?.close()]);
});

/** `count` one-item posts on the channel, all due at one instant a moment from now; answers when all went out. */
async function burst(count: number, label: string): Promise<void> {
  const date = new Date(Date.now() + 3000);
  const response = await herald.rest('POST', '/posts', {
    type: 'schedule',
    date: date.toISOString(),
    shortLink: false,
    tags: [],
    posts: Array.from({ length: count }, (_, index) => ({ integration: { id: channel }, value: [{ content: `${label} ${index}`, image: [] }], settings: {} })),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const sent = () => mastodon.statuses.filter((status) => status.status.startsWith(`${label} `)).length;
  await waitFor(async () => (sent() >= count ? true : undefined), 60_000);
  expect(sent()).toBe(count);
}

describe('a burst of posts due at one instant on a platform answering in 400 ms', () => {
  it('overlaps more platform calls than WORKER_CONCURRENCY at the defaults, never more than the per-account limit, each post once', async () => {
    expect(herald.services.config.workerConcurrency).toBe(4);
    await burst(24, 'Burst default');
    expect(link.maxInFlight).toBeGreaterThan(herald.services.config.workerConcurrency);
    expect(link.maxInFlight).toBeLessThanOrEqual(PLATFORM_CONCURRENCY.perAccount);
    expect(new Set(mastodon.statuses.map((status) => status.status)).size).toBe(mastodon.statuses.length);
    // The outcomes that end together are written in one statement: each post still has its own record, notification
    // (naming the post), webhook event and audit event.
    const outcomes = async () =>
      (await herald.services.orm.em.fork().getConnection().execute<{ published: number; notified: number; events: number; audited: number }[]>(
        `select count(*) filter (where p.state = 'PUBLISHED' and p.release_id is not null and p.attempt_started_at is null)::int as published,
                (select count(*) from notification n where n.type = 'post_published' and n.target_kind = 'post' and n.target_id = any(array_agg(p.id)))::int as notified,
                (select count(*) from webhook_event e where e.type = 'post.published' and e.data->>'postId' = any(array_agg(p.id)))::int as events,
                (select count(*) from audit_event a where a.action = 'post.published' and a.target_id = any(array_agg(p.id)))::int as audited
           from post p where p.content like '%Burst default %'`,
      ))[0];
    // The platform has all the posts before the last outcomes are written.
    const written = await waitFor(async () => {
      const found = await outcomes();
      return found.published === 24 ? found : undefined;
    }, 10_000);
    expect(written).toEqual({ published: 24, notified: 24, events: 24, audited: 24 });
  }, 90_000);

  it("keeps to the platform's own limit when it declares one lower than the account's", async () => {
    provider.concurrency = { perPlatform: 3 };
    await burst(12, 'Burst platform');
    expect(link.maxInFlight).toBe(3);
  }, 90_000);
});

describe('a post whose slot is far off', () => {
  it('is re-scheduled for when the slot should be free, saying which limit holds it and when it goes', async () => {
    await worker.stop();
    telegramProvider.concurrency = { perAccount: 1 };
    // The estimate starts from a second a call, whatever calls of earlier test files in this process measured.
    forgetCallTimes();
    const account = String(telegram.chat.id);
    // One call holds the account's only slot and 31 wait for it: the next would wait more than 30 s.
    const held = await takeSlot(telegramProvider, account, 0);
    const queued = Array.from({ length: 31 }, () => takeSlot(telegramProvider, account, Infinity));
    try {
      expect('release' in held).toBe(true);
      const rootId = await createPost(herald, telegramChannel, ['Far off'], { date: new Date() });
      const outcome = await publishChain(herald.services, rootId);
      expect(outcome.kind).toBe('waiting');
      const [item] = await chainOf(herald, rootId);
      expect(item.state).toBe('QUEUE');
      // Not attempted: nothing was sent, and no attempt is open to be taken for an interrupted one.
      expect(item.attemptStartedAt).toBeNull();
      expect(telegram.messages.some((message) => message.text === 'Far off')).toBe(false);
      expect(item.lastError).toMatch(/^Telegram takes at most 1 publishing call at a time on one account and 32 are ahead of this post: it goes at about \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\.$/);
      expect(item.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() + 25_000);
      expect(item.lastError).toContain(item.nextAttemptAt!.toISOString().slice(11, 19));
    } finally {
      if ('release' in held) held.release();
      for (const pending of queued) {
        const slot = await pending;
        if ('release' in slot) slot.release();
      }
      worker = await herald.startWorker();
    }
  }, 90_000);
});
