// X end to end against its fake: OAuth 2.0 + PKCE with Basic client auth, threads with pictures, chunked video with
// processing, rotating refresh tokens, rate limits, refusals, analytics, and a crash mid-thread resumed without a duplicate.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import x from '../../providers/x/index.js';
import { xUpload } from '../../providers/x/media.js';
import { NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startXFake, type XFake } from '../fakes/x.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { acceptedSamples, goodMp4, uploadAll } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, type ItemInput, waitForPublished } from '../helpers/posts.js';
import { providerContext, tinyPng } from '../helpers/provider-context.js';

let fake: XFake;
let herald: Herald;
let channelId: string;
let media: Record<'png' | 'jpeg' | 'mp4', { id: string; path: string }>;
const settings = { who_can_reply_post: 'everyone' };

beforeAll(async () => {
  fake = await startXFake();
  herald = await startHerald(
    {
      X_CLIENT_ID: fake.oauth.clientId,
      X_CLIENT_SECRET: fake.oauth.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ x: { web: fake.url, api: fake.url } }),
      PUBLISH_RECHECK_MAX_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  media = await uploadAll(herald, { png: [tinyPng(), 'dot.png'], jpeg: [acceptedSamples()[0].bytes, 'red.jpg'], mp4: [goodMp4(), 'clip.mp4'] });
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

// Every request Herald sent must match X's contract (the fake answers 400 and records what did not).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

const tokenRequests = () => fake.server.requestsTo('POST', '/2/oauth2/token');
const createRequests = () => fake.server.requestsTo('POST', '/2/tweets');
const notifications = async () => herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId }, { orderBy: { createdAt: 'desc' } });

describe('connecting an X account', () => {
  it('runs OAuth 2.0 with PKCE, authenticates the app with HTTP Basic and saves the profile', async () => {
    const connected = await connectOAuthChannel(herald, 'x');
    channelId = connected.integrationId;
    expect(connected.inBetweenSteps).toBe(false);
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/i/oauth2/authorize');
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('scope')).toBe('tweet.read tweet.write users.read media.write offline.access tweet.moderate.write');

    const [exchange] = tokenRequests();
    expect(exchange.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.oauth.clientId}:${fake.oauth.clientSecret}`).toString('base64')}`);
    expect(exchange.form?.get('grant_type')).toBe('authorization_code');
    expect(exchange.form?.get('redirect_uri')).toBe(`${herald.url}/api/integrations/social/x/callback`);
    expect(exchange.form?.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(exchange.form?.has('client_secret')).toBe(false);

    const listed = (await herald.rest('GET', '/integrations')).body.find((item: { id: string }) => item.id === channelId);
    expect(listed).toMatchObject({ identifier: 'x', name: 'Herald Test', profile: 'heraldtest', picture: `${fake.url}/profile_images/1/avatar_400x400.jpg` });
    const row = await herald.services.orm.em.fork().findOneOrFail((await import('../../src/db/entities.js')).IntegrationSchema, { id: channelId });
    expect(row.internalId).toBe(fake.user.id);
    expect(row.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 7000_000);
  });

  it('reconnects the same channel with ?refresh', async () => {
    const again = await connectOAuthChannel(herald, 'x', { refresh: channelId });
    expect(again.integrationId).toBe(channelId);
    expect((await herald.rest('GET', '/integrations')).body.filter((item: { identifier: string }) => item.identifier === 'x')).toHaveLength(1);
  });

  it('is refused by X when the PKCE verifier does not match the challenge', async () => {
    const code = new URL(fake.oauth.approvalRedirect({ clientId: fake.oauth.clientId, redirectUri: 'https://herald.example/cb', state: 's', codeChallenge: 'not-the-hash-of-the-verifier', codeChallengeMethod: 'S256' })).searchParams.get('code')!;
    const attempt = x.exchangeCode!(
      { fetch: herald.services.fetch, dial: async () => undefined, endpoints: { web: fake.url, api: fake.url } },
      { code, codeVerifier: 'a'.repeat(43), redirectUri: 'https://herald.example/cb', clientId: fake.oauth.clientId, clientSecret: fake.oauth.clientSecret },
    );
    await expect(attempt).rejects.toMatchObject({ status: 400, message: expect.stringContaining('code_verifier does not match') });
  });
});

