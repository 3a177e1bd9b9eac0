// The MCP endpoints end to end: the SDK's real client over real HTTP against a real Herald, on both the Bearer and the path form.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { toolByName } from '../tools/index.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';

const SPEC_TOOLS = [
  'integrationList',
  'groupList',
  'integrationSchema',
  'triggerTool',
  'schedulePostTool',
  'generateImageTool',
  'generateVideoOptions',
  'videoFunctionTool',
  'generateVideoTool',
];
const EXTRA_READ_TOOLS = ['commentListTool', 'postsListTool', 'findSlotTool', 'channelAnalyticsTool', 'analyticsOverviewTool', 'postAnalyticsTool', 'bestTimesTool', 'notificationListTool', 'mediaListTool', 'validatePostTool', 'listSets', 'feedList'];
/** Extra tools that change data (the deletions ask the user to confirm: test/mcp-confirm.test.ts). */
const EXTRA_WRITE_TOOLS = ['timeZoneTool', 'importPostsTool', 'uploadFromUrlTool', 'updatePost', 'changePostStatus', 'deleteIntegration', 'deletePost', 'replyToComment', 'hideComment', 'deleteComment', 'setSignature', 'clearSignature', 'createFeed', 'changeFeed', 'checkFeed', 'deleteFeed', 'recurringPostTool', 'postSetTool', 'previewLinkTool'];

const EXPECTED_PROPERTIES: Record<string, { properties: string[]; required: string[] }> = {
  integrationList: { properties: ['group'], required: [] },
  groupList: { properties: [], required: [] },
  integrationSchema: { properties: ['isPremium', 'platform'], required: ['platform'] },
  triggerTool: { properties: ['integrationId', 'methodName', 'dataSchema'], required: ['integrationId', 'methodName', 'dataSchema'] },
  schedulePostTool: { properties: ['socialPost', 'idempotencyKey', 'allowDuplicate'], required: ['socialPost'] },
  timeZoneTool: { properties: ['timeZone'], required: [] },
  importPostsTool: { properties: ['csv', 'rows', 'timeZone', 'textFormat', 'dryRun', 'allowDuplicate', 'idempotencyKey'], required: [] },
  validatePostTool: { properties: ['socialPost', 'allowDuplicate'], required: ['socialPost'] },
  generateImageTool: { properties: ['prompt', 'idempotencyKey'], required: ['prompt'] },
  generateVideoOptions: { properties: [], required: [] },
  videoFunctionTool: { properties: ['identifier', 'functionName'], required: ['identifier', 'functionName'] },
  generateVideoTool: { properties: ['identifier', 'output', 'customParams', 'idempotencyKey'], required: ['identifier', 'output', 'customParams'] },
  postsListTool: { properties: ['startDate', 'endDate', 'customer', 'cursor', 'limit'], required: ['startDate', 'endDate'] },
  findSlotTool: { properties: ['id', 'timeZone', 'after', 'strategy'], required: ['id'] },
  bestTimesTool: { properties: ['id'], required: ['id'] },
  channelAnalyticsTool: { properties: ['integration', 'date'], required: ['integration', 'date'] },
  analyticsOverviewTool: { properties: ['date', 'channels'], required: ['date'] },
  postAnalyticsTool: { properties: ['postId', 'date'], required: ['postId'] },
  notificationListTool: { properties: ['page'], required: [] },
  mediaListTool: { properties: ['page', 'pageSize'], required: [] },
  uploadFromUrlTool: { properties: ['url', 'idempotencyKey'], required: ['url'] },
  updatePost: { properties: ['id', 'date', 'value', 'settings', 'allowDuplicate'], required: ['id'] },
  changePostStatus: { properties: ['allowDuplicate', 'id', 'status'], required: ['id', 'status'] },
  deleteIntegration: { properties: ['id', 'confirm'], required: ['id'] },
  deletePost: { properties: ['id', 'deleteOnPlatform', 'confirm'], required: ['id'] },
  commentListTool: { properties: ['channel', 'post', 'unanswered', 'state', 'page', 'pageSize'], required: [] },
  replyToComment: { properties: ['id', 'content', 'date', 'allowDuplicate', 'idempotencyKey'], required: ['id', 'content'] },
  hideComment: { properties: ['id', 'hidden'], required: ['id'] },
  deleteComment: { properties: ['id', 'confirm'], required: ['id'] },
  listSets: { properties: [], required: [] },
  feedList: { properties: ['id'], required: [] },
  createFeed: { properties: ['url', 'channels', 'name', 'template', 'mode', 'attachPicture', 'intervalMinutes', 'backlog'], required: ['url', 'channels', 'mode'] },
  changeFeed: { properties: ['id', 'url', 'channels', 'name', 'template', 'mode', 'attachPicture', 'intervalMinutes', 'paused'], required: ['id'] },
  checkFeed: { properties: ['id'], required: ['id'] },
  deleteFeed: { properties: ['id', 'confirm'], required: ['id'] },
  recurringPostTool: { properties: ['action', 'id', 'rule', 'keep', 'confirm'], required: ['action'] },
  postSetTool: { properties: ['action', 'id', 'set'], required: ['action'] },
  previewLinkTool: { properties: ['action', 'id', 'link'], required: ['action'] },
  setSignature: { properties: ['channel', 'text', 'position'], required: ['channel', 'text'] },
  clearSignature: { properties: ['channel'], required: ['channel'] },
};

