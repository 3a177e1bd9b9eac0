// Webhooks: a local receiver verifies every delivery with the Standard Webhooks scheme (the README's example), sees retries
// after answering 500, a replay, two signatures after a rotation, events raised by publishing and by a broken channel, and
// nothing at all when its address is private and the deployment does not allow that.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { startFakeServer, type FakeServer, type RecordedRequest } from './helpers/fake-server.js';
import { startTelegramFake, telegramError, type TelegramFake } from './fakes/telegram.js';
import { chainOf, createPost, waitFor } from './helpers/posts.js';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import { publishChain } from '../tools/internal/publish.js';
import { IntegrationSchema } from '../src/db/entities.js';
import { WebhookEventSchema } from '../src/db/agent-entities.js';
import { deliverWebhook, emitWebhookEvent } from '../tools/internal/webhooks.js';
import { markNeedsReconnection } from '../tools/internal/integrations.js';

/** The receiver side, as the README documents it: HMAC-SHA256 of "id.timestamp.body" keyed with the secret's base64 part. */
function verify(secret: string, headers: Record<string, string | string[] | undefined>, rawBody: string, nowSeconds = Date.now() / 1000): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 5 * 60) return false; // refuse old (replayed) messages
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

let herald: Herald;
let receiver: FakeServer;
let telegram: TelegramFake;
let channelId: string;

const received = (path = '/hook') => receiver.requests.filter((request) => request.path === path);
const json = (request: RecordedRequest) => JSON.parse(request.body.toString('utf8'));

/** A webhook of this test only: deleted when the test ends, passed or failed. */
async function createWebhook(path: string, events: string[] = ['post.published', 'post.failed', 'post.partial', 'channel.needs_reconnection', 'channel.token_expiring']) {
  const response = await herald.rest('POST', '/webhooks', { url: `${receiver.url}${path}`, events, description: path });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  onTestFinished(async () => {
    await herald.rest('DELETE', `/webhooks/${response.body.id}`);
  });
  return response.body as { id: string; secret: string; url: string; events: string[] };
}

