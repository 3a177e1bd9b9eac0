// Both MCP revisions on the same URLs: a 2026-07-28 client (the SDK v2 client, pinned to the modern era) and a 2025-11-25
// session (the SDK 1.x client) against one Herald, each tool, resource and prompt answering the same in both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';

let herald: Herald;
let fake: BlueskyFake;
let channelId: string;
const closing: { close(): Promise<void> }[] = [];

async function modern(url = `${herald.url}/api/mcp`, headers: Record<string, string> = { Authorization: `Bearer ${herald.apiKey}` }, capabilities: Record<string, unknown> = {}) {
  const client = new ModernClient({ name: 'herald-modern-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities } as never);
  await client.connect(new ModernTransport(new URL(url), { requestInit: { headers } }));
  closing.push(client);
  return client;
}

async function legacy(url = `${herald.url}/api/mcp`, headers: Record<string, string> = { Authorization: `Bearer ${herald.apiKey}` }) {
  const client = new Client({ name: 'herald-legacy-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  closing.push(client);
  return client;
}

beforeAll(async () => {
  herald = await startHerald();
  fake = await startBlueskyFake();
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
  expect(connected.status).toBe(200);
  channelId = connected.body.id;
});
afterAll(async () => {
  for (const client of closing) await client.close().catch(() => undefined);
  await herald.stop();
  await fake?.close();
});

/** A scheduled post (REST), answering its id. */
async function newPost(text: string): Promise<string> {
  const created = await herald.rest('POST', '/posts', {
    type: 'schedule',
    date: new Date(Date.now() + 3 * 86400_000).toISOString(),
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channelId }, value: [{ content: `<p>${text}</p>`, image: [] }], settings: {} }],
  });
  expect(created.status).toBe(200);
  return created.body[0].postId;
}

// A post's missing-content check answers 404 once the post is deleted.
const postExists = async (id: string) => (await herald.rest('GET', `/posts/${id}/missing`)).status === 200;

describe('the 2026-07-28 revision', () => {
  it('discovers the server and lists the same tools as a 2025-11-25 session', async () => {
    const client = await modern();
    const tools = await client.listTools();
    const old = await (await legacy()).listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(old.tools.map((tool) => tool.name));
  });

  it('answers every resource read, resource list, template list, prompt and completion exactly as a session does', async () => {
    const now = await modern();
    const old = await legacy();
    const post = await newPost('Parity of the eras');
    const strip = (value: any) => JSON.parse(JSON.stringify(value, (key, inner) => (key === '_meta' || key === 'ttlMs' || key === 'cacheScope' || key === 'resultType' ? undefined : inner)));
    // A prompt names the week up to the instant it is asked: its ISO timestamps differ by the milliseconds between the calls.
    const stripPrompt = (value: any) => JSON.parse(JSON.stringify(strip(value)).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<instant>'));
    expect(strip(await now.listResources())).toEqual(strip(await old.listResources()));
    expect(strip(await now.listResourceTemplates())).toEqual(strip(await old.listResourceTemplates()));
    for (const uri of ['herald://integrations', `herald://integrations/${channelId}`, `herald://posts/${post}`, 'herald://platforms/bluesky', 'herald://media', 'herald://comments']) {
      expect(strip(await now.readResource({ uri })), uri).toEqual(strip(await old.readResource({ uri })));
    }
    const prompts = await old.listPrompts();
    expect(strip(await now.listPrompts())).toEqual(strip(prompts));
    for (const prompt of prompts.prompts) {
      const args = Object.fromEntries((prompt.arguments ?? []).map((argument) => [argument.name, argument.name === 'url' ? 'https://example.com/a' : 'x']));
      expect(stripPrompt(await now.getPrompt({ name: prompt.name, arguments: args })), prompt.name).toEqual(stripPrompt(await old.getPrompt({ name: prompt.name, arguments: args })));
    }
    const ref = { type: 'ref/resource' as const, uri: 'herald://platforms/{identifier}' };
    expect(strip(await now.complete({ ref, argument: { name: 'identifier', value: 'blu' } }))).toEqual(strip(await old.complete({ ref, argument: { name: 'identifier', value: 'blu' } })));
    // An unknown resource is the same -32602 in both.
    const refusals = await Promise.all([now, old].map((client) => client.readResource({ uri: 'herald://posts/nope' }).then(() => undefined, (error: { code?: number }) => error.code)));
    expect(refusals).toEqual([-32602, -32602]);
  });

  it('calls every read tool with the same answer, and links a created post as a resource_link', async () => {
    const now = await modern();
    const old = await legacy();
    const strip = (value: any) => JSON.parse(JSON.stringify(value, (key, inner) => (key === '_meta' || key === 'resultType' ? undefined : inner)));
    const reads: [string, Record<string, unknown>][] = [
      ['integrationList', {}],
      ['groupList', {}],
      ['integrationSchema', { platform: 'bluesky' }],
      ['generateVideoOptions', {}],
      ['findSlotTool', { id: channelId }],
      ['notificationListTool', {}],
      ['mediaListTool', {}],
      ['timeZoneTool', {}],
      ['postsListTool', { startDate: new Date(Date.now() - 86400_000).toISOString(), endDate: new Date(Date.now() + 30 * 86400_000).toISOString() }],
      ['validatePostTool', { socialPost: [{ integrationId: channelId, type: 'schedule', date: new Date(Date.now() + 86400_000).toISOString(), postsAndComments: [{ content: '<p>Same in both</p>' }] }] }],
    ];
    for (const [name, args] of reads) expect(strip(await now.callTool({ name, arguments: args })), name).toEqual(strip(await old.callTool({ name, arguments: args })));
    const created: any = await now.callTool({
      name: 'schedulePostTool',
      arguments: { socialPost: [{ integrationId: channelId, type: 'schedule', date: new Date(Date.now() + 2 * 86400_000).toISOString(), postsAndComments: [{ content: '<p>Made in 2026-07-28</p>' }] }] },
    });
    expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
    const id = created.structuredContent.output[0].postId;
    expect(created.content).toContainEqual({ type: 'resource_link', uri: `herald://posts/${id}`, name: `post-${id}`, title: 'Post', mimeType: 'application/json' });
  });

  it('asks the person to confirm a deletion with an input_required result, and deletes only after an accepted answer', async () => {
    const post = await newPost('Confirm me in 2026');
    const asked: unknown[] = [];
    let answer: { action: string; content?: Record<string, unknown> } = { action: 'decline' };
    const client = await modern(undefined, undefined, { elicitation: { form: {} } });
    client.setRequestHandler('elicitation/create', async (request: any) => {
      asked.push(request.params);
      return answer as never;
    });
    const declined: any = await client.callTool({ name: 'deletePost', arguments: { id: post } });
    expect(asked).toHaveLength(1);
    expect((asked[0] as { message: string }).message).toMatch(/Delete 1 post/);
    expect(declined.structuredContent).toMatchObject({ deleted: false, message: 'The user did not confirm: nothing was deleted.' });
    expect(await postExists(post)).toBe(true);
    answer = { action: 'accept', content: { confirm: true } };
    const deleted: any = await client.callTool({ name: 'deletePost', arguments: { id: post } });
    expect(deleted.structuredContent).toMatchObject({ deleted: true });
    expect(await postExists(post)).toBe(false);
  });

  it('keeps the two-call rule for a client that declares no elicitation', async () => {
    const post = await newPost('Two calls in 2026');
    const client = await modern();
    const first: any = await client.callTool({ name: 'deletePost', arguments: { id: post, confirm: true } });
    expect(first.structuredContent).toMatchObject({ deleted: false });
    expect(await postExists(post)).toBe(true);
    const second: any = await client.callTool({ name: 'deletePost', arguments: { id: post, confirm: true } });
    expect(second.structuredContent).toMatchObject({ deleted: true });
  });

  it('answers a request naming a revision Herald does not serve with the unsupported-version error, not a session error', async () => {
    const response = await fetch(`${herald.url}/api/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${herald.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientInfo': { name: 'future', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const body = await response.json();
    expect(response.status).toBe(400);
    expect(body.id).toBe(7);
    expect(body.error.message).not.toMatch(/initialize/);
    expect(body.error.data?.supported).toContain('2026-07-28');
    // An envelope missing a key the revision requires is refused naming it (-32602), not routed to the sessions.
    const partial = await fetch(`${herald.url}/api/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${herald.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }),
    });
    const refused = await partial.json();
    expect(partial.status).toBe(400);
    expect(refused).toMatchObject({ id: 8, error: { code: -32602, data: { envelope: { problem: 'missing' } } } });
  });
});