const INIT_BODY = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const LIST_BODY = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
const MCP_ACCEPT = 'application/json, text/event-stream';

let herald: Herald;
let fake: BlueskyFake;
let channel: { id: string; name: string; platform: string };
const clients: Client[] = [];

async function connect(form: 'bearer' | 'path', apiKey = herald.apiKey): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport =
    form === 'bearer'
      ? new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } })
      : new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp/${apiKey}`));
  const client = new Client({ name: 'herald-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** A raw POST to the Bearer endpoint. */
async function rawPost(body: unknown, headers: Record<string, string>, path = '/api/mcp'): Promise<{ status: number; body: any }> {
  const response = await fetch(`${herald.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* SSE or empty */
  }
  return { status: response.status, body: parsed };
}

/** node:http, because fetch will not let us forge the Host header. */
function rawHttp(headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  const url = new URL(`${herald.url}/api/mcp`);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (response) => {
        let data = '';
        response.on('data', (chunk) => (data += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: data }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

function textOf(result: any): string {
  expect(Array.isArray(result.content)).toBe(true);
  const text = result.content.find((item: any) => item.type === 'text');
  expect(text).toBeDefined();
  return text.text as string;
}

function futureDate(days: number): string {
  const date = new Date(Date.now() + days * 86400_000);
  date.setUTCHours(9, 0, 0, 0);
  return date.toISOString();
}

async function listAllPosts(): Promise<any[]> {
  const start = new Date(Date.now() - 2 * 86400_000).toISOString();
  const end = new Date(Date.now() + 60 * 86400_000).toISOString();
  const response = await herald.rest('GET', `/posts?startDate=${encodeURIComponent(start)}&endDate=${encodeURIComponent(end)}`);
  expect(response.status).toBe(200);
  return response.body.posts;
}

function socialPost(content: string, overrides: Record<string, unknown> = {}) {
  return {
    integrationId: channel.id,
    isPremium: false,
    date: futureDate(5),
    shortLink: false,
    type: 'schedule',
    postsAndComments: [{ content, attachments: [] }],
    settings: [],
    ...overrides,
  };
}

beforeAll(async () => {
  herald = await startHerald();
  fake = await startBlueskyFake();
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
  expect(connected.status).toBeLessThan(300);
  channel = { id: connected.body.id, name: connected.body.name, platform: 'bluesky' };
  expect(channel.id).toBeTruthy();
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await herald?.stop();
  await fake?.close();
});

describe.each(['bearer', 'path'] as const)('MCP over the %s endpoint', (form) => {
  let client: Client;
  beforeAll(async () => {
    ({ client } = await connect(form));
  });

  it('lists exactly the spec tools plus the extra tools, each fully described', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...SPEC_TOOLS, ...EXTRA_READ_TOOLS, ...EXTRA_WRITE_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.description!.trim().length, tool.name).toBeGreaterThan(10);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      const expected = EXPECTED_PROPERTIES[tool.name];
      expect(Object.keys(tool.inputSchema.properties ?? {}).sort(), tool.name).toEqual([...expected.properties].sort());
      expect([...((tool.inputSchema.required as string[] | undefined) ?? [])].sort(), tool.name).toEqual([...expected.required].sort());
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(tool.outputSchema!.type, tool.name).toBe('object');
      expect(tool.annotations, tool.name).toBeDefined();
      // A hint equal to MCP's default is left out of tools/list (issue 33: every byte is sent every turn).
      const defaults = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(tool.annotations![hint] ?? defaults[hint], `${tool.name}.${hint}`).toBe(toolByName.get(tool.name)!.annotations[hint]);
      }
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('integrationList')!.annotations!.readOnlyHint).toBe(true);
    expect(byName.get('groupList')!.annotations!.readOnlyHint).toBe(true);
    expect(byName.get('integrationSchema')!.annotations!.readOnlyHint).toBe(true);
    expect(byName.get('schedulePostTool')!.annotations!.readOnlyHint ?? false).toBe(false);
    expect(byName.get('triggerTool')!.annotations!.readOnlyHint ?? false).toBe(false);
    for (const name of EXTRA_READ_TOOLS) expect(byName.get(name)!.annotations!.readOnlyHint, name).toBe(true);
    for (const name of EXTRA_WRITE_TOOLS) expect(byName.get(name)!.annotations!.readOnlyHint ?? false, name).toBe(false);
    // The socialPost item schema names the spec's fields.
    const socialPostSchema = (byName.get('schedulePostTool')!.inputSchema.properties as any).socialPost;
    expect(socialPostSchema.type).toBe('array');
    expect(Object.keys(socialPostSchema.items.properties).sort()).toEqual(
      ['integrationId', 'isPremium', 'date', 'shortLink', 'type', 'postsAndComments', 'settings'].sort(),
    );
  });

  it('integrationList answers {output: [...]} in structuredContent and the same JSON as text', async () => {
    const result: any = await client.callTool({ name: 'integrationList', arguments: {} });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent;
    expect(Array.isArray(structured.output)).toBe(true);
    expect(structured.output).toHaveLength(1);
    expect(structured.output[0]).toMatchObject({ id: channel.id, name: 'Alice', platform: 'bluesky' });
    expect(typeof structured.output[0].picture).toBe('string');
    expect(JSON.parse(textOf(result))).toEqual(structured);
  });

  it('groupList answers {output: []} when there are no groups', async () => {
    const result: any = await client.callTool({ name: 'groupList', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ output: [] });
    expect(JSON.parse(textOf(result))).toEqual({ output: [] });
  });

  it('integrationSchema gives platform rules, honours isPremium and rejects unknown platforms', async () => {
    const bluesky: any = await client.callTool({ name: 'integrationSchema', arguments: { isPremium: false, platform: 'bluesky' } });
    expect(bluesky.isError).toBeFalsy();
    expect(bluesky.structuredContent.output).toMatchObject({ settings: 'No additional settings required', maxLength: 300 });
    expect(typeof bluesky.structuredContent.output.rules).toBe('string');
    expect(Array.isArray(bluesky.structuredContent.output.tools)).toBe(true);
    expect(JSON.parse(textOf(bluesky))).toEqual(bluesky.structuredContent);

    const xPremium: any = await client.callTool({ name: 'integrationSchema', arguments: { isPremium: true, platform: 'x' } });
    expect(xPremium.isError).toBeFalsy();
    expect(xPremium.structuredContent.output.maxLength).toBe(25_000);
    const xPlain: any = await client.callTool({ name: 'integrationSchema', arguments: { isPremium: false, platform: 'x' } });
    expect(xPlain.structuredContent.output.maxLength).toBe(280);

    const unknown: any = await client.callTool({ name: 'integrationSchema', arguments: { isPremium: false, platform: 'myspace' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^invalid_input/);
    expect(unknown.structuredContent).toBeUndefined();
  });

  it('integrationSchema with missing required arguments is an invalid_input tool error', async () => {
    const result: any = await client.callTool({ name: 'integrationSchema', arguments: { isPremium: false } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_input/);
  });

  it('triggerTool with an unknown method is a not_found tool error', async () => {
    const result: any = await client.callTool({
      name: 'triggerTool',
      arguments: { integrationId: channel.id, methodName: 'noSuchMethod', dataSchema: [] },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^not_found/);
  });

  it('triggerTool on an unknown channel is a not_found tool error', async () => {
    const result: any = await client.callTool({
      name: 'triggerTool',
      arguments: { integrationId: 'no-such-channel', methodName: 'anything', dataSchema: [] },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^not_found/);
  });

  it('schedulePostTool creates a scheduled post that REST lists', async () => {
    const content = `<p>Hello from MCP (${form}) ${Date.now()}</p>`;
    const date = futureDate(3);
    const result: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [socialPost(content, { date })] } });
    expect(result.isError).toBeFalsy();
    const output = result.structuredContent.output;
    expect(Array.isArray(output)).toBe(true);
    expect(output).toHaveLength(1);
    expect(output[0]).toEqual({ postId: expect.any(String), integration: channel.id });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    const posts = await listAllPosts();
    const created = posts.find((post) => post.id === output[0].postId);
    expect(created).toBeDefined();
    expect(created).toMatchObject({ content, state: 'QUEUE', date, creationMethod: 'MCP' });
    expect(created.integration.id).toBe(channel.id);
  });

  it('schedulePostTool is all or nothing: one invalid item answers isError with {output: {errors}} and creates nothing', async () => {
    const before = await listAllPosts();
    const validContent = `<p>valid ${form} ${Date.now()}</p>`;
    const result: any = await client.callTool({
      name: 'schedulePostTool',
      arguments: { socialPost: [socialPost(validContent, { date: futureDate(4) }), socialPost('a'.repeat(301), { date: futureDate(6) })] },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ output: { errors: expect.any(String) } });
    expect(result.structuredContent.output.errors.startsWith(`${channel.name} (bluesky, id ${channel.id}): `)).toBe(true);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    const after = await listAllPosts();
    expect(after.map((post) => post.id).sort()).toEqual(before.map((post) => post.id).sort());
    expect(after.some((post) => post.content === validContent)).toBe(false);
  });

  it('schedulePostTool with 301 characters alone answers errors and creates nothing', async () => {
    const before = await listAllPosts();
    const result: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [socialPost('b'.repeat(301))] } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent.output.errors.startsWith(`${channel.name} (bluesky, id ${channel.id}): `)).toBe(true);
    expect((await listAllPosts()).length).toBe(before.length);
  });

  it('schedulePostTool with type "now" creates a QUEUE post', async () => {
    const content = `<p>now ${form} ${Date.now()}</p>`;
    const result: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [socialPost(content, { type: 'now' })] } });
    expect(result.isError).toBeFalsy();
    const [created] = result.structuredContent.output;
    const post = (await listAllPosts()).find((item) => item.id === created.postId);
    expect(post).toMatchObject({ content, state: 'QUEUE' });
    expect(Math.abs(Date.parse(post.date) - Date.now())).toBeLessThan(5 * 60_000);
  });

  it('schedulePostTool with type "draft" creates a DRAFT post', async () => {
    const content = `<p>draft ${form} ${Date.now()}</p>`;
    const result: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [socialPost(content, { type: 'draft' })] } });
    expect(result.isError).toBeFalsy();
    const [created] = result.structuredContent.output;
    const post = (await listAllPosts()).find((item) => item.id === created.postId);
    expect(post).toMatchObject({ content, state: 'DRAFT' });
  });

  // This Herald has no OPENAI_API_KEY or FAL_KEY: generation answers not_supported naming the setting, never a fake result.
  it.each([
    ['generateImageTool', { prompt: 'a cat' }, 'OPENAI_API_KEY'],
    ['videoFunctionTool', { identifier: 'image-text-slides', functionName: 'loadVoices' }, 'OPENAI_API_KEY'],
    ['generateVideoTool', { identifier: 'veo3', output: 'vertical', customParams: [{ key: 'prompt', value: 'a cat' }] }, 'FAL_KEY'],
  ])('%s is a not_supported tool error naming the setting', async (name, args, setting) => {
    const result: any = await client.callTool({ name, arguments: args });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`^not_supported: .*needs ${setting}`));
  });

  it('generateVideoOptions lists the video generators as unavailable, with the setting that enables each', async () => {
    const result: any = await client.callTool({ name: 'generateVideoOptions', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.video.map((item: any) => [item.type, item.available, item.requires])).toEqual([
      ['image-text-slides', false, ['OPENAI_API_KEY']],
      ['veo3', false, ['FAL_KEY']],
    ]);
  });

  it('an unknown tool is a not_found tool error', async () => {
    const result: any = await client.callTool({ name: 'noSuchTool', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^not_found/);
  });
});

