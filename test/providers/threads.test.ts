// Threads end to end against its fake: OAuth with the long-lived token exchange, containers made from Herald's public media
// URLs (the fake downloads them), carousels, a video processed over several checks, refreshes, throttling, refusals,
// insights, and a publish of unknown outcome resumed without a duplicate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import threads, { threadsLength } from '../../providers/threads/index.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startThreadsFake, type ThreadsFake } from '../fakes/threads.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { acceptedSamples, goodMp4, uploadAll } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished } from '../helpers/posts.js';
import { providerContext, tinyPng } from '../helpers/provider-context.js';

let fake: ThreadsFake;
let herald: Herald;
let channelId: string;

/** A post the account made a day ago, outside Herald. */
const seedPost = (text: string) => {
  const post = { id: `1799${Date.now()}`, container: 'none', media_type: 'TEXT_POST', text, reply_to_id: null, children: [], timestamp: new Date(Date.now() - 86_400_000).toISOString().replace(/\.\d{3}Z$/, '+0000'), permalink: 'https://www.threads.com/@herald/post/old', username: fake.user.username, hide_status: 'NOT_HUSHED' as const, insights: { views: 0, likes: 0, replies: 0, reposts: 0, quotes: 0, shares: 0 } };
  fake.posts.push(post);
  return post;
};
let media: Record<'png' | 'jpeg' | 'mp4' | 'webp', { id: string; path: string }>;
const endpoints = () => ({ authorize: fake.url, graph: fake.url, graphVersion: 'v1.0' });

beforeAll(async () => {
  fake = await startThreadsFake();
  herald = await startHerald(
    {
      THREADS_CLIENT_ID: fake.oauth.clientId,
      THREADS_CLIENT_SECRET: fake.oauth.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ threads: { authorize: fake.url, graph: fake.url } }),
      PUBLISH_RECHECK_MAX_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  const samples = acceptedSamples();
  const webp = samples.find((sample) => sample.type === 'image/webp')!;
  media = await uploadAll(herald, { png: [tinyPng(), 'dot.png'], jpeg: [samples[0].bytes, 'red.jpg'], mp4: [goodMp4(), 'clip.mp4'], webp: [webp.bytes, 'still.webp'] });
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const publishes = () => fake.server.requestsTo('POST', '/v1.0/*/threads_publish');
const notifications = async () => herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId }, { orderBy: { createdAt: 'desc' } });
const channelRow = () => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });

describe('connecting a Threads account', () => {
  it('trades the code for a short-lived token, then a 60-day token, and saves the profile', async () => {
    const connected = await connectOAuthChannel(herald, 'threads');
    channelId = connected.integrationId;
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/oauth/authorize');
    expect(query.get('scope')).toBe('threads_basic,threads_content_publish,threads_read_replies,threads_manage_replies,threads_manage_insights,threads_delete');
    expect(query.has('code_challenge')).toBe(false);

    const [exchange] = fake.server.requestsTo('POST', '/oauth/access_token');
    expect(Object.fromEntries(exchange.form!)).toMatchObject({
      client_id: fake.oauth.clientId,
      client_secret: fake.oauth.clientSecret,
      grant_type: 'authorization_code',
      redirect_uri: `${herald.url}/api/integrations/social/threads/callback`,
    });
    const [longLived] = fake.server.requestsTo('GET', '/access_token');
    expect(longLived.query.get('grant_type')).toBe('th_exchange_token');
    expect(longLived.query.get('client_secret')).toBe(fake.oauth.clientSecret);

    const listed = (await herald.rest('GET', '/integrations')).body.find((item: { id: string }) => item.id === channelId);
    expect(listed).toMatchObject({ identifier: 'threads', name: 'Herald Test', profile: 'herald.test', picture: fake.user.threads_profile_picture_url });
    const row = await channelRow();
    expect(row.internalId).toBe(fake.user.id);
    expect(row.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 59 * 86_400_000);
  });
});

