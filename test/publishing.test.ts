// Publishing end to end: the real worker, real Postgres, the three fake platforms over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { waitFor } from './helpers/posts.js';
import { connectFakeChannels } from './helpers/channels.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { PostSchema, NotificationSchema } from '../src/db/entities.js';
import { MAX_PUBLISH_ATTEMPTS, publishChain } from '../tools/internal/publish.js';
import { cancelPublish, hasPublishJob, sweepDuePosts } from '../tools/internal/queue.js';
import { PlatformHttpError } from '../src/lib/platform-http.js';

let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let telegram: TelegramFake;
const channel: Record<'bluesky' | 'mastodon' | 'telegram', string> = { bluesky: '', mastodon: '', telegram: '' };

beforeAll(async () => {
  [bluesky, mastodon, telegram] = await Promise.all([startBlueskyFake(), startMastodonFake(), startTelegramFake()]);
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  Object.assign(channel, await connectFakeChannels(herald, { bluesky, mastodon, telegram }));
});

afterAll(async () => {
  await herald.stop();
  await Promise.all([bluesky.close(), mastodon.close(), telegram.close()]);
});

const thread = (integrationId: string, date: Date, parts: string[], type = 'schedule') => ({
  type,
  date: date.toISOString(),
  shortLink: false,
  tags: [],
  posts: [{ integration: { id: integrationId }, value: parts.map((content) => ({ content, image: [] })), settings: {} }],
});

async function createThread(integrationId: string, date: Date, parts: string[], type = 'schedule'): Promise<string> {
  const response = await herald.rest('POST', '/posts', thread(integrationId, date, parts, type));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body[0].postId as string;
}

async function chain(rootId: string) {
  const em = herald.services.orm.em.fork();
  const root = await em.findOneOrFail(PostSchema, { id: rootId });
  return em.find(PostSchema, { group: root.group, integrationId: root.integrationId }, { orderBy: { position: 'asc' } });
}


const published = (rootId: string) => async () => {
  const items = await chain(rootId);
  return items.every((item) => item.state === 'PUBLISHED') ? items : undefined;
};


describe('a scheduled thread is published at its date, exactly once, on each platform', () => {
  it('publishes on Bluesky, Mastodon and Telegram with the items chained', async () => {
    const worker = await herald.startWorker();
    try {
      const date = new Date(Date.now() + 2500);
      const ids = {
        bluesky: await createThread(channel.bluesky, date, ['<p>Bluesky one</p>', '<p>Bluesky two</p>', '<p>Bluesky three</p>']),
        mastodon: await createThread(channel.mastodon, date, ['<p>Mastodon one</p>', '<p>Mastodon two</p>']),
        telegram: await createThread(channel.telegram, date, ['<p><strong>Telegram</strong> one</p>', '<p>Telegram two</p>']),
      };
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(bluesky.records).toHaveLength(0);
      expect(mastodon.statuses).toHaveLength(0);
      expect(telegram.messages).toHaveLength(0);

      const blueskyItems = await waitFor(published(ids.bluesky));
      const mastodonItems = await waitFor(published(ids.mastodon));
      const telegramItems = await waitFor(published(ids.telegram));
      expect(blueskyItems[0].publishedAt!.getTime()).toBeGreaterThanOrEqual(date.getTime() - 1000);

      expect(bluesky.records.map((record) => record.record.text)).toEqual(['Bluesky one', 'Bluesky two', 'Bluesky three']);
      const [first, second, third] = bluesky.records;
      expect((second.record.reply as any).parent.uri).toBe(first.uri);
      expect((third.record.reply as any).parent.uri).toBe(second.uri);
      expect((third.record.reply as any).root.uri).toBe(first.uri);
      expect(blueskyItems.map((item) => item.releaseId)).toEqual([first.uri, second.uri, third.uri]);

      expect(mastodon.statuses.map((status) => status.status)).toEqual(['Mastodon one', 'Mastodon two']);
      expect(mastodon.statuses[1].in_reply_to_id).toBe(mastodon.statuses[0].id);
      expect(mastodonItems[0].releaseId).toBe(mastodon.statuses[0].id);

      expect(telegram.messages.map((message) => message.text)).toEqual(['<strong>Telegram</strong> one', 'Telegram two']);
      expect(telegram.messages[1].reply_to_message_id).toBe(telegram.messages[0].message_id);
      expect(telegramItems[1].releaseId).toBe(String(telegram.messages[1].message_id));

      // Exactly once: the sweep and time passing publish nothing more.
      expect(await sweepDuePosts(herald.services.orm.em.fork(), new Date())).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(bluesky.records).toHaveLength(3);
      expect(mastodon.statuses).toHaveLength(2);
      expect(telegram.messages).toHaveLength(2);

      const notifications = await herald.rest('GET', '/notifications');
      expect(notifications.body.notifications.filter((item: { type: string }) => item.type === 'post_published')).toHaveLength(3);
      // Written with each outcome (tools/internal/publish-outcome.ts): the notification names its channel, and the audit
      // trail records the publication by Herald, from the worker.
      const em = herald.services.orm.em.fork();
      const made = await em.find(NotificationSchema, { type: 'post_published', integrationId: { $in: Object.values(channel) } });
      expect(made.map((notification) => notification.integrationId).sort()).toEqual(Object.values(channel).sort());
      const audit = await em.getConnection().execute(`select actor_kind, actor_name, via, target_id, integration_id from audit_event where action = 'post.published'`);
      expect((audit as { target_id: string }[]).sort((a, b) => (a.target_id < b.target_id ? -1 : 1))).toEqual(
        Object.entries(ids)
          .map(([platform, postId]) => ({ actor_kind: 'herald', actor_name: 'Herald', via: 'worker', target_id: postId, integration_id: channel[platform as keyof typeof channel] }))
          .sort((a, b) => (a.target_id < b.target_id ? -1 : 1)),
      );
    } finally {
      await worker.stop();
    }
  });
});

