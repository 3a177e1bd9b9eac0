// Farcaster (Neynar) against its fake: a signer from Neynar's sign-in checked at connect, casts with picture embeds in
// channels through the worker, replies to each channel's cast, the protocol's byte limit, Neynar's idem after a lost answer,
// a 429, a permanent refusal, a revoked signer, the channel search tool, and analytics. Comments and changes: warpcast-comments.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import warpcast from '../../providers/warpcast.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startWarpcastFake, type WarpcastFake } from '../fakes/warpcast.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf, withPlatformFetch } from '../helpers/lost-answer.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { goodMp4, upload } from '../helpers/media-samples.js';
import { chainOf, createPost, publishUntilSettled, submitPost, type ItemInput, waitForPublished } from '../helpers/posts.js';
import { providerContext, tinyPng } from '../helpers/provider-context.js';

let fake: WarpcastFake;
let herald: Herald;
let channelId: string;
let picture: { id: string; path: string };

beforeAll(async () => {
  fake = await startWarpcastFake();
  herald = await startHerald(
    { WARPCAST_CLIENT_ID: fake.clientId, WARPCAST_CLIENT_SECRET: fake.apiKey, SOCIAL_ENDPOINTS: JSON.stringify({ warpcast: { api: fake.url, web: 'https://farcaster.example' } }) },
    { guard: { allowLoopback: true } },
  );
  const uploaded = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
  picture = { id: uploaded.body.id, path: uploaded.body.path };
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const castRequests = () => fake.server.requestsTo('POST', '/v2/farcaster/cast/');
const createRaw = (value: ItemInput[], settings: Record<string, unknown> = {}) => submitPost(herald, channelId, value, { settings });
const channels = (...ids: string[]) => ({ subreddit: ids.map((id) => ({ value: { id } })) });

describe('warpcast descriptor', () => {
  it('takes the spec\'s subreddit setting as [{value: {id}}], 1024 bytes, and the channel search tool', () => {
    const schema = z.toJSONSchema(warpcast.settings!) as any;
    expect(schema.properties.subreddit.items.properties.value.required).toEqual(['id']);
    expect(warpcast.maxLength({})).toBe(1024);
    expect(warpcast.tools.map((tool) => tool.methodName)).toEqual(['subreddits']);
    expect(warpcast).toMatchObject({ idempotentCreate: true, recordsSteps: true, mediaByUrl: true, chain: 'thread' });
  });

  it('refuses to connect when the deployment has no Neynar API key', async () => {
    const attempt = warpcast.connect!({ fetch: providerContext({}).fetch, dial: async () => undefined, endpoints: { api: fake.url } }, { signerUuid: fake.signerUuid });
    await expect(attempt).rejects.toThrow('Farcaster is not configured on this Herald.');
  });
});

describe('connecting with the signer from Neynar\'s sign-in', () => {
  it('refuses an unknown signer, a signer still pending, and a fid that is not the signer\'s, with the reason', async () => {
    const unknown = await herald.rest('POST', '/integrations/warpcast/connect', { signerUuid: '5f0c1c11-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('Farcaster refused the connection: Signer not found');
    const pending = crypto.randomUUID();
    fake.signers.set(pending, { status: 'pending_approval', permissions: ['WRITE_ALL'] });
    const waiting = await herald.rest('POST', '/integrations/warpcast/connect', { signerUuid: pending });
    expect(waiting.body.message).toBe('This Neynar signer is pending approval, not approved.');
    const mismatch = await herald.rest('POST', '/integrations/warpcast/connect', { signerUuid: fake.signerUuid, fid: '1' });
    expect(mismatch.body.message).toBe(`This signer belongs to fid ${fake.fid}, not 1.`);
  });

  it('connects an approved signer with the account\'s name, handle and picture, the API key in x-api-key', async () => {
    const connected = await herald.rest('POST', '/integrations/warpcast/connect', { signerUuid: fake.signerUuid, fid: String(fake.fid) });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect(connected.body).toMatchObject({ identifier: 'warpcast', name: 'Herald Test', profile: 'herald', picture: 'https://imagedelivery.example/herald.png' });
    channelId = connected.body.id;
    const lookup = fake.server.requestsTo('GET', '/v2/farcaster/signer/').at(-1)!;
    expect(lookup.headers['x-api-key']).toBe(fake.apiKey);
    expect(lookup.query.get('signer_uuid')).toBe(fake.signerUuid);
    expect(fake.server.requestsTo('GET', '/v2/farcaster/user/bulk/').at(-1)!.query.get('fids')).toBe(String(fake.fid));
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(row.internalId).toBe(String(fake.fid));
    expect(row.credentials).not.toContain(fake.signerUuid);
  });
});

describe('casting', () => {
  it('casts a thread with a picture in two channels through the worker, replying in each', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>Hello channels</p>', image: [picture] }, '<p>And a reply</p>'], { type: 'now', settings: channels('farcaster', 'photography') });
      const items = await waitForPublished(herald, rootId);
      const [inFarcaster, inPhotography, replyOne, replyTwo] = fake.casts.slice(-4);
      expect(castRequests().slice(-4).map((request) => request.json)).toEqual([
        { signer_uuid: fake.signerUuid, text: 'Hello channels', embeds: [{ url: picture.path }], channel_id: 'farcaster', idem: `${rootId}:farcaster` },
        { signer_uuid: fake.signerUuid, text: 'Hello channels', embeds: [{ url: picture.path }], channel_id: 'photography', idem: `${rootId}:photography` },
        { signer_uuid: fake.signerUuid, text: 'And a reply', parent: inFarcaster.hash, parent_author_fid: fake.fid, idem: `${items[1].id}:farcaster` },
        { signer_uuid: fake.signerUuid, text: 'And a reply', parent: inPhotography.hash, parent_author_fid: fake.fid, idem: `${items[1].id}:photography` },
      ]);
      expect([replyOne.parent, replyTwo.parent]).toEqual([inFarcaster.hash, inPhotography.hash]);
      expect(fake.embedFetches.at(-1)).toEqual({ url: picture.path, status: 200, contentType: 'image/png' });
      expect(items[0].releaseId).toBe(inFarcaster.hash);
      expect(items[0].releaseUrl).toBe(`https://farcaster.example/~/conversations/${inFarcaster.hash}`);
      expect(JSON.parse(items[0].releaseMeta!.casts)).toEqual([{ channel: 'farcaster', hash: inFarcaster.hash }, { channel: 'photography', hash: inPhotography.hash }]);
    } finally {
      await worker.stop();
    }
  });

  it('casts on the profile with the post id as idem when no channel is chosen', async () => {
    const rootId = await createPost(herald, channelId, ['<p>On my profile</p>'], { type: 'now' });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(castRequests().at(-1)!.json).toEqual({ signer_uuid: fake.signerUuid, text: 'On my profile', idem: rootId });
  });

  it('refuses at validation a video, three pictures, text over 1024 bytes and a channel chosen twice', async () => {
    const video = (await upload(herald.restUrl, herald.apiKey, goodMp4(), 'clip.mp4')).body;
    const message = async (value: ItemInput[], settings: Record<string, unknown> = {}) => {
      const response = await createRaw(value, settings);
      expect(response.status).toBe(400);
      return response.body.message as string;
    };
    expect(await message([{ content: 'x', image: [video] }])).toContain('The post has a video, but Farcaster takes pictures only: remove it.');
    expect(await message([{ content: 'x', image: [picture, picture, picture] }])).toContain('The post has 3 pictures; a cast takes at most 2.');
    expect(await message([{ content: `<p>${'😀'.repeat(300)}</p>`, image: [] }])).toContain('The post is 1200 bytes long; a Farcaster cast takes at most 1024 bytes');
    expect(await message([{ content: 'x', image: [] }], channels('art', 'art'))).toContain('The channel "art" is chosen twice');
    expect(await message([{ content: 'x', image: [] }], channels('a', 'b', 'c', 'd', 'e', 'f'))).toMatch(/settings\.subreddit/);
    expect((await createRaw([{ content: `<p>${'é'.repeat(512)}</p>`, image: [] }])).status).toBe(200); // 1024 bytes: a long cast
  });

  it('sends the cast again with the same idem after a lost answer, and Neynar keeps one cast', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Lost answer</p>'], { type: 'now' });
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/v2/farcaster/cast/') && request.method === 'POST');
    try {
      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('published');
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'published']);
    } finally {
      restore();
    }
    expect(castRequests().slice(-2).map((request) => request.json.idem)).toEqual([rootId, rootId]);
    expect(fake.casts.filter((entry) => entry.text === 'Lost answer')).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(fake.casts.find((entry) => entry.text === 'Lost answer')!.hash);
  });

  it('casts once when the create was lost before it reached Neynar, never taking an older cast of the same text for it', async () => {
    const olderId = await createPost(herald, channelId, ['<p>Same words</p>'], { type: 'now' });
    expect((await publishUntilSettled(herald, olderId)).outcome.kind).toBe('published');
    const rootId = await createPost(herald, channelId, ['<p>Same words</p>'], { type: 'now', allowDuplicate: true });
    const sent = castRequests().length;
    // The connection drops before the request leaves: Herald cannot tell whether Neynar got it.
    const { outcome, runs } = await withPlatformFetch(herald.services, (real) => {
      let lost = false;
      return async (request) => {
        if (!lost && request.method === 'POST' && request.url.endsWith('/v2/farcaster/cast/')) {
          lost = true;
          throw new PlatformHttpError({ status: 0, retryable: true, outcomeUnknown: true, bodyExcerpt: '', message: 'Could not reach the platform: the connection was reset' });
        }
        return real(request);
      };
    }, () => publishUntilSettled(herald, rootId));
    expect(outcome.kind).toBe('published');
    expect(runs.map((run) => run.kind)).toEqual(['waiting', 'published']);
    expect(castRequests().slice(sent).map((request) => request.json.idem)).toEqual([rootId]);
    const same = fake.casts.filter((entry) => entry.text === 'Same words');
    expect(same).toHaveLength(2);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(same[1].hash);
    expect((await chainOf(herald, olderId))[0].releaseId).toBe(same[0].hash);
  });

  it('retries a 429 after its Retry-After', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Rate limited</p>'], { type: 'now' });
    fake.server.failNext('POST', '/v2/farcaster/cast/', { status: 429, headers: { 'retry-after': '120' }, json: { code: 'RateLimitExceeded', message: 'Too many requests', status: 429 } });
    const before = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(119_000);
    expect(waiting.lastError).toContain('Too many requests');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.casts.filter((entry) => entry.text === 'Rate limited')).toHaveLength(1);
  });

  it('puts the post in ERROR with Neynar\'s message when the cast is refused, and notifies', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Nowhere</p>'], { type: 'now', settings: channels('no-such-channel') });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe('Farcaster refused the post: Channel no-such-channel not found (channel_id)');
    const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notifications.some((notification) => notification.content.includes('Channel no-such-channel not found'))).toBe(true);
  });
});

