// Channel health: the state of every channel in GET /integrations, integrationList and the console; the daily job refreshing
// a token it can refresh and warning (once, notification + webhook event) about one it cannot; and the warning on a post
// scheduled after its channel's token expires.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { startThreadsFake, type ThreadsFake } from './fakes/threads.js';
import { connectOAuthChannel } from './helpers/oauth-channel.js';
import { ConsoleClient } from './helpers/console-client.js';
import { IntegrationSchema, NotificationSchema } from '../src/db/entities.js';
import { WebhookEventSchema } from '../src/db/agent-entities.js';
import { findProvider } from '../providers/index.js';
import { markNeedsReconnection, saveConnectedAccount } from '../tools/internal/integrations.js';
import { taskList } from '../src/jobs/index.js';

const DAY = 86_400_000;
let herald: Herald;
let threads: ThreadsFake;
let threadsId: string;
let linkedinId: string;

const em = () => herald.services.orm.em.fork();
const row = (id: string) => em().findOneOrFail(IntegrationSchema, { id });
const healthOf = async (id: string) => ((await herald.rest('GET', '/integrations')).body as { id: string; health: unknown }[]).find((item) => item.id === id)!.health;
const dailyJob = () => taskList(herald.services).refresh_expiring_tokens({}, {} as never);
const expiringNotices = () => em().find(NotificationSchema, { organizationId: herald.organizationId, type: 'channel_token_expiring' });

/** A LinkedIn member channel of an app without refresh tokens: its 60-day token ends with a reconnection. */
async function linkedinChannel(expiresAt: Date): Promise<string> {
  const integration = await saveConnectedAccount(em(), herald.services, herald.organizationId, findProvider('linkedin')!, {
    internalId: 'urn:li:person:abc',
    name: 'Ada on LinkedIn',
    profile: 'Ada',
    accessToken: 'li-token',
    expiresAt,
  });
  return integration.id;
}

beforeAll(async () => {
  threads = await startThreadsFake();
  herald = await startHerald(
    {
      THREADS_CLIENT_ID: threads.oauth.clientId,
      THREADS_CLIENT_SECRET: threads.oauth.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ threads: { authorize: threads.url, graph: threads.url } }),
    },
    { guard: { allowLoopback: true } },
  );
  threadsId = (await connectOAuthChannel(herald, 'threads')).integrationId;
  linkedinId = await linkedinChannel(new Date(Date.now() + 3 * DAY));
});

afterAll(async () => {
  await herald?.stop();
  await threads?.close();
});

