import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf, withPlatformFetch } from '../helpers/lost-answer.js';
import { chainOf, createPost, publishUntilSettled, waitFor } from '../helpers/posts.js';
import bluesky from '../../providers/bluesky/index.js';
import { CheckAgainLater, type ChannelAuth, type ProviderContext, type PublishItem } from '../../providers/types.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';
import { startBlueskyFake, startBlueskyVideoFake, type BlueskyFake, type BlueskyVideoFake } from '../fakes/bluesky.js';
import { goodMp4, mediumMp4, upload, uploadAll } from '../helpers/media-samples.js';

const UNREACHABLE = 'http://127.0.0.1:9';
const CREATE_RECORD = '/xrpc/com.atproto.repo.createRecord';

let fake: BlueskyFake;
beforeEach(async () => {
  fake = await startBlueskyFake({ handle: 'alice.bsky.social', password: 'app-pass-1234' });
});
afterEach(async () => {
  await fake.close();
  // Every XRPC request Herald made matched the official lexicons (test/fakes/atproto-lexicon.ts).
  expect(fake.contractViolations).toEqual([]);
});

/** A context of a connected channel: the PDS URL comes from the channel's data, not the endpoints. */
const channel = (auth: Partial<ChannelAuth> = fake.channelAuth(), steps?: Map<string, unknown>): ProviderContext => providerContext({ endpoints: { service: UNREACHABLE, web: 'https://bsky.app' }, auth, steps });
const item = (text: string, media: PublishItem['media'] = []): PublishItem => ({ postId: 'post-1', text, media });
const connectContext = (service: string) => ({ fetch: providerContext({}).fetch, dial: async () => undefined, endpoints: { service } });
const today = () => new Date().toISOString().slice(0, 10);

describe('bluesky descriptor', () => {
  it('declares a plain-text, 300-grapheme, thread-style credentials platform on bsky.social', () => {
    expect(bluesky).toMatchObject({ identifier: 'bluesky', name: 'Bluesky', editor: 'plain', lengthMethod: 'graphemes', settings: null, chain: 'thread', tools: [] });
    expect(bluesky.maxLength({})).toBe(300);
    expect(bluesky.endpoints).toEqual({ service: 'https://bsky.social', web: 'https://bsky.app', video: 'https://video.bsky.app' });
    expect(bluesky.recordsSteps).toBe(true);
    expect(bluesky.auth.kind).toBe('credentials');
    expect(bluesky.auth.fields?.map((field) => [field.key, field.type])).toEqual([['service', 'url'], ['identifier', 'text'], ['appPassword', 'password']]);
    // The service field defaults to the deployment's endpoint (SOCIAL_ENDPOINTS), never to a literal of its own.
    expect(bluesky.auth.fields?.[0]).toMatchObject({ endpoint: 'service' });
    expect(bluesky.auth.fields?.[0].defaultValue).toBeUndefined();
  });

  it('accepts up to 4 images, one video alone, or nothing, and rejects more images, mixed media, several videos and a video over 100 MB', () => {
    const image = { kind: 'image' as const, url: 'https://media.example/a.png' };
    const video = { kind: 'video' as const, url: 'https://media.example/a.mp4' };
    const validate = bluesky.validate!;
    expect(validate([{ text: 'hello', media: [] }, { text: 'four', media: [image, image, image, image] }], {})).toBeUndefined();
    expect(validate([{ text: 'a video', media: [video] }], {})).toBeUndefined();
    expect(validate([{ text: 'ok', media: [] }, { text: 'five', media: [image, image, image, image, image] }], {})).toBe('There can be maximum 4 pictures in a post.');
    expect(validate([{ text: 'mixed', media: [video, image] }], {})).toMatch(/^A Bluesky post carries one video alone/);
    expect(validate([{ text: 'two videos', media: [video, video] }], {})).toMatch(/^A Bluesky post carries one video alone/);
    expect(validate([{ text: 'ok', media: [] }, { text: 'big', media: [{ ...video, size: 150_000_000 }] }], {})).toBe('Item 2 has a video of 150 MB; Bluesky takes videos up to 100 MB: shorten or compress it.');
  });
});