describe('publishing on Threads', () => {
  it('publishes a three-item thread: a picture, a carousel made from our public URLs, then text, as a reply chain', async () => {
    const rootId = await createPost(herald, channelId, [
      { content: '<p>Thread <strong>one</strong></p>', image: [media.png] },
      { content: '<p>Thread two</p>', image: [media.png, media.jpeg] },
      '<p>Thread three</p>',
    ]);
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('published');
    const [first, second, third] = fake.posts.slice(-3);
    expect([first.text, second.text, third.text]).toEqual(['Thread 𝗼𝗻𝗲', 'Thread two', 'Thread three']);
    expect([first.media_type, second.media_type, third.media_type]).toEqual(['IMAGE', 'CAROUSEL_ALBUM', 'TEXT_POST']);
    expect([first.reply_to_id, second.reply_to_id, third.reply_to_id]).toEqual([null, first.id, second.id]);

    const containerOf = (id: string) => fake.containers.find((item) => item.id === id)!;
    expect(containerOf(first.container).params).toMatchObject({ media_type: 'IMAGE', image_url: media.png.path });
    const children = second.children.map(containerOf);
    expect(children.map((child) => [child.params.media_type, child.params.is_carousel_item, child.params.image_url])).toEqual([
      ['IMAGE', 'true', media.png.path],
      ['IMAGE', 'true', media.jpeg.path],
    ]);
    expect(containerOf(third.container).params).toMatchObject({ media_type: 'TEXT', text: 'Thread three', reply_to_id: second.id });
    // Threads really fetched the files from Herald's public media URLs.
    const fetched = fake.downloads.find((item) => item.url === media.png.path)!;
    expect([fetched.status, fetched.contentType]).toEqual([200, 'image/png']);
    expect(fetched.bytes.equals(tinyPng())).toBe(true);

    const chain = await chainOf(herald, rootId);
    expect(chain.map((item) => item.releaseId)).toEqual([first.id, second.id, third.id]);
    expect(chain[0].releaseUrl).toBe(first.permalink);
  });

  it('re-schedules while a video container is IN_PROGRESS and publishes it once FINISHED', async () => {
    fake.setVideoChecks(3);
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>A clip</p>', image: [media.mp4] }]);
      const first = await publishChain(herald.services, rootId);
      expect(first.kind).toBe('waiting');
      const container = fake.containers.at(-1)!;
      expect(container).toMatchObject({ status: 'IN_PROGRESS', params: { media_type: 'VIDEO', video_url: media.mp4.path } });
      // The fake refuses what Threads refuses: publishing before the container is FINISHED.
      const early = await fetch(`${fake.url}/v1.0/${fake.user.id}/threads_publish`, { method: 'POST', body: new URLSearchParams({ creation_id: container.id, access_token: fake.channelAuth().accessToken }) });
      expect((await early.json()).error).toMatchObject({ code: 9007, error_subcode: 2207027 });

      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('published');
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'published']);
      expect(fake.containers.filter((item) => item.params.video_url === media.mp4.path)).toHaveLength(1);
      expect(publishes().filter((request) => request.form?.get('creation_id') === container.id && request.headers['user-agent'] === 'Herald-test')).toHaveLength(1);
      expect(fake.downloads.find((item) => item.url === media.mp4.path)!.bytes.equals(goodMp4())).toBe(true);
      expect(fake.posts.at(-1)).toMatchObject({ text: 'A clip', media_type: 'VIDEO' });
    } finally {
      fake.setVideoChecks(0);
    }
  });

  it('fails with the container\'s reason, in words to act on, and notifies', async () => {
    fake.failNextVideo('INVALID_ASPEC_RATIO');
    const rootId = await createPost(herald, channelId, [{ content: '<p>Wrong shape</p>', image: [media.mp4] }]);
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome).toMatchObject({ kind: 'failed', error: 'Threads refused the post: the video aspect ratio is not accepted by Threads; use one between 0.01:1 and 10:1 (9:16 recommended)' });
    expect((await notifications())[0]).toMatchObject({ type: 'post_failed', content: expect.stringContaining('aspect ratio') });
  });

  it('refuses with Meta\'s own message when the container is refused', async () => {
    fake.server.failNext('POST', '/v1.0/*/threads', { status: 400, json: { error: { message: 'Invalid parameter', type: 'THApiException', code: 100, error_subcode: 2207006, error_user_msg: 'The image could not be fetched from the URL.', fbtrace_id: 'x' } } });
    const rootId = await createPost(herald, channelId, [{ content: '<p>Refused</p>', image: [media.jpeg] }]);
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome).toMatchObject({ kind: 'failed', error: 'Threads refused the post: The image could not be fetched from the URL. (code 100/2207006)' });
  });

  it('retries after Meta throttles, waiting at least as long as a Retry-After asks', async () => {
    fake.server.failNext('POST', '/v1.0/*/threads', { status: 429, headers: { 'retry-after': '600' }, json: { error: { message: 'Application request limit reached', type: 'OAuthException', code: 4, is_transient: true } } });
    const rootId = await createPost(herald, channelId, ['<p>Throttled</p>']);
    const before = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(599_000);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeLessThan(605_000);
    expect(waiting.lastError).toBe('Threads: rate limit reached (Application request limit reached, code 4)');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)!.text).toBe('Throttled');
  });

  it('a publish lost before it reached Threads: the container is not published, so it is published once', async () => {
    const older = seedPost('Said before');
    const rootId = await createPost(herald, channelId, ['<p>Said before</p>']);
    const restore = loseRequestOf(herald, (request) => request.url.endsWith('/threads_publish'));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const made = fake.posts.filter((post) => post.text === 'Said before' && post !== older);
    expect(made).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(made[0].id);
  });

  it('a publish lost after it reached Threads is never linked to an older post of the same text: with the new one not listed yet, it stops with "could not confirm"', async () => {
    const older = seedPost('Said again');
    const rootId = await createPost(herald, channelId, ['<p>Said again</p>']);
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/threads_publish'));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    const made = fake.posts.filter((post) => post.text === 'Said again' && post !== older);
    expect(made).toHaveLength(1);
    // Threads' listing has not caught up yet: only the older post of the same text shows. It is not taken for ours.
    fake.posts.splice(fake.posts.indexOf(made[0]), 1);
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome).toMatchObject({ kind: 'failed', error: expect.stringContaining('Could not confirm whether Threads published this item') });
    expect(fake.posts.filter((post) => post.text === 'Said again')).toEqual([older]);
    expect((await chainOf(herald, rootId))[0].releaseId).toBeNull();
  });

  it('resumes a reply whose publish reached Threads unconfirmed: found among the replies, not published twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Resume one</p>', '<p>Resume two</p>', '<p>Resume three</p>']);
    let count = 0;
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/threads_publish') && ++count === 2);
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    const published = publishes().length;
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(publishes().length).toBe(published + 1); // only the third item
    const [one, two, three] = fake.posts.slice(-3);
    expect([one.text, two.text, three.text]).toEqual(['Resume one', 'Resume two', 'Resume three']);
    expect(three.reply_to_id).toBe(two.id);
    expect((await chainOf(herald, rootId)).map((item) => item.releaseId)).toEqual([one.id, two.id, three.id]);
    expect(fake.server.requestsTo('GET', '/v1.0/*/replies')).toHaveLength(1);
  });

  it('publishes through the real worker', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, ['<p>From the worker</p>', '<p>Its reply</p>'], { date: new Date(Date.now() + 500) });
      const chain = await waitForPublished(herald, rootId);
      expect(fake.posts.find((post) => post.id === chain[1].releaseId)).toMatchObject({ text: 'Its reply', reply_to_id: chain[0].releaseId });
    } finally {
      await worker.stop();
    }
  });
});

