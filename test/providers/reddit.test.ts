// Reddit end to end against its fake: OAuth with duration=permanent and HTTP Basic, the descriptive User-Agent on every call,
// several subreddits per post (text with flair, a picture through the media lease), comments replying down the chain,
// Reddit's HTTP 200 form errors, rate limits, refresh, the helpers, analytics, and a submission whose answer was lost
// found in the user's `submitted` listing instead of being submitted twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startRedditFake, type RedditFake } from '../fakes/reddit.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished, reopenAsInterrupted } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

let fake: RedditFake;
let herald: Herald;
let channelId: string;
let picture: { id: string; path: string };
let firstRootId: string;

const entry = (value: Record<string, unknown>) => ({ value: { type: 'self', is_flair_required: false, flair: null, url: '', ...value } });
const settings = (...entries: Record<string, unknown>[]) => ({ __type: 'reddit', subreddit: entries.map(entry) });
const submitCalls = () => fake.server.requestsTo('POST', '/api/submit');
const notifications = async (type: string) =>
  (await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type }, { orderBy: { createdAt: 'desc' } })).map((note) => note.content);
const integration = () => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });

beforeAll(async () => {
  fake = await startRedditFake();
  herald = await startHerald(
    {
      REDDIT_CLIENT_ID: fake.authority.clientId,
      REDDIT_CLIENT_SECRET: fake.authority.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ reddit: fake.endpoints }),
      PUBLISH_RECHECK_MAX_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  const uploaded = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
  picture = { id: uploaded.body.id, path: uploaded.body.path };
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

describe('connecting a Reddit account', () => {
  it('asks for a permanent grant, authenticates the app with HTTP Basic and a descriptive User-Agent, and keeps the username', async () => {
    const connected = await connectOAuthChannel(herald, 'reddit');
    channelId = connected.integrationId;
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/api/v1/authorize');
    expect(query.get('duration')).toBe('permanent');
    expect(query.get('scope')).toBe('read identity submit flair history edit modposts');
    const [exchange] = fake.server.requestsTo('POST', '/api/v1/access_token');
    expect(exchange.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.authority.clientId}:${fake.authority.clientSecret}`).toString('base64')}`);
    expect(exchange.headers['user-agent']).toMatch(/^web:herald\.reddit-client-id:\d+\.\d+\.\d+$/);
    expect(Object.fromEntries(exchange.form!)).toEqual({ grant_type: 'authorization_code', code: expect.any(String), redirect_uri: `${herald.url}/api/integrations/social/reddit/callback` });
    const [me] = fake.server.requestsTo('GET', '/api/v1/me');
    expect(me.headers['user-agent']).toMatch(/^web:herald\.reddit-client-id:\d+\.\d+\.\d+$/);
    const listed = (await herald.rest('GET', '/integrations')).body.find((item: { id: string }) => item.id === channelId);
    expect(listed).toMatchObject({ identifier: 'reddit', name: 'herald_bot', profile: 'herald_bot', picture: `${fake.url}/avatar.png?size=256&s=abc` });
    const auth = channelAuth(herald.services, await integration());
    expect(auth.data.username).toBe('herald_bot');
    expect(auth.refreshToken).toMatch(/^refresh-/);
  });
});

describe('publishing', () => {
  it('submits to two subreddits through the worker (text with flair, a picture through the media lease), then comments down the chain', async () => {
    fake.setImageListingDelay(1);
    const from = fake.server.requests.length;
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: 'Herald 1.0 is out', image: [picture] }, 'Changelog in the comments', 'And a reply to that'], {
        settings: settings(
          { subreddit: '/r/selfhosted', title: 'Herald 1.0: self-hosted publishing', type: 'image', is_flair_required: true, flair: { id: 'flair-release', name: 'Release' } },
          { subreddit: 'r/typescript', title: 'Herald, written in TypeScript' },
        ),
      });
      firstRootId = rootId;
      const items = await waitForPublished(herald, rootId);
      const [image, text] = fake.submissions.slice(-2);
      expect(image).toMatchObject({ subreddit: 'selfhosted', title: 'Herald 1.0: self-hosted publishing', kind: 'image', text: 'Herald 1.0 is out', flairId: 'flair-release' });
      expect(text).toMatchObject({ subreddit: 'typescript', title: 'Herald, written in TypeScript', kind: 'self', text: 'Herald 1.0 is out', flairId: '' });
      // The picture went through the lease to the S3 form, and the image post points at the uploaded object.
      const [lease] = fake.server.requestsTo('POST', '/api/media/asset.json');
      expect(Object.fromEntries(lease.form!)).toEqual({ filepath: expect.stringMatching(/\.png$/), mimetype: 'image/png' });
      const key = image.url.replace(`${fake.url}/s3/`, '');
      expect(fake.objects.get(key)?.bytes.equals(tinyPng())).toBe(true);
      // The image submission was answered without an id: it was found in the listing (after Reddit's delay), not submitted again.
      expect(submitCalls().filter((call) => call.form?.get('sr') === 'selfhosted')).toHaveLength(1);
      expect(items[0].releaseId).toBe(image.id);
      expect(items[0].releaseUrl).toBe(`${fake.url}/r/selfhosted/comments/${image.id}/herald_1_0_self_hosted_publishing/`);
      expect(items[0].releaseMeta).toEqual({ others: text.id });
      // Each later item comments in both subreddits: the first on the submissions, the next on those comments.
      const [onImage, onText, replyImage, replyText] = fake.comments.slice(-4);
      expect([onImage.parentId, onText.parentId]).toEqual([`t3_${image.id}`, `t3_${text.id}`]);
      expect([replyImage.parentId, replyText.parentId]).toEqual([`t1_${onImage.id}`, `t1_${onText.id}`]);
      expect(replyText.body).toBe('And a reply to that');
      expect(items[2].releaseMeta).toEqual({ others: replyText.id });
      // Every call to Reddit's API named the app, its version and the user.
      for (const request of fake.server.requests.slice(from).filter((call) => call.path !== '/s3')) {
        expect(request.headers['user-agent'], request.path).toMatch(/^web:herald\.reddit-client-id:\d+\.\d+\.\d+ \(by \/u\/herald_bot\)$/);
      }
    } finally {
      fake.setImageListingDelay(0);
      await worker.stop();
    }
  });

  it('refuses at creation what the subreddit settings cannot make: a missing flair, a video, a link without url', async () => {
    const attempt = async (value: Record<string, unknown>, image: { id: string; path: string }[] = []) =>
      (await submitPost(herald, channelId, [{ content: 'x', image }], { settings: settings(value) })).body.message;
    expect(await attempt({ subreddit: '/r/selfhosted', title: 'T', is_flair_required: true })).toMatch(/needs a flair: pick one with getFlairs/);
    expect(await attempt({ subreddit: '/r/typescript', title: 'T', type: 'video' }, [picture])).toMatch(/Herald does not post on Reddit yet/);
    expect(await attempt({ subreddit: '/r/typescript', title: 'T', type: 'link' })).toMatch(/set its url/);
    expect(await attempt({ subreddit: '/r/typescript', title: 'T', type: 'image' })).toMatch(/attach exactly one picture/);
    expect(await attempt({ subreddit: '/r/typescript', title: 'x'.repeat(301) })).toMatch(/300/);
  });

  it('posts a link with its text', async () => {
    const rootId = await createPost(herald, channelId, ['Worth a read'], { settings: settings({ subreddit: 'typescript', title: 'A link', type: 'link', url: 'https://herald.example/post' }) });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.submissions.at(-1)).toMatchObject({ kind: 'link', url: 'https://herald.example/post', text: 'Worth a read' });
  });
});

