// MCP and REST run the same tools through the same runner: for every tool served by both, the data must be the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { tools } from '../tools/index.js';
import { PostSchema } from '../src/db/entities.js';

let herald: Herald;
let fake: BlueskyFake;
let client: Client;
let channelId: string;
let postId: string;

const start = () => new Date(Date.now() - 2 * 86400_000).toISOString();
const end = () => new Date(Date.now() + 60 * 86400_000).toISOString();
const q = (value: string) => encodeURIComponent(value);

function futureDate(days: number): string {
  const date = new Date(Date.now() + days * 86400_000);
  date.setUTCHours(9, 0, 0, 0);
  return date.toISOString();
}

async function mcp(name: string, args: Record<string, unknown>): Promise<any> {
  const result: any = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  expect(result.structuredContent).toBeDefined();
  return result.structuredContent;
}

async function rest(method: string, path: string, body?: unknown): Promise<any> {
  const response = await herald.rest(method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return response.body;
}

async function listPosts(): Promise<any[]> {
  return (await rest('GET', `/posts?startDate=${q(start())}&endDate=${q(end())}`)).posts;
}

beforeAll(async () => {
  herald = await startHerald();
  fake = await startBlueskyFake();
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
  expect(connected.status).toBeLessThan(300);
  channelId = connected.body.id;
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } },
  });
  client = new Client({ name: 'parity-test', version: '1.0.0' });
  await client.connect(transport);
  // A post so that list and analytics tools have data.
  const created = await herald.rest('POST', '/posts', {
    type: 'schedule',
    date: futureDate(2),
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channelId }, value: [{ content: '<p>seed post</p>', image: [] }], settings: {} }],
  });
  expect(created.status).toBeLessThan(300);
  postId = created.body[0].postId;
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await fake?.close();
});

