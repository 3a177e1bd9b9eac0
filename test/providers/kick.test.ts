// Kick end to end against the fake: OAuth 2.1 with PKCE, chat messages and replies through the worker, media refused at
// validation, rotating refresh tokens, a 429 retried after its reset, a dropped message in ERROR, resumption without duplicates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kick from '../../providers/kick.js';
import { IntegrationSchema, NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startKickFake, type KickFake } from '../fakes/kick.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

let fake: KickFake;
let herald: Herald;
let channelId: string;

const post = (items: Parameters<typeof createPost>[2]) => createPost(herald, channelId, items, { settings: { __type: 'kick' } });
const notifications = (type: string) => herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type }, { orderBy: { createdAt: 'desc' } });

beforeAll(async () => {
  fake = await startKickFake();
  herald = await startHerald(
    { KICK_CLIENT_ID: fake.authority.clientId, KICK_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ kick: fake.endpoints }) },
    { guard: { allowLoopback: true } },
  );
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

describe('connecting a Kick account', () => {
  it('runs OAuth 2.1 with PKCE on id.kick.com, then reads the user and its channel', async () => {
    const connected = await connectOAuthChannel(herald, 'kick');
    channelId = connected.integrationId;
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/oauth/authorize');
    expect(query.get('scope')).toBe('chat:write user:read channel:read');
    expect(query.get('code_challenge_method')).toBe('S256');
    const [exchange] = fake.server.requestsTo('POST', '/oauth/token');
    expect(Object.fromEntries(exchange.form!)).toMatchObject({ grant_type: 'authorization_code', client_id: 'kick-client', client_secret: 'kick-secret' });
    expect(exchange.form?.get('code_verifier')).toMatch(/^[\w-]{43,}$/);
    const list = (await herald.rest('GET', '/integrations')).body as { id: string; name: string; profile: string; picture: string }[];
    expect(list.find((item) => item.id === channelId)).toMatchObject({ name: 'HeraldLive', profile: 'heraldlive', picture: fake.user.profile_picture });
  });
});

describe('publishing', () => {
  it('sends a chat message and its replies as the user through the worker', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await post(['<p>Going <strong>live</strong> at 8</p>', 'Bring snacks', 'And questions']);
      const items = await waitForPublished(herald, rootId);
      const sent = fake.messages.slice(-3);
      expect(sent.map((message) => [message.type, message.broadcasterUserId, message.content])).toEqual([
        ['user', fake.user.user_id, 'Going 𝗹𝗶𝘃𝗲 at 8'],
        ['user', fake.user.user_id, 'Bring snacks'],
        ['user', fake.user.user_id, 'And questions'],
      ]);
      expect(sent.map((message) => message.replyTo)).toEqual([undefined, sent[0].id, sent[1].id]);
      expect(items.map((item) => item.releaseId)).toEqual(sent.map((message) => message.id));
      expect(items[0].releaseUrl).toBe('https://kick.com/heraldlive');
    } finally {
      await worker.stop();
    }
  });

  it('refuses a post with media at validation, naming the reason, and sends nothing', async () => {
    const picture = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
    const before = fake.messages.length;
    const response = await submitPost(herald, channelId, [{ content: 'Look', image: [{ id: picture.body.id, path: picture.body.path }] }], { settings: { __type: 'kick' } });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/has attachments, but Kick takes text only: remove them/);
    expect(fake.messages).toHaveLength(before);
  });

  it('resumes a chain after a crash between two items without sending the first again', async () => {
    const rootId = await post(['First', 'Second']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [first] = fake.messages.slice(-2);
    // As if the worker died after the first item: the second is still queued, never attempted.
    const em = herald.services.orm.em.fork();
    const second = (await em.find(PostSchema, { rootPostId: rootId }, { orderBy: { position: 'asc' } }))[1];
    Object.assign(second, { state: 'QUEUE', releaseId: null, releaseUrl: null, publishedAt: null, publishProgress: null, attemptStartedAt: null });
    await em.flush();
    fake.messages.pop();
    const before = fake.messages.length;
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect(fake.messages).toHaveLength(before + 1);
    expect(fake.messages.at(-1)).toMatchObject({ content: 'Second', replyTo: first.id });
  });

  it('stops a message whose send was interrupted with "could not confirm" instead of sending it twice', async () => {
    const rootId = await post(['Only once']);
    const em = herald.services.orm.em.fork();
    const [root] = await em.find(PostSchema, { rootPostId: rootId });
    Object.assign(root, { attemptStartedAt: new Date(), publishProgress: { steps: { message: { state: 'started' } } } });
    await em.flush();
    const before = fake.messages.length;
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/^Could not confirm whether Kick published this item/);
    expect(fake.messages).toHaveLength(before);
  });
});

describe('tokens and errors', () => {
  it('refreshes an expired token, storing the rotated refresh token each time', async () => {
    const refreshes = () => fake.server.requestsTo('POST', '/oauth/token').filter((request) => request.form?.get('grant_type') === 'refresh_token');
    const before = refreshes().length;
    for (const round of [1, 2]) {
      fake.authority.expireAccessTokens();
      const rootId = await post([`After refresh ${round}`]);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    }
    const [first, second] = refreshes().slice(before);
    expect(Object.fromEntries(first.form!)).toMatchObject({ client_id: 'kick-client', client_secret: 'kick-secret' });
    expect(second.form?.get('refresh_token')).not.toBe(first.form?.get('refresh_token'));
  });

  it('retries a 429 after the Retry-After Kick gave', async () => {
    const rootId = await post(['Busy chat']);
    fake.server.failNext('POST', '/public/v1/chat', { status: 429, headers: { 'retry-after': '120' }, json: { data: {}, message: 'Too Many Requests' } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(119_000);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeLessThan(125_000);
    expect(waiting.lastError).toMatch(/Kick's rate limit was reached/);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('puts a message Kick did not send in ERROR with its reason, and notifies', async () => {
    fake.dropNext();
    const rootId = await post(['Followers only?']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [failed] = await chainOf(herald, rootId);
    expect(failed.error).toBe('Kick refused the post: Kick did not send the message (Message not sent: the chat is in followers-only mode): check the channel\'s chat settings (followers-only, emote-only, slow mode)');
    expect((await notifications('post_failed'))[0].content).toContain('followers-only mode');
  });

  it('flags the channel for reconnection when its tokens are revoked, and offers no analytics', async () => {
    expect((await herald.rest('GET', `/analytics/${channelId}?date=7`)).body).toEqual([]);
    fake.authority.revokeAll();
    const rootId = await post(['Too late']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/disconnected because its token expired or was revoked/);
    const integration = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(integration.refreshNeeded).toBe(true);
    expect((await notifications('channel_reconnect'))[0].content).toBe('Your Kick channel "HeraldLive" needs to be reconnected.');
  });
});

describe('descriptor', () => {
  it('counts 500 characters and chains replies', () => {
    expect(kick.maxLength({})).toBe(500);
    expect(kick.chain).toBe('thread');
    expect(kick.validate!([{ text: 'a', media: [] }, { text: 'b', media: [{ kind: 'video', url: 'https://m.example/v.mp4' }] }], {})).toBe('Item 2 has attachments, but Kick takes text only: remove them.');
  });
});
