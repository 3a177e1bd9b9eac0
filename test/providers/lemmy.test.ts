// Lemmy end to end against a fake instance: the credential connect (wrong password and two-factor accounts refused with
// Lemmy's reason), posts in several communities resolved by name with a picture on the instance's pict-rs, comments replying
// down the chain, the community search, a dropped login replaced by logging in again, rate limits, refusals, analytics,
// an interrupted create found instead of repeated, and the v4 API of Lemmy 1.0.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startLemmyFake, type LemmyFake } from '../fakes/lemmy.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { setupToken } from '../helpers/setup-link.js';
import { upload } from '../helpers/media-samples.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted, submitPost, waitForPublished } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';

let fake: LemmyFake;
let herald: Herald;
let channelId: string;
let picture: { id: string; path: string };

const community = (subreddit: string, title: string, extra: Record<string, string> = {}) => ({ value: { subreddit, id: '999', title, ...extra } });
const settings = (...communities: ReturnType<typeof community>[]) => ({ __type: 'lemmy', subreddit: communities });
const connect = (fields: Record<string, string>) => herald.rest('POST', '/integrations/lemmy/connect', { instanceUrl: fake.url, username: 'herald', password: fake.password, ...fields });
const integration = (id = channelId) => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id });

beforeAll(async () => {
  fake = await startLemmyFake();
  herald = await startHerald({}, { guard: { allowLoopback: true } });
  const uploaded = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
  picture = { id: uploaded.body.id, path: uploaded.body.path };
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

// Every API request Herald sent matched lemmy-js-client's request types for its API version (test/contracts/lemmy/).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

describe('connecting a Lemmy account', () => {
  it("refuses a wrong password with Lemmy's reason", async () => {
    const refused = await connect({ password: 'nope' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Lemmy refused the connection: wrong username or password (incorrect_login)');
  });

  it('asks a two-factor account for its code, refuses a wrong one, and accepts the right one', async () => {
    expect((await connect({ username: 'guarded' })).body.message).toMatch(/two-factor authentication: fill in the current 2FA code \(missing_totp_token\)/);
    expect((await connect({ username: 'guarded', totp: '000000' })).body.message).toMatch(/two-factor code is wrong or expired/);
    const accepted = await connect({ username: 'guarded', totp: '246810' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    // Lemmy 0.19's Login has no stay_logged_in (lemmy-js-client 0.19.9): only v4 sends it.
    expect(fake.server.requestsTo('POST', '/api/v3/user/login').at(-1)!.json).toEqual({ username_or_email: 'guarded', password: fake.password, totp_2fa_token: '246810' });
    expect(channelAuth(herald.services, await integration(accepted.body.id)).data.twoFactor).toBe('true');
  });

  it('logs in with the password, keeps the instance and names the channel after the person', async () => {
    const connected = await connect({ instanceUrl: `${fake.url}/` });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    channelId = connected.body.id;
    expect(connected.body).toMatchObject({ identifier: 'lemmy', name: 'Herald Bot', profile: `herald@${fake.host}`, picture: `${fake.url}/pictrs/image/avatar-7.png` });
    const auth = channelAuth(herald.services, await integration());
    expect(auth.accessToken).toMatch(/^jwt-/);
    expect(auth.data).toEqual({ instanceUrl: fake.url, username: 'herald', password: fake.password });
    expect(fake.server.requestsTo('GET', '/api/v3/site').at(-1)!.headers.authorization).toBe(`Bearer ${auth.accessToken}`);
  });
});

describe('the console form', () => {
  it("offers the two-factor field, shows Lemmy's refusal on the form, and connects with the right password", async () => {
    const browser = new ConsoleClient(herald.url);
    await browser.signUp({ email: 'lemmy-owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
    const form = await browser.get('/channels/connect/lemmy');
    expect(form.text).toContain('name="totp"');
    // The instance defaults to the deployment's endpoint, shown as the placeholder (never a value the form would send back).
    expect(form.text).toContain(`placeholder="https://lemmy.world"`);
    const refused = await browser.submit('/channels/connect/lemmy', '/channels/connect/lemmy', { instanceUrl: fake.url, username: 'herald', password: 'nope', totp: '' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Lemmy refused the connection: wrong username or password (incorrect_login)');
    const connected = await browser.submit('/channels/connect/lemmy', '/channels/connect/lemmy', { instanceUrl: fake.url, username: 'herald', password: fake.password, totp: '' });
    expect(connected.location).toBe('/channels?notice=connected');
  });
});

describe('publishing', () => {
  it('posts in two communities through the worker, the picture on pict-rs, then comments down the chain in both', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: 'Herald is out', image: [picture] }, 'First comment', 'A reply'], {
        settings: settings(community('selfhosted', 'Herald 1.0'), community('technology@lemmy.world', 'Herald, with a link', { url: 'https://herald.example/' })),
      });
      const items = await waitForPublished(herald, rootId);
      // One picture upload, used as the image of the first post and the thumbnail of the link post.
      expect(fake.images).toHaveLength(1);
      expect(fake.images[0].bytes.equals(tinyPng())).toBe(true);
      const pictureUrl = `${fake.url}/pictrs/image/${fake.images[0].file}`;
      const [first, second] = fake.posts.slice(-2);
      // Communities are resolved by name on the instance (the id in the settings is not trusted).
      expect(first).toMatchObject({ communityId: 11, name: 'Herald 1.0', body: 'Herald is out', url: pictureUrl, customThumbnail: null });
      expect(second).toMatchObject({ communityId: 12, name: 'Herald, with a link', url: 'https://herald.example/', customThumbnail: pictureUrl });
      expect(items[0]).toMatchObject({ releaseId: String(first.id), releaseUrl: `${fake.url}/post/${first.id}`, releaseMeta: { others: String(second.id) } });
      const [onFirst, onSecond, replyFirst, replySecond] = fake.comments.slice(-4);
      expect([onFirst, onSecond].map((comment) => [comment.postId, comment.parentId])).toEqual([[first.id, null], [second.id, null]]);
      expect([replyFirst, replySecond].map((comment) => [comment.postId, comment.parentId])).toEqual([[first.id, onFirst.id], [second.id, onSecond.id]]);
      expect(items[2]).toMatchObject({ releaseId: String(replyFirst.id), releaseUrl: `${fake.url}/comment/${replyFirst.id}` });
    } finally {
      await worker.stop();
    }
  });

  it('refuses more than one picture, a video, and media on comments at creation', async () => {
    const attempt = async (value: { content: string; image: { id: string; path: string }[] }[]) =>
      (await submitPost(herald, channelId, value, { settings: settings(community('selfhosted', 'T')) })).body.message;
    expect(await attempt([{ content: 'x', image: [picture, picture] }])).toMatch(/one picture per post/);
    expect(await attempt([{ content: 'x', image: [] }, { content: 'y', image: [picture] }])).toMatch(/comments on Lemmy take text only/);
  });

  it("puts a post in an unknown community in ERROR with Lemmy's reason, and notifies", async () => {
    const rootId = await createPost(herald, channelId, ['Lost'], { settings: settings(community('nowhere', 'Lost')) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toBe('Lemmy refused the post: this instance does not know the community: check its name (name or name@instance) with the subreddits tool (couldnt_find_community)');
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('couldnt_find_community'))).toBe(true);
  });

  it("retries the instance's rate limit with backoff", async () => {
    const rootId = await createPost(herald, channelId, ['Busy'], { settings: settings(community('selfhosted', 'Busy')) });
    fake.server.failNext('POST', '/api/v3/post', { status: 400, json: { error: 'rate_limit_error' } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(29_000);
    expect(waiting.lastError).toMatch(/rate limit/);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('finds a post whose answer was lost among the community\'s newest posts instead of posting it twice', async () => {
    const rootId = await createPost(herald, channelId, ['Once'], { settings: settings(community('selfhosted', 'Exactly once')) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const [published] = await chainOf(herald, rootId);
    const count = fake.posts.length;
    await reopenAsInterrupted(herald, rootId, 'post:0');
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect(fake.posts).toHaveLength(count);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(published.releaseId);
  });
});

describe('a post of unknown outcome, an older post of the same title in the community', () => {
  const older = (title: string) => {
    const post = { id: 9000 + fake.posts.length, name: title, body: 'Old', url: null, customThumbnail: null, communityId: fake.posts[0].communityId, creatorId: fake.posts[0].creatorId, score: 1, comments: 0, published: new Date(Date.now() - 7 * 86_400_000).toISOString() };
    fake.posts.push(post);
    return post;
  };
  const lose = async (rootId: string, how: typeof loseAnswerOf) => {
    const restore = how(herald, (request) => request.json !== undefined && /\/api\/v[34]\/post$/.test(request.url));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
  };

  it('lost before it reached the instance: the older post is not taken for it, and it is posted once', async () => {
    const old = older('Weekly notes');
    const rootId = await createPost(herald, channelId, ['This week'], { settings: settings(community('selfhosted', 'Weekly notes')) });
    await lose(rootId, loseRequestOf);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const made = fake.posts.filter((post) => post.name === 'Weekly notes' && post !== old);
    expect(made).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(String(made[0].id));
  });

  it('lost after it reached the instance: the new post is linked, not posted again', async () => {
    const old = older('Monthly notes');
    const rootId = await createPost(herald, channelId, ['This month'], { settings: settings(community('selfhosted', 'Monthly notes')) });
    await lose(rootId, loseAnswerOf);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const made = fake.posts.filter((post) => post.name === 'Monthly notes' && post !== old);
    expect(made).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(String(made[0].id));
  });
});

describe('a post of unknown outcome, a post of the same title made 35 s before it (issue 31)', () => {
  // Inside the two minutes the lookup reaches back for clock skew, only the body tells the new post from the older one.
  const justBefore = (title: string, body: string) => {
    const post = { id: 9500 + fake.posts.length, name: title, body, url: null, customThumbnail: null, communityId: fake.posts[0].communityId, creatorId: fake.posts[0].creatorId, score: 1, comments: 0, published: new Date(Date.now() - 35_000).toISOString() };
    fake.posts.push(post);
    return post;
  };
  const lost = (how: typeof loseAnswerOf) => how(herald, (request) => request.json !== undefined && /\/api\/v[34]\/post$/.test(request.url));

  it('lost before it reached the instance: stops with "could not confirm", never taking the older post', async () => {
    const old = justBefore('Weekly', 'Last issue');
    const rootId = await createPost(herald, channelId, ['This issue'], { settings: settings(community('selfhosted', 'Weekly')) });
    const restore = lost(loseRequestOf);
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    } finally {
      restore();
    }
    expect(fake.posts.filter((post) => post.name === 'Weekly')).toEqual([old]);
    const [item] = await chainOf(herald, rootId);
    expect(item.releaseId ?? null).not.toBe(String(old.id));
    expect(item.error).toMatch(/^Could not confirm whether Lemmy published this item: posts titled "Weekly" matching it only in part/);
  });

  it('lost after it reached the instance: the new post is taken by its body', async () => {
    const old = justBefore('Weekly digest', 'Last issue');
    const rootId = await createPost(herald, channelId, ['Next issue'], { settings: settings(community('selfhosted', 'Weekly digest')) });
    const restore = lost(loseAnswerOf);
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const made = fake.posts.filter((post) => post.name === 'Weekly digest' && post !== old);
    expect(made.map((post) => post.body)).toEqual(['Next issue']);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(String(made[0].id));
  });
});

describe('sessions', () => {
  it('logs in again with the stored password when the instance drops the login token', async () => {
    const before = channelAuth(herald.services, await integration()).accessToken;
    fake.dropSessions();
    const rootId = await createPost(herald, channelId, ['After a new login'], { settings: settings(community('selfhosted', 'Relogged')) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const after = channelAuth(herald.services, await integration()).accessToken;
    expect(after).not.toBe(before);
    expect(fake.server.requestsTo('POST', '/api/v3/user/login').at(-1)!.json).toEqual({ username_or_email: 'herald', password: fake.password });
  });

  it('flags a two-factor channel for reconnection when its login is dropped (a new code is needed)', async () => {
    const guarded = (await herald.rest('GET', '/integrations')).body.find((item: { profile: string }) => item.profile === `guarded@${fake.host}`);
    fake.dropSessions();
    const search = await herald.rest('POST', `/integration-trigger/${guarded.id}`, { methodName: 'subreddits', data: { word: 'tech' } });
    expect(search.status).toBe(200); // search needs no login
    const rootId = await createPost(herald, guarded.id, ['Needs a code'], { settings: settings(community('selfhosted', 'Code')) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await integration(guarded.id)).refreshNeeded).toBe(true);
  });
});

describe('helpers, analytics and API v4', () => {
  it('searches communities through the trigger endpoint, qualified with their instance when federated', async () => {
    const found = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'e' } });
    expect(found.body).toEqual({ output: [{ id: '11', subreddit: 'selfhosted', name: 'Self-hosted' }, { id: '12', subreddit: 'technology@lemmy.world', name: 'Technology' }] });
    expect(fake.server.requestsTo('GET', '/api/v3/search').at(-1)!.query.get('type_')).toBe('Communities');
  });

  it("sums the score and comments of the post's communities", async () => {
    const [root] = await herald.services.orm.em.fork().find(PostSchema, { integrationId: channelId, position: 0, state: 'PUBLISHED' }, { orderBy: { createdAt: 'asc' }, limit: 1 });
    for (const post of fake.posts) post.score = 5;
    const metrics = await herald.rest('GET', `/analytics/post/${root.id}?date=7`);
    expect(metrics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Score', '10'],
      ['Comments', '4'],
    ]);
  });

  it('speaks API v4 to a Lemmy 1.0 instance when apiVersion is v4: login, account, search_term and the image endpoint', async () => {
    const endpoints = (herald.services.config.socialEndpoints.lemmy ??= {});
    endpoints.apiVersion = 'v4';
    try {
      const connected = await connect({});
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      expect(fake.server.requestsTo('POST', '/api/v4/account/auth/login').map((call) => call.json)).toEqual([{ username_or_email: 'herald', password: fake.password, stay_logged_in: true }]);
      expect(fake.server.requestsTo('GET', '/api/v4/account')).toHaveLength(1);
      const found = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'self' } });
      expect(found.body.output).toEqual([{ id: '11', subreddit: 'selfhosted', name: 'Self-hosted' }]);
      // v4's Search spells its type in snake_case and has no sort (lemmy-js-client 1.0.0-beta.1).
      expect(Object.fromEntries(fake.server.requestsTo('GET', '/api/v4/search').at(-1)!.query)).toEqual({ search_term: 'self', type_: 'communities', limit: '10' });
      const rootId = await createPost(herald, channelId, [{ content: 'On v4', image: [picture] }], { settings: settings(community('selfhosted', 'Version four')) });
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      // The picture goes to /api/v4/image in the client's `images[]` field (the fake stores nothing from another field).
      expect(fake.posts.at(-1)!.url).toBe(`${fake.url}/api/v4/image/${fake.images.at(-1)!.file}`);
      expect(fake.server.requestsTo('POST', '/api/v4/post')).toHaveLength(1);
    } finally {
      endpoints.apiVersion = 'v3';
    }
  });
});
