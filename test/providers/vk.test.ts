// VK end to end against its fake: VK ID OAuth 2.1 with PKCE and the redirect's device_id, rotating refresh tokens sent with
// that device_id, wall posts with photos (upload server → `photo` → saveWallPhoto) and a video (video.save → `video_file`),
// comments replying down the chain, VK's HTTP 200 errors (rate limits retried, refusals in VK's words), the guid that makes
// an interrupted post safe to repeat, analytics and recent posts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startVkFake, type VkFake } from '../fakes/vk.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { acceptedSamples, goodMp4, uploadAll } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted, submitPost, waitForPublished } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';

let fake: VkFake;
let herald: Herald;
let channelId: string;
let media: Record<'png' | 'jpeg' | 'mp4', { id: string; path: string }>;
const authCalls = () => fake.server.requestsTo('POST', '/oauth2/auth');
const integration = () => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
const vkError = (code: number, message: string) => ({ json: { error: { error_code: code, error_msg: message } } });

beforeAll(async () => {
  fake = await startVkFake();
  herald = await startHerald({ VK_CLIENT_ID: fake.authority.clientId, SOCIAL_ENDPOINTS: JSON.stringify({ vk: fake.endpoints }) }, { guard: { allowLoopback: true } });
  media = await uploadAll(herald, { png: [tinyPng(), 'dot.png'], jpeg: [acceptedSamples().find((sample) => sample.type === 'image/jpeg')!.bytes, 'red.jpg'], mp4: [goodMp4(), 'clip.mp4'] });
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

// Every method call Herald sent matched VK's own method schema (test/contracts/vk/methods.json).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

describe('connecting a VK account', () => {
  it('trades the code with its PKCE verifier and the device_id of the redirect, and reads the VK ID profile', async () => {
    const connected = await connectOAuthChannel(herald, 'vk');
    channelId = connected.integrationId;
    expect(connected.authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const [exchange] = authCalls();
    expect(Object.fromEntries(exchange.form!)).toEqual({
      grant_type: 'authorization_code',
      code: expect.any(String),
      code_verifier: expect.stringMatching(/^[\w-]{43,}$/),
      client_id: fake.authority.clientId,
      device_id: expect.stringMatching(/^device-/),
      redirect_uri: `${herald.url}/api/integrations/social/vk/callback`,
      state: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const listed = (await herald.rest('GET', '/integrations')).body.find((item: { id: string }) => item.id === channelId);
    expect(listed).toMatchObject({ identifier: 'vk', name: 'Ivan Heraldov', profile: `id${fake.userId}`, picture: `${fake.url}/avatar.jpg` });
    expect(channelAuth(herald.services, await integration()).data.deviceId).toBe(exchange.form!.get('device_id'));
  });
});

describe('publishing', () => {
  it('posts on the wall with two photos and a video through the worker, then comments down the chain', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: 'Summer release', image: [media.png, media.jpeg, media.mp4] }, { content: 'Screenshot', image: [media.png] }, 'Thanks!'], { settings: { __type: 'vk' } });
      const items = await waitForPublished(herald, rootId);
      const post = fake.posts.at(-1)!;
      const [first, second, third] = fake.photos;
      expect(post).toMatchObject({ message: 'Summer release', guid: rootId, attachments: [`photo${fake.userId}_${first.id}`, `photo${fake.userId}_${second.id}`, `video${fake.userId}_${fake.videos[0].id}`] });
      expect(first.bytes.equals(tinyPng())).toBe(true);
      expect(fake.videos[0].bytes!.equals(goodMp4())).toBe(true);
      expect(items[0]).toMatchObject({ releaseId: String(post.id), releaseUrl: `${fake.url}/wall${fake.userId}_${post.id}` });
      const [comment, reply] = fake.comments.slice(-2);
      expect(comment).toMatchObject({ postId: post.id, replyTo: null, message: 'Screenshot', attachments: [`photo${fake.userId}_${third.id}`], guid: items[1].id });
      expect(reply).toMatchObject({ postId: post.id, replyTo: comment.id, message: 'Thanks!' });
      expect(items[2].releaseUrl).toBe(`${fake.url}/wall${fake.userId}_${post.id}?reply=${reply.id}`);
      // Every method call carried the API version.
      expect(fake.server.requestsTo('POST', '/method/*').every((call) => call.form?.get('v') === '5.199')).toBe(true);
    } finally {
      await worker.stop();
    }
  });

  it('refuses more than 10 attachments at creation', async () => {
    const refused = await submitPost(herald, channelId, [{ content: 'x', image: Array.from({ length: 11 }, () => media.png) }], { settings: { __type: 'vk' } });
    expect(refused.body.message).toMatch(/has 11 attachments; VK takes at most 10/);
  });

  it('repeats an interrupted wall.post with the same guid: VK answers the post it made, nothing is posted twice', async () => {
    const rootId = await createPost(herald, channelId, ['Exactly once'], { settings: { __type: 'vk' } });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const [published] = await chainOf(herald, rootId);
    const count = fake.posts.length;
    await reopenAsInterrupted(herald, rootId, 'post');
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect(fake.posts).toHaveLength(count);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(published.releaseId);
  });

  describe('beyond the guid\'s hour, an older post of the same text on the wall', () => {
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const older = (text: string) => {
      const post = { id: 900_000 + fake.posts.length, ownerId: fake.posts[0].ownerId, message: text, attachments: [], guid: '', likes: 0, views: 0, date: Math.floor(hoursAgo(5).getTime() / 1000) };
      fake.posts.push(post);
      return post;
    };
    const isPost = (request: { url: string; form?: Record<string, unknown> }) => request.url.endsWith('/method/wall.post');
    const lose = async (rootId: string, how: typeof loseAnswerOf) => {
      const restore = how(herald, isPost);
      try {
        expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
      } finally {
        restore();
      }
      fake.forgetGuids();
      // The attempt began two hours ago: VK no longer matches its guid.
      await reopenAsInterrupted(herald, rootId, () => ({ post: { state: 'started', startedAt: hoursAgo(2).toISOString() } }));
    };

    it('a post lost before it reached VK is found nowhere since the attempt, so it is posted once', async () => {
      const old = older('Morning note');
      const rootId = await createPost(herald, channelId, ['Morning note'], { settings: { __type: 'vk' } });
      await lose(rootId, loseRequestOf);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      const made = fake.posts.filter((post) => post.message === 'Morning note' && post !== old);
      expect(made).toHaveLength(1);
      expect((await chainOf(herald, rootId))[0].releaseId).toBe(String(made[0].id));
    });

    it('a post lost after it reached VK is found on the wall and linked, not posted again', async () => {
      const old = older('Evening note');
      const rootId = await createPost(herald, channelId, ['Evening note'], { settings: { __type: 'vk' } });
      await lose(rootId, loseAnswerOf);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      const made = fake.posts.filter((post) => post.message === 'Evening note' && post !== old);
      expect(made).toHaveLength(1);
      expect((await chainOf(herald, rootId))[0].releaseId).toBe(String(made[0].id));
    });
  });
});