describe('MCP / REST parity', () => {
  it('covers every tool that is both an MCP tool and a REST endpoint', () => {
    const both = tools.filter((tool) => tool.mcp && tool.rest).map((tool) => tool.name).sort();
    // Tools checked below; the generation tools with REST bindings are checked as not_supported on both sides.
    expect(both).toEqual(
      [
        'integrationList',
        'groupList',
        'triggerTool',
        'postsListTool',
        'findSlotTool',
        'importPostsTool',
        'timeZoneTool',
        'bestTimesTool',
        'channelAnalyticsTool',
        'postAnalyticsTool',
        'notificationListTool',
        'videoFunctionTool',
        'generateVideoTool',
        'mediaListTool',
        'uploadFromUrlTool',
        'updatePost',
        'changePostStatus',
        'deleteIntegration',
        'deletePost',
        'commentListTool',
        'replyToComment',
        'hideComment',
        'deleteComment',
        'listSets',
        'setSignature',
        'clearSignature',
        // The feeds' writes (a feed server to read) are run over both in feeds.test.ts.
        'feedList',
        'createFeed',
        'changeFeed',
        'checkFeed',
        'deleteFeed',
      ].sort(),
    );
  });

  it('listSets and feedList: MCP equals GET /sets and GET /feeds', async () => {
    expect(await rest('GET', '/sets')).toEqual((await mcp('listSets', {})).sets);
    expect(await rest('GET', '/feeds')).toEqual((await mcp('feedList', {})).output);
  });

  it('setSignature and clearSignature: MCP equals PUT and DELETE /signatures/:channel', async () => {
    const viaMcp = await mcp('setSignature', { channel: channelId, text: 'Parity', position: 'end' });
    const viaRest = await rest('PUT', `/signatures/${channelId}`, { text: 'Parity', position: 'end' });
    expect(viaRest).toEqual({ ...viaMcp, updatedAt: viaRest.updatedAt });
    expect(await mcp('clearSignature', { channel: channelId })).toEqual({ channel: channelId, cleared: true });
    expect(await rest('DELETE', `/signatures/${channelId}`)).toEqual({ channel: channelId, cleared: false });
  });

  it('integrationList: MCP output equals GET /integrations', async () => {
    const viaMcp = await mcp('integrationList', {});
    const viaRest = await rest('GET', '/integrations');
    expect(viaMcp.output).toHaveLength(1);
    expect(viaRest).toEqual(viaMcp.output);
  });

  it('groupList: MCP output equals GET /groups', async () => {
    const viaMcp = await mcp('groupList', {});
    const viaRest = await rest('GET', '/groups');
    expect(Array.isArray(viaRest)).toBe(true);
    expect(viaRest).toEqual(viaMcp.output);
  });

  it('postsListTool: MCP equals GET /posts', async () => {
    const startDate = start();
    const endDate = end();
    const viaMcp = await mcp('postsListTool', { startDate, endDate });
    const viaRest = await rest('GET', `/posts?startDate=${q(startDate)}&endDate=${q(endDate)}`);
    expect(viaMcp.posts.some((post: any) => post.id === postId)).toBe(true);
    expect(viaRest).toEqual(viaMcp);
  });

  it('importPostsTool: a dry run over MCP equals POST /posts/import', async () => {
    const input = { rows: [{ channel: channelId, date: futureDate(3).slice(0, 16).replace('T', ' '), text: 'Imported' }], timeZone: 'UTC' };
    const viaMcp = await mcp('importPostsTool', input);
    const viaRest = await rest('POST', '/posts/import', input);
    expect(viaMcp).toMatchObject({ dryRun: true, valid: 1 });
    expect(viaRest).toEqual(viaMcp);
  });

  it('bestTimesTool: MCP output equals GET /best-times/:id', async () => {
    const viaMcp = await mcp('bestTimesTool', { id: channelId });
    const viaRest = await rest('GET', `/best-times/${channelId}`);
    expect(viaMcp.output.enoughData).toBe(false);
    expect(viaRest).toEqual(viaMcp.output);
  });

  it('findSlotTool: MCP equals GET /find-slot/:id', async () => {
    const viaMcp = await mcp('findSlotTool', { id: channelId });
    const viaRest = await rest('GET', `/find-slot/${channelId}`);
    expect(typeof viaMcp.date).toBe('string');
    expect(viaRest).toEqual(viaMcp);
  });

  it('timeZoneTool: MCP equals PUT /time-zone, reading and setting the organization\'s zone', async () => {
    const read = await mcp('timeZoneTool', {});
    expect(read).toMatchObject({ timeZone: 'UTC', changed: false });
    const viaRest = await rest('PUT', '/time-zone', { timeZone: 'Europe/Paris' });
    expect(viaRest).toMatchObject({ timeZone: 'Europe/Paris', changed: true });
    const again = await mcp('timeZoneTool', { timeZone: 'Europe/Paris' });
    expect(again).toMatchObject({ timeZone: 'Europe/Paris', changed: false });
    expect(again.now).toMatch(/[+-]0[12]:00$/);
    expect(await rest('PUT', '/time-zone', {})).toMatchObject({ timeZone: 'Europe/Paris', changed: false });
    await mcp('timeZoneTool', { timeZone: 'UTC' });
  });

  it('channelAnalyticsTool: MCP output equals GET /analytics/:integration', async () => {
    const viaMcp = await mcp('channelAnalyticsTool', { integration: channelId, date: 7 });
    const viaRest = await rest('GET', `/analytics/${channelId}?date=7`);
    expect(Array.isArray(viaMcp.output)).toBe(true);
    expect(viaRest).toEqual(viaMcp.output);
  });

  it('postAnalyticsTool: MCP output equals GET /analytics/post/:postId', async () => {
    const viaMcp = await mcp('postAnalyticsTool', { postId, date: 7 });
    const viaRest = await rest('GET', `/analytics/post/${postId}?date=7`);
    expect(Array.isArray(viaMcp.output)).toBe(true);
    expect(viaRest).toEqual(viaMcp.output);
  });

  it('notificationListTool: MCP equals GET /notifications', async () => {
    const viaMcp = await mcp('notificationListTool', { page: 0 });
    const viaRest = await rest('GET', '/notifications?page=0');
    expect(viaMcp).toMatchObject({ page: 0, limit: 100 });
    expect(viaRest).toEqual(viaMcp);
  });

  it('commentListTool: MCP equals GET /comments (replies and moderation are checked in comments.test.ts)', async () => {
    const viaMcp = await mcp('commentListTool', { unanswered: true, pageSize: 5 });
    const viaRest = await rest('GET', '/comments?unanswered=true&pageSize=5');
    expect(viaMcp).toMatchObject({ comments: [], total: 0, page: 0, pageSize: 5 });
    expect(viaRest).toEqual(viaMcp);
  });

  it('mediaListTool: MCP equals GET /media', async () => {
    const viaMcp = await mcp('mediaListTool', { page: 0, pageSize: 5 });
    const viaRest = await rest('GET', '/media?page=0&pageSize=5');
    expect(viaMcp).toMatchObject({ page: 0, pageSize: 5, hasMore: false });
    expect(viaRest).toEqual(viaMcp);
  });

  it('uploadFromUrlTool: a blocked address is the same invalid_input "fetch failed" on both', async () => {
    const viaMcp: any = await client.callTool({ name: 'uploadFromUrlTool', arguments: { url: 'http://169.254.169.254/latest/meta-data' } });
    expect(viaMcp.isError).toBe(true);
    const viaRest = await herald.rest('POST', '/upload-from-url', { url: 'http://169.254.169.254/latest/meta-data' });
    expect(viaRest.status).toBe(400);
    expect(viaRest.body).toMatchObject({ code: 'invalid_input', message: 'fetch failed: 169.254.169.254 is a blocked address (link-local)' });
    expect(viaMcp.content[0].text.startsWith(`invalid_input: ${viaRest.body.message}`)).toBe(true);
  });

  it('triggerTool: an unknown method is not_found on both, with the same message', async () => {
    const viaMcp: any = await client.callTool({ name: 'triggerTool', arguments: { integrationId: channelId, methodName: 'noSuchMethod', dataSchema: [] } });
    expect(viaMcp.isError).toBe(true);
    const text: string = viaMcp.content[0].text;
    expect(text).toMatch(/^not_found: /);
    const viaRest = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'noSuchMethod', data: {} });
    expect(viaRest.status).toBe(404);
    expect(viaRest.body.code).toBe('not_found');
    expect(text.startsWith(`not_found: ${viaRest.body.message}`)).toBe(true);
  });

  it('generation tools with REST bindings are not_supported on both', async () => {
    const viaMcp: any = await client.callTool({ name: 'videoFunctionTool', arguments: { identifier: 'image-text-slides', functionName: 'loadVoices' } });
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.content[0].text).toMatch(/^not_supported/);
    const viaRest = await herald.rest('POST', '/video/function', { identifier: 'image-text-slides', functionName: 'loadVoices' });
    expect(viaRest.body.code).toBe('not_supported');

    const videoMcp: any = await client.callTool({ name: 'generateVideoTool', arguments: { identifier: 'veo3', output: 'vertical', customParams: [{ key: 'prompt', value: 'x' }] } });
    expect(videoMcp.isError).toBe(true);
    expect(videoMcp.content[0].text).toMatch(/^not_supported/);
    const videoRest = await herald.rest('POST', '/generate-video', { type: 'veo3', output: 'vertical', customParams: { prompt: 'x' } });
    expect(videoRest.body.code).toBe('not_supported');
  });

  it.each(['schedule', 'draft'] as const)('schedulePostTool (MCP) and POST /posts (REST) create equivalent %s posts', async (type) => {
    const date = futureDate(type === 'schedule' ? 7 : 8);
    const stamp = Date.now();
    const mcpContent = `<p>parity ${type} ${stamp}</p><p>second line</p>`;
    const viaMcp = await mcp('schedulePostTool', {
      socialPost: [
        { integrationId: channelId, isPremium: false, date, shortLink: false, type, postsAndComments: [{ content: mcpContent, attachments: [] }], settings: [] },
      ],
    });
    expect(viaMcp.output).toHaveLength(1);
    const mcpId = viaMcp.output[0].postId;
    expect(viaMcp.output[0].integration).toBe(channelId);

    // The same request in REST form (the same text on purpose: allowDuplicate).
    const viaRest = await rest('POST', '/posts', {
      type,
      date,
      shortLink: false,
      allowDuplicate: true,
      tags: [],
      posts: [{ integration: { id: channelId }, value: [{ content: mcpContent, image: [] }], settings: {} }],
    });
    expect(viaRest).toHaveLength(1);
    const restId = viaRest[0].postId;
    expect(viaRest[0].integration).toBe(channelId);
    expect(restId).not.toBe(mcpId);

    const posts = await listPosts();
    const fromMcp = posts.find((post) => post.id === mcpId);
    const fromRest = posts.find((post) => post.id === restId);
    expect(fromMcp).toBeDefined();
    expect(fromRest).toBeDefined();
    expect(fromMcp.state).toBe(type === 'draft' ? 'DRAFT' : 'QUEUE');
    expect(fromMcp.date).toBe(date);
    const comparable = (post: any) => ({
      content: post.content,
      state: post.state,
      date: post.date,
      publishDate: post.publishDate,
      settings: post.settings,
      image: post.image,
      integration: post.integration,
      releaseId: post.releaseId,
      error: post.error,
    });
    expect(comparable(fromMcp)).toEqual(comparable(fromRest));
    expect(fromMcp.group).not.toBe(fromRest.group);
    expect(fromMcp.creationMethod).toBe('MCP');
    expect(fromRest.creationMethod).toBe('API');
  });

  it('schedulePostTool (MCP) and POST /posts (REST) create equivalent threads', async () => {
    const date = futureDate(9);
    const parts = [`<p>thread one ${Date.now()}</p>`, '<p>thread two</p>'];
    const viaMcp = await mcp('schedulePostTool', {
      socialPost: [
        { integrationId: channelId, isPremium: false, date, shortLink: false, type: 'schedule', postsAndComments: parts.map((content) => ({ content, attachments: [] })), settings: [] },
      ],
    });
    const viaRest = await rest('POST', '/posts', {
      type: 'schedule',
      date,
      shortLink: false,
      allowDuplicate: true,
      tags: [],
      posts: [{ integration: { id: channelId }, value: parts.map((content) => ({ content, image: [] })), settings: {} }],
    });
    const posts = await listPosts();
    const fromMcp = posts.find((post) => post.id === viaMcp.output[0].postId);
    const fromRest = posts.find((post) => post.id === viaRest[0].postId);
    expect(fromMcp).toMatchObject({ content: parts[0], state: 'QUEUE', date });
    expect(fromRest).toMatchObject({ content: parts[0], state: 'QUEUE', date });
    // Both chains hold the same items in the same order: read them back from the database.
    const chain = async (group: string) =>
      (await herald.services.orm.em.fork().find(PostSchema, { group, deletedAt: null }, { orderBy: { position: 'asc' } })).map((post) => ({
        content: post.content,
        position: post.position,
        state: post.state,
        publishDate: post.publishDate.toISOString(),
        integrationId: post.integrationId,
      }));
    const mcpChain = await chain(fromMcp.group);
    expect(mcpChain.map((item) => item.content)).toEqual(parts);
    expect(await chain(fromRest.group)).toEqual(mcpChain);
  });

  it('updatePost: MCP and PUT /posts/:id make the same edit and answer the same record', async () => {
    const make = async (text: string) =>
      (await rest('POST', '/posts', { type: 'draft', date: futureDate(12), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: text, image: [] }], settings: {} }] }))[0].postId;
    const first = await make(`<p>to edit via MCP ${Date.now()}</p>`);
    const second = await make(`<p>to edit via REST ${Date.now()}</p>`);
    const date = futureDate(13);
    const viaMcp = await mcp('updatePost', { id: first, date, value: [{ content: '<p>edited</p>', image: [] }], allowDuplicate: true });
    const viaRest = await rest('PUT', `/posts/${second}`, { date, value: [{ content: '<p>edited</p>', image: [] }], allowDuplicate: true });
    const comparable = (post: any) => ({ content: post.content, state: post.state, date: post.date, preview: post.preview, items: post.items.length });
    expect(comparable(viaMcp)).toEqual(comparable(viaRest));
    expect(viaMcp).toMatchObject({ content: '<p>edited</p>', state: 'DRAFT', date, preview: { items: [{ text: 'edited', length: 6, maxLength: 300 }] } });
  });

  it('changePostStatus: MCP and PUT /posts/:id/status answer the same', async () => {
    const viaMcp = await mcp('changePostStatus', { id: postId, status: 'draft' });
    const viaRest = await rest('PUT', `/posts/${postId}/status`, { status: 'draft' });
    expect(viaMcp).toEqual({ id: postId, state: 'DRAFT' });
    expect(viaRest).toEqual(viaMcp);
    expect(await mcp('changePostStatus', { id: postId, status: 'schedule' })).toEqual({ id: postId, state: 'QUEUE' });
  });

  it('deletions: REST deletes at once (explicit by definition); MCP without elicitation deletes on the confirmed second call', async () => {
    const make = async (text: string) =>
      (await rest('POST', '/posts', { type: 'draft', date: futureDate(20), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: text, image: [] }], settings: {} }] }))[0].postId;
    const restPost = await make(`<p>delete via REST ${Date.now()}</p>`);
    expect(await rest('DELETE', `/posts/${restPost}`)).toEqual({ id: restPost });
    const mcpPost = await make(`<p>delete via MCP ${Date.now()}</p>`);
    const preview = await mcp('deletePost', { id: mcpPost });
    expect(preview).toMatchObject({ id: mcpPost, deleted: false, wouldDelete: { posts: [expect.objectContaining({ id: mcpPost })] } });
    expect((await listPosts()).some((post) => post.id === mcpPost)).toBe(true);
    expect(await mcp('deletePost', { id: mcpPost, confirm: true })).toEqual({ id: mcpPost, deleted: true });
    expect((await listPosts()).some((post) => post.id === mcpPost)).toBe(false);
  });
});
