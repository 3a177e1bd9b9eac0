// The approval gate over REST and MCP: who is an agent, the organization's rule and the per-app override, what waits,
// approve (keeps its date, or goes out at once after it) and reject (a draft with the reason), what agents may not do,
// and that nothing waiting is ever published. The console's side is test/console-review.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { chainOf, publishUntilSettled } from './helpers/posts.js';
import { signUp } from '../tools/internal/accounts.js';
import { registerApp } from '../tools/internal/oauth-apps.js';
import { approve, checkAuthorizationRequest, exchangeCode } from '../tools/internal/oauth.js';
import { hasPublishJob, sweepDuePosts } from '../tools/internal/queue.js';
import { publishChain } from '../tools/internal/publish.js';

let herald: Herald;
let fake: BlueskyFake;
let channelId: string;
let mcp: Client;
let userId: string;
let app: { token: string; appId: string };
let agentKey: string;

const DAY = 86400_000;
const at = (days: number) => {
  const date = new Date(Date.now() + days * DAY);
  date.setUTCHours(11, 0, 0, 0);
  return date.toISOString();
};
let counter = 0;
const unique = (label: string) => `<p>${label} ${Date.now()} ${counter++}</p>`;

/** An OAuth app the organization's owner approved, and its access token (the real authorization-code exchange). */
async function oauthApp(name: string): Promise<{ token: string; appId: string }> {
  const em = herald.services.orm.em.fork();
  const { app: registered, clientSecret } = await registerApp(em, herald.organizationId, { name, redirectUrl: 'https://app.example/callback' }, new Date());
  const request = await checkAuthorizationRequest(em, { client_id: registered.clientId, response_type: 'code' });
  const code = new URL(await approve(em, request, userId, herald.organizationId, new Date())).searchParams.get('code')!;
  const token = await exchangeCode(em, { grant_type: 'authorization_code', code, client_id: registered.clientId, client_secret: clientSecret }, new Date());
  return { token: token.access_token, appId: registered.id };
}

async function schedule(content: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const result: any = await mcp.callTool({
    name: 'schedulePostTool',
    arguments: { socialPost: [{ integrationId: channelId, isPremium: false, date: at(2), shortLink: false, type: 'schedule', postsAndComments: [{ content, attachments: [] }], settings: [], ...overrides }] },
  });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent.output[0];
}

function restCreate(credential: string, content: string, options: { type?: string; date?: string } = {}) {
  return herald.rest(
    'POST',
    '/posts',
    { type: options.type ?? 'schedule', date: options.date ?? at(2), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }] },
    { authorization: credential },
  );
}

async function post(id: string): Promise<any> {
  const listed = await herald.rest('GET', `/posts?startDate=${encodeURIComponent(new Date(Date.now() - 2 * DAY).toISOString())}&endDate=${encodeURIComponent(new Date(Date.now() + 30 * DAY).toISOString())}`);
  return listed.body.posts.find((item: any) => item.id === id);
}

async function notifications(): Promise<{ type: string; content: string }[]> {
  return (await herald.rest('GET', '/notifications')).body.notifications;
}

const settings = (body: unknown, credential = herald.apiKey) => herald.rest('PUT', '/approval-settings', body, { authorization: credential });

beforeAll(async () => {
  herald = await startHerald();
  fake = await startBlueskyFake();
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password })).body.id;
  const em = herald.services.orm.em.fork();
  userId = (await signUp(em, { email: 'owner@example.com', password: 'correct horse battery', name: 'Olivia', organizationName: '', invitationToken: await setupToken(herald) }, { allowSignup: false, now: new Date() })).user.id;
  app = await oauthApp('Acme Planner');
  // The agent is set up as the README says: an agent key (the default preset) in the Authorization header.
  agentKey = (await herald.rest('POST', '/keys', { name: 'Claude Desktop' })).body.secret;
  mcp = new Client({ name: 'approval-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${agentKey}` } } }));
});

afterAll(async () => {
  await mcp?.close().catch(() => undefined);
  await herald?.stop();
  await fake?.close();
});

describe('the gate is off by default', () => {
  it('an agent\'s post is queued directly', async () => {
    const created = await schedule(unique('no gate'));
    expect(created.approval).toBeUndefined();
    expect(await post(created.postId)).toMatchObject({ state: 'QUEUE', approval: null });
  });
});