describe('the fake\'s lexicon check', () => {
  it('refuses a post record the lexicon refuses, as the PDS does, and records it so the test fails', async () => {
    const auth = fake.channelAuth();
    const response = await fetch(`${fake.url}/xrpc/com.atproto.repo.createRecord`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth.accessToken}`, 'content-type': 'application/json' },
      // What RichText.detectFacets(agent) leaves for a handle that does not resolve: a mention with an empty did.
      body: JSON.stringify({ repo: fake.did, collection: 'app.bsky.feed.post', record: { $type: 'app.bsky.feed.post', text: '@nobody.test', createdAt: new Date().toISOString(), facets: [{ index: { byteStart: 0, byteEnd: 12 }, features: [{ $type: 'app.bsky.richtext.facet#mention', did: '' }] }] } }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'InvalidRequest', message: 'Record/facets/0/features/0/did must be a valid did' });
    const query = await fetch(`${fake.url}/xrpc/app.bsky.feed.getAuthorFeed?actor=${fake.did}&limit=500`, { headers: { authorization: `Bearer ${auth.accessToken}` } });
    expect(query.status).toBe(400);
    expect(fake.contractViolations).toEqual([
      'com.atproto.repo.createRecord: Record/facets/0/features/0/did must be a valid did',
      'app.bsky.feed.getAuthorFeed: limit can not be greater than 100',
    ]);
    fake.contractViolations.length = 0; // seen: the afterEach check is for Herald's own requests
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

  it('makes mention facets for handles the PDS resolves and link facets for bare domains, as Bluesky\'s RichText does; an unknown handle stays text', async () => {
    fake.handles.set('bob.example.com', 'did:plc:bobbobbobbobbobbobbobbob');
    const text = 'Hé @bob.example.com, @nobody.bsky.social ✨ see example.org/page and bsky.app! cc @alice.bsky.social $HRLD';
    await bluesky.publish!(channel(), item(text));

    const { record } = fake.server.requestsTo('POST', CREATE_RECORD)[0].json;
    const bytes = Buffer.from(text, 'utf8');
    const spans = (record.facets as { index: { byteStart: number; byteEnd: number }; features: Record<string, string>[] }[]).map((facet) => [
      bytes.subarray(facet.index.byteStart, facet.index.byteEnd).toString('utf8'),
      facet.features.map(({ $type, ...value }) => `${$type.replace('app.bsky.richtext.facet#', '')} ${Object.values(value).join()}`).join(),
    ]);
    expect(spans).toEqual([
      ['@bob.example.com', 'mention did:plc:bobbobbobbobbobbobbobbob'],
      ['example.org/page', 'link https://example.org/page'],
      ['bsky.app', 'link https://bsky.app'],
      ['@alice.bsky.social', `mention ${fake.did}`],
      ['$HRLD', 'tag $HRLD'],
    ]);
    // Each handle is resolved once, on the channel's PDS, without the session's token (resolveHandle is public).
    const lookups = fake.server.requestsTo('GET', '/xrpc/com.atproto.identity.resolveHandle');
    expect(lookups.map((request) => request.query.get('handle')).sort()).toEqual(['alice.bsky.social', 'bob.example.com', 'nobody.bsky.social']);
    expect(lookups.every((request) => request.headers.authorization === undefined)).toBe(true);
  });

  it('retries later, not posting the mention as text, when the PDS cannot be asked about a handle', async () => {
    fake.server.failNext('GET', '/xrpc/com.atproto.identity.resolveHandle', { status: 502, json: { error: 'UpstreamFailure', message: 'Upstream service unreachable' } });
    const attempt = bluesky.publish!(channel(), item('Thanks @bob.example.com'));
    await expect(attempt).rejects.toMatchObject({ status: 502, retryable: true });
    expect(fake.records).toHaveLength(0);
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

  it('chooses and sends the record key (a TID) and keeps the post\'s createdAt, recorded before the create', async () => {
    const steps = new Map<string, unknown>();
    const ref = await bluesky.publish!(channel(fake.channelAuth(), steps), item('keyed'));
    const { rkey, createdAt } = steps.get('record') as { rkey: string; createdAt: string };
    expect(rkey).toMatch(/^[234567a-j][234567a-z]{12}$/);
    const [request] = fake.server.requestsTo('POST', CREATE_RECORD);
    expect(request.json).toMatchObject({ rkey, record: { createdAt } });
    expect(ref.id).toBe(`at://${fake.did}/app.bsky.feed.post/${rkey}`);
    expect(steps.get('post')).toEqual({ uri: ref.id, cid: ref.meta!.cid });
  });
});

