// Least privilege (issue 23): named API keys with scopes (REST /keys and the CLI's twin), the organization key as the owner
// key, the approval gate binding every credential that is not an owner's (REST and MCP), approve needing the approve
// scope and never by the post's creator, per-key gate, expiry, rotation, revocation, last use and per-key limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { sha256 } from '../src/lib/crypto.js';

let herald: Herald;
let fake: BlueskyFake;
let channelId: string;

const DAY = 86400_000;
const at = (days: number) => {
  const date = new Date(Date.now() + days * DAY);
  date.setUTCHours(11, 0, 0, 0);
  return date.toISOString();
};
let counter = 0;
const unique = (label: string) => `<p>${label} ${Date.now()} ${counter++}</p>`;

const as = (credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => herald.rest(method, path, body, { authorization: credential, ...headers });

async function newKey(body: Record<string, unknown>): Promise<{ id: string; secret: string; key: any }> {
  const created = await herald.rest('POST', '/keys', body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.key.id, secret: created.body.secret, key: created.body.key };
}

function create(credential: string, content: string) {
  return as(credential, 'POST', '/posts', { type: 'schedule', date: at(2), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }] });
}

async function mcpWith(key: string): Promise<Client> {
  const client = new Client({ name: 'keys-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return client;
}

const gate = (agents: boolean) => herald.rest('PUT', '/approval-settings', { agents });

beforeAll(async () => {
  herald = await startHerald();
  fake = await startBlueskyFake();
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password })).body.id;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

describe('named keys', () => {
  it('the organization key is the owner key; a new key gets the agent preset, its secret once, stored hashed', async () => {
    const { id, secret, key } = await newKey({ name: 'Claude Desktop' });
    expect(secret).toMatch(/^hrld_/);
    expect(key).toMatchObject({ name: 'Claude Desktop', organizationKey: false, scopes: ['read', 'posts:write'], channels: null, expiresAt: null, lastFour: secret.slice(-4) });
    const listed = await herald.rest('GET', '/keys');
    expect(listed.body.keys.map((item: any) => [item.name, item.scopes])).toEqual([
      ['Organization key (owner)', ['read', 'posts:write', 'approve', 'channels:manage', 'organization:manage']],
      ['Claude Desktop', ['read', 'posts:write']],
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const [row] = await herald.services.orm.em.fork().getConnection().execute('select key_hash from api_key where id = ?', [id]);
    expect(row.key_hash).toBe(sha256(secret));
    // An agent key reads and writes posts, and nothing more.
    expect((await as(secret, 'GET', '/integrations')).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/keys'],
      ['POST', '/keys', { name: 'escalate', scopes: ['approve'] }],
      ['PUT', '/approval-settings', { agents: false }],
      ['POST', '/webhooks', { url: 'https://example.com/hook', events: ['post.published'] }],
      ['DELETE', `/integrations/${channelId}`],
    ] as const) {
      const refused = await as(secret, method, path, body);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.message).toMatch(/^This credential lacks the (organization|channels):manage scope/);
    }
  });

  it('bad settings get a 400 that says what to fix', async () => {
    expect((await herald.rest('POST', '/keys', {})).body.message).toMatch(/name/);
    expect((await herald.rest('POST', '/keys', { name: 'x', scopes: ['admin'] })).status).toBe(400);
    expect((await herald.rest('POST', '/keys', { name: 'x', expiresAt: '2020-01-01T00:00:00Z' })).body.message).toMatch(/has passed/);
    expect((await herald.rest('POST', '/keys', { name: 'x', channels: ['nope'] })).body.message).toBe('Channel nope not found.');
  });

  it('an Idempotency-Key answers the same key again, and the stored answer does not hold the secret in clear', async () => {
    const first = await herald.rest('POST', '/keys', { name: 'Retried' }, { 'idempotency-key': 'keys-retry-1' });
    const again = await herald.rest('POST', '/keys', { name: 'Retried' }, { 'idempotency-key': 'keys-retry-1' });
    expect(again.body).toEqual(first.body);
    const rows = await herald.services.orm.em.fork().getConnection().execute('select output from idempotency_key');
    expect(JSON.stringify(rows)).not.toContain(first.body.secret);
  });

  it('rotation gives a new secret and ends the old one; revocation ends the key over REST and MCP', async () => {
    const { id, secret } = await newKey({ name: 'Rotated' });
    const rotated = await herald.rest('POST', `/keys/${id}/rotate`);
    expect(rotated.body.key).toMatchObject({ id, name: 'Rotated', rotatedAt: expect.any(String) });
    expect((await as(secret, 'GET', '/integrations')).status).toBe(401);
    expect((await as(rotated.body.secret, 'GET', '/integrations')).status).toBe(200);
    const mcp = await mcpWith(rotated.body.secret);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    expect((await herald.rest('DELETE', `/keys/${id}`)).status).toBe(200);
    expect((await as(rotated.body.secret, 'GET', '/integrations')).status).toBe(401);
    await expect(mcp.listTools()).rejects.toThrow();
    await mcp.close().catch(() => undefined);
    expect((await herald.rest('DELETE', `/keys/${id}`)).status).toBe(404);
  });

  it('an expired key is refused like an unknown one', async () => {
    const { id, secret } = await newKey({ name: 'Short-lived', expiresAt: new Date(Date.now() + DAY).toISOString() });
    expect((await as(secret, 'GET', '/integrations')).status).toBe(200);
    await herald.services.orm.em.fork().getConnection().execute("update api_key set expires_at = now() - interval '1 second' where id = ?", [id]);
    expect((await as(secret, 'GET', '/integrations')).status).toBe(401);
  });

  it('records its last use (time, address, client) at most once a minute', async () => {
    const { id, secret } = await newKey({ name: 'Watched' });
    await as(secret, 'GET', '/integrations', undefined, { 'user-agent': 'acme-agent/2.1' });
    await as(secret, 'GET', '/integrations', undefined, { 'user-agent': 'other/1.0' });
    const key = (await herald.rest('GET', '/keys')).body.keys.find((item: any) => item.id === id);
    expect(key.lastUsed).toMatchObject({ at: expect.any(String), address: expect.stringMatching(/127\.0\.0\.1|::1/), client: 'acme-agent/2.1' });
    const mcpKey = await newKey({ name: 'Watched over MCP' });
    const mcp = await mcpWith(mcpKey.secret);
    await mcp.close();
    const listed = (await herald.rest('GET', '/keys')).body.keys.find((item: any) => item.id === mcpKey.id);
    expect(listed.lastUsed.client).toBe('keys-test 1.0.0 (MCP)');
  });

  it('carries its own limits: REST requests per minute and posts per hour', async () => {
    const { secret } = await newKey({ name: 'Throttled', requestsPerMinute: 2 });
    expect((await as(secret, 'GET', '/integrations')).status).toBe(200);
    expect((await as(secret, 'GET', '/integrations')).status).toBe(200);
    const refused = await as(secret, 'GET', '/integrations');
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe('Rate limit reached: 2 REST requests per minute for this API key.');
    // The organization's own key is not held by it.
    expect((await herald.rest('GET', '/integrations')).status).toBe(200);
    const poster = await newKey({ name: 'One post an hour', postsPerHour: 1 });
    expect((await create(poster.secret, unique('first'))).status).toBe(200);
    const second = await create(poster.secret, unique('second'));
    expect(second.status).toBe(429);
    expect(second.body.message).toBe('Post creation limit reached: 1 per hour for this API key.');
  });
});

describe('the approval gate binds every credential that is not an owner\'s', () => {
  it('an agent key waits over REST and MCP; the owner key does not', async () => {
    await gate(true);
    const agent = await newKey({ name: 'Agent' });
    const byRest = await create(agent.secret, unique('agent over REST'));
    expect(byRest.body[0].approval.status).toBe('pending');
    const mcp = await mcpWith(agent.secret);
    const byMcp: any = await mcp.callTool({
      name: 'schedulePostTool',
      arguments: { socialPost: [{ integrationId: channelId, isPremium: false, date: at(2), shortLink: false, type: 'schedule', postsAndComments: [{ content: unique('agent over MCP'), attachments: [] }], settings: [] }] },
    });
    expect(byMcp.structuredContent.output[0].approval.status).toBe('pending');
    // MCP lists only what the key may call.
    const names = (await mcp.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('schedulePostTool');
    expect(names).not.toContain('deleteIntegration');
    await mcp.close();
    expect((await create(herald.apiKey, unique('owner'))).body[0].approval).toBeUndefined();
    await gate(false);
  });

  it('approving needs the approve scope, and never by the credential that created the post', async () => {
    await gate(true);
    const agent = await newKey({ name: 'Agent' });
    const selfApprover = await newKey({ name: 'Self approver', scopes: ['read', 'posts:write', 'approve'] });
    const reviewer = await newKey({ name: 'Reviewer', scopes: ['read', 'approve'] });
    const byAgent = (await create(agent.secret, unique('agent post'))).body[0].postId;
    const noScope = await as(agent.secret, 'POST', `/posts/${byAgent}/approve`);
    expect(noScope.status).toBe(403);
    expect(noScope.body.message).toMatch(/^This credential lacks the approve scope/);
    const own = (await create(selfApprover.secret, unique('own post'))).body[0].postId;
    const refused = await as(selfApprover.secret, 'POST', `/posts/${own}/approve`);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(`This credential created post ${own}, so it cannot approve it.`);
    expect((await as(selfApprover.secret, 'POST', `/posts/${own}/reject`, { reason: 'no' })).body.message).toBe(`This credential created post ${own}, so it cannot reject it.`);
    const approved = await as(reviewer.secret, 'POST', `/posts/${own}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.approval).toMatchObject({ decision: 'approved', decidedBy: `api_key:${reviewer.id}`, keyName: 'Self approver' });
    expect((await as(selfApprover.secret, 'POST', `/posts/${byAgent}/approve`)).status).toBe(200);
    // The audit trail shows who created and who approved, by key name, over REST.
    const trail = await herald.rest('GET', `/audit?targetKind=post&targetId=${own}`);
    expect(trail.body.events.map((event: any) => [event.action, event.actor.kind, event.actor.name, event.via])).toEqual([
      ['post.approved', 'api_key', 'Reviewer', 'rest'],
      ['post.created', 'api_key', 'Self approver', 'rest'],
    ]);
    const all = await herald.rest('GET', '/audit?limit=2');
    expect(all.body.events).toHaveLength(2);
    const next = await herald.rest('GET', `/audit?limit=200&cursor=${all.body.nextCursor}`);
    expect(next.body.events.some((event: any) => event.action === 'key.created' && event.summary.includes('"Reviewer"'))).toBe(true);
    // Never a secret in the trail.
    for (const secret of [agent.secret, selfApprover.secret, reviewer.secret]) expect(JSON.stringify(next.body)).not.toContain(secret);
    await gate(false);
  });

  it('a key\'s own gate setting wins over the organization\'s rule, both ways', async () => {
    await gate(false);
    const watched = await newKey({ name: 'Watched agent', approvalRequired: true });
    expect((await create(watched.secret, unique('watched'))).body[0].approval.status).toBe('pending');
    await gate(true);
    const trusted = await newKey({ name: 'Trusted agent', approvalRequired: false });
    expect((await create(trusted.secret, unique('trusted'))).body[0].approval).toBeUndefined();
    expect((await herald.rest('PUT', `/keys/${trusted.id}`, { approvalRequired: null })).body.approvalRequired).toBeNull();
    expect((await create(trusted.secret, unique('trusted no more'))).body[0].approval.status).toBe('pending');
    await gate(false);
  });
});

describe('the OpenAPI document', () => {
  it('describes the scopes and names each operation\'s required scope', async () => {
    const document = await (await fetch(`${herald.url}/api/public/v1/openapi.json`)).json();
    expect(document.components.securitySchemes.apiKey.description).toContain('organization:manage');
    expect(document.paths['/posts/{id}/approve'].post['x-required-scope']).toBe('approve');
    expect(document.paths['/keys'].post['x-required-scope']).toBe('organization:manage');
    expect(document.paths['/posts'].post['x-required-scope']).toBe('posts:write');
    expect(document.paths['/integrations'].get['x-required-scope']).toBe('read');
  });
});