describe('the health of each channel', () => {
  it('is active, token_expiring with the date, disabled or needs_reconnection with the reason, on REST and MCP', async () => {
    const expiry = (await row(linkedinId)).tokenExpiresAt!.toISOString();
    expect(await healthOf(threadsId)).toEqual({ state: 'active' });
    expect(await healthOf(linkedinId)).toEqual({
      state: 'token_expiring',
      tokenExpiresAt: expiry,
      reason: `Reconnect the channel before ${expiry.slice(0, 10)}: LinkedIn cannot refresh its token.`,
    });

    const client = new Client({ name: 'health-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
    try {
      const listed: any = await client.callTool({ name: 'integrationList', arguments: {} });
      expect(listed.structuredContent.output.find((item: { id: string }) => item.id === linkedinId).health.state).toBe('token_expiring');
    } finally {
      await client.close();
    }

    await em().nativeUpdate(IntegrationSchema, { id: threadsId }, { disabled: true });
    expect(await healthOf(threadsId)).toEqual({ state: 'disabled' });
    await em().nativeUpdate(IntegrationSchema, { id: threadsId }, { disabled: false });

    const fork = em();
    await markNeedsReconnection(herald.services, fork, await fork.findOneOrFail(IntegrationSchema, { id: threadsId }), 'Threads refused the refreshed token: Error validating access token');
    expect(await healthOf(threadsId)).toEqual({ state: 'needs_reconnection', reason: 'Threads refused the refreshed token: Error validating access token', since: expect.any(String) });
    await em().nativeUpdate(IntegrationSchema, { id: threadsId }, { refreshNeeded: false });
  });

  it('shows the state and what to do on the console', async () => {
    const browser = new ConsoleClient(herald.url);
    await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
    const page = await browser.get('/channels');
    expect(page.text).toContain('badge warn">Token expiring');
    expect(page.text).toContain('LinkedIn cannot refresh its token.');
    expect(page.text).toContain(`/channels/connect/linkedin?refresh=${linkedinId}`);
  });
});

describe('the daily job', () => {
  it('refreshes a token it can refresh, and warns once (notification + webhook event) about one it cannot', async () => {
    await em().nativeUpdate(IntegrationSchema, { id: threadsId }, { tokenExpiresAt: new Date(Date.now() + 2 * DAY) });
    const refreshesBefore = threads.server.requestsTo('GET', '/refresh_access_token').length;
    await dailyJob();
    expect(threads.server.requestsTo('GET', '/refresh_access_token')).toHaveLength(refreshesBefore + 1);
    expect((await row(threadsId)).tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 59 * DAY);
    expect(await healthOf(threadsId)).toEqual({ state: 'active' });

    const notices = await expiringNotices();
    expect(notices).toHaveLength(1);
    const expiry = (await row(linkedinId)).tokenExpiresAt!;
    expect(notices[0].content).toBe(
      `The token of your LinkedIn channel "Ada on LinkedIn" expires on ${expiry.toISOString().slice(0, 10)} and cannot be refreshed: reconnect the channel before then, or its posts will fail.`,
    );
    const [event] = await em().find(WebhookEventSchema, { type: 'channel.token_expiring' });
    expect(event.data).toMatchObject({ integrationId: linkedinId, tokenExpiresAt: expiry.toISOString(), hint: expect.stringContaining('Reconnect') });

    await dailyJob();
    expect(await expiringNotices()).toHaveLength(1); // once per expiry

    // Reconnected: a new token with a new expiry is warned about again when its time comes.
    await linkedinChannel(new Date(Date.now() + 2 * DAY));
    await dailyJob();
    expect(await expiringNotices()).toHaveLength(2);
  });

  it('leaves alone a token that expires later than the warning window', async () => {
    await em().nativeUpdate(IntegrationSchema, { id: linkedinId }, { tokenExpiresAt: new Date(Date.now() + 30 * DAY) });
    await dailyJob();
    expect(await expiringNotices()).toHaveLength(2);
    expect(await healthOf(linkedinId)).toEqual({ state: 'active' });
  });
});

describe('posts on a channel that will be expired', () => {
  it('warns at creation when the post is due after the token expires, not before it, and not for drafts', async () => {
    const expiry = new Date(Date.now() + 3 * DAY);
    await em().nativeUpdate(IntegrationSchema, { id: linkedinId }, { tokenExpiresAt: expiry });
    const create = (date: Date, type = 'schedule') =>
      // The same text on purpose, several times: allowDuplicate tells the duplicate guard so.
      herald.rest('POST', '/posts', { type, date: date.toISOString(), shortLink: false, allowDuplicate: true, tags: [], posts: [{ integration: { id: linkedinId }, value: [{ content: '<p>Hello</p>', image: [] }], settings: {} }] });
    const late = await create(new Date(expiry.getTime() + DAY));
    expect(late.status, JSON.stringify(late.body)).toBe(200);
    expect(late.body[0].warnings).toEqual([
      `The token of channel "Ada on LinkedIn" expires on ${expiry.toISOString()}, before this post's date, and LinkedIn cannot refresh it: reconnect the channel before then, or the post will fail.`,
    ]);
    expect((await create(new Date(expiry.getTime() - DAY))).body[0].warnings).toBeUndefined();
    expect((await create(new Date(expiry.getTime() + DAY), 'draft')).body[0].warnings).toBeUndefined();
    // A token Herald refreshes by itself is no reason to warn.
    const threadsPost = await herald.rest('POST', '/posts', {
      type: 'schedule',
      date: new Date(Date.now() + 90 * DAY).toISOString(),
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: threadsId }, value: [{ content: '<p>Later</p>', image: [] }], settings: {} }],
    });
    expect(threadsPost.body[0].warnings).toBeUndefined();
  });
});