describe('bluesky video', () => {
  let video: BlueskyVideoFake;
  beforeEach(async () => {
    video = await startBlueskyVideoFake(fake);
  });
  afterEach(async () => {
    await video.close();
  });

  const withVideo = (auth: ChannelAuth, steps: Map<string, unknown>) =>
    providerContext({ endpoints: { service: UNREACHABLE, web: 'https://bsky.app', video: video.url }, auth, steps });
  const clip = () => mediaFile(goodMp4(), { kind: 'video', mimeType: 'video/mp4', url: 'https://herald.example/uploads/clip.mp4', alt: 'A test card' });

  it('checks the limits, uploads to the video service with a PDS token, waits while it encodes, then embeds the blob', async () => {
    const auth = fake.channelAuth();
    const steps = new Map<string, unknown>();
    const first = await bluesky.publish!(withVideo(auth, steps), item('a clip', [clip()])).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(CheckAgainLater);
    expect((first as CheckAgainLater).message).toBe('Bluesky is still processing the video (encoding, 40%)');
    expect(await bluesky.publish!(withVideo(auth, steps), item('a clip', [clip()])).catch((error: unknown) => error)).toBeInstanceOf(CheckAgainLater);
    const ref = await bluesky.publish!(withVideo(auth, steps), item('a clip', [clip()]));

    const [limits, upload] = fake.serviceTokens;
    expect(limits).toMatchObject({ aud: video.did, lxm: 'app.bsky.video.getUploadLimits' });
    expect(upload).toMatchObject({ aud: `did:web:127.0.0.1%3A${fake.server.port}`, lxm: 'com.atproto.repo.uploadBlob' });
    expect(upload.exp - Date.now() / 1000).toBeGreaterThan(29 * 60);
    const uploads = video.server.requestsTo('POST', '/xrpc/app.bsky.video.uploadVideo');
    expect(uploads).toHaveLength(1);
    expect([uploads[0].query.get('did'), uploads[0].query.get('name'), uploads[0].headers['content-type']]).toEqual([fake.did, 'clip.mp4', 'video/mp4']);
    expect(uploads[0].headers.authorization).toBe(`Bearer ${upload.token}`);
    expect(uploads[0].body.equals(goodMp4())).toBe(true);
    expect(video.server.requestsTo('GET', '/xrpc/app.bsky.video.getJobStatus')).toHaveLength(3);

    const [record] = fake.records;
    const blob = fake.blobs.at(-1)!;
    expect(record.record.embed).toEqual({
      $type: 'app.bsky.embed.video',
      video: { $type: 'blob', ref: { $link: blob.cid }, mimeType: 'video/mp4', size: blob.size },
      alt: 'A test card',
      aspectRatio: { width: 320, height: 240 },
    });
    expect(ref.id).toBe(record.uri);
  });

  it('reuses the job of bytes already uploaded (409 already_exists) when the upload is made again', async () => {
    video.encodingChecks = 0;
    await bluesky.publish!(withVideo(fake.channelAuth(), new Map()), item('first', [clip()]));
    await bluesky.publish!(withVideo(fake.channelAuth(), new Map()), item('second', [clip()]));
    expect(video.jobs).toHaveLength(1);
    expect(fake.records.map((entry) => entry.record.embed.video.ref.$link)).toEqual([video.jobs[0].blobCid, video.jobs[0].blobCid]);
  });

  it('turns a 401 of the video service into a refusal of this post, never a login problem of the channel', async () => {
    // A video service whose DID is not the did:web of its address refuses every token the PDS signs for it.
    video.did = 'did:web:video.elsewhere.example';
    const error = await bluesky.publish!(withVideo(fake.channelAuth(), new Map()), item('x', [clip()])).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(PlatformHttpError);
    expect(error).toMatchObject({ status: 403, retryable: false, isAuthError: false });
    expect((error as Error).message).toMatch(/^Bluesky's video service refused the token your PDS signed for it \(.*BadJwtAudience.*\); the channel's login is not affected$/);

    // An expired service token is worth another attempt: a new one is asked for.
    video.did = `did:web:127.0.0.1%3A${video.server.port}`;
    video.server.failNext('GET', '/xrpc/app.bsky.video.getUploadLimits', { status: 401, json: { error: 'JwtExpired', message: 'jwt expired' } });
    const expired = await bluesky.publish!(withVideo(fake.channelAuth(), new Map()), item('x', [clip()])).catch((failure: unknown) => failure);
    expect(expired).toMatchObject({ status: 403, retryable: true });
  });

  it('refuses for good when the account may not upload, or when the service cannot process the video', async () => {
    video.limits = { canUpload: false, remainingDailyVideos: 0, remainingDailyBytes: 0, message: 'You have reached your daily upload limit' };
    const limited = await bluesky.publish!(withVideo(fake.channelAuth(), new Map()), item('x', [clip()])).catch((error: unknown) => error);
    expect(limited).toMatchObject({ status: 400, retryable: false, message: 'the account may not upload a video now: You have reached your daily upload limit' });
    expect(video.server.requestsTo('POST', '/xrpc/app.bsky.video.uploadVideo')).toHaveLength(0);

    video.limits = { canUpload: true, remainingDailyVideos: 5, remainingDailyBytes: 1e9 };
    video.failNextJob = 'Video is not a supported format';
    const failed = await bluesky.publish!(withVideo(fake.channelAuth(), new Map()), item('x', [clip()])).catch((error: unknown) => error);
    expect(failed).toMatchObject({ retryable: false, message: 'Bluesky could not process the video: Video is not a supported format' });
    expect(fake.records).toHaveLength(0);
  });
});

