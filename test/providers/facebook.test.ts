// Facebook Pages end to end against the fake Graph API (test/fakes/facebook.ts) served at Graph v24.0, a version that only
// the endpoint settings can give: Facebook Login with the Page picker, pictures, video and comments published exactly once,
// rate limits retried after Meta's reset, permanent errors, revoked tokens, crash recovery, analytics, Meta's error mapping.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import facebook from '../../providers/facebook.js';
import { classifyMetaError } from '../../providers/meta/graph.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { metaError, rateLimited, startFacebookFake, type FacebookFake } from '../fakes/facebook.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { hoursAgo, loseAnswerOf, loseRequestOf, withPlatformFetch } from '../helpers/lost-answer.js';
import { acceptedSamples, goodMp4, uploaded } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, type ItemInput, waitForPublished } from '../helpers/posts.js';

let fake: FacebookFake;
let herald: Herald;
let page = '';
const VERSION = 'v24.0';

beforeAll(async () => {
  fake = await startFacebookFake({ version: VERSION });
  herald = await startHerald({ ...fake.environment(), PUBLISH_RECHECK_MAX_SECONDS: '1' }, { guard: { allowLoopback: true } });
});

// Every Graph request Herald sent fits Meta's own node and edge specs (test/contracts/meta/graph.json).
afterEach(() => {
  expect(fake.contractViolations.splice(0)).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const jpeg = () => acceptedSamples().find((sample) => sample.type === 'image/jpeg')!.bytes;
const settings = (extra: Record<string, unknown> = {}) => ({ settings: { __type: 'facebook', ...extra } });
const graphPath = (path: string) => `/${VERSION}/${path}`;
const em = () => herald.services.orm.em.fork();

describe('connecting a Facebook Page', () => {
  it('trades the code for a long-lived user token, then stores the chosen Page with its own token', async () => {
    const { integrationId, inBetweenSteps, authorizeUrl } = await connectOAuthChannel(herald, 'facebook');
    expect(inBetweenSteps).toBe(true);
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(`${fake.url}/${VERSION}/dialog/oauth`);
    expect(Object.fromEntries(authorizeUrl.searchParams)).toMatchObject({ client_id: fake.app.id, response_type: 'code', scope: facebook.auth.scopes!.join(',') });
    expect(authorizeUrl.searchParams.has('code_challenge')).toBe(false);

    const [exchange, longLived] = fake.server.requestsTo('GET', graphPath('oauth/access_token'));
    expect(Object.fromEntries(exchange.query)).toEqual({
      client_id: fake.app.id,
      client_secret: fake.app.secret,
      redirect_uri: `${herald.url}/api/integrations/social/facebook/callback`,
      code: expect.any(String),
    });
    expect(Object.fromEntries(longLived.query)).toMatchObject({ grant_type: 'fb_exchange_token', client_id: fake.app.id, client_secret: fake.app.secret });
    expect(fake.tokens.get(longLived.query.get('fb_exchange_token')!)?.kind).toBe('user-short');

    const choices = await herald.rest('GET', `/integrations/${integrationId}/accounts`);
    expect(choices.body).toEqual([
      { id: '101', name: 'Herald Bakery', picture: fake.pages[0].picture },
      { id: '102', name: 'Herald Side Project', picture: fake.pages[1].picture },
    ]);
    const chosen = await herald.rest('POST', `/integrations/${integrationId}/accounts`, { id: '101' });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect(chosen.body).toMatchObject({ id: integrationId, identifier: 'facebook', name: 'Herald Bakery', profile: 'heraldbakery', picture: fake.pages[0].picture });

    const integration = await em().findOneOrFail(IntegrationSchema, { id: integrationId });
    expect(channelAuth(herald.services, integration)).toMatchObject({ accessToken: fake.pageToken('101'), internalId: '101' });
    expect(integration.tokenExpiresAt).toBeNull();
    expect(integration.inBetweenSteps).toBe(false);
    page = integrationId;
  });

  it('refuses a login that did not grant every permission, naming the missing one', async () => {
    fake.declined.add('pages_manage_posts');
    try {
      const started = await herald.rest('GET', '/social/facebook');
      const consent = await fetch(started.body.url, { redirect: 'manual' });
      const landed = await fetch(consent.headers.get('location')!, { redirect: 'manual' });
      expect(landed.status).toBe(400);
      expect(await landed.text()).toContain('pages_manage_posts was not granted');
    } finally {
      fake.declined.delete('pages_manage_posts');
    }
  });
});

describe('publishing on a Page', () => {
  it('publishes three pictures as one post, then comments (one with a picture), through the real worker', async () => {
    const pictures = [await uploaded(herald, jpeg(), 'a.jpg', 'image/jpeg'), await uploaded(herald, jpeg(), 'b.jpg', 'image/jpeg'), await uploaded(herald, jpeg(), 'c.jpg', 'image/jpeg')];
    const attachment = await uploaded(herald, jpeg(), 'd.jpg', 'image/jpeg');
    const worker = await herald.startWorker();
    let rootId = '';
    try {
      rootId = await createPost(
        herald,
        page,
        [{ content: '<p>Fresh bread today</p>', image: pictures }, { content: '<p>First comment</p>', image: [attachment] }, '<p>Second comment</p>'],
        settings({ url: 'https://bakery.example/menu' }),
      );
      await waitForPublished(herald, rootId);
    } finally {
      await worker.stop();
    }
    const photoCalls = fake.server.requestsTo('POST', graphPath('101/photos'));
    expect(photoCalls.map((call) => call.json)).toEqual(pictures.map((picture) => ({ url: picture.path, published: false })));
    expect(photoCalls.every((call) => call.headers.authorization === `Bearer ${fake.pageToken('101')}`)).toBe(true);
    for (const picture of [...pictures, attachment]) expect(fake.fetches).toContainEqual({ url: picture.path, status: 200, bytes: jpeg().length });
    const [feed] = fake.server.requestsTo('POST', graphPath('101/feed'));
    expect(feed.json).toEqual({ message: 'Fresh bread today\n\nhttps://bakery.example/menu', attached_media: fake.photos.slice(-3).map((photo) => ({ media_fbid: photo.id })), published: true });
    const post = fake.posts.at(-1)!;
    expect(post.photoIds).toEqual(fake.photos.slice(-3).map((photo) => photo.id));
    const comments = fake.comments.filter((comment) => comment.parentId === post.id);
    expect(comments.map((comment) => [comment.message, comment.attachmentUrl])).toEqual([
      ['First comment', attachment.path],
      ['Second comment', undefined],
    ]);
    const chain = await chainOf(herald, rootId);
    expect(chain.map((item) => item.releaseId)).toEqual([post.id, ...comments.map((comment) => comment.id)]);
    expect(chain[0].releaseUrl).toBe(`https://www.facebook.com/heraldbakery/posts/${post.id.split('_')[1]}`);
    expect(fake.server.requestsTo('POST', graphPath('*/comments'))).toHaveLength(2);
  });

  it('gives a text post the url setting as its link preview, and one picture goes to /photos with the text as caption', async () => {
    const text = await createPost(herald, page, ['<p>Our menu changed</p>'], settings({ url: 'https://bakery.example/menu' }));
    expect((await publishUntilSettled(herald, text)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('POST', graphPath('101/feed')).at(-1)!.json).toEqual({ message: 'Our menu changed', link: 'https://bakery.example/menu', published: true });

    const picture = await uploaded(herald, jpeg(), 'single.jpg', 'image/jpeg');
    const single = await createPost(herald, page, [{ content: '<p>One loaf</p>', image: [picture] }], settings());
    expect((await publishUntilSettled(herald, single)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('POST', graphPath('101/photos')).at(-1)!.json).toEqual({ url: picture.path, caption: 'One loaf', published: true });
    const [root] = await chainOf(herald, single);
    expect(root.releaseId).toBe(fake.photos.at(-1)!.postId);
  });

  it('publishes a video by file_url, which Facebook downloads, and re-checks its processing instead of sleeping', async () => {
    const video = await uploaded(herald, goodMp4(), 'clip.mp4', 'video/mp4');
    fake.setProcessingChecks(2);
    let runs;
    let rootId = '';
    try {
      rootId = await createPost(herald, page, [{ content: '<p>Watch us bake</p>', image: [video] }], settings());
      runs = (await publishUntilSettled(herald, rootId)).runs.map((run) => run.kind);
    } finally {
      fake.setProcessingChecks(0);
    }
    expect(runs).toEqual(['waiting', 'waiting', 'published']);
    expect(fake.server.requestsTo('POST', graphPath('101/videos')).map((call) => call.json)).toEqual([{ file_url: video.path, description: 'Watch us bake', published: true }]);
    expect(fake.fetches).toContainEqual({ url: video.path, status: 200, bytes: goodMp4().length });
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBe(fake.videos.at(-1)!.id);
    expect(root.releaseUrl).toBe(`${fake.url}/heraldbakery/videos/${root.releaseId}/`);
    expect(root.releaseMeta).toEqual({ kind: 'video' });
  });

  it('refuses at validation what Facebook does not take, naming the fix', async () => {
    const picture = await uploaded(herald, jpeg(), 'v.jpg', 'image/jpeg');
    const video = await uploaded(herald, goodMp4(), 'v.mp4', 'video/mp4');
    const attempt = (value: ItemInput[], extra: Record<string, unknown> = {}) => submitPost(herald, page, value, { type: 'now', settings: { __type: 'facebook', ...extra } });
    const mixed = await attempt([{ content: 'x', image: [picture, video] }]);
    expect(mixed.status).toBe(400);
    expect(mixed.body.message).toContain('Facebook takes pictures or one video alone');
    const busyComment = await attempt([{ content: 'x', image: [] }, { content: 'y', image: [picture, picture] }]);
    expect(busyComment.body.message).toContain('Item 2 is a comment, which takes at most one picture and no video');
    const badLink = await attempt([{ content: 'x', image: [] }], { url: 'ftp://bakery.example' });
    expect(badLink.body.message).toContain('settings.url');
  });
});

describe('failures, retries and recovery', () => {
  it('retries a rate limit (80001) at the reset Meta gives in X-Business-Use-Case-Usage, then publishes once', async () => {
    const rootId = await createPost(herald, page, ['<p>Busy day</p>'], settings());
    fake.server.failNext('POST', graphPath('101/feed'), rateLimited(7));
    const before = Date.now();
    const first = await publishChain(herald.services, rootId);
    expect(first.kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.state).toBe('QUEUE');
    expect(waiting.attempts).toBe(1);
    expect(waiting.lastError).toContain('rate limit');
    expect(waiting.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(420_000 - 1000);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeLessThan(420_000 + 5000);
    const feedCalls = fake.server.requestsTo('POST', graphPath('101/feed')).length;
    herald.setNow(new Date(waiting.nextAttemptAt!.getTime() + 1000));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    } finally {
      herald.setNow(undefined);
    }
    expect(fake.server.requestsTo('POST', graphPath('101/feed')).length).toBe(feedCalls + 1);
    expect(fake.posts.filter((post) => post.message === 'Busy day')).toHaveLength(1);
  });

  it('puts a post Meta refuses for good in ERROR with Meta\'s message, and notifies', async () => {
    const rootId = await createPost(herald, page, ['<p>Refused</p>'], settings());
    fake.server.failNext('POST', graphPath('101/feed'), metaError(368, 'The action attempted has been deemed abusive or is otherwise disallowed', { subcode: 1390008 }));
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.state).toBe('ERROR');
    expect(root.error).toContain('Facebook Page refused the post: The action attempted has been deemed abusive');
    expect(root.error).toContain('Meta error 368/1390008');
    const notifications = await herald.rest('GET', '/notifications');
    expect(notifications.body.notifications[0]).toMatchObject({ type: 'post_failed', content: expect.stringContaining('deemed abusive') });
  });

  it('resumes after a failed photo and an interrupted feed post without a second photo or a second post', async () => {
    const pictures = [await uploaded(herald, jpeg(), 'r1.jpg', 'image/jpeg'), await uploaded(herald, jpeg(), 'r2.jpg', 'image/jpeg')];
    const rootId = await createPost(herald, page, [{ content: '<p>Resumed</p>', image: pictures }], settings());
    const photosBefore = fake.photos.length;
    let photoCalls = 0;
    // Run 1: the second photo is refused with a 503 (nothing created, the step is forgotten).
    const first = await withPlatformFetch(
      herald.services,
      (real) => async (request) => {
        if (request.url.endsWith('/101/photos') && ++photoCalls === 2) throw new PlatformHttpError({ status: 503, retryable: true, bodyExcerpt: 'Service Unavailable' });
        return real(request);
      },
      () => publishChain(herald.services, rootId),
    );
    expect(first.kind).toBe('waiting');
    // Run 2, at its retry time: the feed post reaches Facebook, but the answer is lost (unknown outcome): the step stays open.
    herald.setNow(new Date((first as { runAt: Date }).runAt.getTime() + 1000));
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/101/feed'));
    let second;
    try {
      second = await publishChain(herald.services, rootId);
      expect(second.kind).toBe('waiting');
    } finally {
      restore();
    }
    // Run 3: the open step is looked up among the Page's posts made since it began; nothing is sent again.
    herald.setNow(new Date((second as { runAt: Date }).runAt.getTime() + 1000));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    } finally {
      herald.setNow(undefined);
    }
    expect(fake.photos.length - photosBefore).toBe(2);
    const posts = fake.posts.filter((post) => post.message === 'Resumed');
    expect(posts).toHaveLength(1);
    expect(posts[0].photoIds).toEqual(fake.photos.slice(-2).map((photo) => photo.id));
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(posts[0].id);
  });
});

describe('recovery takes only what the interrupted call made', () => {
  const olderPost = (message: string) => {
    fake.posts.push({ id: `101_9${fake.posts.length}`, pageId: '101', message, photoIds: [], createdTime: hoursAgo(72).toISOString(), reactions: 0, shares: 0 });
    return fake.posts.at(-1)!.id;
  };
  const comment = (parentId: string, message: string, authorId: string, createdTime: Date) =>
    fake.comments.push({ id: `${parentId.split('_')[1]}_8${fake.comments.length}`, parentId, authorId, message, createdTime: createdTime.toISOString() });
  const isCreate = (suffix: string) => (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith(suffix);

  it('publishes once when the post and comment never reached Facebook, never taking older ones with the same text', async () => {
    const old = olderPost('Same words as last week');
    const rootId = await createPost(herald, page, ['<p>Same words as last week</p>', '<p>Ask us anything</p>'], settings());
    const restorePost = loseRequestOf(herald, isCreate('/101/feed'));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restorePost();
    }
    // The comment's request is lost too, while a comment of the Page with the same text, dated before the attempt, is on the post.
    const restoreComment = loseRequestOf(herald, (request) => isCreate('/comments')(request) && Boolean(comment(fake.posts.at(-1)!.id, 'Ask us anything', '101', hoursAgo(20))));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restoreComment();
    }
    const [root, reply] = await chainOf(herald, rootId);
    expect(fake.posts.filter((post) => post.message === 'Same words as last week').map((post) => post.id)).toEqual([old, root.releaseId]);
    expect(fake.comments.filter((entry) => entry.message === 'Ask us anything')).toHaveLength(2);
    expect(reply.releaseId).toBe(fake.comments.at(-1)!.id);
  });

  it('links a post and comment whose answers were lost, passing over an older post listed first and a visitor\'s identical comment', async () => {
    const rootId = await createPost(herald, page, ['<p>Open on Sunday</p>', '<p>From 9 to 5</p>'], settings());
    let old = '';
    const restorePost = loseAnswerOf(herald, (request) => isCreate('/101/feed')(request) && Boolean((old = olderPost('Open on Sunday'))));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restorePost();
    }
    const restoreComment = loseAnswerOf(herald, (request) => isCreate('/comments')(request) && Boolean(comment(fake.posts.at(-2)!.id, 'From 9 to 5', 'visitor-7', new Date())));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restoreComment();
    }
    const [root, reply] = await chainOf(herald, rootId);
    const made = fake.posts.filter((post) => post.message === 'Open on Sunday');
    expect(made).toHaveLength(2);
    expect(root.releaseId).toBe(made.find((post) => post.id !== old)!.id);
    const pages = fake.comments.filter((entry) => entry.message === 'From 9 to 5' && entry.authorId === '101');
    expect(pages.map((entry) => entry.id)).toEqual([reply.releaseId]);
  });
});