describe('publishing on X', () => {
  it('publishes a three-item thread with pictures as a reply chain, with the settings on the first post', async () => {
    fake.communities.add('1493446837214187523');
    const rootId = await createPost(
      herald,
      channelId,
      [
        { content: '<p>Thread <strong>one</strong> &amp; more</p>', image: [media.png] },
        { content: '<p>Thread two</p>', image: [media.png, media.jpeg] },
        '<p>Thread three</p>',
      ],
      { settings: { who_can_reply_post: 'followers', community: 'https://x.com/i/communities/1493446837214187523' } },
    );
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('published');
    const [first, second, third] = fake.posts.slice(-3);
    expect([first.text, second.text, third.text]).toEqual(['Thread 𝗼𝗻𝗲 & more', 'Thread two', 'Thread three']);
    expect([first.in_reply_to, second.in_reply_to, third.in_reply_to]).toEqual([null, first.id, second.id]);
    expect([first.reply_settings, first.community_id]).toEqual(['following', '1493446837214187523']);
    expect([second.reply_settings, second.community_id, third.reply_settings]).toEqual([null, null, null]);
    expect([first.media_ids.length, second.media_ids.length, third.media_ids.length]).toEqual([1, 2, 0]);
    const pictures = [...first.media_ids, ...second.media_ids].map((id) => fake.media.find((item) => item.id === id)!);
    expect(pictures.map((item) => [item.kind, item.category])).toEqual(Array(3).fill(['picture', 'tweet_image']));
    expect(fake.bytesOf(first.media_ids[0]).equals(tinyPng())).toBe(true);

    const chain = await chainOf(herald, rootId);
    expect(chain.map((item) => item.releaseId)).toEqual([first.id, second.id, third.id]);
    expect(chain[0].releaseUrl).toBe(`${fake.url}/heraldtest/status/${first.id}`);
  });

  it('sends no reply_settings for everyone, and reports X\'s refusal of a community the account is not in', async () => {
    const open = await createPost(herald, channelId, ['<p>Anyone may reply</p>'], { settings });
    expect((await publishUntilSettled(herald, open)).outcome.kind).toBe('published');
    expect(createRequests().at(-1)!.json).toEqual({ text: 'Anyone may reply' });

    const rootId = await createPost(herald, channelId, ['<p>Into a strange community</p>'], { settings: { ...settings, community: 'https://x.com/i/communities/42' } });
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(createRequests().at(-1)!.json).toEqual({ text: 'Into a strange community', community_id: '42' });
    expect(outcome).toMatchObject({ kind: 'failed', error: expect.stringContaining('a community it is not a member of') });
  });

  it('uploads a video in segments, waits for processing by re-scheduling, then posts it once', async () => {
    const saved = xUpload.segmentBytes;
    xUpload.segmentBytes = 8 * 1024;
    fake.setProcessingChecks(2);
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>A clip</p>', image: [media.mp4] }], { settings });
      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('published');
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'waiting', 'published']);
      const video = fake.media.at(-1)!;
      expect([video.kind, video.category, video.mediaType]).toEqual(['chunked', 'tweet_video', 'video/mp4']);
      expect(fake.bytesOf(video.id).equals(goodMp4())).toBe(true);
      const segments = Math.ceil(goodMp4().length / (8 * 1024));
      expect(fake.server.requestsTo('POST', '/2/media/upload/initialize')).toHaveLength(1);
      expect(fake.server.requestsTo('POST', `/2/media/upload/${video.id}/append`)).toHaveLength(segments);
      expect(fake.server.requestsTo('POST', `/2/media/upload/${video.id}/finalize`)).toHaveLength(1);
      expect(fake.server.requestsTo('GET', '/2/media/upload').filter((request) => request.query.get('media_id') === video.id)).toHaveLength(3);
      expect(fake.posts.at(-1)).toMatchObject({ text: 'A clip', media_ids: [video.id] });
    } finally {
      xUpload.segmentBytes = saved;
      fake.setProcessingChecks(0);
    }
  });

  it('fails with X\'s reason when the video cannot be processed, and notifies', async () => {
    fake.setProcessingChecks(1);
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>Broken clip</p>', image: [media.mp4] }], { settings });
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
      fake.failProcessing(fake.media.at(-1)!.id, 'Unsupported codec');
      const { outcome } = await publishUntilSettled(herald, rootId);
      expect(outcome).toMatchObject({ kind: 'failed', error: expect.stringContaining('X could not process the video (Unsupported codec)') });
    } finally {
      fake.setProcessingChecks(0);
    }
  });

  it('refreshes an expired token once, storing the rotated refresh token; the old one is refused afterwards', async () => {
    const before = tokenRequests().length;
    fake.oauth.expireAccessTokens();
    const rootId = await createPost(herald, channelId, ['<p>After a refresh</p>'], { settings });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const refreshes = tokenRequests().slice(before);
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0].form?.get('grant_type')).toBe('refresh_token');
    expect(refreshes[0].headers.authorization).toMatch(/^Basic /);
    const used = refreshes[0].form!.get('refresh_token')!;
    const reuse = await fetch(`${fake.url}/2/oauth2/token`, {
      method: 'POST',
      headers: { authorization: refreshes[0].headers.authorization!, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: used }),
    });
    expect(reuse.status).toBe(400);
    expect((await reuse.json()).error).toBe('invalid_grant');
    const afterReuse = tokenRequests().length;

    // The rotated token was stored: a second expiry refreshes with it and publishes again.
    fake.oauth.expireAccessTokens();
    const next = await createPost(herald, channelId, ['<p>After a second refresh</p>'], { settings });
    expect((await publishChain(herald.services, next)).kind).toBe('published');
    const second = tokenRequests().slice(afterReuse);
    expect(second).toHaveLength(1);
    expect(second[0].form?.get('refresh_token')).not.toBe(used);
  });

  it('waits for X\'s rate-limit reset after a 429', async () => {
    const reset = Math.floor(Date.now() / 1000) + 900;
    fake.server.failNext('POST', '/2/tweets', { status: 429, headers: { 'x-rate-limit-reset': String(reset) }, json: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 } });
    const rootId = await createPost(herald, channelId, ['<p>Rate limited</p>'], { settings });
    const first = await publishChain(herald.services, rootId);
    expect(first.kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.state).toBe('QUEUE');
    expect(Math.abs(waiting.nextAttemptAt!.getTime() - reset * 1000)).toBeLessThan(3000);
    expect(waiting.lastError).toContain('rate limit reached');
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('published');
    expect(fake.posts.at(-1)!.text).toBe('Rate limited');
  });

  it('puts a duplicate in ERROR with X\'s reason and a notification', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Thread three</p>'], { settings });
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('failed');
    const [failed] = await chainOf(herald, rootId);
    expect(failed.state).toBe('ERROR');
    expect(failed.error).toBe('X refused the post: this account already posted exactly this text (duplicate content); change the text, then retry the post');
    expect((await notifications())[0]).toMatchObject({ type: 'post_failed', content: expect.stringContaining('duplicate content') });
  });

  it('resumes a thread whose second post was created but not confirmed, without posting it twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Resume one</p>', '<p>Resume two: see https://example.com/a?b=1 &amp; more</p>', '<p>Resume three</p>'], { settings });
    let creates = 0;
    // The second create reaches X, then the connection drops before the answer: the outcome is unknown.
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/2/tweets') && request.method === 'POST' && ++creates === 2);
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    const posted = fake.posts.length;
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('published');
    expect(fake.posts.length).toBe(posted + 1);
    const [one, two, three] = fake.posts.slice(-3);
    expect([one.text, two.text, three.text]).toEqual(['Resume one', 'Resume two: see https://example.com/a?b=1 & more', 'Resume three']);
    expect(three.in_reply_to).toBe(two.id);
    expect((await chainOf(herald, rootId)).map((item) => item.releaseId)).toEqual([one.id, two.id, three.id]);
    expect(createRequests().filter((request) => request.json?.text?.startsWith('Resume two'))).toHaveLength(1);
  });

  it('publishes through the real worker', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, ['<p>From the worker</p>', '<p>Its reply</p>'], { settings, date: new Date(Date.now() + 500) });
      const chain = await waitForPublished(herald, rootId);
      const reply = fake.posts.find((post) => post.id === chain[1].releaseId)!;
      expect(reply).toMatchObject({ text: 'Its reply', in_reply_to: chain[0].releaseId });
    } finally {
      await worker.stop();
    }
  });
});