describe('Threads rules, checked before anything is created', () => {
  const item = (text: string, ...urls: string[]) => ({ text, media: urls.map((url) => ({ kind: url.endsWith('.mp4') ? ('video' as const) : ('image' as const), url })) });

  it('counts emoji as their UTF-8 bytes, and limits links, carousel size and picture types', () => {
    expect(threadsLength('héllo 😀')).toBe(10);
    expect(threads.validate!([item('😀'.repeat(125))], {})).toBeUndefined();
    expect(threads.validate!([item('ok'), item('😀'.repeat(126))], {})).toBe('Item 2 is 504 characters as Threads counts them (each emoji as its UTF-8 bytes); Threads takes 500: shorten it.');
    expect(threads.validate!([item('a https://a.example b https://b.example c https://c.example d https://d.example e https://e.example f https://f.example')], {})).toMatch(/6 links; Threads takes at most 5/);
    expect(threads.validate!([item('x', ...Array.from({ length: 21 }, (_, index) => `https://m.example/${index}.jpg`))], {})).toMatch(/at most 20/);
    expect(threads.validate!([item('x', ...Array.from({ length: 20 }, (_, index) => `https://m.example/${index}.${index % 2 ? 'jpg' : 'mp4'}`))], {})).toBeUndefined();
    expect(threads.validate!([item('x', 'https://m.example/a.webp')], {})).toBe('The post has a WEBP picture; Threads takes JPEG or PNG pictures: convert it.');
  });

  it('answers 400 over REST naming the channel and the fix', async () => {
    const response = await submitPost(herald, channelId, [{ content: '<p>A picture</p>', image: [media.webp] }], { type: 'now' });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/Herald Test \(threads, id [^)]+\): .*WEBP picture; Threads takes JPEG or PNG/);
  });
});

