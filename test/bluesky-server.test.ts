// What a real Bluesky server refused after Herald had accepted a post, now checked before creation or fitted at publish;
// connecting to a self-hosted PDS (the deployment's service, no AppView) and reading its analytics; an app password revoked
// while Herald holds a live session (issue 22). Every request is checked against the lexicons (test/fakes/atproto-lexicon.ts).
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from './helpers/posts.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { IntegrationSchema, NotificationSchema } from '../src/db/entities.js';
import { channelAuth } from '../tools/internal/integrations.js';

let herald: Herald;
let pds: BlueskyFake;
let bare: BlueskyFake;
let channelId: string;
let bareChannelId: string;

beforeAll(async () => {
  [pds, bare] = await Promise.all([startBlueskyFake(), startBlueskyFake({ handle: 'bob.pds.example', appView: false })]);
  // The deployment points Bluesky at its own PDS: a connect form that leaves the service empty must use it.
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ bluesky: { service: pds.url } }) }, { guard: { allowLoopback: true } });
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: '', identifier: pds.handle, appPassword: pds.password });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await Promise.all([pds?.close(), bare?.close()]);
  expect([...pds.contractViolations, ...bare.contractViolations]).toEqual([]);
});

describe('connecting', () => {
  it('uses the deployment\'s service when the form leaves it empty, and does not store it on the channel', async () => {
    expect(pds.server.requestsTo('POST', '/xrpc/com.atproto.server.createSession')).toHaveLength(1);
    const integration = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(channelAuth(herald.services, integration).data.service).toBeUndefined();
  });

  it('connects to a PDS with no AppView behind it, taking the handle and DID from the session', async () => {
    const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: bare.url, identifier: bare.handle, appPassword: bare.password });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect(connected.body).toMatchObject({ name: 'bob.pds.example', profile: 'bob.pds.example', picture: '' });
    expect(bare.server.requestsTo('GET', '/xrpc/app.bsky.actor.getProfile')).toHaveLength(1);
    bareChannelId = connected.body.id;
  });

  it('says that a PDS with no AppView cannot give analytics, instead of a temporary failure', async () => {
    const response = await herald.rest('GET', `/analytics/${bareChannelId}?date=7`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'not_supported' });
    expect(response.body.message).toBe(`The Bluesky server ${bare.url} has no AppView to answer app.bsky.actor.getProfile (it answered 502: {"error":"UpstreamFailure","message":"Upstream service unreachable"}), so Bluesky analytics and recent posts are not available for this channel.`);
    expect(response.body.hint).toMatch(/PDS_BSKY_APP_VIEW_URL/);
    // Publishing needs no AppView.
    const rootId = await createPost(herald, bareChannelId, ['<p>From a bare PDS</p>'], { type: 'now' });
    expect((await publishUntilSettled(herald, rootId)).outcome).toEqual({ kind: 'published' });
  });
});

describe('an app password revoked while Herald holds a live session', () => {
  it('asks to reconnect as soon as a publish is refused, not two hours later when the session expires', async () => {
    const carol = await startBlueskyFake({ handle: 'carol.bsky.social' });
    try {
      const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: carol.url, identifier: carol.handle, appPassword: carol.password });
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      carol.revokeAppPassword();
      carol.server.failNext('POST', '/xrpc/com.atproto.repo.createRecord', { status: 400, json: { error: 'InvalidRequest', message: 'Could not create the record' } });
      const rootId = await createPost(herald, connected.body.id, ['<p>After the revocation</p>'], { type: 'now' });
      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('failed');
      expect(runs).toHaveLength(1);
      expect((await chainOf(herald, rootId))[0].error).toMatch(/was disconnected because its token expired or was revoked/);
      const em = herald.services.orm.em.fork();
      expect((await em.findOneOrFail(IntegrationSchema, { id: connected.body.id })).refreshNeeded).toBe(true);
      const notices = await em.find(NotificationSchema, { organizationId: herald.organizationId, type: 'channel_reconnect' });
      expect(notices.map((notice) => notice.content)).toContain(`Your Bluesky channel "${connected.body.name}" needs to be reconnected.`);
      expect(carol.records).toHaveLength(0);
      expect(carol.contractViolations).toEqual([]);
    } finally {
      await carol.close();
    }
  });
});

describe('validation before creation', () => {
  it('refuses text over 3,000 bytes even when it is within 300 graphemes', async () => {
    const family = '👨‍👩‍👧‍👦'.repeat(300);
    const response = await herald.rest('POST', '/posts', {
      type: 'now',
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: channelId }, value: [{ content: `<p>${family}</p>`, image: [] }], settings: {} }],
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/7500 bytes long; Bluesky takes at most 3000 bytes/);
  });
});

describe('pictures over the blob limit', () => {
  it('re-encodes a 2.4 MB picture to fit under 1,000,000 bytes and publishes it', async () => {
    const noise = Buffer.alloc(1200 * 700 * 3);
    for (let index = 0; index < noise.length; index++) noise[index] = (index * 2654435761) >>> 24;
    const png = await sharp(noise, { raw: { width: 1200, height: 700, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(png.length).toBeGreaterThan(2_000_000);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'big.png');
    const uploaded = await fetch(`${herald.restUrl}/upload`, { method: 'POST', headers: { authorization: herald.apiKey }, body: form });
    expect(uploaded.status).toBe(200);
    const media = (await uploaded.json()) as { id: string; path: string };
    const rootId = await createPost(herald, channelId, [{ content: '<p>A big picture</p>', image: [{ id: media.id, path: media.path }] }], { type: 'now' });
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome, JSON.stringify(await chainOf(herald, rootId))).toEqual({ kind: 'published' });
    const blob = pds.blobs.at(-1)!;
    expect(blob.size).toBeLessThanOrEqual(1_000_000);
    expect(blob.mimeType).toBe('image/jpeg');
    expect((await sharp(blob.bytes).metadata()).format).toBe('jpeg');
  });
});