describe('refusals before anything is created', () => {
  const item = (...kinds: ('image' | 'video')[]) => ({ text: 'x', media: kinds.map((kind, index) => ({ kind, url: `https://media.example/${index}.${kind === 'video' ? 'mp4' : 'png'}` })) });

  it('checks media counts, GIFs, communities and articles', () => {
    expect(x.validate!([item('image', 'image', 'image', 'image')], settings)).toBeUndefined();
    expect(x.validate!([item(), item('image', 'image', 'image', 'image', 'image')], settings)).toBe('Item 2 has 5 pictures; X takes at most 4.');
    expect(x.validate!([item('video', 'image')], settings)).toMatch(/one video alone/);
    expect(x.validate!([{ text: 'x', media: [{ kind: 'image', url: 'https://m.example/a.gif' }, { kind: 'image', url: 'https://m.example/b.png' }] }], settings)).toMatch(/GIF alone/);
    expect(x.validate!([item()], { ...settings, community: 'https://x.com/heraldtest' })).toMatch(/URL of an X community/);
    expect(x.validate!([item()], { ...settings, community: 'https://x.com/i/communities/1493446837214187523' })).toBeUndefined();
    expect(x.validate!([item()], { ...settings, post_type: 'article' })).toMatch(/Articles are not supported/);
  });

  it('answers 400 over REST for an unknown who_can_reply_post and an over-long post, and takes a missing one as everyone', async () => {
    const post = (value: ItemInput[], chosen: Record<string, unknown>) => submitPost(herald, channelId, value, { type: 'now', settings: chosen });
    // who_can_reply_post is optional (everyone when omitted, issue 33); an unknown value is refused.
    const missing = await herald.rest('POST', '/posts/validate', { type: 'draft', date: new Date(Date.now() + 86_400_000).toISOString(), posts: [{ integration: { id: channelId }, value: [{ content: 'hi', image: [] }], settings: {} }] });
    expect(missing.body.valid, JSON.stringify(missing.body)).toBe(true);
    expect((await post([{ content: 'hi', image: [] }], { who_can_reply_post: 'nobody' })).body.message).toMatch(/who_can_reply_post/);
    const long = await post([{ content: 'é'.repeat(281), image: [] }], settings);
    expect(long.body.message).toMatch(/maximum characters is 280, we got 281/);
  });
});