beforeAll(async () => {
  [receiver, telegram] = await Promise.all([startFakeServer(), startTelegramFake()]);
  for (const path of ['/hook', '/flaky', '/rotate', '/worker', '/private']) receiver.on('POST', path, () => ({ status: 204 }));
  herald = await startHerald({ WEBHOOKS_ALLOW_PRIVATE: 'true', SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const connected = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await Promise.all([receiver?.close(), telegram?.close()]);
});

describe('managing webhooks', () => {
  it('creates a webhook whose secret is shown once, lists it without the secret, refuses unknown events, deletes it', async () => {
    const created = await createWebhook('/hook', ['post.published']);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const list = await herald.rest('GET', '/webhooks');
    expect(list.body).toEqual([{ id: created.id, url: `${receiver.url}/hook`, events: ['post.published'], description: '/hook', createdAt: expect.any(String) }]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const bad = await herald.rest('POST', '/webhooks', { url: `${receiver.url}/hook`, events: ['post.deleted'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('events.0');
    const removed = await herald.rest('DELETE', `/webhooks/${created.id}`);
    expect(removed.body).toEqual({ id: created.id });
    expect((await herald.rest('GET', '/webhooks')).body).toEqual([]);
    expect((await herald.rest('DELETE', `/webhooks/${created.id}`)).status).toBe(404);
  });

  it('refuses a private or loopback URL unless WEBHOOKS_ALLOW_PRIVATE is set', async () => {
    herald.services.config.webhooksAllowPrivate = false;
    try {
      const refused = await herald.rest('POST', '/webhooks', { url: `${receiver.url}/private`, events: ['post.published'] });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe('This webhook URL cannot be used: 127.0.0.1 is a blocked address (loopback).');
      expect(refused.body.hint).toContain('WEBHOOKS_ALLOW_PRIVATE=true');
      const metadata = await herald.rest('POST', '/webhooks', { url: 'http://169.254.169.254/latest', events: ['post.published'] });
      expect(metadata.status).toBe(400);
    } finally {
      herald.services.config.webhooksAllowPrivate = true;
    }
  });
});

describe('deliveries', () => {
  it('signs a test event so the documented verification accepts it, and records the attempt', async () => {
    const webhook = await createWebhook('/hook');
    const answer = await herald.rest('POST', `/webhooks/${webhook.id}/test`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ eventType: 'webhook.test', state: 'delivered', attempts: 1, lastStatus: 204 });
    const [request] = received('/hook');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(answer.body.id);
    expect(answer.body.id).toMatch(/^msg_/);
    expect(verify(webhook.secret, request.headers, request.body.toString('utf8'))).toBe(true);
    expect(verify(webhook.secret, request.headers, request.body.toString('utf8').replace('test', 'tost'))).toBe(false);
    expect(verify(`whsec_${Buffer.alloc(24).toString('base64')}`, request.headers, request.body.toString('utf8'))).toBe(false);
    expect(json(request)).toEqual({ type: 'webhook.test', timestamp: expect.any(String), data: { message: expect.any(String), webhookId: webhook.id } });
    const deliveries = await herald.rest('GET', `/webhooks/${webhook.id}/deliveries`);
    expect(deliveries.body.total).toBe(1);
    expect(deliveries.body.deliveries[0].attemptLog).toEqual([{ attemptedAt: expect.any(String), trigger: 'automatic', status: 204, error: null, durationMs: expect.any(Number), responseExcerpt: null }]);
  });

  it('retries after the receiver answers 500, on the backoff schedule, each attempt recorded, then a replay', async () => {
    const webhook = await createWebhook('/flaky');
    receiver.failNext('POST', '/flaky', { status: 500, body: 'database down' }, 2);
    const first = await herald.rest('POST', `/webhooks/${webhook.id}/test`);
    expect(first.body).toMatchObject({ state: 'pending', attempts: 1, lastStatus: 500, lastError: 'The receiver answered 500.' });
    const firstRetry = new Date(first.body.nextAttemptAt).getTime() - new Date(first.body.attemptLog[0].attemptedAt).getTime();
    expect(firstRetry).toBe(5_000);
    const id = first.body.id as string;
    // Not due yet: a job that runs early waits for its time.
    expect((await deliverWebhook(herald.services, id)).kind).toBe('retry');
    expect(received('/flaky')).toHaveLength(1);

    let now = Date.now();
    const clocks = [Date.now() / 1000];
    try {
      herald.setNow(new Date((now += 6_000)));
      clocks.push(now / 1000);
      const second = await deliverWebhook(herald.services, id);
      expect(second).toEqual({ kind: 'retry', runAt: new Date(now + 300_000) });
      herald.setNow(new Date((now += 301_000)));
      clocks.push(now / 1000);
      expect(await deliverWebhook(herald.services, id)).toEqual({ kind: 'delivered' });
      const requests = received('/flaky');
      expect(requests).toHaveLength(3);
      // Every attempt is the same message (id and body), signed anew with its own timestamp.
      expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([id]));
      expect(new Set(requests.map((request) => request.body.toString('utf8'))).size).toBe(1);
      // Each verified at the receiver's time of arrival (Herald's clock was moved between attempts).
      expect(requests.map((request, index) => verify(webhook.secret, request.headers, request.body.toString('utf8'), clocks[index]))).toEqual([true, true, true]);
    } finally {
      herald.setNow(undefined);
    }
    const listed = await herald.rest('GET', `/webhooks/${webhook.id}/deliveries`);
    expect(listed.body.deliveries[0]).toMatchObject({ id, state: 'delivered', attempts: 3, lastStatus: 204, nextAttemptAt: null });
    expect(listed.body.deliveries[0].attemptLog.map((attempt: { status: number }) => attempt.status)).toEqual([500, 500, 204]);
    expect(listed.body.deliveries[0].attemptLog[0].responseExcerpt).toBe('database down');

    const replay = await herald.rest('POST', `/webhooks/${webhook.id}/deliveries/${id}/replay`);
    expect(replay.status).toBe(200);
    // (Listed by time: the replay's real time comes before the attempts made with the clock moved ahead.)
    expect(replay.body.attemptLog.map((attempt: { trigger: string }) => attempt.trigger).sort()).toEqual(['automatic', 'automatic', 'automatic', 'replay']);
    expect(replay.body.state).toBe('delivered');
    const replayed = received('/flaky').at(-1)!;
    expect(replayed.headers['webhook-id']).toBe(id);
    expect(verify(webhook.secret, replayed.headers, replayed.body.toString('utf8'))).toBe(true);
    expect((await herald.rest('POST', `/webhooks/${webhook.id}/deliveries/msg_nope/replay`)).status).toBe(404);
  });

  it('gives up after the last retry, about a day after the first attempt', async () => {
    const webhook = await createWebhook('/flaky');
    receiver.failNext('POST', '/flaky', { status: 503 }, 20);
    const first = await herald.rest('POST', `/webhooks/${webhook.id}/test`);
    let now = Date.now();
    const start = now;
    let outcome;
    try {
      for (;;) {
        const delivery = (await herald.rest('GET', `/webhooks/${webhook.id}/deliveries`)).body.deliveries[0];
        if (!delivery.nextAttemptAt) break;
        herald.setNow(new Date((now = new Date(delivery.nextAttemptAt).getTime() + 1000)));
        outcome = await deliverWebhook(herald.services, first.body.id);
      }
    } finally {
      herald.setNow(undefined);
    }
    expect(outcome?.kind).toBe('failed');
    const delivery = (await herald.rest('GET', `/webhooks/${webhook.id}/deliveries`)).body.deliveries[0];
    expect(delivery).toMatchObject({ state: 'failed', attempts: 8 });
    expect((now - start) / 3_600_000).toBeGreaterThan(23);
    expect((now - start) / 3_600_000).toBeLessThan(25);
    receiver.failNext('POST', '/flaky', { status: 204 }, 0);
  });

  it('signs with both secrets for a day after a rotation; the new one alone verifies after', async () => {
    const webhook = await createWebhook('/rotate');
    const rotated = await herald.rest('POST', `/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated.body.secret).not.toBe(webhook.secret);
    expect(rotated.body.previousSecretExpiresAt).toEqual(expect.any(String));
    await herald.rest('POST', `/webhooks/${webhook.id}/test`);
    const request = received('/rotate').at(-1)!;
    expect((request.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(verify(webhook.secret, request.headers, request.body.toString('utf8'))).toBe(true);
    expect(verify(rotated.body.secret, request.headers, request.body.toString('utf8'))).toBe(true);
    const later = new Date(Date.now() + 25 * 3600_000);
    herald.setNow(later);
    try {
      await herald.rest('POST', `/webhooks/${webhook.id}/test`);
    } finally {
      herald.setNow(undefined);
    }
    const after = received('/rotate').at(-1)!;
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(verify(webhook.secret, after.headers, after.body.toString('utf8'), later.getTime() / 1000)).toBe(false);
    expect(verify(rotated.body.secret, after.headers, after.body.toString('utf8'), later.getTime() / 1000)).toBe(true);
  });

  it('sends nothing to a private address when the deployment does not allow it, and says why', async () => {
    const webhook = await createWebhook('/private');
    herald.services.config.webhooksAllowPrivate = false;
    try {
      const answer = await herald.rest('POST', `/webhooks/${webhook.id}/test`);
      expect(answer.body).toMatchObject({ state: 'failed', lastStatus: null });
      expect(answer.body.lastError).toBe(
        'Refused by the SSRF guard: 127.0.0.1 is a blocked address (loopback). The operator sets WEBHOOKS_ALLOW_PRIVATE=true to deliver to private addresses.',
      );
    } finally {
      herald.services.config.webhooksAllowPrivate = true;
    }
    expect(received('/private')).toHaveLength(0);
  });
});

describe('events', () => {
  it('channel.needs_reconnection carries the channel and the reason', async () => {
    const webhook = await createWebhook('/hook', ['channel.needs_reconnection']);
    const em = herald.services.orm.em.fork();
    const integration = await em.findOneOrFail(IntegrationSchema, { id: channelId });
    await markNeedsReconnection(herald.services, em, integration, 'the token refresh failed: invalid_grant');
    onTestFinished(async () => {
      await em.nativeUpdate(IntegrationSchema, { id: channelId }, { refreshNeeded: false });
    });
    const event = await em.fork().findOneOrFail(WebhookEventSchema, { type: 'channel.needs_reconnection' });
    // The trigger queued the fan-out with the event; run it here (the worker is not started in this test).
    expect(await emitWebhookEvent(herald.services, event.id)).toBe(1);
    expect(await emitWebhookEvent(herald.services, event.id)).toBe(0); // a second run of the job sends nothing twice
    const delivery = (await herald.rest('GET', `/webhooks/${webhook.id}/deliveries`)).body.deliveries[0];
    await deliverWebhook(herald.services, delivery.id);
    const body = json(received('/hook').at(-1)!);
    expect(body).toEqual({
      type: 'channel.needs_reconnection',
      timestamp: expect.any(String),
      data: {
        message: 'Your Telegram channel "' + integration.name + '" needs to be reconnected.',
        integrationId: channelId,
        integration: { id: channelId, name: integration.name, platform: 'telegram', profile: integration.profile },
        reason: 'the token refresh failed: invalid_grant',
        hint: expect.stringContaining('Reconnect the channel'),
      },
    });
    const health = (await herald.rest('GET', '/integrations')).body[0].health;
    expect(health).toEqual({ state: 'needs_reconnection', reason: 'the token refresh failed: invalid_grant', since: expect.any(String) });
  });

  it('post.partial names what went out, what failed and what was not sent', async () => {
    const rootId = await createPost(herald, channelId, ['<p>One</p>', '<p>Two</p>', '<p>Three</p>'], { type: 'draft' });
    await herald.rest('PUT', `/posts/${rootId}/status`, { status: 'schedule' });
    const realFetch = herald.services.fetch;
    let sends = 0;
    herald.services.fetch = async (request) => {
      if (request.url.endsWith('/sendMessage') && ++sends === 2) throw new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: 'Bad Request: chat is read-only', message: 'Bad Request: chat is read-only' });
      return realFetch(request);
    };
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    } finally {
      herald.services.fetch = realFetch;
    }
    const chain = await chainOf(herald, rootId);
    const event = await herald.services.orm.em.fork().findOneOrFail(WebhookEventSchema, { type: 'post.partial' });
    expect(event.data).toMatchObject({
      postId: rootId,
      integrationId: channelId,
      published: [{ postId: rootId, position: 0, releaseId: chain[0].releaseId, releaseUrl: chain[0].releaseUrl ?? null }],
      failed: { postId: chain[1].id, position: 1, error: expect.stringContaining('chat is read-only') },
      notAttempted: [{ postId: chain[2].id, position: 2 }],
      hint: expect.stringContaining(`PUT /posts/${rootId}/status`),
    });
  });

  it('post.published and post.failed reach the receiver through the worker, signed, with the release and the reason', async () => {
    const webhook = await createWebhook('/worker', ['post.published', 'post.failed']);
    const worker = await herald.startWorker();
    try {
      const published = await createPost(herald, channelId, ['<p>Hello webhooks</p>'], { type: 'now' });
      const arrived = await waitFor(async () => received('/worker').find((request) => json(request).type === 'post.published'));
      expect(verify(webhook.secret, arrived.headers, arrived.body.toString('utf8'))).toBe(true);
      const message = telegram.messages.at(-1)!;
      expect(json(arrived).data).toMatchObject({
        postId: published,
        integrationId: channelId,
        integration: { id: channelId, platform: 'telegram' },
        releaseId: String(message.message_id),
        releaseUrl: expect.any(String),
        publishedAt: expect.any(String),
      });

      telegram.failNext('sendMessage', telegramError(400, 'Bad Request: message is too long'));
      const failed = await createPost(herald, channelId, ['<p>Doomed</p>'], { type: 'now' });
      const failure = await waitFor(async () => received('/worker').find((request) => json(request).type === 'post.failed'));
      expect(json(failure).data).toMatchObject({ postId: failed, failedItem: { postId: failed, position: 0 }, error: expect.stringContaining('message is too long') });
      expect(json(failure).data.hint).toContain(`PUT /posts/${failed}/status`);
    } finally {
      await worker.stop();
    }
  });
});