describe('tools and analytics', () => {
  it('searches channels through POST /integration-trigger, and asks for a word', async () => {
    const found = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'photo' } });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.output.map((channel: { id: string }) => channel.id)).toEqual(['photography', 'photo-walks']);
    expect(found.body.output[0]).toEqual({ id: 'photography', name: 'Photography', description: 'Pictures', followers: 21000, image: 'https://imagedelivery.example/photo.png', url: 'https://farcaster.example/~/channel/photography' });
    expect(fake.server.requestsTo('GET', '/v2/farcaster/channel/search/').at(-1)!.query.get('limit')).toBe('10');
    const empty = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: ' ' } });
    expect(empty.status).toBe(400);
  });

  it('reads a post\'s likes, recasts and replies across its channel casts, and the account\'s followers and daily engagement', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Measured</p>', '<p>Reply</p>'], { type: 'now', settings: channels('farcaster', 'photography') });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const measured = fake.casts.filter((entry) => entry.text === 'Measured');
    Object.assign(measured[0], { likes: 3, recasts: 1 });
    Object.assign(measured[1], { likes: 2 });
    const post = await herald.rest('GET', `/analytics/post/${rootId}`);
    expect(post.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([['Likes', '5'], ['Recasts', '1'], ['Replies', '2']]);

    const account = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(account.status).toBe(200);
    const byLabel = Object.fromEntries(account.body.map((metric: { label: string; data: { total: string; date: string }[] }) => [metric.label, metric.data]));
    expect(Object.keys(byLabel)).toEqual(['Followers', 'Following', 'Casts', 'Likes', 'Recasts', 'Replies']);
    expect(byLabel.Followers).toEqual([{ total: '120', date: new Date().toISOString().slice(0, 10) }]);
    expect(byLabel.Likes).toHaveLength(7);
    expect(byLabel.Likes.at(-1).total).toBe('5');
    expect(Number(byLabel.Casts.at(-1).total)).toBe(fake.casts.length);
  });

  it('lists recent casts (without replies) for a missing release id', async () => {
    const recent = await warpcast.recent!(providerContext({ endpoints: { api: fake.url, web: 'https://farcaster.example' }, auth: { accessToken: fake.signerUuid, internalId: String(fake.fid) }, client: { clientId: fake.clientId, clientSecret: fake.apiKey } }));
    const roots = fake.casts.filter((entry) => entry.parent === null).reverse();
    expect(recent.map((entry) => entry.id)).toEqual(roots.map((entry) => entry.hash));
    expect(recent.find((entry) => entry.id === roots.find((cast) => cast.text === 'Hello channels')!.hash)!.url).toBe(picture.path);
  });
});

describe('a revoked signer', () => {
  it('flags the channel for reconnection, fails the post with the reason, and helpers answer 401', async () => {
    fake.signers.get(fake.signerUuid)!.status = 'revoked';
    const rootId = await createPost(herald, channelId, ['<p>After revocation</p>'], { type: 'now' });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/disconnected because its token expired or was revoked/);
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(row.refreshNeeded).toBe(true);
    const trigger = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'art' } });
    expect(trigger.status).toBe(401);
  });
});
