import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import bluesky from '../../providers/bluesky.js';
import type { ChannelAuth, ProviderContext, PublishItem } from '../../providers/types.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';
import { startBlueskyFake, type BlueskyFake } from '../fakes/bluesky.js';

const UNREACHABLE = 'http://127.0.0.1:9';
const CREATE_RECORD = '/xrpc/com.atproto.repo.createRecord';

let fake: BlueskyFake;
beforeEach(async () => {
  fake = await startBlueskyFake({ handle: 'alice.bsky.social', password: 'app-pass-1234' });
});
afterEach(async () => {
  await fake.close();
});

/** A context of a connected channel: the PDS URL comes from the channel's data, not the endpoints. */
const channel = (auth: Partial<ChannelAuth> = fake.channelAuth()): ProviderContext => providerContext({ endpoints: { service: UNREACHABLE, web: 'https://bsky.app' }, auth });
const item = (text: string, media: PublishItem['media'] = []): PublishItem => ({ postId: 'post-1', text, media });
const connectContext = (service: string) => ({ fetch: providerContext({}).fetch, endpoints: { service } });
const today = () => new Date().toISOString().slice(0, 10);

describe('bluesky descriptor', () => {
  it('declares a plain-text, 300-grapheme, thread-style credentials platform on bsky.social', () => {
    expect(bluesky).toMatchObject({ identifier: 'bluesky', name: 'Bluesky', editor: 'plain', lengthMethod: 'graphemes', settings: null, chain: 'thread', tools: [] });
    expect(bluesky.maxLength({})).toBe(300);
    expect(bluesky.endpoints.service).toBe('https://bsky.social');
    expect(bluesky.auth.kind).toBe('credentials');
    expect(bluesky.auth.fields?.map((field) => [field.key, field.type])).toEqual([['service', 'url'], ['identifier', 'text'], ['appPassword', 'password']]);
    // The service field defaults to the deployment's endpoint (SOCIAL_ENDPOINTS), never to a literal of its own.
    expect(bluesky.auth.fields?.[0]).toMatchObject({ endpoint: 'service' });
    expect(bluesky.auth.fields?.[0].defaultValue).toBeUndefined();
  });

  it('accepts up to 4 images or nothing, and rejects more images, mixed media, several videos and video for now', () => {
    const image = { kind: 'image' as const, url: 'https://media.example/a.png' };
    const video = { kind: 'video' as const, url: 'https://media.example/a.mp4' };
    const validate = bluesky.validate!;
    expect(validate([{ text: 'hello', media: [] }, { text: 'four', media: [image, image, image, image] }], {})).toBeUndefined();
    expect(validate([{ text: 'ok', media: [] }, { text: 'five', media: [image, image, image, image, image] }], {})).toBe('There can be maximum 4 pictures in a post.');
    expect(validate([{ text: 'mixed', media: [video, image] }], {})).toBe('You can only upload one video per post.');
    expect(validate([{ text: 'two videos', media: [video, video] }], {})).toBe('You can only upload one video per post.');
    expect(validate([{ text: 'a video', media: [video] }], {})).toMatch(/video is not supported yet on Bluesky in Herald/i);
  });
});