describe('MCP authentication and sessions', () => {
  it('answers 401 unauthenticated without an Authorization header, before any MCP message', async () => {
    const response = await rawPost(INIT_BODY, {});
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('unauthenticated');
    expect(response.body.jsonrpc).toBeUndefined();
  });

  it('answers 401 for a wrong Bearer key and for the raw key without the Bearer scheme', async () => {
    const wrong = await rawPost(INIT_BODY, { authorization: 'Bearer not-a-real-key' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('unauthenticated');
    const raw = await rawPost(INIT_BODY, { authorization: herald.apiKey });
    expect(raw.status).toBe(401);
    expect(raw.body.code).toBe('unauthenticated');
  });

  it('answers 401 for a wrong key on the path form, and accepts the right one', async () => {
    const wrong = await rawPost(INIT_BODY, {}, '/api/mcp/not-a-real-key');
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('unauthenticated');
    const right = await rawPost(INIT_BODY, {}, `/api/mcp/${herald.apiKey}`);
    expect(right.status).toBe(200);
  });

  it('a session opened with one organization key is not found for another organization key', async () => {
    const { transport } = await connect('bearer');
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
    const other = await herald.newOrganization('Other organization');
    const foreign = await rawPost(LIST_BODY, { authorization: `Bearer ${other.apiKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' });
    expect(foreign.status).toBe(404);
    // Control: the owner still reaches the session.
    const own = await rawPost(LIST_BODY, { authorization: `Bearer ${herald.apiKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' });
    expect(own.status).toBe(200);
  });

  it('a session opened on the path form is not reachable with another organization key on the path form', async () => {
    const { transport } = await connect('path');
    const sessionId = transport.sessionId!;
    const other = await herald.newOrganization('Third organization');
    const foreign = await rawPost(LIST_BODY, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' }, `/api/mcp/${other.apiKey}`);
    expect(foreign.status).toBe(404);
  });

  it('DELETE with the session id ends the session', async () => {
    const { client, transport } = await connect('bearer');
    const sessionId = transport.sessionId!;
    await client.listTools();
    const deleted = await fetch(`${herald.url}/api/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${herald.apiKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' },
    });
    expect(deleted.status).toBe(200);
    const after = await rawPost(LIST_BODY, { authorization: `Bearer ${herald.apiKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' });
    expect(after.status).toBe(404);
  });

  it.each([
    ['null', null],
    ['a string', 'x'],
    ['an array', []],
    ['a number', 42],
  ])('tools/call with %s as arguments answers -32602 with a sentence', async (kind, given) => {
    const { client, transport } = await connect('bearer');
    await client.listTools();
    const headers = { authorization: `Bearer ${herald.apiKey}`, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-03-26' };
    const answer = await rawPost({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'integrationList', arguments: given } }, headers);
    expect(answer.status).toBe(200);
    const message = JSON.parse(/^data: (.*)$/m.exec(String(answer.body))![1]);
    expect(message.error.code).toBe(-32602);
    expect(message.error.message).toBe(`params.arguments must be a JSON object of integrationList's input fields ({} for none); got ${kind}.`);
  });

  it('answers 403 for a foreign Host header', async () => {
    const response = await rawHttp({ host: 'evil.example', authorization: `Bearer ${herald.apiKey}` }, INIT_BODY);
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).code).toBe('forbidden');
  });

  it('answers 403 for a foreign Origin header', async () => {
    const response = await rawPost(INIT_BODY, { origin: 'http://evil.example', authorization: `Bearer ${herald.apiKey}` });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('forbidden');
    const pathForm = await rawPost(INIT_BODY, { origin: 'http://evil.example' }, `/api/mcp/${herald.apiKey}`);
    expect(pathForm.status).toBe(403);
  });

  it('accepts the public Host and Origin (control for the host guard)', async () => {
    const response = await rawHttp({ host: new URL(herald.url).host, origin: herald.url, authorization: `Bearer ${herald.apiKey}` }, INIT_BODY);
    expect(response.status).toBe(200);
  });

  // Last: closeIdle ends every session of this Herald.
  it('idle sessions end', async () => {
    const { client, transport } = await connect('bearer');
    const sessionId = transport.sessionId!;
    await client.listTools();
    const headers = { authorization: `Bearer ${herald.apiKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' };
    await herald.sessions.closeIdle(Date.now());
    expect((await rawPost(LIST_BODY, headers)).status).toBe(200);
    await herald.sessions.closeIdle(Date.now() + 10 * 3600_000);
    expect((await rawPost(LIST_BODY, headers)).status).toBe(404);
  });
});