describe('bluesky comment', () => {
  it('replies with strong refs to the thread root and the previous item', async () => {
    // Each item gets its own context, as each post row has its own recorded steps in the core.
    const auth = fake.channelAuth();
    const context = () => channel(auth);
    const root = await bluesky.publish!(context(), item('root'));
    const first = await bluesky.comment!(context(), item('first reply'), { root, parent: root });
    const second = await bluesky.comment!(context(), item('second reply'), { root, parent: first });

    const [rootRecord, firstRecord, secondRecord] = fake.records;
    expect(rootRecord.record.reply).toBeUndefined();
    expect(firstRecord.record.reply).toEqual({ root: { uri: rootRecord.uri, cid: rootRecord.cid }, parent: { uri: rootRecord.uri, cid: rootRecord.cid } });
    expect(secondRecord.record.reply).toEqual({ root: { uri: rootRecord.uri, cid: rootRecord.cid }, parent: { uri: firstRecord.uri, cid: firstRecord.cid } });
    expect([first.id, second.id]).toEqual([firstRecord.uri, secondRecord.uri]);
    expect(second.meta).toEqual({ cid: secondRecord.cid });
  });

  it('reads the cid from the PDS with getRecord (no AppView needed) when a ref was stored without it', async () => {
    // Each item gets its own context, as each post row has its own recorded steps in the core.
    const auth = fake.channelAuth();
    const context = () => channel(auth);
    const root = await bluesky.publish!(context(), item('root'));
    await bluesky.comment!(context(), item('reply'), { root: { id: root.id }, parent: { id: root.id } });

    const lookup = fake.server.requestsTo('GET', '/xrpc/com.atproto.repo.getRecord')[0];
    expect([lookup.query.get('repo'), lookup.query.get('collection'), lookup.query.get('rkey')]).toEqual([fake.did, 'app.bsky.feed.post', fake.records[0].rkey]);
    expect(fake.server.requestsTo('GET', '/xrpc/app.bsky.feed.getPosts')).toHaveLength(0);
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
    // Each item gets its own context, as each post row has its own recorded steps in the core.
    const auth = fake.channelAuth();
    const context = () => channel(auth);
    const root = await bluesky.publish!(context(), item('measured'));
    await bluesky.comment!(context(), item('a reply'), { root, parent: root });
    fake.setEngagement(root.id, { likeCount: 5, repostCount: 2, quoteCount: 1 });

    const metrics = await bluesky.postAnalytics!(context(), root, 7);
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

  it('reads account counts from getProfile, and the engagement of the period\'s posts per day', async () => {
    fake.profile.followersCount = 120;
    fake.profile.followsCount = 30;
    fake.profile.postsCount = 10;
    // Each item gets its own context, as each post row has its own recorded steps in the core.
    const auth = fake.channelAuth();
    const context = () => channel(auth);
    const post = await bluesky.publish!(context(), item('one more'));
    fake.setEngagement(post.id, { likeCount: 4, repostCount: 1 });

    const metrics = await bluesky.analytics!(context(), 7);
    expect(fake.server.requestsTo('GET', '/xrpc/app.bsky.actor.getProfile')[0].query.get('actor')).toBe(fake.did);
    const feed = fake.server.requestsTo('GET', '/xrpc/app.bsky.feed.getAuthorFeed')[0];
    expect([feed.query.get('actor'), feed.query.get('limit'), feed.query.get('filter')]).toEqual([fake.did, '100', 'posts_with_replies']);
    expect(metrics.slice(0, 3).map((metric) => [metric.label, metric.data])).toEqual([
      ['Followers', [{ total: '120', date: today() }]],
      ['Following', [{ total: '30', date: today() }]],
      ['Posts', [{ total: '11', date: today() }]],
    ]);
    const daily = Object.fromEntries(metrics.slice(3).map((metric) => [metric.label, metric.data]));
    expect(Object.keys(daily)).toEqual(['Posts published', 'Likes', 'Reposts', 'Replies', 'Quotes']);
    expect(daily.Likes).toHaveLength(7);
    expect(daily.Likes.at(-1)).toEqual({ total: '4', date: today() });
    expect(daily['Posts published'].at(-1)!.total).toBe('1');
    expect(daily.Likes[0].total).toBe('0');
  });

  it('lists recent posts newest first, with the image thumbnail or the post URL', async () => {
    // Each item gets its own context, as each post row has its own recorded steps in the core.
    const auth = fake.channelAuth();
    const context = () => channel(auth);
    const text = await bluesky.publish!(context(), item('text only'));
    const picture = await bluesky.publish!(context(), item('with picture', [mediaFile(tinyPng())]));

    const recent = await bluesky.recent!(context());
    const request = fake.server.requestsTo('GET', '/xrpc/app.bsky.feed.getAuthorFeed')[0];
    expect([request.query.get('actor'), request.query.get('limit')]).toEqual([fake.did, '20']);
    expect(recent).toEqual([
      { id: picture.id, url: `${fake.url}/img/feed_thumbnail/plain/${fake.did}/${fake.blobs[0].cid}@jpeg` },
      { id: text.id, url: text.url },
    ]);
  });
});

describe('bluesky through Herald', () => {
  let herald: Herald;
  let pds: BlueskyFake;
  let video: BlueskyVideoFake;
  let channelId: string;
  let media: Record<'png' | 'mp4', { id: string; path: string }>;

  beforeAll(async () => {
    pds = await startBlueskyFake({ handle: 'herald.bsky.social', password: 'pass-word-here-1234' });
    video = await startBlueskyVideoFake(pds);
    herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ bluesky: { service: pds.url, video: video.url } }), PUBLISH_RECHECK_MAX_SECONDS: '1' }, { guard: { allowLoopback: true } });
    media = await uploadAll(herald, { png: [tinyPng(), 'dot.png'], mp4: [goodMp4(), 'clip.mp4'] });
  });
  afterAll(async () => {
    await herald?.stop();
    await Promise.all([pds?.close(), video?.close()]);
    expect(pds.contractViolations).toEqual([]);
  });

  const recordsWith = (text: string) => pds.records.filter((entry) => entry.record.text === text);

  it('refuses a wrong app password with Bluesky\'s reason, and connects with the right one', async () => {
    const wrong = await herald.rest('POST', '/integrations/bluesky/connect', { identifier: pds.handle, appPassword: 'nope' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain('Bluesky refused the connection');
    expect(wrong.body.message).toContain('Invalid identifier or password');
    const connected = await herald.rest('POST', '/integrations/bluesky/connect', { identifier: pds.handle, appPassword: pds.password });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    channelId = connected.body.id;
  });

  it('publishes a video thread: re-checked while the job encodes, then the post and a reply with a picture', async () => {
    video.encodingChecks = 2;
    const rootId = await createPost(herald, channelId, [{ content: '<p>Watch this</p>', image: [media.mp4] }, { content: '<p>And a picture</p>', image: [media.png] }], { type: 'now' });
    const { outcome, runs } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('published');
    expect(runs.map((run) => run.kind)).toEqual(['waiting', 'waiting', 'published']);
    const [post] = recordsWith('Watch this');
    expect(post.record.embed).toMatchObject({ $type: 'app.bsky.embed.video', aspectRatio: { width: 320, height: 240 } });
    expect(pds.blobs.some((blob) => blob.cid === post.record.embed.video.ref.$link && blob.mimeType === 'video/mp4')).toBe(true);
    const [reply] = recordsWith('And a picture');
    expect(reply.record.reply.parent).toEqual({ uri: post.uri, cid: post.cid });
    expect(reply.record.embed.$type).toBe('app.bsky.embed.images');
    expect(video.server.requestsTo('POST', '/xrpc/app.bsky.video.uploadVideo')).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(post.uri);
  });

  it('publishes a video through the worker', async () => {
    video.encodingChecks = 0;
    const worker = await herald.startWorker();
    try {
      const other = await upload(herald.restUrl, herald.apiKey, mediumMp4(), 'other.mp4');
      expect(other.status).toBe(200);
      const rootId = await createPost(herald, channelId, [{ content: '<p>Worker video</p>', image: [other.body] }], { type: 'now' });
      await waitFor(async () => ((await chainOf(herald, rootId))[0].state === 'PUBLISHED' ? true : undefined));
      expect(recordsWith('Worker video')[0].record.embed.$type).toBe('app.bsky.embed.video');
    } finally {
      await worker.stop();
    }
  });

  it('fails only the video post when the video service refuses its token (401): the channel stays connected and the next text post goes out', async () => {
    const sessionsBefore = pds.sessions.length;
    video.did = 'did:web:video.elsewhere.example';
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>Refused video</p>', image: [media.mp4] }], { type: 'now' });
      const { outcome } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('failed');
      expect((await chainOf(herald, rootId))[0].error).toMatch(/video service refused the token your PDS signed for it.*BadJwtAudience.*the channel's login is not affected/);
    } finally {
      video.did = `did:web:127.0.0.1%3A${video.server.port}`;
    }
    const em = herald.services.orm.em.fork();
    expect((await em.findOneOrFail(IntegrationSchema, { id: channelId })).refreshNeeded).toBe(false);
    expect(await em.count(NotificationSchema, { organizationId: herald.organizationId, type: 'channel_reconnect' })).toBe(0);
    expect(pds.sessions.length).toBe(sessionsBefore); // no refresh of the PDS session either

    const textId = await createPost(herald, channelId, ['<p>Text after the video</p>'], { type: 'now' });
    expect((await publishUntilSettled(herald, textId)).outcome.kind).toBe('published');
    expect(recordsWith('Text after the video')).toHaveLength(1);
  });

  it('finds the post with getRecord after a create whose answer was lost, instead of posting twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Lost answer</p>'], { type: 'now' });
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/xrpc/com.atproto.repo.createRecord'));
    try {
      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('published');
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'published']);
    } finally {
      restore();
    }
    expect(recordsWith('Lost answer')).toHaveLength(1);
    expect(pds.server.requestsTo('GET', '/xrpc/com.atproto.repo.getRecord').at(-1)!.query.get('rkey')).toBe(recordsWith('Lost answer')[0].rkey);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(recordsWith('Lost answer')[0].uri);
  });

  it('posts once when the create was lost before it reached the PDS, never taking an older post of the same text for it', async () => {
    const olderId = await createPost(herald, channelId, ['<p>Same words</p>'], { type: 'now' });
    expect((await publishUntilSettled(herald, olderId)).outcome.kind).toBe('published');
    const rootId = await createPost(herald, channelId, ['<p>Same words</p>'], { type: 'now', allowDuplicate: true });
    const { outcome, runs } = await withPlatformFetch(herald.services, (real) => {
      let lost = false;
      return async (request) => {
        if (!lost && request.url.endsWith(CREATE_RECORD)) {
          lost = true;
          throw new PlatformHttpError({ status: 0, retryable: true, outcomeUnknown: true, bodyExcerpt: '', message: 'Could not reach the platform: the connection was reset' });
        }
        return real(request);
      };
    }, () => publishUntilSettled(herald, rootId));
    expect(outcome.kind).toBe('published');
    expect(runs.map((run) => run.kind)).toEqual(['waiting', 'published']);
    const same = recordsWith('Same words');
    expect(same).toHaveLength(2);
    const [older] = await chainOf(herald, olderId);
    const [newer] = await chainOf(herald, rootId);
    expect(older.releaseId).toBe(same[0].uri);
    expect(newer.releaseId).toBe(same[1].uri);
    // The recovery asked the PDS for the record key Herald had chosen for this item: not there, so it was created.
    expect(pds.server.requestsTo('GET', '/xrpc/com.atproto.repo.getRecord').at(-1)!.query.get('rkey')).toBe(same[1].rkey);
  });

  it('waits for the PDS\'s ratelimit-reset after a 429', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Slow down</p>'], { type: 'now' });
    const reset = Math.floor(Date.now() / 1000) + 600;
    pds.server.failNext('POST', '/xrpc/com.atproto.repo.createRecord', { status: 429, headers: { 'ratelimit-limit': '5000', 'ratelimit-remaining': '0', 'ratelimit-reset': String(reset) }, json: { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' } });
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(Math.abs(waiting.nextAttemptAt!.getTime() - reset * 1000)).toBeLessThan(3000);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(recordsWith('Slow down')).toHaveLength(1);
  });

  it('puts the post in ERROR with the PDS\'s message when the record is refused, and notifies', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Refused</p>'], { type: 'now' });
    pds.server.failNext('POST', '/xrpc/com.atproto.repo.createRecord', { status: 400, json: { error: 'InvalidRequest', message: 'Invalid app.bsky.feed.post record: Record/langs must not have more than 3 elements' } });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toContain('Bluesky refused the post');
    expect(root.error).toContain('Record/langs must not have more than 3 elements');
    const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notifications.some((notification) => notification.content.includes('Record/langs'))).toBe(true);
    // The refusal made Herald check the login (the app password still works): the channel stays connected.
    expect(pds.sessions.at(-1)!.via).toBe('createSession');
    expect((await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId })).refreshNeeded).toBe(false);
  });
});
