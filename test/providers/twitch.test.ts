// Twitch end to end against the fake: OAuth with refresh, chat messages with replies through the worker, announcements in
// their colour, media and announcement chains refused at validation, a 429 retried at Ratelimit-Reset, a dropped message in
// ERROR, the follower count, and the app's Client-Id on every Helix call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import twitch from '../../providers/twitch.js';
import { NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startTwitchFake, type TwitchFake } from '../fakes/twitch.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

let fake: TwitchFake;
let herald: Herald;
let channelId: string;

const post = (items: Parameters<typeof createPost>[2], settings: Record<string, unknown> = {}) => createPost(herald, channelId, items, { settings: { __type: 'twitch', ...settings } });
const attempt = (value: { content: string; image: { id: string; path: string }[] }[], settings: Record<string, unknown>) =>
  submitPost(herald, channelId, value, { settings: { __type: 'twitch', ...settings } });

beforeAll(async () => {
  fake = await startTwitchFake();
  herald = await startHerald(
    { TWITCH_CLIENT_ID: fake.authority.clientId, TWITCH_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ twitch: fake.endpoints }) },
    { guard: { allowLoopback: true } },
  );
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

describe('connecting a Twitch account', () => {
  it('trades the code with the client secret in the form, and reads the user with the Client-Id', async () => {
    const connected = await connectOAuthChannel(herald, 'twitch');
    channelId = connected.integrationId;
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/oauth2/authorize');
    expect(query.get('scope')).toBe('user:write:chat moderator:manage:announcements');
    expect(query.has('code_challenge')).toBe(false);
    const [exchange] = fake.server.requestsTo('POST', '/oauth2/token');
    expect(Object.fromEntries(exchange.form!)).toMatchObject({ grant_type: 'authorization_code', client_id: 'twitch-client', client_secret: 'twitch-secret', redirect_uri: `${herald.url}/api/integrations/social/twitch/callback` });
    const list = (await herald.rest('GET', '/integrations')).body as { id: string; name: string; profile: string; picture: string }[];
    expect(list.find((item) => item.id === channelId)).toMatchObject({ name: 'HeraldTV', profile: 'heraldtv', picture: fake.user.profile_image_url });
  });
});

describe('publishing', () => {
  it('sends a chat message and its replies through the worker', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await post(['<p>Stream starts <strong>now</strong></p>', 'Link in the panels', 'See you there']);
      const items = await waitForPublished(herald, rootId);
      const sent = fake.messages.slice(-3);
      expect(sent.map((message) => [message.broadcasterId, message.senderId, message.message])).toEqual([
        [fake.user.id, fake.user.id, 'Stream starts 𝗻𝗼𝘄'],
        [fake.user.id, fake.user.id, 'Link in the panels'],
        [fake.user.id, fake.user.id, 'See you there'],
      ]);
      expect(sent.map((message) => message.replyTo)).toEqual([undefined, sent[0].id, sent[1].id]);
      expect(items.map((item) => item.releaseId)).toEqual(sent.map((message) => message.id));
      expect(items[0].releaseUrl).toBe('https://www.twitch.tv/heraldtv');
    } finally {
      await worker.stop();
    }
  });

  it('posts an announcement in the chosen colour, primary by default; its id is "missing" as Twitch gives none', async () => {
    const purple = await post(['Giveaway tonight!'], { messageType: 'announcement', announcementColor: 'purple' });
    expect((await publishUntilSettled(herald, purple)).outcome.kind).toBe('published');
    const plain = await post(['Schedule change'], { messageType: 'announcement' });
    expect((await publishUntilSettled(herald, plain)).outcome.kind).toBe('published');
    expect(fake.announcements.slice(-2)).toEqual([
      { broadcasterId: fake.user.id, moderatorId: fake.user.id, message: 'Giveaway tonight!', color: 'purple' },
      { broadcasterId: fake.user.id, moderatorId: fake.user.id, message: 'Schedule change', color: 'primary' },
    ]);
    const [root] = await chainOf(herald, purple);
    expect([root.state, root.releaseId]).toEqual(['PUBLISHED', 'missing']);
  });

  it('refuses at validation media (Twitch chat is text only) and an announcement with replies', async () => {
    const picture = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
    const withMedia = await attempt([{ content: 'Look', image: [{ id: picture.body.id, path: picture.body.path }] }], {});
    expect(withMedia.status).toBe(400);
    expect(withMedia.body.message).toMatch(/has attachments, but Twitch takes text only: remove them/);
    const chain = await attempt([{ content: 'Big news', image: [] }, { content: 'Details', image: [] }], { messageType: 'announcement' });
    expect(chain.status).toBe(400);
    expect(chain.body.message).toMatch(/An announcement gets no message id to reply to/);
    expect((await attempt([{ content: 'Hi', image: [] }], { announcementColor: 'pink' })).status).toBe(400);
  });

  it('sends the app\'s Client-Id and the user token on every Helix call', () => {
    const helixCalls = fake.server.requests.filter((request) => request.path.startsWith('/helix/'));
    expect(helixCalls.length).toBeGreaterThan(5);
    expect(helixCalls.every((request) => request.headers['client-id'] === 'twitch-client' && /^Bearer /.test(String(request.headers.authorization)))).toBe(true);
  });

  it('stops an announcement whose send was interrupted with "could not confirm" instead of sending it twice', async () => {
    const rootId = await post(['Once only'], { messageType: 'announcement' });
    const em = herald.services.orm.em.fork();
    const [root] = await em.find(PostSchema, { rootPostId: rootId });
    Object.assign(root, { attemptStartedAt: new Date(), publishProgress: { steps: { announcement: { state: 'started' } } } });
    await em.flush();
    const before = fake.announcements.length;
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect(fake.announcements).toHaveLength(before);
  });
});