describe('analytics and recent posts', () => {
  it('reads Page insights with the metrics that replaced impressions and page_fans', async () => {
    const response = await herald.rest('GET', `/analytics/${page}?date=7`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((entry: { label: string }) => entry.label)).toEqual(['Views', 'Reach', 'Engagements', 'Followers']);
    const views = response.body[0];
    expect(views.data).toHaveLength(7);
    expect(views.data[0].total).toBe('500');
    expect(views.percentageChange).toBe(1.2);
    const request = fake.server.requestsTo('GET', graphPath('101/insights')).at(-1)!;
    expect(request.query.get('metric')).toBe('page_media_view,page_total_media_view_unique,page_post_engagements,page_follows');
    expect(request.query.get('period')).toBe('day');
    expect(Number(request.query.get('until')) - Number(request.query.get('since'))).toBe(7 * 86_400);
  });

  it('reads post insights, reactions, comments and shares of a published post', async () => {
    const rootId = await createPost(herald, page, ['<p>Counted</p>'], settings());
    await publishUntilSettled(herald, rootId);
    Object.assign(fake.posts.at(-1)!, { reactions: 9, shares: 3 });
    const response = await herald.rest('GET', `/analytics/post/${rootId}`);
    expect(response.body.map((entry: { label: string; data: { total: string }[] }) => [entry.label, entry.data[0].total])).toEqual([
      ['Views', '250'],
      ['Reach', '180'],
      ['Clicks', '12'],
      ['Reactions', '9'],
      ['Comments', '0'],
      ['Shares', '3'],
    ]);
  });

  // A Video is not a Post: it has no reactions edge and no shares field (Meta's AdVideo spec and the Video API reference list
  // likes and comments); asking for them is refused, so a video's counts are its likes and comments.
  it('reads the likes and comments of a published video, which has no reactions or shares', async () => {
    const video = await uploaded(herald, goodMp4(), 'counted.mp4', 'video/mp4');
    const rootId = await createPost(herald, page, [{ content: '<p>Counted video</p>', image: [video] }], settings());
    await publishUntilSettled(herald, rootId);
    fake.videos.at(-1)!.likes = 4;
    const response = await herald.rest('GET', `/analytics/post/${rootId}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((entry: { label: string; data: { total: string }[] }) => [entry.label, entry.data[0].total])).toEqual([
      ['Likes', '4'],
      ['Comments', '0'],
    ]);
  });

  it('lists the Page\'s recent posts for linking a missing release', async () => {
    const recent = await facebook.recent!({
      fetch: herald.services.fetch,
      dial: async () => undefined,
      endpoints: fake.endpoints.facebook,
      auth: fake.pageAuth('101'),
      channel: {},
      settings: {},
      step: (_name, run) => run(),
    });
    expect(recent[0]).toEqual({ id: fake.posts.at(-1)!.id, url: expect.stringContaining('https://www.facebook.com/heraldbakery/posts/') });
  });
});

describe('a revoked Page token', () => {
  it('flags the channel for reconnection with a notification: Page tokens cannot be refreshed', async () => {
    const second = await connectOAuthChannel(herald, 'facebook');
    expect((await herald.rest('POST', `/integrations/${second.integrationId}/accounts`, { id: '102' })).status).toBe(200);
    fake.tokens.get(fake.pageToken('102'))!.revoked = true;
    const rootId = await createPost(herald, second.integrationId, ['<p>Too late</p>'], settings());
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe('Channel "Herald Side Project" was disconnected because its token expired or was revoked.');
    expect((await em().findOneOrFail(IntegrationSchema, { id: second.integrationId })).refreshNeeded).toBe(true);
    const notices = await em().find(NotificationSchema, { organizationId: herald.organizationId, type: 'channel_reconnect' });
    expect(notices.map((notice) => notice.content)).toContainEqual(expect.stringContaining('Herald Side Project'));

    // Reconnecting (?refresh=) keeps the channel: Facebook Login again, the picker, the Page's new token.
    const again = await connectOAuthChannel(herald, 'facebook', { refresh: second.integrationId });
    expect(again).toMatchObject({ integrationId: second.integrationId, inBetweenSteps: true });
    expect((await herald.rest('POST', `/integrations/${second.integrationId}/accounts`, { id: '102' })).status).toBe(200);
    const reconnected = await em().findOneOrFail(IntegrationSchema, { id: second.integrationId });
    expect(reconnected).toMatchObject({ refreshNeeded: false, inBetweenSteps: false, internalId: '102' });
    expect(channelAuth(herald.services, reconnected).accessToken).toBe(fake.pageToken('102'));
  });

  it('refuses a code exchange with a wrong app secret, quoting Meta', async () => {
    const attempt = facebook.exchangeCode!(
      { fetch: herald.services.fetch, dial: async () => undefined, endpoints: fake.endpoints.facebook },
      { code: 'whatever', codeVerifier: '', redirectUri: 'https://herald.example/callback', clientId: fake.app.id, clientSecret: 'wrong' },
    );
    await expect(attempt).rejects.toMatchObject({ status: 400, retryable: false, message: expect.stringContaining('Error validating client secret') });
  });
});

describe('Meta error bodies', () => {
  const body = (error: Record<string, unknown>) => JSON.stringify({ error: { message: 'm', type: 'OAuthException', fbtrace_id: 'T1', ...error } });

  it('treats code 190 (expired or revoked token) as 401', () => {
    expect(classifyMetaError(400, body({ code: 190, error_subcode: 463 }))).toMatchObject({ status: 401, retryable: false });
  });

  it('retries every rate-limit code, with the reset from the usage headers when Meta gives one', () => {
    for (const code of [4, 17, 32, 613, 80001, 80002]) expect(classifyMetaError(400, body({ code }))).toMatchObject({ status: 429, retryable: true });
    const headers = new Headers({ 'x-business-use-case-usage': JSON.stringify({ 1: [{ estimated_time_to_regain_access: 3 }] }) });
    expect(classifyMetaError(400, body({ code: 80001 }), headers)).toMatchObject({ retryAfterSeconds: 180 });
  });

  it('names the fix of Instagram media errors, and retries transient ones', () => {
    expect(classifyMetaError(400, body({ code: 36001, error_subcode: 2207005 }))!.message).toMatch(/^the image must be a JPEG .*convert it to JPEG/);
    expect(classifyMetaError(400, body({ code: 9004, error_subcode: 2207052 }))!.message).toContain('PUBLIC_URL');
    expect(classifyMetaError(400, body({ code: -1, error_subcode: 2207001 }))).toMatchObject({ retryable: true });
    expect(classifyMetaError(400, body({ code: 2, is_transient: true }))).toMatchObject({ retryable: true });
    expect(classifyMetaError(500, JSON.stringify({ error: { message: 'An unknown error has occurred.', type: 'GraphMethodException', code: 1 } }))).toMatchObject({ retryable: true });
    expect(classifyMetaError(400, body({ code: 1, message: 'Error validating client secret.' }))).toMatchObject({ retryable: false });
    expect(classifyMetaError(400, body({ code: 200 }))).toMatchObject({ status: 403, retryable: false });
  });
});