describe('bluesky connect', () => {
  it('logs in on the PDS given in the form and returns the account with its session', async () => {
    const account = await bluesky.connect!(connectContext(UNREACHABLE), { service: `${fake.url}/`, identifier: '@alice.bsky.social', appPassword: 'app-pass-1234' });

    const [login] = fake.server.requestsTo('POST', '/xrpc/com.atproto.server.createSession');
    expect(login.json).toEqual({ identifier: 'alice.bsky.social', password: 'app-pass-1234' });
    expect(login.headers.authorization).toBeUndefined();
    const [profile] = fake.server.requestsTo('GET', '/xrpc/app.bsky.actor.getProfile');
    expect(profile.query.get('actor')).toBe(fake.did);
    expect(profile.headers.authorization).toBe(`Bearer ${fake.sessions[0].accessJwt}`);

    expect(account).toMatchObject({
      internalId: fake.did,
      name: 'Alice',
      profile: 'alice.bsky.social',
      picture: fake.profile.avatar,
      accessToken: fake.sessions[0].accessJwt,
      refreshToken: fake.sessions[0].refreshJwt,
      data: { service: fake.url, identifier: 'alice.bsky.social', appPassword: 'app-pass-1234' },
    });
    expect(account.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3600_000);
  });

  it('falls back to the handle when the profile has no display name, and to the deployment\'s service without storing it', async () => {
    fake.profile.displayName = '';
    const account = await bluesky.connect!(connectContext(fake.url), { identifier: 'alice.bsky.social', appPassword: 'app-pass-1234' });
    expect(account.name).toBe('alice.bsky.social');
    expect(fake.sessions.at(-1)?.via).toBe('createSession');
    expect(account.data?.service).toBeUndefined();
  });

  it('surfaces a wrong app password as a 401 PlatformHttpError and opens no session', async () => {
    const attempt = bluesky.connect!(connectContext(fake.url), { identifier: 'alice.bsky.social', appPassword: 'wrong' });
    await expect(attempt).rejects.toBeInstanceOf(PlatformHttpError);
    await expect(attempt).rejects.toMatchObject({ status: 401, retryable: false, bodyExcerpt: expect.stringContaining('AuthenticationRequired') });
    expect(fake.server.requestsTo('POST', '/xrpc/com.atproto.server.createSession')).toHaveLength(1);
    expect(fake.sessions).toHaveLength(0);
  });
});