describe('X analytics', () => {
  it('reports followers from users/me and the daily engagement of recent posts', async () => {
    const last = [...fake.posts].reverse().find((post) => post.in_reply_to === null)!;
    Object.assign(last.public_metrics, { impression_count: 1000, like_count: 12 });
    const response = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(response.status).toBe(200);
    const byLabel = Object.fromEntries(response.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data]));
    expect(byLabel.Followers).toEqual([{ total: '321', date: new Date().toISOString().slice(0, 10) }]);
    expect(Number(byLabel.Impressions[0].total)).toBeGreaterThanOrEqual(1000);
    expect(Number(byLabel.Likes[0].total)).toBeGreaterThanOrEqual(12);
    const [timeline] = fake.server.requestsTo('GET', '/2/users/*/tweets').slice(-1);
    expect(timeline.query.get('exclude')).toBe('retweets,replies');
    expect(timeline.query.get('tweet.fields')).toBe('public_metrics,created_at');
  });

  it('reports a post\'s public metrics, and nothing for a post X no longer has', async () => {
    const em = herald.services.orm.em.fork();
    const published = await em.findOneOrFail(PostSchema, { integrationId: channelId, state: 'PUBLISHED', releaseId: fake.posts[0].id });
    Object.assign(fake.posts[0].public_metrics, { impression_count: 50, like_count: 4, repost_count: 2, bookmark_count: 1 });
    const response = await herald.rest('GET', `/analytics/post/${published.id}`);
    expect(response.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Impressions', '50'],
      ['Likes', '4'],
      // X counts the thread's own next post as a reply; people wrote none (issue 33).
      ['Replies', '0'],
      ['Reposts', '2'],
      ['Quotes', '0'],
      ['Bookmarks', '1'],
    ]);
    const context = providerContext({ endpoints: { web: fake.url, api: fake.url }, auth: fake.channelAuth() });
    expect(await x.postAnalytics!(context, { id: '1999999999999999999' }, 7)).toEqual([]);
  });

  it('lists recent posts with their picture or their link', async () => {
    const context = providerContext({ endpoints: { web: fake.url, api: fake.url }, auth: fake.channelAuth() });
    const recent = await x.recent!(context);
    expect(recent[0]).toEqual({ id: fake.posts.at(-1)!.id, url: `${fake.url}/heraldtest/status/${fake.posts.at(-1)!.id}` });
    const withPicture = fake.posts.find((post) => post.media_ids.length > 0 && recent.some((item) => item.id === post.id));
    if (withPicture) expect(recent.find((item) => item.id === withPicture.id)!.url).toBe(`${fake.url}/media/${withPicture.media_ids[0]}.jpg`);
  });
});

describe('a dead X token', () => {
  it('flags the channel for reconnection and notifies when the refresh token is revoked too', async () => {
    fake.oauth.revokeAll();
    const rootId = await createPost(herald, channelId, ['<p>Never sent</p>'], { settings });
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome).toMatchObject({ kind: 'failed', error: expect.stringContaining('token expired or was revoked') });
    expect((await notifications()).some((item) => item.type === 'channel_reconnect')).toBe(true);
    expect(fake.posts.some((post) => post.text === 'Never sent')).toBe(false);
  });
});