describe('errors and tokens', () => {
  it('retries "too many requests per second" (error 6), answered with HTTP 200', async () => {
    const rootId = await createPost(herald, channelId, ['Busy'], { settings: { __type: 'vk' } });
    fake.server.failNext('POST', '/method/*', vkError(6, 'Too many requests per second'));
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    expect((await chainOf(herald, rootId))[0].lastError).toMatch(/too many requests per second/);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it("puts a post VK refuses (error 214, the daily limit) in ERROR with VK's words, and notifies", async () => {
    const rootId = await createPost(herald, channelId, ['Too many today'], { settings: { __type: 'vk' } });
    fake.server.failNext('POST', '/method/*', vkError(214, 'Access to adding post denied: you can only add 50 posts a day'));
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toBe(
      'VK refused the post: VK refused to add the post (Access to adding post denied: you can only add 50 posts a day): a wall takes at most 50 posts a day, and the wall must accept posts',
    );
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('50 posts a day'))).toBe(true);
  });

  it('refreshes with the rotated refresh token and the device_id after error 5, twice in a row', async () => {
    const deviceId = channelAuth(herald.services, await integration()).data.deviceId;
    for (const round of [1, 2]) {
      fake.authority.expireAccessTokens();
      const rootId = await createPost(herald, channelId, [`After refresh ${round}`], { settings: { __type: 'vk' } });
      expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    }
    const [first, second] = authCalls().filter((call) => call.form?.get('grant_type') === 'refresh_token').slice(-2);
    expect(first.form?.get('device_id')).toBe(deviceId);
    expect(first.form?.get('client_id')).toBe(fake.authority.clientId);
    expect(second.form?.get('refresh_token')).not.toBe(first.form?.get('refresh_token'));
  });
});

describe('analytics and recent posts', () => {
  it("reads a post's views, likes, reposts and comments, and lists the wall's recent posts", async () => {
    const post = fake.posts.find((item) => item.message === 'Summer release')!;
    Object.assign(post, { likes: 12, views: 340 });
    const [root] = await herald.services.orm.em.fork().find(PostSchema, { releaseId: String(post.id) });
    const metrics = await herald.rest('GET', `/analytics/post/${root.id}?date=7`);
    expect(metrics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Views', '340'],
      ['Likes', '12'],
      ['Reposts', '0'],
      ['Comments', '2'],
    ]);
    // A post whose id was never known ("missing") is linked from the wall's recent posts.
    const em = herald.services.orm.em.fork();
    const unlinked = await em.findOneOrFail(PostSchema, { releaseId: String(fake.posts.at(-1)!.id) });
    unlinked.releaseId = 'missing';
    await em.flush();
    const missing = await herald.rest('GET', `/posts/${unlinked.id}/missing`);
    expect(missing.body[0]).toEqual({ id: String(fake.posts.at(-1)!.id), url: `${fake.url}/wall${fake.userId}_${fake.posts.at(-1)!.id}` });
  });
});