describe('errors, limits and tokens', () => {
  it("puts a post Reddit refuses with a form error (HTTP 200) in ERROR with Reddit's words, and notifies", async () => {
    const rootId = await createPost(herald, channelId, ['Nowhere'], { settings: settings({ subreddit: '/r/doesnotexist', title: 'Lost' }) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe("Reddit refused the post: the subreddit does not exist: check its name with the subreddits tool (Hmm, that community doesn't exist. Try checking the spelling. (SUBREDDIT_NOEXIST, field sr))");
    expect((await notifications('post_failed'))[0]).toContain('SUBREDDIT_NOEXIST');
  });

  it('waits as long as a RATELIMIT form error asks, then submits', async () => {
    const rootId = await createPost(herald, channelId, ['Slow down'], { settings: settings({ subreddit: 'typescript', title: 'Rate limited' }) });
    fake.server.failNext('POST', '/api/submit', { json: { json: { errors: [['RATELIMIT', 'Looks like you\'ve been doing that a lot. Take a break for 5 minutes before trying again.', 'ratelimit']] } } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(299_000);
    expect(waiting.lastError).toMatch(/Take a break for 5 minutes/);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('retries a 429 after the x-ratelimit-reset seconds', async () => {
    const rootId = await createPost(herald, channelId, ['Busy'], { settings: settings({ subreddit: 'typescript', title: 'Busy' }) });
    fake.server.failNext('POST', '/api/submit', { status: 429, headers: { 'x-ratelimit-reset': '420', 'x-ratelimit-remaining': '0' }, json: { message: 'Too Many Requests', error: 429 } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(419_000);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('refreshes an expired token with the permanent refresh token, which it keeps', async () => {
    const before = channelAuth(herald.services, await integration());
    fake.authority.expireAccessTokens();
    const rootId = await createPost(herald, channelId, ['After refresh'], { settings: settings({ subreddit: 'typescript', title: 'Refreshed' }) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const refresh = fake.server.requestsTo('POST', '/api/v1/access_token').at(-1)!;
    expect(Object.fromEntries(refresh.form!)).toEqual({ grant_type: 'refresh_token', refresh_token: before.refreshToken });
    expect(refresh.headers['user-agent']).toMatch(/\(by \/u\/herald_bot\)$/);
    const after = channelAuth(herald.services, await integration());
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).toBe(before.refreshToken);
  });

  it('finds a submission whose answer was lost in the submitted listing instead of submitting it twice', async () => {
    const rootId = await createPost(herald, channelId, ['Once only'], { settings: settings({ subreddit: 'typescript', title: 'Exactly once' }) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const [published] = await chainOf(herald, rootId);
    const calls = submitCalls().length;
    // The answer never came back: the step is open, the item queued again.
    await reopenAsInterrupted(herald, rootId, (root) => ({ 'submit:0:at': root.publishProgress!.steps['submit:0:at'], 'submit:0': { state: 'started' } }));
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const [recovered] = await chainOf(herald, rootId);
    expect(submitCalls()).toHaveLength(calls);
    expect(recovered.releaseId).toBe(published.releaseId);
    expect(fake.submissions.filter((post) => post.title === 'Exactly once')).toHaveLength(1);
  });

  it('waits for a just-interrupted submission to show in the listing, and submits once it plainly was not made', async () => {
    const rootId = await createPost(herald, channelId, ['Never arrived'], { settings: settings({ subreddit: 'typescript', title: 'Never arrived' }) });
    const reopen = async (at: number) => {
      const em = herald.services.orm.em.fork();
      const root = await em.findOneOrFail(PostSchema, { id: rootId });
      const startedAt = new Date(at * 1000).toISOString();
      Object.assign(root, { attemptStartedAt: new Date(), nextAttemptAt: null, publishProgress: { steps: { 'submit:0:at': { state: 'done', result: at }, 'submit:0': { state: 'started', startedAt } } } });
      await em.flush();
    };
    const calls = submitCalls().length;
    await reopen(Math.floor(Date.now() / 1000));
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    expect(submitCalls()).toHaveLength(calls);
    await reopen(Math.floor(Date.now() / 1000) - 600);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(submitCalls()).toHaveLength(calls + 1);
    expect(fake.submissions.filter((post) => post.title === 'Never arrived')).toHaveLength(1);
  });
});

describe('limits and exact recovery', () => {
  const lose = async (rootId: string, how: typeof loseAnswerOf, path: string) => {
    const restore = how(herald, (request) => request.method === 'POST' && request.url.includes(path));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
  };
  const daysAgo = (days: number) => Date.now() / 1000 - days * 86_400;

  it('publishes a 39,000-character self post (Reddit takes 40,000), and refuses a comment over 10,000', async () => {
    const long = 'r'.repeat(39_000);
    const rootId = await createPost(herald, channelId, [long], { settings: settings({ subreddit: 'typescript', title: 'A long one' }) });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.submissions.at(-1)!.text).toBe(long);
    const comment = await submitPost(herald, channelId, ['short', 'c'.repeat(10_001)], { settings: settings({ subreddit: 'typescript', title: 'With a long comment' }) });
    expect(comment.status).toBe(400);
    expect(comment.body.message).toMatch(/Item 2 is a Reddit comment of 10001 characters; a comment takes at most 10000/);
  });

  it('a submission lost before it arrived: an older one with the same title is not taken for it, it is submitted once', async () => {
    fake.submissions.unshift({ id: 'old1', subreddit: 'typescript', title: 'Weekly thread', kind: 'self', text: 'Old', url: '', flairId: '', createdUtc: daysAgo(7), author: fake.username, score: 1, numComments: 0, hiddenReads: 0 });
    const rootId = await createPost(herald, channelId, ['This week'], { settings: settings({ subreddit: 'typescript', title: 'Weekly thread' }) });
    await lose(rootId, loseRequestOf, '/api/submit');
    // The listing had time to show it (Reddit's lag is waited for): it was not made.
    await reopenAsInterrupted(herald, rootId, (root) => ({ ...root.publishProgress!.steps, 'submit:0': { state: 'started', startedAt: new Date(Date.now() - 600_000).toISOString() } }));
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const made = fake.submissions.filter((post) => post.title === 'Weekly thread' && post.id !== 'old1');
    expect(made).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(made[0].id);
  });

  it('a submission lost after it arrived is linked, not submitted again, and an older one of the same title is not taken for it', async () => {
    fake.submissions.unshift({ id: 'old2', subreddit: 'typescript', title: 'Monthly thread', kind: 'self', text: 'Old', url: '', flairId: '', createdUtc: daysAgo(30), author: fake.username, score: 1, numComments: 0, hiddenReads: 0 });
    const rootId = await createPost(herald, channelId, ['This month', 'Same words as before'], { settings: settings({ subreddit: 'typescript', title: 'Monthly thread' }) });
    await lose(rootId, loseAnswerOf, '/api/submit');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [root] = await chainOf(herald, rootId);
    const made = fake.submissions.filter((post) => post.title === 'Monthly thread' && post.id !== 'old2');
    expect(made.map((post) => post.id)).toEqual([root.releaseId]);

    expect(fake.comments.filter((item) => item.parentId === `t3_${root.releaseId}`)).toHaveLength(1);
  });

  it('a comment lost before it arrived: an older comment of the same words on the same submission is not taken for it', async () => {
    const rootId = await createPost(herald, channelId, ['Another', 'Same words as before'], { settings: settings({ subreddit: 'typescript', title: 'Comment lost' }) });
    await lose(rootId, loseRequestOf, '/api/comment');
    const [root] = await chainOf(herald, rootId);
    // The same words on the same submission, made a day earlier (by hand): not the lost comment.
    fake.comments.push({ id: 'oldc', parentId: `t3_${root.releaseId}`, linkId: `t3_${root.releaseId}`, body: 'Same words as before', author: fake.username, createdUtc: daysAgo(1) });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [, comment] = await chainOf(herald, rootId);
    const ours = fake.comments.filter((item) => item.parentId === `t3_${root.releaseId}` && item.id !== 'oldc');
    expect(ours).toHaveLength(1);
    expect(comment.releaseId).toBe(ours[0].id);
  });
});

describe('helpers and analytics', () => {
  it('searches subreddits and reads a subreddit\'s flairs through the trigger endpoint', async () => {
    const found = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'self' } });
    expect(found.body).toEqual({ output: [{ subreddit: '/r/selfhosted', title: 'Self-hosted', postTypes: 'any' }] });
    const flairs = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'getFlairs', data: { subreddit: '/r/selfhosted' } });
    expect(flairs.body).toEqual({
      output: { subreddit: '/r/selfhosted', postTypes: 'any', allowImages: true, isFlairRequired: true, flairs: [{ id: 'flair-release', name: 'Release' }, { id: 'flair-question', name: 'Question' }] },
    });
    const none = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'getFlairs', data: { subreddit: 'typescript' } });
    expect(none.body.output).toMatchObject({ isFlairRequired: false, flairs: [] });
  });

  it("sums the score and comments of the post's submissions, and reads the account's karma", async () => {
    for (const post of fake.submissions) post.score = 10;
    const metrics = await herald.rest('GET', `/analytics/post/${firstRootId}?date=7`);
    expect(metrics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Score', '20'],
      ['Comments', '4'],
    ]);
    const account = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(account.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Post karma', '120'],
      ['Comment karma', '45'],
    ]);
  });

  it('answers 401 from the helpers once the tokens are revoked, and flags the channel', async () => {
    fake.authority.revokeAll();
    expect((await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'type' } })).status).toBe(401);
    expect((await integration()).refreshNeeded).toBe(true);
    expect((await notifications('channel_reconnect'))[0]).toContain('Reddit');
  });
});