describe('Threads insights', () => {
  it('reports the account\'s views day by day and its totals, followers included', async () => {
    Object.assign(fake.posts[0].insights, { views: 40, likes: 5, reposts: 2 });
    const response = await herald.rest('GET', `/analytics/${channelId}?date=30`);
    expect(response.status).toBe(200);
    const byLabel = Object.fromEntries(response.body.map((metric: { label: string; data: unknown[] }) => [metric.label, metric.data]));
    expect(Object.keys(byLabel)).toEqual(['Views', 'Likes', 'Replies', 'Reposts', 'Quotes', 'Followers']);
    expect(byLabel.Views).toHaveLength(2);
    expect(byLabel.Likes).toEqual([{ total: '5', date: new Date().toISOString().slice(0, 10) }]);
    expect(byLabel.Followers[0].total).toBe('77');
    const [request] = fake.server.requestsTo('GET', '/v1.0/*/threads_insights');
    expect(Number(request.query.get('until')) - Number(request.query.get('since'))).toBe(30 * 86_400);
  });

  it('reports a post\'s insights', async () => {
    const [root] = await herald.services.orm.em.fork().find((await import('../../src/db/entities.js')).PostSchema, { releaseId: fake.posts[0].id });
    const response = await herald.rest('GET', `/analytics/post/${root.id}`);
    expect(response.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Views', '40'],
      ['Likes', '5'],
      // Threads' one reply is the post's own thread item: people wrote none (issue 33).
      ['Replies', '0'],
      ['Reposts', '2'],
      ['Quotes', '0'],
      ['Shares', '0'],
    ]);
  });

  it('lists recent posts with a picture, a video thumbnail or the permalink', async () => {
    const recent = await threads.recent!(providerContext({ endpoints: endpoints(), auth: fake.channelAuth() }));
    const latest = [...fake.posts].reverse().filter((post) => post.reply_to_id === null);
    expect(recent.map((item) => item.id)).toEqual(latest.map((post) => post.id).slice(0, 20));
    const video = latest.find((post) => post.media_type === 'VIDEO')!;
    expect(recent.find((item) => item.id === video.id)!.url).toBe(`${fake.url}/cdn/${video.id}-thumb.jpg`);
  });
});

describe('Threads tokens', () => {
  it('refreshes a long-lived token about to expire before calling, storing the new one for 60 days', async () => {
    const em = herald.services.orm.em.fork();
    const row = await em.findOneOrFail(IntegrationSchema, { id: channelId });
    row.tokenExpiresAt = new Date(Date.now() + 60_000);
    await em.flush();
    const rootId = await createPost(herald, channelId, ['<p>After a refresh</p>']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const [refresh] = fake.server.requestsTo('GET', '/refresh_access_token');
    expect(refresh.query.get('grant_type')).toBe('th_refresh_token');
    expect((await channelRow()).tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 59 * 86_400_000);
    expect(threads.refreshDaysBeforeExpiry).toBe(30);
  });

  it('flags the channel for reconnection when Threads refuses an expired token, which cannot be refreshed', async () => {
    fake.oauth.expireAccessTokens();
    const rootId = await createPost(herald, channelId, ['<p>Never sent</p>']);
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome).toMatchObject({ kind: 'failed', error: expect.stringContaining('token expired or was revoked') });
    expect((await channelRow()).refreshNeeded).toBe(true);
    expect((await notifications()).some((item) => item.type === 'channel_reconnect')).toBe(true);
    expect(fake.posts.some((post) => post.text === 'Never sent')).toBe(false);
  });
});