describe('resuming and failing', () => {
  it('resumes after the last recorded item when a run stops between two items', async () => {
    const before = bluesky.records.length;
    const rootId = await createThread(channel.bluesky, new Date(), ['<p>A1</p>', '<p>A2</p>', '<p>A3</p>']);
    const createRecordCalls = () => bluesky.server.requestsTo('POST', '/xrpc/com.atproto.repo.createRecord').length;
    const callsBefore = createRecordCalls();
    // The second createRecord answers 503: the first item stays recorded and the job asks to be retried.
    const realFetch = herald.services.fetch;
    let count = 0;
    herald.services.fetch = async (request) => {
      if (request.url.endsWith('/xrpc/com.atproto.repo.createRecord') && ++count === 2) {
        throw new PlatformHttpError({ status: 503, retryable: true, bodyExcerpt: 'Service Unavailable' });
      }
      return realFetch(request);
    };
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      herald.services.fetch = realFetch;
    }
    let state = await chain(rootId);
    expect(state.map((item) => item.state)).toEqual(['PUBLISHED', 'QUEUE', 'QUEUE']);
    expect(state[1].attemptStartedAt).toBeNull();
    expect(state[1].attempts).toBe(1);
    expect(state[1].lastError).toContain('503');
    expect(state[1].nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    expect(bluesky.records.length).toBe(before + 1);

    herald.setNow(new Date(state[1].nextAttemptAt!.getTime() + 1000));
    const outcome = await publishChain(herald.services, rootId);
    herald.setNow(undefined);
    expect(outcome.kind).toBe('published');
    state = await chain(rootId);
    expect(state.map((item) => item.state)).toEqual(['PUBLISHED', 'PUBLISHED', 'PUBLISHED']);
    expect(bluesky.records.slice(before).map((record) => record.record.text)).toEqual(['A1', 'A2', 'A3']);
    expect((bluesky.records[before + 1].record.reply as any).parent.uri).toBe(state[0].releaseId);
    // A1 was sent once: two calls reached the fake in the second run (A2, A3), one in the first.
    expect(createRecordCalls() - callsBefore).toBe(3);
  });

  it('never repeats an attempt left open by a crash: the item goes to ERROR "could not confirm"', async () => {
    // Telegram: no idempotency key and no recorded steps, so an open attempt cannot be told apart from a sent message.
    const rootId = await createThread(channel.telegram, new Date(), ['<p>T1</p>', '<p>T2</p>']);
    await publishChain(herald.services, rootId);
    const before = telegram.messages.length;
    // Simulate a crash while the platform call of item 2 was in flight.
    const em = herald.services.orm.em.fork();
    const items = await em.find(PostSchema, { id: { $in: (await chain(rootId)).map((item) => item.id) } }, { orderBy: { position: 'asc' } });
    Object.assign(items[1], { state: 'QUEUE', releaseId: null, releaseUrl: null, releaseMeta: null, publishedAt: null, attemptStartedAt: new Date() });
    await em.flush();
    const outcome = await publishChain(herald.services, rootId);
    expect(outcome.kind).toBe('failed');
    expect(telegram.messages.length).toBe(before);
    const [, second] = await chain(rootId);
    expect(second.state).toBe('ERROR');
    expect(second.error).toMatch(/could not confirm/i);
    const failures = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_partial' });
    expect(failures.some((notification) => /could not confirm/i.test(notification.content))).toBe(true);
  });

  it('repeats an interrupted attempt on Mastodon, whose create is idempotent, without a duplicate', async () => {
    const rootId = await createThread(channel.mastodon, new Date(), ['<p>Idempotent</p>']);
    const em = herald.services.orm.em.fork();
    await publishChain(herald.services, rootId);
    const count = mastodon.statuses.length;
    const root = await em.findOneOrFail(PostSchema, { id: rootId });
    Object.assign(root, { state: 'QUEUE', releaseId: null, attemptStartedAt: new Date() });
    await em.flush();
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect(mastodon.statuses.length).toBe(count);
  });

  it('puts the post in ERROR with the platform message on a permanent error, with a notification', async () => {
    const rootId = await createThread(channel.mastodon, new Date(), ['<p>Refused</p>']);
    mastodon.server.failNext('POST', '/api/v1/statuses', { status: 422, json: { error: 'Validation failed: Text character limit of 500 exceeded' } });
    const outcome = await publishChain(herald.services, rootId);
    expect(outcome.kind).toBe('failed');
    const [root] = await chain(rootId);
    expect(root.state).toBe('ERROR');
    expect(root.error).toContain('Text character limit of 500 exceeded');
    const list = await herald.rest('GET', '/notifications');
    expect(list.body.notifications[0].content).toContain('Text character limit of 500 exceeded');
    const em = herald.services.orm.em.fork();
    expect((await em.findOneOrFail(NotificationSchema, { type: 'post_failed', content: { $like: '%Text character limit%' } })).integrationId).toBe(channel.mastodon);
    const audit = await em.getConnection().execute(`select actor_kind, via, integration_id, summary from audit_event where action = 'post.failed' and target_id = ?`, [rootId]);
    expect(audit).toEqual([expect.objectContaining({ actor_kind: 'herald', via: 'worker', integration_id: channel.mastodon })]);
  });

  it('backs off on a retryable error and gives up with ERROR on the last attempt', async () => {
    const rootId = await createThread(channel.telegram, new Date(), ['<p>Busy</p>']);
    telegram.server.failNext('POST', `/bot${telegram.token}/sendMessage`, { status: 429, json: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } } }, 2);
    const first = await publishChain(herald.services, rootId);
    expect(first.kind).toBe('waiting');
    const [waiting] = await chain(rootId);
    expect(waiting.state).toBe('QUEUE');
    // Telegram's retry_after (1 s) is shorter than the first backoff step: the backoff wins.
    expect((first as { runAt: Date }).runAt.getTime() - Date.now()).toBeGreaterThan(25_000);
    const em = herald.services.orm.em.fork();
    const row = await em.findOneOrFail(PostSchema, { id: rootId });
    row.attempts = MAX_PUBLISH_ATTEMPTS - 1;
    row.nextAttemptAt = null;
    await em.flush();
    const outcome = await publishChain(herald.services, rootId);
    expect(outcome.kind).toBe('failed');
    const [failed] = await chain(rootId);
    expect(failed.state).toBe('ERROR');
    expect(failed.error).toMatch(/gave up after 8 attempts/);
  });

  it('refreshes an expired Bluesky session once and publishes', async () => {
    const rootId = await createThread(channel.bluesky, new Date(), ['<p>After refresh</p>']);
    const sealed = async () => (await herald.services.orm.em.fork().getConnection().execute<{ credentials: string }[]>('select credentials from integration where id = ?', [channel.bluesky]))[0].credentials;
    const before = await sealed();
    bluesky.expireAccessTokens();
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect(bluesky.records.at(-1)?.record.text).toBe('After refresh');
    expect(bluesky.server.requestsTo('POST', '/xrpc/com.atproto.server.refreshSession').length).toBeGreaterThan(0);
    // The refreshed session is stored (the channel the publication read is attached before the refresh changes it).
    expect(await sealed()).not.toBe(before);
  });
});

