// Instagram Standalone (Instagram API with Instagram Login, graph.instagram.com) end to end against the fake Meta platform:
// the login on instagram.com with the code traded as a form and a 60-day token, container publishing without the audio
// setting, and the long-lived token refreshed with ig_refresh_token (the daily job's call, and once on a 190 error).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import instagramStandalone from '../../providers/instagram-standalone.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { channelAuth, refreshExpiringTokens } from '../../tools/internal/integrations.js';
import { taskList } from '../../src/jobs/index.js';
import { publishChain } from '../../tools/internal/publish.js';
import { metaError, startFacebookFake, type FacebookFake } from '../fakes/facebook.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { acceptedSamples, goodMp4, upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished } from '../helpers/posts.js';

const DAY = 86_400_000;
let fake: FacebookFake;
let herald: Herald;
let solo = '';

beforeAll(async () => {
  fake = await startFacebookFake();
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

async function picture(): Promise<{ id: string; path: string }> {
  const response = await upload(herald.restUrl, herald.apiKey, acceptedSamples().find((entry) => entry.type === 'image/jpeg')!.bytes, 'loaf.jpg', 'image/jpeg');
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}
const graphPath = (path: string) => `/${fake.version}/${path}`;
const em = () => herald.services.orm.em.fork();
const standalone = { settings: { __type: 'instagram-standalone', post_type: 'post' } };

describe('connecting Instagram through Instagram Login', () => {
  it('trades the code as a form on api.instagram.com, then for a 60-day token', async () => {
    const { integrationId, inBetweenSteps, authorizeUrl } = await connectOAuthChannel(herald, 'instagram-standalone');
    expect(inBetweenSteps).toBe(false);
    expect(Object.fromEntries(authorizeUrl.searchParams)).toMatchObject({ enable_fb_login: '0', client_id: fake.igApp.id, response_type: 'code' });
    const [exchange] = fake.server.requestsTo('POST', '/oauth/access_token');
    expect(Object.fromEntries(exchange.form!)).toEqual({
      client_id: fake.igApp.id,
      client_secret: fake.igApp.secret,
      grant_type: 'authorization_code',
      redirect_uri: `${herald.url}/api/integrations/social/instagram-standalone/callback`,
      code: expect.any(String),
    });
    const [longLived] = fake.server.requestsTo('GET', '/access_token');
    expect(Object.fromEntries(longLived.query)).toMatchObject({ grant_type: 'ig_exchange_token', client_secret: fake.igApp.secret });
    const me = fake.server.requestsTo('GET', graphPath('me')).at(-1)!;
    expect(me.query.get('fields')).toBe('user_id,username,name,profile_picture_url');
    const integration = await em().findOneOrFail(IntegrationSchema, { id: integrationId });
    expect(integration).toMatchObject({ internalId: fake.solo.userId, name: 'Herald Solo', profile: 'herald.solo', inBetweenSteps: false });
    expect(integration.tokenExpiresAt!.getTime() - Date.now()).toBeGreaterThan(59 * DAY);
    expect(fake.tokens.get(channelAuth(herald.services, integration).accessToken)?.kind).toBe('ig');
    solo = integrationId;
  });

  it('refuses the audio setting, which needs the Facebook business login', async () => {
    const video = await upload(herald.restUrl, herald.apiKey, goodMp4(), 'v.mp4', 'video/mp4');
    const response = await submitPost(herald, solo, [{ content: 'x', image: [video.body] }], { type: 'now', settings: { ...standalone.settings, audio: { id: 'aud-1' } } });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('only on Instagram channels connected through the Facebook business login');
  });
});

describe('publishing and keeping the token alive', () => {
  it('publishes a picture and a comment on graph.instagram.com through the real worker', async () => {
    const image = await picture();
    const worker = await herald.startWorker();
    let rootId = '';
    try {
      rootId = await createPost(herald, solo, [{ content: '<p>Solo loaf</p>', image: [image] }, '<p>Solo comment</p>'], standalone);
      await waitForPublished(herald, rootId);
    } finally {
      await worker.stop();
    }
    const token = channelAuth(herald.services, await em().findOneOrFail(IntegrationSchema, { id: solo })).accessToken;
    const [create] = fake.server.requestsTo('POST', graphPath(`${fake.solo.userId}/media`));
    expect(create.json).toEqual({ image_url: image.path, caption: 'Solo loaf' });
    expect(create.headers.authorization).toBe(`Bearer ${token}`);
    const media = fake.media.at(-1)!;
    expect(media.owner).toBe(fake.solo.userId);
    expect(fake.comments.at(-1)).toMatchObject({ parentId: media.id, message: 'Solo comment' });
    expect((await chainOf(herald, rootId)).map((item) => item.state)).toEqual(['PUBLISHED', 'PUBLISHED']);
  });

  it('is refreshed by the daily job with ig_refresh_token once its 60-day token is within 15 days of expiry', async () => {
    expect(instagramStandalone.refreshDaysBeforeExpiry).toBe(15);
    expect(Object.keys(taskList(herald.services))).toContain('refresh_expiring_tokens');
    // Freshly connected: 60 days left, nothing to do.
    expect(await refreshExpiringTokens(herald.services, new Date())).toBe(0);
    expect(fake.server.requestsTo('GET', '/refresh_access_token')).toHaveLength(0);

    fake.ageTokens(46 * DAY);
    const fork = em();
    const integration = await fork.findOneOrFail(IntegrationSchema, { id: solo });
    integration.tokenExpiresAt = new Date(Date.now() + 14 * DAY);
    await fork.flush();
    const old = channelAuth(herald.services, integration).accessToken;
    expect(await refreshExpiringTokens(herald.services, new Date())).toBe(1);
    const request = fake.server.requestsTo('GET', '/refresh_access_token').at(-1)!;
    expect(Object.fromEntries(request.query)).toEqual({ grant_type: 'ig_refresh_token', access_token: old });
    const refreshed = await em().findOneOrFail(IntegrationSchema, { id: solo });
    const fresh = channelAuth(herald.services, refreshed).accessToken;
    expect(fresh).not.toBe(old);
    expect(fake.tokens.get(fresh)?.kind).toBe('ig');
    expect(refreshed.tokenExpiresAt!.getTime() - Date.now()).toBeGreaterThan(59 * DAY);
  });

  it('refreshes once on a 190 error and publishes', async () => {
    fake.ageTokens(2 * DAY);
    const refreshes = fake.server.requestsTo('GET', '/refresh_access_token').length;
    const rootId = await createPost(herald, solo, [{ content: '<p>After a refresh</p>', image: [await picture()] }], standalone);
    fake.server.failNext('POST', graphPath(`${fake.solo.userId}/media`), metaError(190, 'Error validating access token: Session has expired.', { subcode: 463 }));
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('GET', '/refresh_access_token').length - refreshes).toBe(1);
    expect(fake.media.filter((media) => media.caption === 'After a refresh')).toHaveLength(1);
  });

  it('flags the channel for reconnection when the token expired for good', async () => {
    fake.ageTokens(61 * DAY);
    const rootId = await createPost(herald, solo, [{ content: '<p>Expired</p>', image: [await picture()] }], standalone);
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await em().findOneOrFail(IntegrationSchema, { id: solo })).refreshNeeded).toBe(true);
    const notices = await em().find(NotificationSchema, { organizationId: herald.organizationId, type: 'channel_reconnect' });
    expect(notices.map((notice) => notice.content)).toContainEqual(expect.stringContaining('Herald Solo'));
  });
});
