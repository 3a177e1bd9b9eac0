import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted, submitPost, waitForPublished } from '../helpers/posts.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { publishChain } from '../../tools/internal/publish.js';
import mastodon, { mastodonPolling } from '../../providers/mastodon.js';
import { createPlatformFetch, PlatformHttpError } from '../../src/lib/platform-http.js';
import { startMastodonFake, type MastodonFake } from '../fakes/mastodon.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';

let fake: MastodonFake;

beforeAll(() => {
  mastodonPolling.delayMs = 5;
});

beforeEach(async () => {
  fake = await startMastodonFake({ token: 'good-token' });
});

afterEach(async () => {
  await fake.close();
});

const context = () => providerContext({ auth: fake.auth });
const connectContext = () => ({ fetch: createPlatformFetch({ timeoutMs: 5000, userAgent: 'Herald-test/1.0' }), dial: async () => undefined, endpoints: mastodon.endpoints });

describe('mastodon connect', () => {
  it('connects with a valid token and keeps the instance, without its trailing slash', async () => {
    const account = await mastodon.connect!(connectContext(), { instance: `${fake.url}//`, accessToken: 'good-token' });
    expect(account).toEqual({
      internalId: fake.account.id,
      name: 'Herald Test',
      profile: `herald@127.0.0.1:${fake.server.port}`,
      picture: fake.account.avatar,
      accessToken: 'good-token',
      data: { instance: fake.url },
      channelSettings: { max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23, image_size_limit: 16_777_216, video_size_limit: 103_809_024, description_limit: 1500 },
    });
    expect(fake.server.requestsTo('GET', '/api/v1/accounts/verify_credentials')[0].headers.authorization).toBe('Bearer good-token');
  });

  it('falls back to the username when the display name is empty', async () => {
    fake.account.display_name = '';
    const account = await mastodon.connect!(connectContext(), { instance: fake.url, accessToken: 'good-token' });
    expect(account.name).toBe('herald');
  });

  it('rejects an invalid token as a 401 PlatformHttpError', async () => {
    const failure = await mastodon.connect!(connectContext(), { instance: fake.url, accessToken: 'wrong' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PlatformHttpError);
    expect((failure as PlatformHttpError).isAuthError).toBe(true);
    expect((failure as PlatformHttpError).retryable).toBe(false);
  });
});

describe('mastodon publish', () => {
  it('publishes a text status as a public form with the post id as Idempotency-Key', async () => {
    const ref = await mastodon.publish!(context(), { postId: 'post-1', text: 'Hello fediverse', media: [] });
    const [request] = fake.server.requestsTo('POST', '/api/v1/statuses');
    expect(request.headers['idempotency-key']).toBe('post-1');
    expect(request.headers.authorization).toBe('Bearer good-token');
    expect(request.form?.get('status')).toBe('Hello fediverse');
    expect(request.form?.get('visibility')).toBe('public');
    expect(request.form?.has('in_reply_to_id')).toBe(false);
    expect(request.form?.has('media_ids[]')).toBe(false);
    expect(fake.statuses).toHaveLength(1);
    expect(ref).toEqual({ id: fake.statuses[0].id, url: `${fake.url}/@herald/${fake.statuses[0].id}` });
  });

  it('uploads an image with its alt text and attaches it', async () => {
    const png = tinyPng();
    const file = mediaFile(png, { url: 'https://media.example/cat.png', alt: 'A red pixel' });
    await mastodon.publish!(context(), { postId: 'post-2', text: 'With a picture', media: [file] });
    expect(fake.media).toHaveLength(1);
    expect(fake.media[0].bytes.equals(png)).toBe(true);
    expect(fake.media[0]).toMatchObject({ mimeType: 'image/png', description: 'A red pixel', filename: 'cat.png' });
    expect(fake.server.requestsTo('GET', '/api/v1/media/*')).toHaveLength(0);
    const [request] = fake.server.requestsTo('POST', '/api/v1/statuses');
    expect(request.form?.getAll('media_ids[]')).toEqual([fake.media[0].id]);
    expect(fake.statuses[0].media_ids).toEqual([fake.media[0].id]);
  });

  it('polls media that is still processing until it is ready, then posts', async () => {
    fake.setProcessingPolls(2);
    const video = mediaFile(Buffer.from('not really a video'), { kind: 'video', mimeType: 'video/mp4', url: 'https://media.example/v' });
    await mastodon.publish!(context(), { postId: 'post-3', text: 'A clip', media: [video] });
    const polls = fake.server.requestsTo('GET', '/api/v1/media/*');
    expect(polls).toHaveLength(3);
    expect(polls.every((poll) => poll.path === `/api/v1/media/${fake.media[0].id}`)).toBe(true);
    expect(fake.media[0].filename).toBe('upload-1.mp4');
    expect(fake.statuses[0].media_ids).toEqual([fake.media[0].id]);
  });

  it('gives up with a retryable error when processing never finishes', async () => {
    const saved = mastodonPolling.attempts;
    mastodonPolling.attempts = 3;
    try {
      fake.setProcessingPolls(10);
      const failure = await mastodon
        .publish!(context(), { postId: 'post-4', text: 'Slow', media: [mediaFile(tinyPng())] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PlatformHttpError);
      expect((failure as PlatformHttpError).retryable).toBe(true);
      expect(fake.server.requestsTo('GET', '/api/v1/media/*')).toHaveLength(3);
      expect(fake.statuses).toHaveLength(0);
    } finally {
      mastodonPolling.attempts = saved;
    }
  });

  it('replies to the parent with in_reply_to_id for a comment', async () => {
    const root = await mastodon.publish!(context(), { postId: 'root', text: 'First', media: [] });
    const reply = await mastodon.comment!(context(), { postId: 'second', text: 'Second', media: [] }, { root, parent: root });
    const requests = fake.server.requestsTo('POST', '/api/v1/statuses');
    expect(requests[1].form?.get('in_reply_to_id')).toBe(root.id);
    expect(requests[1].headers['idempotency-key']).toBe('second');
    expect(fake.statuses[1]).toMatchObject({ id: reply.id, in_reply_to_id: root.id });
  });

  it('creates one status when the same idempotency key is sent twice', async () => {
    const first = await mastodon.publish!(context(), { postId: 'same', text: 'Once', media: [] });
    const second = await mastodon.publish!(context(), { postId: 'same', text: 'Once', media: [] });
    expect(second).toEqual(first);
    expect(fake.server.requestsTo('POST', '/api/v1/statuses')).toHaveLength(2);
    expect(fake.statuses).toHaveLength(1);
  });

  it('surfaces a revoked token on publish as an auth error', async () => {
    const failure = await mastodon
      .publish!(providerContext({ auth: { ...fake.auth, accessToken: 'revoked' } }), { postId: 'p', text: 'x', media: [] })
      .catch((error: unknown) => error);
    expect((failure as PlatformHttpError).isAuthError).toBe(true);
    expect((failure as PlatformHttpError).bodyExcerpt).toContain('The access token is invalid');
  });

  it('uses the instance endpoint when the channel stored none', async () => {
    await mastodon.publish!(providerContext({ endpoints: { instance: `${fake.url}/` }, auth: { ...fake.auth, data: {} } }), { postId: 'p', text: 'x', media: [] });
    expect(fake.statuses).toHaveLength(1);
  });
});

describe('mastodon analytics', () => {
  it('reports favourites, boosts and replies of a status', async () => {
    const ref = await mastodon.publish!(context(), { postId: 'a', text: 'Count me', media: [] });
    Object.assign(fake.statuses[0], { favourites_count: 5, reblogs_count: 2, replies_count: 1 });
    const metrics = await mastodon.postAnalytics!(context(), ref, 7);
    const today = new Date().toISOString().slice(0, 10);
    expect(metrics).toEqual([
      { label: 'Favourites', data: [{ total: '5', date: today }], percentageChange: 0 },
      { label: 'Boosts', data: [{ total: '2', date: today }], percentageChange: 0 },
      { label: 'Replies', data: [{ total: '1', date: today }], percentageChange: 0 },
    ]);
  });

  it('reports followers, following and posts of the account, and the engagement of the period\'s statuses per day across pages', async () => {
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString();
    // 45 statuses, oldest first: 5 from 10 days ago (outside a 7-day period), 20 from 2 days ago, 20 from today.
    for (let index = 0; index < 45; index++) {
      const ago = index < 5 ? 10 : index < 25 ? 2 : 0;
      fake.statuses.push({ id: String(112_000_000_000_000_000n + BigInt(index)), status: `s${index}`, in_reply_to_id: null, media_ids: [], idempotencyKey: null, visibility: 'public', created_at: day(ago), favourites_count: 2, reblogs_count: ago === 0 ? 1 : 0, replies_count: 0 });
    }
    const metrics = await mastodon.analytics!(context(), 7);
    expect(metrics.slice(0, 3).map((metric) => [metric.label, metric.data[0].total])).toEqual([
      ['Followers', '42'],
      ['Following', '7'],
      ['Posts', '0'],
    ]);
    const pages = fake.server.requestsTo('GET', '/api/v1/accounts/*/statuses');
    expect(pages.map((request) => [request.query.get('limit'), request.query.get('exclude_reblogs'), request.query.get('max_id')])).toEqual([
      ['40', 'true', null],
      ['40', 'true', fake.statuses[5].id],
    ]);
    const daily = Object.fromEntries(metrics.slice(3).map((metric) => [metric.label, metric.data.map((point) => point.total)]));
    expect(Object.keys(daily)).toEqual(['Posts published', 'Favourites', 'Boosts', 'Replies']);
    expect(daily['Posts published']).toEqual(['0', '0', '0', '0', '20', '0', '20']);
    expect(daily.Favourites).toEqual(['0', '0', '0', '0', '40', '0', '40']);
    expect(daily.Boosts.at(-1)).toBe('20');
    expect(metrics[3].data.at(-1)!.date).toBe(new Date().toISOString().slice(0, 10));
  });

  it('lists recent statuses without replies, media preview first', async () => {
    const text = await mastodon.publish!(context(), { postId: 'r1', text: 'Plain', media: [] });
    await mastodon.comment!(context(), { postId: 'r2', text: 'Reply', media: [] }, { root: text, parent: text });
    const image = await mastodon.publish!(context(), { postId: 'r3', text: 'Pic', media: [mediaFile(tinyPng())] });
    const recent = await mastodon.recent!(context());
    expect(recent).toEqual([
      { id: image.id, url: expect.stringContaining('/small/') },
      { id: text.id, url: text.url },
    ]);
    const [request] = fake.server.requestsTo('GET', '/api/v1/accounts/*/statuses');
    expect(request.path).toBe(`/api/v1/accounts/${fake.account.id}/statuses`);
    expect(request.query.get('exclude_replies')).toBe('true');
    expect(request.query.get('limit')).toBe('20');
  });
});

describe('mastodon validate', () => {
  const image = { kind: 'image' as const, url: 'https://media.example/i.png' };
  const video = { kind: 'video' as const, url: 'https://media.example/v.mp4' };

  it('accepts up to 4 images or a single video', () => {
    expect(mastodon.validate!([{ text: 'ok', media: [image, image, image, image] }], {})).toBeUndefined();
    expect(mastodon.validate!([{ text: 'ok', media: [video] }], {})).toBeUndefined();
    expect(mastodon.validate!([{ text: 'ok', media: [] }], {})).toBeUndefined();
  });

  it('rejects more than 4 attachments', () => {
    expect(mastodon.validate!([{ text: 'x', media: [image, image, image, image, image] }], {})).toMatch(/at most 4 attachments/);
  });

  it('rejects a video together with other media, naming the thread item', () => {
    const problem = mastodon.validate!([{ text: 'a', media: [] }, { text: 'b', media: [video, image] }], {});
    expect(problem).toMatch(/video only on its own/);
    expect(problem).toContain('item 2');
  });

  it("uses the instance's configured limits, and Mastodon's defaults when it reported none", () => {
    const channel = { max_characters: 5000, max_media_attachments: 6, image_size_limit: 1_048_576 };
    expect(mastodon.maxLength({ channel })).toBe(5000);
    expect(mastodon.validate!([{ text: 'ok', media: Array(6).fill(image) }], {}, channel)).toBeUndefined();
    expect(mastodon.validate!([{ text: 'ok', media: Array(7).fill(image) }], {}, channel)).toMatch(/at most 6 attachments/);
    expect(mastodon.validate!([{ text: 'ok', media: [{ ...image, size: 2_097_152 }] }], {}, channel)).toMatch(/is 2.0 MB; this Mastodon instance takes up to 1.0 MB/);
    expect(mastodon.validate!([{ text: 'ok', media: [{ ...image, size: 2_097_152 }] }], {}, {})).toBeUndefined();
  });

  it('describes the platform to agents', () => {
    expect(mastodon.maxLength({})).toBe(500);
    expect(mastodon.rules).toMatch(/500 characters/);
    expect(mastodon.rules).toMatch(/4 images/);
    expect(mastodon.rules).toMatch(/1 video/);
    expect(mastodon.idempotentCreate).toBe(true);
    expect(mastodon.recordsSteps).toBe(true);
  });
});

describe('mastodon through Herald', () => {
  let herald: Herald;
  let instance: MastodonFake;
  let channelId: string;

  beforeAll(async () => {
    instance = await startMastodonFake({ token: 'herald-token' });
    herald = await startHerald({}, { guard: { allowLoopback: true } });
  });
  afterAll(async () => {
    await herald?.stop();
    await instance?.close();
  });

  it('refuses a wrong token, connects with the right one, publishes through the worker and answers channel analytics', async () => {
    const wrong = await herald.rest('POST', '/integrations/mastodon/connect', { instance: instance.url, accessToken: 'nope' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain('Mastodon refused the connection');
    const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: instance.url, accessToken: 'herald-token' });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, connected.body.id, ['<p>Through the worker</p>', '<p>And a reply</p>'], { type: 'now' });
      await waitForPublished(herald, rootId);
    } finally {
      await worker.stop();
    }
    expect(instance.statuses.map((status) => status.status)).toEqual(['Through the worker', 'And a reply']);
    instance.statuses[0].favourites_count = 3;
    const analytics = await herald.rest('GET', `/analytics/${connected.body.id}?date=30`);
    expect(analytics.status).toBe(200);
    const byLabel = Object.fromEntries(analytics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data]));
    expect(byLabel.Posts).toEqual([{ total: '2', date: new Date().toISOString().slice(0, 10) }]);
    expect(byLabel['Posts published']).toHaveLength(30);
    expect(byLabel.Favourites.at(-1).total).toBe('3');
    expect(byLabel.Replies.at(-1).total).toBe('1');
    channelId = connected.body.id;
  });

  it('publishes a 3,000-character post to an instance configured for 5,000, read when the channel connects', async () => {
    instance.configuration.statuses.max_characters = 5000;
    const again = await herald.rest('POST', '/integrations/mastodon/connect', { instance: instance.url, accessToken: 'herald-token' });
    expect(again.body.id).toBe(channelId);
    const long = 'a'.repeat(3000);
    const rootId = await createPost(herald, channelId, [long], { type: 'now' });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(instance.statuses.at(-1)!.status).toBe(long);
    const over = await submitPost(herald, channelId, ['a'.repeat(5001)], { type: 'now' });
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/maximum characters is 5000, we got 5001/);
  });

  describe('a create of unknown outcome is recovered as exactly one status, an older one of the same text never taken for it', () => {
    const isCreate = (request: { url: string; method?: string }) => request.method === 'POST' && request.url.endsWith('/api/v1/statuses');
    const withText = (text: string) => instance.statuses.filter((status) => status.status === text);
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    /** Moves the open status step's start back, as if the attempt began `hours` ago (beyond Mastodon's idempotency hour). */
    const startedHoursAgo = (rootId: string, hours: number) =>
      reopenAsInterrupted(herald, rootId, () => ({ status: { state: 'started', startedAt: hoursAgo(hours).toISOString() } }));
    const lose = async (rootId: string, how: typeof loseAnswerOf) => {
      const restore = how(herald, isCreate);
      try {
        expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
      } finally {
        restore();
      }
    };

    it('lost before it arrived, within the hour: repeated with the same Idempotency-Key, made once', async () => {
      const older = instance.seedStatus('Lost on the way', { createdAt: hoursAgo(0.5) });
      const rootId = await createPost(herald, channelId, ['Lost on the way'], { type: 'now' });
      await lose(rootId, loseRequestOf);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      const made = withText('Lost on the way').filter((status) => status !== older);
      expect(made).toHaveLength(1);
      expect((await chainOf(herald, rootId))[0].releaseId).toBe(made[0].id);
    });

    it('lost after it arrived, within the hour: the same key answers the status made, nothing twice', async () => {
      const older = instance.seedStatus('Answer lost', { createdAt: hoursAgo(0.5) });
      const rootId = await createPost(herald, channelId, ['Answer lost'], { type: 'now' });
      await lose(rootId, loseAnswerOf);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      const made = withText('Answer lost').filter((status) => status !== older);
      expect(made).toHaveLength(1);
      expect((await chainOf(herald, rootId))[0].releaseId).toBe(made[0].id);
    });

    it('lost before it arrived, hours ago: the lookup finds nothing new, so it is made once', async () => {
      const older = instance.seedStatus('Long lost', { createdAt: hoursAgo(3) });
      const rootId = await createPost(herald, channelId, ['Long lost'], { type: 'now' });
      await lose(rootId, loseRequestOf);
      await startedHoursAgo(rootId, 2);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      const made = withText('Long lost').filter((status) => status !== older);
      expect(made).toHaveLength(1);
      expect((await chainOf(herald, rootId))[0].releaseId).toBe(made[0].id);
    });

    it('lost after it arrived, hours ago (the key forgotten): the status made since the attempt is linked, not made again', async () => {
      const older = instance.seedStatus('Long answered', { createdAt: hoursAgo(3) });
      const rootId = await createPost(herald, channelId, ['Long answered', 'Its reply'], { type: 'now' });
      await lose(rootId, loseAnswerOf);
      instance.forgetIdempotencyKeys();
      await startedHoursAgo(rootId, 2);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      const made = withText('Long answered').filter((status) => status !== older);
      expect(made).toHaveLength(1);
      const chain = await chainOf(herald, rootId);
      expect(chain[0].releaseId).toBe(made[0].id);
      expect(withText('Its reply')[0].in_reply_to_id).toBe(made[0].id);
    });
  });
});