describe('the state machine and the queue', () => {
  it('DRAFT has no job; schedule queues it at its stored date; draft cancels; a published post answers 409', async () => {
    const date = new Date(Date.now() + 3600_000);
    const rootId = await createThread(channel.mastodon, date, ['<p>Later</p>'], 'draft');
    const em = () => herald.services.orm.em.fork();
    expect(await hasPublishJob(em(), rootId)).toBe(false);
    expect((await herald.rest('PUT', `/posts/${rootId}/status`, { status: 'schedule' })).body).toEqual({ id: rootId, state: 'QUEUE' });
    expect(await hasPublishJob(em(), rootId)).toBe(true);
    const [queued] = await chain(rootId);
    expect(queued.publishDate.toISOString()).toBe(date.toISOString());
    expect((await herald.rest('PUT', `/posts/${rootId}/status`, { status: 'draft' })).body).toEqual({ id: rootId, state: 'DRAFT' });
    expect(await hasPublishJob(em(), rootId)).toBe(false);

    const now = await createThread(channel.mastodon, new Date(), ['<p>Now</p>']);
    await publishChain(herald.services, now);
    const again = await herald.rest('PUT', `/posts/${now}/status`, { status: 'schedule' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect((await chain(now))[0].state).toBe('PUBLISHED');
  });

  it('deleting a queued post removes its job; the sweep re-enqueues a due post that lost its job', async () => {
    const rootId = await createThread(channel.mastodon, new Date(Date.now() + 3600_000), ['<p>Delete me</p>']);
    const em = herald.services.orm.em.fork();
    expect(await hasPublishJob(em, rootId)).toBe(true);
    expect((await herald.rest('DELETE', `/posts/${rootId}`)).status).toBe(200);
    expect(await hasPublishJob(em, rootId)).toBe(false);

    const lost = await createThread(channel.mastodon, new Date(Date.now() - 60_000), ['<p>Lost job</p>']);
    await cancelPublish(em, lost);
    expect(await hasPublishJob(em, lost)).toBe(false);
    expect(await sweepDuePosts(em, new Date())).toBeGreaterThanOrEqual(1);
    expect(await hasPublishJob(em, lost)).toBe(true);
  });

  it('refuses at validation a platform whose publishing is not built, naming it', async () => {
    const response = await herald.rest('POST', '/posts', thread(channel.mastodon, new Date(), ['<p>ok</p>']));
    expect(response.status).toBe(200);
    const em = herald.services.orm.em.fork();
    const { IntegrationSchema } = await import('../src/db/entities.js');
    const mastodonChannel = await em.findOneOrFail(IntegrationSchema, { id: channel.mastodon });
    // Any platform still without publishing will do; when every one publishes, there is nothing left to refuse.
    const { providers } = await import('../providers/index.js');
    const unbuilt = providers.find((provider) => !provider.publish);
    if (!unbuilt) return;
    const clone = em.create(IntegrationSchema, { ...mastodonChannel, id: 'unbuilt-channel-1', providerIdentifier: unbuilt.identifier, internalId: 'unbuilt-1', name: 'My unbuilt channel' });
    await em.flush();
    const refused = await herald.rest('POST', '/posts', thread(clone.id, new Date(), ['<p>hello</p>']));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/not supported yet/);
    expect(refused.body.message).toContain(unbuilt.name);
  });
});