describe('tokens and errors', () => {
  it('refreshes an expired token and publishes', async () => {
    fake.authority.expireAccessTokens();
    const rootId = await post(['After a refresh']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [refresh] = fake.server.requestsTo('POST', '/oauth2/token').filter((request) => request.form?.get('grant_type') === 'refresh_token');
    expect(Object.fromEntries(refresh.form!)).toMatchObject({ client_id: 'twitch-client', client_secret: 'twitch-secret' });
    expect(fake.messages.at(-1)?.message).toBe('After a refresh');
  });

  it('retries a 429 at the time Ratelimit-Reset names', async () => {
    const reset = Math.floor(Date.now() / 1000) + 90;
    fake.server.failNext('POST', '/helix/chat/messages', { status: 429, headers: { 'ratelimit-reset': String(reset), 'ratelimit-remaining': '0' }, json: { error: 'Too Many Requests', status: 429, message: 'Too Many Requests' } });
    const rootId = await post(['Rate limited']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(Math.abs(waiting.nextAttemptAt!.getTime() - reset * 1000)).toBeLessThan(3000);
    expect(waiting.lastError).toMatch(/Twitch's rate limit was reached/);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('puts a message Twitch dropped in ERROR with its reason, and notifies', async () => {
    fake.dropNext('msg_rejected', 'Your message is being checked by mods and has not been sent.');
    const rootId = await post(['Checked by AutoMod']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [failed] = await chainOf(herald, rootId);
    expect(failed.error).toBe('Twitch refused the post: Twitch dropped the message: Your message is being checked by mods and has not been sent. (msg_rejected)');
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('msg_rejected'))).toBe(true);
  });

  it('retries a message dropped by slow mode', async () => {
    fake.dropNext('msg_slowmode', 'This room is in slow mode.');
    const rootId = await post(['Too fast']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });
});

describe('analytics', () => {
  it('reads the follower count', async () => {
    fake.state.followers = 4321;
    const metrics = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(metrics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([['Followers', '4321']]);
    expect(fake.server.requestsTo('GET', '/helix/channels/followers').at(-1)?.query.get('broadcaster_id')).toBe(fake.user.id);
  });

  it('describes the platform', () => {
    expect(twitch.maxLength({})).toBe(500);
    expect(twitch.rules).toMatch(/announcement/);
  });
});