describe('bluesky publish', () => {
  it('creates a post with link and hashtag facets at UTF-8 byte offsets', async () => {
    const text = 'Café ☕ read https://example.com/path?q=1. #Herald2025 ok';
    const ref = await bluesky.publish!(channel(), item(text));

    const [request] = fake.server.requestsTo('POST', CREATE_RECORD);
    expect(request.headers.authorization).toBe(`Bearer ${fake.sessions[0].accessJwt}`);
    expect(request.json).toMatchObject({ repo: fake.did, collection: 'app.bsky.feed.post', record: { $type: 'app.bsky.feed.post', text } });
    const { record } = request.json;
    expect(Date.parse(record.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(record.embed).toBeUndefined();
    // "Café ☕ read " is 12 UTF-16 units but 15 UTF-8 bytes (é is 2 bytes, ☕ is 3).
    expect(record.facets).toEqual([
      { index: { byteStart: 15, byteEnd: 43 }, features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/path?q=1' }] },
      { index: { byteStart: 45, byteEnd: 56 }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'Herald2025' }] },
    ]);
    const bytes = Buffer.from(text, 'utf8');
    expect(bytes.subarray(15, 43).toString('utf8')).toBe('https://example.com/path?q=1');
    expect(bytes.subarray(45, 56).toString('utf8')).toBe('#Herald2025');

    const stored = fake.records[0];
    expect(ref).toEqual({ id: stored.uri, url: `https://bsky.app/profile/${fake.did}/post/${stored.rkey}`, meta: { cid: stored.cid } });
    expect(stored.uri).toBe(`at://${fake.did}/app.bsky.feed.post/${stored.rkey}`);
  });

  it('sends no facets for plain text', async () => {
    await bluesky.publish!(channel(), item('just words, no links'));
    expect(fake.server.requestsTo('POST', CREATE_RECORD)[0].json.record.facets).toBeUndefined();
  });

  it('uploads the image bytes as a blob and embeds the returned blob ref with alt and aspect ratio', async () => {
    const png = tinyPng();
    await bluesky.publish!(channel(), item('a picture', [mediaFile(png, { alt: 'A green pixel' })]));

    const [upload] = fake.server.requestsTo('POST', '/xrpc/com.atproto.repo.uploadBlob');
    expect(upload.headers['content-type']).toBe('image/png');
    expect(upload.headers.authorization).toBe(`Bearer ${fake.sessions[0].accessJwt}`);
    expect(fake.blobs).toHaveLength(1);
    expect(fake.blobs[0].bytes.equals(png)).toBe(true);
    expect(fake.blobs[0]).toMatchObject({ mimeType: 'image/png', size: png.length });

    expect(fake.records[0].record.embed).toEqual({
      $type: 'app.bsky.embed.images',
      images: [
        {
          alt: 'A green pixel',
          image: { $type: 'blob', ref: { $link: fake.blobs[0].cid }, mimeType: 'image/png', size: png.length },
          aspectRatio: { width: 1, height: 1 },
        },
      ],
    });
  });

  it('refuses a video without calling the platform', async () => {
    await expect(bluesky.publish!(channel(), item('clip', [mediaFile(Buffer.from('mp4'), { kind: 'video', mimeType: 'video/mp4' })]))).rejects.toThrow(/not supported yet/);
    expect(fake.server.requests).toHaveLength(0);
  });
});

describe('bluesky comment', () => {
  it('replies with strong refs to the thread root and the previous item', async () => {
    const context = channel();
    const root = await bluesky.publish!(context, item('root'));
    const first = await bluesky.comment!(context, item('first reply'), { root, parent: root });
    const second = await bluesky.comment!(context, item('second reply'), { root, parent: first });

    const [rootRecord, firstRecord, secondRecord] = fake.records;
    expect(rootRecord.record.reply).toBeUndefined();
    expect(firstRecord.record.reply).toEqual({ root: { uri: rootRecord.uri, cid: rootRecord.cid }, parent: { uri: rootRecord.uri, cid: rootRecord.cid } });
    expect(secondRecord.record.reply).toEqual({ root: { uri: rootRecord.uri, cid: rootRecord.cid }, parent: { uri: firstRecord.uri, cid: firstRecord.cid } });
    expect([first.id, second.id]).toEqual([firstRecord.uri, secondRecord.uri]);
    expect(second.meta).toEqual({ cid: secondRecord.cid });
  });

  it('looks up the cid with getPosts when a ref was stored without it', async () => {
    const context = channel();
    const root = await bluesky.publish!(context, item('root'));
    await bluesky.comment!(context, item('reply'), { root: { id: root.id }, parent: { id: root.id } });

    expect(fake.server.requestsTo('GET', '/xrpc/app.bsky.feed.getPosts')[0].query.getAll('uris')).toEqual([fake.records[0].uri]);
    expect(fake.records[1].record.reply.parent).toEqual({ uri: fake.records[0].uri, cid: fake.records[0].cid });
  });
});

describe('bluesky refresh', () => {
  it('reports an expired access token as 401 and refreshes the session with the refresh JWT', async () => {
    const auth = fake.channelAuth();
    fake.expireAccessTokens();
    const attempt = bluesky.publish!(channel(auth), item('after expiry'));
    await expect(attempt).rejects.toMatchObject({ status: 401, bodyExcerpt: expect.stringContaining('ExpiredToken') });
    expect(fake.records).toHaveLength(0);

    const tokens = await bluesky.refresh!(channel(auth));
    const [refresh] = fake.server.requestsTo('POST', '/xrpc/com.atproto.server.refreshSession');
    expect(refresh.headers.authorization).toBe(`Bearer ${auth.refreshToken}`);
    expect(fake.server.requestsTo('POST', '/xrpc/com.atproto.server.createSession')).toHaveLength(0);
    const issued = fake.sessions.at(-1)!;
    expect(issued.via).toBe('refreshSession');
    expect(tokens).toMatchObject({ accessToken: issued.accessJwt, refreshToken: issued.refreshJwt });

    await bluesky.publish!(channel({ ...auth, ...tokens }), item('after refresh'));
    expect(fake.records.map((entry) => entry.record.text)).toEqual(['after refresh']);
  });

  it('logs in again with the stored app password when the refresh JWT is dead too', async () => {
    const auth = fake.channelAuth();
    fake.expireAccessTokens();
    fake.expireRefreshTokens();
    const tokens = await bluesky.refresh!(channel(auth));

    expect(fake.server.requestsTo('POST', '/xrpc/com.atproto.server.refreshSession')).toHaveLength(1);
    const [login] = fake.server.requestsTo('POST', '/xrpc/com.atproto.server.createSession');
    expect(login.json).toEqual({ identifier: 'alice.bsky.social', password: 'app-pass-1234' });
    expect(tokens).toMatchObject({ accessToken: fake.sessions.at(-1)!.accessJwt, refreshToken: fake.sessions.at(-1)!.refreshJwt });
    expect(fake.sessions.at(-1)!.via).toBe('createSession');
  });

  it('fails with 401 when the app password was revoked as well', async () => {
    const auth = fake.channelAuth();
    fake.expireRefreshTokens();
    const attempt = bluesky.refresh!(channel({ ...auth, data: { ...auth.data, appPassword: 'revoked' } }));
    await expect(attempt).rejects.toMatchObject({ status: 401, bodyExcerpt: expect.stringContaining('Invalid identifier or password') });
  });
});

describe('bluesky analytics', () => {
  it('reads post counts from getPosts as one data point for today', async () => {
    const context = channel();
    const root = await bluesky.publish!(context, item('measured'));
    await bluesky.comment!(context, item('a reply'), { root, parent: root });
    fake.setEngagement(root.id, { likeCount: 5, repostCount: 2, quoteCount: 1 });

    const metrics = await bluesky.postAnalytics!(context, root, 7);
    const request = fake.server.requestsTo('GET', '/xrpc/app.bsky.feed.getPosts')[0];
    expect(request.query.get('uris')).toBe(root.id);
    expect(metrics).toEqual([
      { label: 'Likes', data: [{ total: '5', date: today() }], percentageChange: 0 },
      { label: 'Reposts', data: [{ total: '2', date: today() }], percentageChange: 0 },
      { label: 'Replies', data: [{ total: '1', date: today() }], percentageChange: 0 },
      { label: 'Quotes', data: [{ total: '1', date: today() }], percentageChange: 0 },
    ]);
  });

  it('answers no metrics for a post the platform no longer has', async () => {
    expect(await bluesky.postAnalytics!(channel(), { id: `at://${fake.did}/app.bsky.feed.post/3kdeleted2222`, meta: { cid: 'x' } }, 7)).toEqual([]);
  });

  it('reads account counts from getProfile', async () => {
    fake.profile.followersCount = 120;
    fake.profile.followsCount = 30;
    fake.profile.postsCount = 10;
    const context = channel();
    await bluesky.publish!(context, item('one more'));

    const metrics = await bluesky.analytics!(context, 30);
    expect(fake.server.requestsTo('GET', '/xrpc/app.bsky.actor.getProfile')[0].query.get('actor')).toBe(fake.did);
    expect(metrics.map((metric) => [metric.label, metric.data])).toEqual([
      ['Followers', [{ total: '120', date: today() }]],
      ['Following', [{ total: '30', date: today() }]],
      ['Posts', [{ total: '11', date: today() }]],
    ]);
  });

  it('lists recent posts newest first, with the image thumbnail or the post URL', async () => {
    const context = channel();
    const text = await bluesky.publish!(context, item('text only'));
    const picture = await bluesky.publish!(context, item('with picture', [mediaFile(tinyPng())]));

    const recent = await bluesky.recent!(context);
    const request = fake.server.requestsTo('GET', '/xrpc/app.bsky.feed.getAuthorFeed')[0];
    expect([request.query.get('actor'), request.query.get('limit')]).toEqual([fake.did, '20']);
    expect(recent).toEqual([
      { id: picture.id, url: `${fake.url}/img/feed_thumbnail/plain/${fake.did}/${fake.blobs[0].cid}@jpeg` },
      { id: text.id, url: text.url },
    ]);
  });
});