describe('the approval settings', () => {
  it('are read and changed with the organization\'s key, never by an agent', async () => {
    expect((await herald.rest('GET', '/approval-settings')).body).toEqual({ agents: false, apps: [{ appId: app.appId, name: 'Acme Planner', required: null }] });
    const refused = await settings({ agents: false }, app.token);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/^This credential lacks the organization:manage scope, which setApprovalSettings needs/);
    expect((await settings({ agents: false }, agentKey)).status).toBe(403);
    expect((await settings({ agents: true })).body).toEqual({ agents: true, apps: [{ appId: app.appId, name: 'Acme Planner', required: null }] });
  });
});

describe('with the gate on', () => {
  it('an agent over MCP gets approval pending; the post waits, without a job, and owners are told', async () => {
    const created = await schedule(unique('waits over MCP'));
    expect(created.approval).toEqual({ status: 'pending', message: expect.stringContaining(`herald://posts/${created.postId}`) });
    expect(await post(created.postId)).toMatchObject({
      state: 'AWAITING_APPROVAL',
      publishStatus: 'awaiting_approval',
      approval: { via: 'mcp', credentialKind: 'api_key', requestedAt: expect.any(String) },
    });
    const em = herald.services.orm.em.fork();
    expect(await hasPublishJob(em, created.postId)).toBe(false);
    expect((await notifications())[0]).toMatchObject({ type: 'post_awaiting_approval', content: expect.stringContaining(`post ${created.postId}`) });
  });

  it('the organization\'s key on REST is not an agent; an OAuth app on REST is', async () => {
    const byKey = await restCreate(herald.apiKey, unique('script'));
    expect(byKey.body[0].approval).toBeUndefined();
    expect((await post(byKey.body[0].postId)).state).toBe('QUEUE');
    const byApp = await restCreate(app.token, unique('third-party app'));
    expect(byApp.body[0].approval.status).toBe('pending');
    expect((await post(byApp.body[0].postId)).approval).toMatchObject({ via: 'rest', credentialKind: 'oauth_token', appId: app.appId, appName: 'Acme Planner' });
  });

  it('an app\'s override wins over the organization\'s rule, both ways', async () => {
    await settings({ apps: [{ appId: app.appId, required: false }] });
    expect((await restCreate(app.token, unique('trusted app'))).body[0].approval).toBeUndefined();
    expect((await schedule(unique('mcp still waits'))).approval.status).toBe('pending');
    await settings({ agents: false, apps: [{ appId: app.appId, required: true }] });
    expect((await restCreate(app.token, unique('watched app'))).body[0].approval.status).toBe('pending');
    expect((await schedule(unique('mcp free'))).approval).toBeUndefined();
    expect((await settings({ agents: true, apps: [{ appId: app.appId, required: null }] })).body).toEqual({ agents: true, apps: [{ appId: app.appId, name: 'Acme Planner', required: null }] });
  });

  it('nothing waiting is ever published: the job skips it and the sweep leaves it alone', async () => {
    const created = await schedule(unique('never alone'), { type: 'now' });
    expect(await publishChain(herald.services, created.postId)).toEqual({ kind: 'skipped', reason: 'nothing queued (root is AWAITING_APPROVAL)' });
    const em = herald.services.orm.em.fork();
    await sweepDuePosts(em, new Date(Date.now() + DAY));
    expect(await hasPublishJob(em, created.postId)).toBe(false);
    expect(fake.records.some((record) => record.record.text.startsWith('never alone'))).toBe(false);
  });

  it('agents cannot approve or reject; an owner\'s key approves, the post keeps its date and the resource says so', async () => {
    const created = await schedule(unique('approve me'), { date: at(3) });
    expect((await herald.rest('POST', `/posts/${created.postId}/approve`, undefined, { authorization: app.token })).status).toBe(403);
    expect((await herald.rest('POST', `/posts/${created.postId}/reject`, { reason: 'no' }, { authorization: app.token })).status).toBe(403);
    // The agent's own key, over REST: no approve scope.
    expect((await herald.rest('POST', `/posts/${created.postId}/approve`, undefined, { authorization: agentKey })).body.message).toMatch(/lacks the approve scope/);
    const approved = await herald.rest('POST', `/posts/${created.postId}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: created.postId, state: 'QUEUE', publishAt: at(3), approval: { decision: 'approved', decidedBy: expect.stringMatching(/^api_key:/) } });
    expect(await hasPublishJob(herald.services.orm.em.fork(), created.postId)).toBe(true);
    const resource: any = await mcp.readResource({ uri: `herald://posts/${created.postId}` });
    expect(JSON.parse(resource.contents[0].text).approval).toMatchObject({ status: 'approved', decidedAt: expect.any(String), requestedBy: 'Claude Desktop (API key) over MCP' });
    expect((await notifications())[0]).toMatchObject({ type: 'post_approved', content: expect.stringContaining(`it will be published at ${at(3)}`) });
    expect((await herald.rest('POST', `/posts/${created.postId}/approve`)).status).toBe(409);
  });

  it('a post approved after its date goes out at once, once, with a notification', async () => {
    const created = await schedule(unique('late approval'), { type: 'now' });
    const approved = await herald.rest('POST', `/posts/${created.postId}/approve`);
    expect(Date.parse(approved.body.publishAt)).toBeGreaterThan(Date.now() - 5000);
    expect((await notifications())[0].content).toMatch(/after its date \(.*\) had passed: it is being published now\.$/);
    await publishUntilSettled(herald, created.postId);
    expect(fake.records.filter((record) => record.record.text.startsWith('late approval'))).toHaveLength(1);
    expect(await post(created.postId)).toMatchObject({ state: 'PUBLISHED', approval: { decision: 'approved' } });
  });

  it('a rejected post becomes a draft with the reason, for the agent to read; a reason is required', async () => {
    const created = await schedule(unique('reject me'));
    expect((await herald.rest('POST', `/posts/${created.postId}/reject`, { reason: '  ' })).status).toBe(400);
    const rejected = await herald.rest('POST', `/posts/${created.postId}/reject`, { reason: 'Too salesy: mention the changelog instead.' });
    expect(rejected.body).toMatchObject({ state: 'DRAFT', publishAt: null, approval: { decision: 'rejected', reason: 'Too salesy: mention the changelog instead.' } });
    expect(await post(created.postId)).toMatchObject({ state: 'DRAFT', publishStatus: 'draft' });
    expect((await notifications())[0]).toMatchObject({ type: 'post_rejected', content: expect.stringContaining('Too salesy') });
    // The agent fixes it and schedules it again: it waits for a new decision.
    const fixed: any = await mcp.callTool({ name: 'updatePost', arguments: { id: created.postId, value: [{ content: unique('fixed'), image: [] }] } });
    expect(fixed.structuredContent).toMatchObject({ state: 'DRAFT' });
    const again: any = await mcp.callTool({ name: 'changePostStatus', arguments: { id: created.postId, status: 'schedule' } });
    expect(again.structuredContent).toEqual({ id: created.postId, state: 'AWAITING_APPROVAL' });
    expect((await post(created.postId)).approval.decision).toBeUndefined();
  });

  it('an agent\'s edit of an approved post sends it back; the owner\'s key cannot schedule around the gate', async () => {
    const created = await schedule(unique('edit after approval'));
    await herald.rest('POST', `/posts/${created.postId}/approve`);
    const edited: any = await mcp.callTool({ name: 'updatePost', arguments: { id: created.postId, value: [{ content: unique('sneaky edit'), image: [] }] } });
    expect(edited.structuredContent).toMatchObject({ state: 'AWAITING_APPROVAL', approval: { via: 'mcp' } });
    expect(await hasPublishJob(herald.services.orm.em.fork(), created.postId)).toBe(false);
    const around = await herald.rest('PUT', `/posts/${created.postId}/status`, { status: 'schedule' });
    expect(around.status).toBe(409);
    // The owner's own edit keeps the post waiting for the decision.
    const ownerEdit = await herald.rest('PUT', `/posts/${created.postId}`, { date: at(4) });
    expect(ownerEdit.body).toMatchObject({ state: 'AWAITING_APPROVAL', date: at(4) });
  });

  it('an approved post that failed is retried by the agent without a new approval', async () => {
    const created = await schedule(unique('fails once'), { type: 'now' });
    await herald.rest('POST', `/posts/${created.postId}/approve`);
    fake.server.failNext('POST', '/xrpc/com.atproto.repo.createRecord', { status: 400, json: { error: 'InvalidRequest', message: 'Record is invalid' } });
    expect((await publishUntilSettled(herald, created.postId)).outcome.kind).toBe('failed');
    const retried: any = await mcp.callTool({ name: 'changePostStatus', arguments: { id: created.postId, status: 'schedule' } });
    expect(retried.structuredContent).toEqual({ id: created.postId, state: 'QUEUE' });
    await publishUntilSettled(herald, created.postId);
    expect((await chainOf(herald, created.postId))[0].state).toBe('PUBLISHED');
  });
});
