// MCP beyond tools, with the SDK's real client over HTTP against a real Herald: resources and templates, completions,
// subscriptions (an update when the worker publishes, and through Postgres NOTIFY when another process holds the
// session), prompts with arguments, logging levels, progress during an upload from a slow server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, McpError, ResourceUpdatedNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { publishUntilSettled, waitFor } from './helpers/posts.js';
import { tinyPng } from './helpers/provider-context.js';
import { buildServices } from '../src/bootstrap.js';
import { openDatabase } from '../src/db/orm.js';
import { createApp } from '../src/http/app.js';
import { McpSessions } from '../src/mcp/sessions.js';
import { createLogger } from '../src/lib/logger.js';

let herald: Herald;
let fake: BlueskyFake;
let channelId: string;
const clients: Client[] = [];

async function connect(url = herald.url, apiKey = herald.apiKey): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } });
  const client = new Client({ name: 'resources-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function futureDate(days: number): string {
  const date = new Date(Date.now() + days * 86400_000);
  date.setUTCHours(9, 0, 0, 0);
  return date.toISOString();
}

async function schedule(client: Client, content: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const result: any = await client.callTool({
    name: 'schedulePostTool',
    arguments: {
      socialPost: [{ integrationId: channelId, isPremium: false, date: futureDate(3), shortLink: false, type: 'schedule', postsAndComments: [{ content, attachments: [] }], settings: [], ...overrides }],
    },
  });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(Array.isArray(result.structuredContent.output), JSON.stringify(result.structuredContent)).toBe(true);
  return result.structuredContent.output[0];
}

const readJson = async (client: Client, uri: string) => {
  const result = await client.readResource({ uri });
  expect(result.contents).toHaveLength(1);
  expect(result.contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
  return JSON.parse((result.contents[0] as { text: string }).text);
};

beforeAll(async () => {
  herald = await startHerald({}, { guard: { allowLoopback: true } });
  fake = await startBlueskyFake();
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
  expect(connected.status).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await herald?.stop();
  await fake?.close();
});

describe('MCP resources', () => {
  it('advertises resources with subscriptions, prompts, completions and logging, with instructions that name them', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()).toMatchObject({ resources: { subscribe: true }, prompts: {}, completions: {}, logging: {}, tools: {} });
    expect(client.getInstructions()).toContain('herald://integrations');
  });

  it('lists the channels, each channel, the media library and every platform, each with a name and a description', async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    const uris = resources.map((resource) => resource.uri);
    expect(uris).toEqual(expect.arrayContaining(['herald://integrations', 'herald://media', `herald://integrations/${channelId}`, 'herald://platforms/bluesky', 'herald://platforms/x']));
    expect(uris.filter((uri) => uri.startsWith('herald://platforms/'))).toHaveLength(32);
    for (const resource of resources) {
      expect(resource.name, resource.uri).toBeTruthy();
      expect(resource.description, resource.uri).toBeTruthy();
      expect(resource.mimeType).toBe('application/json');
    }
    expect(resources.find((resource) => resource.uri === `herald://integrations/${channelId}`)!.title).toBe('Alice (Bluesky)');
  });

  it('lists the four templates', async () => {
    const client = await connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual(['herald://channels/{id}/best-times', 'herald://integrations/{id}', 'herald://platforms/{identifier}', 'herald://posts/{id}', 'herald://posts/{id}/comments']);
  });

  it('reads the channels and one channel: state, rules, limits and settings schema', async () => {
    const client = await connect();
    const all = await readJson(client, 'herald://integrations');
    expect(all.channels).toHaveLength(1);
    const one = await readJson(client, `herald://integrations/${channelId}`);
    expect(all.channels[0]).toEqual(one);
    expect(one).toMatchObject({ id: channelId, name: 'Alice', platform: 'bluesky', state: 'active', maxLength: 300, settings: 'No additional settings required', chain: 'thread', platformUri: 'herald://platforms/bluesky' });
    expect(one.rules).toEqual(expect.any(String));
  });

  it('reads a platform\'s rules as integrationSchema gives them, with the premium limit', async () => {
    const client = await connect();
    const x = await readJson(client, 'herald://platforms/x');
    const schema: any = await client.callTool({ name: 'integrationSchema', arguments: { isPremium: false, platform: 'x' } });
    expect(x).toMatchObject({ identifier: 'x', maxLength: 280, maxLengthPremium: 25_000, chain: 'thread', rules: schema.structuredContent.output.rules, settings: schema.structuredContent.output.settings });
  });

  it('answers -32602 with the uri for what does not exist, and never shows another organization\'s post', async () => {
    const client = await connect();
    for (const uri of ['herald://posts/nope', 'herald://integrations/nope', 'herald://platforms/myspace', 'test://static-text', 'herald://media/1']) {
      const error = await client.readResource({ uri }).then(() => undefined, (caught: unknown) => caught);
      expect(error, uri).toBeInstanceOf(McpError);
      expect((error as McpError).code, uri).toBe(-32602);
      expect((error as McpError).data, uri).toEqual({ uri });
    }
    const other = await herald.newOrganization('Elsewhere');
    const foreign = await connect(herald.url, other.apiKey);
    const post = await schedule(client, `<p>mine only ${Date.now()}</p>`);
    const error = await foreign.readResource({ uri: `herald://posts/${post.postId}` }).then(() => undefined, (caught: unknown) => caught);
    expect((error as McpError).code).toBe(-32602);
  });

  it('reads a post: items, state, and each item exactly as the platform receives it, with its length against the limit', async () => {
    const client = await connect();
    const created: any = await client.callTool({
      name: 'schedulePostTool',
      arguments: {
        socialPost: [
          {
            integrationId: channelId,
            isPremium: false,
            date: futureDate(4),
            shortLink: false,
            type: 'schedule',
            postsAndComments: [
              { content: `<p>Big <strong>news</strong> ${Date.now()}</p>`, attachments: [] },
              { content: '<p>second</p>', attachments: [] },
            ],
            settings: [],
          },
        ],
      },
    });
    const postId = created.structuredContent.output[0].postId;
    const post = await readJson(client, `herald://posts/${postId}`);
    expect(post).toMatchObject({ id: postId, uri: `herald://posts/${postId}`, state: 'QUEUE', publishStatus: 'scheduled', approval: null });
    expect(post.items.map((item: any) => item.state)).toEqual(['QUEUE', 'QUEUE']);
    expect(post.preview.maxLength).toBe(300);
    expect(post.preview.items[0].text).toMatch(/^Big 𝗻𝗲𝘄𝘀 \d+$/u);
    expect(post.preview.items[0]).toMatchObject({ maxLength: 300, overLimit: false, length: [...new Intl.Segmenter().segment(post.preview.items[0].text)].length });
    expect(post.preview.items[1]).toMatchObject({ position: 1, text: 'second', length: 6 });
    // Any item's id names the same post.
    expect((await readJson(client, `herald://posts/${post.items[1].id}`)).id).toBe(postId);
  });

  it('reads the media library', async () => {
    const client = await connect();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(tinyPng())], { type: 'image/png' }), 'dot.png');
    const uploaded = await fetch(`${herald.restUrl}/upload`, { method: 'POST', headers: { authorization: herald.apiKey }, body: form });
    const media = await uploaded.json();
    const library = await readJson(client, 'herald://media');
    expect(library.media.map((item: any) => item.id)).toContain(media.id);
  });
});

describe('MCP completions', () => {
  it('completes channel ids by id or name, platform identifiers and post ids for the templates', async () => {
    const client = await connect();
    const byName = await client.complete({ ref: { type: 'ref/resource', uri: 'herald://integrations/{id}' }, argument: { name: 'id', value: 'ali' } });
    expect(byName.completion.values).toEqual([channelId]);
    const byId = await client.complete({ ref: { type: 'ref/resource', uri: 'herald://integrations/{id}' }, argument: { name: 'id', value: channelId.slice(0, 3) } });
    expect(byId.completion.values).toEqual([channelId]);
    const none = await client.complete({ ref: { type: 'ref/resource', uri: 'herald://integrations/{id}' }, argument: { name: 'id', value: 'zzz' } });
    expect(none.completion.values).toEqual([]);
    const platforms = await client.complete({ ref: { type: 'ref/resource', uri: 'herald://platforms/{identifier}' }, argument: { name: 'identifier', value: 'li' } });
    expect(platforms.completion.values.sort()).toEqual(['linkedin', 'linkedin-page', 'listmonk']);
    const post = await schedule(client, `<p>completion target ${Date.now()}</p>`);
    const posts = await client.complete({ ref: { type: 'ref/resource', uri: 'herald://posts/{id}' }, argument: { name: 'id', value: post.postId.slice(0, 6) } });
    expect(posts.completion.values).toContain(post.postId);
  });

  it('completes prompt arguments: a list of channels, days, dates', async () => {
    const client = await connect();
    const channels = await client.complete({ ref: { type: 'ref/prompt', name: 'plan-week' }, argument: { name: 'channels', value: 'somebody,Al' } });
    expect(channels.completion.values).toEqual([`somebody,${channelId}`]);
    const days = await client.complete({ ref: { type: 'ref/prompt', name: 'weekly-analytics-report' }, argument: { name: 'days', value: '' } });
    expect(days.completion.values).toEqual(['7', '14', '30', '90']);
    const start = await client.complete({ ref: { type: 'ref/prompt', name: 'plan-week' }, argument: { name: 'start', value: '' } });
    expect(start.completion.values[0]).toBe(new Date().toISOString().slice(0, 10));
    const free = await client.complete({ ref: { type: 'ref/prompt', name: 'plan-week' }, argument: { name: 'brief', value: 'x' } });
    expect(free.completion.values).toEqual([]);
  });
});

describe('MCP prompts', () => {
  it('lists the four prompts with their arguments', async () => {
    const client = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['plan-week', 'article-to-thread', 'weekly-analytics-report', 'recover-failed-posts']);
    for (const prompt of prompts) expect(prompt.description, prompt.name).toBeTruthy();
    expect(prompts[0].arguments).toEqual([
      expect.objectContaining({ name: 'brief', required: true }),
      expect.objectContaining({ name: 'channels', required: false }),
      expect.objectContaining({ name: 'start', required: false }),
    ]);
  });

  it('gets a prompt with its arguments: the text names the tools in order and carries the arguments', async () => {
    const client = await connect();
    const plan = await client.getPrompt({ name: 'plan-week', arguments: { brief: 'Launch of version 2', channels: channelId, start: '2026-12-07' } });
    const text = (plan.messages[0].content as { text: string }).text;
    expect(plan.messages[0].role).toBe('user');
    expect(text).toContain('Launch of version 2');
    expect(text).toContain(channelId);
    expect(text).toContain('from 2026-12-07 to 2026-12-14');
    const order = ['herald://integrations', 'herald://platforms/{identifier}', 'postsListTool', 'findSlotTool', 'schedulePostTool', 'herald://posts/{postId}'].map((name) => text.indexOf(name));
    expect(order.every((position) => position >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const article = await client.getPrompt({ name: 'article-to-thread', arguments: { url: 'https://example.com/post' } });
    expect((article.messages[0].content as { text: string }).text).toContain('uploadFromUrlTool');
    const recover = await client.getPrompt({ name: 'recover-failed-posts', arguments: { days: '30' } });
    expect((recover.messages[0].content as { text: string }).text).toMatch(/last 30 days[\s\S]*changePostStatus/);
  });

  it('refuses a prompt without its required argument, and an unknown prompt, with -32602', async () => {
    const client = await connect();
    for (const request of [{ name: 'plan-week', arguments: {} }, { name: 'no-such-prompt' }]) {
      const error = await client.getPrompt(request).then(() => undefined, (caught: unknown) => caught);
      expect((error as McpError).code).toBe(-32602);
    }
  });
});

describe('MCP logging', () => {
  const collect = (client: Client) => {
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void messages.push(notification.params));
    return messages;
  };

  it('sends what was validated and queued at the level the client set, and nothing below it', async () => {
    const client = await connect();
    const messages = collect(client);
    await client.setLoggingLevel('debug');
    const post = await schedule(client, `<p>logged ${Date.now()}</p>`);
    const texts = messages.map((message) => `${message.level}: ${typeof message.data === 'string' ? message.data : (message.data as any).message}`);
    expect(texts).toContain(`info: Checked 1 post against each platform's rules: valid.`);
    expect(texts.some((text) => text.startsWith(`info: Queued post ${post.postId}`))).toBe(true);
    expect(messages.some((message) => message.level === 'debug')).toBe(true);
    expect(messages.every((message) => message.logger === 'herald.schedulePostTool')).toBe(true);
    // Never a secret: the API key does not appear in any log.
    expect(JSON.stringify(messages)).not.toContain(herald.apiKey);

    messages.length = 0;
    await client.setLoggingLevel('warning');
    await schedule(client, `<p>quiet ${Date.now()}</p>`);
    expect(messages).toEqual([]);
    // A refusal is a warning.
    await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [{ integrationId: channelId, isPremium: false, date: futureDate(3), shortLink: false, type: 'schedule', postsAndComments: [{ content: 'x'.repeat(301), attachments: [] }], settings: [] }] } });
    expect(messages.map((message) => message.level)).toEqual(['warning']);
  });

  it('refuses an unknown level with -32602', async () => {
    const client = await connect();
    const error = await client.request({ method: 'logging/setLevel', params: { level: 'banana' } } as any, (await import('@modelcontextprotocol/sdk/types.js')).EmptyResultSchema).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as McpError).code).toBe(-32602);
  });
});

describe('MCP progress', () => {
  it('reports progress while an upload arrives from a slow server, and stops before the answer', async () => {
    // A PNG sent in five pieces, 150 ms apart, with its length announced.
    const body = Buffer.concat([tinyPng(), Buffer.alloc(4000)]);
    const slow = http.createServer(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length });
      const size = Math.ceil(body.length / 5);
      for (let offset = 0; offset < body.length; offset += size) {
        response.write(body.subarray(offset, offset + size));
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      response.end();
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', () => resolve()));
    try {
      const client = await connect();
      const updates: { progress: number; total?: number }[] = [];
      const result: any = await client.callTool(
        { name: 'uploadFromUrlTool', arguments: { url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow.png` } },
        undefined,
        { onprogress: (progress) => void updates.push(progress) },
      );
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ type: 'image/png', size: body.length });
      const count = updates.length;
      expect(count).toBeGreaterThanOrEqual(3);
      for (let index = 1; index < count; index++) expect(updates[index].progress).toBeGreaterThanOrEqual(updates[index - 1].progress);
      expect(updates.at(-1)).toMatchObject({ progress: body.length, total: body.length });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(updates).toHaveLength(count);
    } finally {
      slow.close();
    }
  });
});

describe('the conformance suite\'s checks that need none of its fixtures', () => {
  it('logging/setLevel answers {}; completion of an unknown prompt answers an empty list; no progress without a token', async () => {
    const client = await connect();
    const { EmptyResultSchema, CompleteResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
    expect(await client.request({ method: 'logging/setLevel', params: { level: 'info' } }, EmptyResultSchema)).toEqual({});
    const completion = await client.request({ method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } } }, CompleteResultSchema);
    expect(completion.completion.values).toEqual([]);
    // A progress notification for a token the client never sent would reach onerror as "unknown token".
    const errors: Error[] = [];
    client.onerror = (error) => void errors.push(error);
    await client.callTool({ name: 'analyticsOverviewTool', arguments: { date: 7 } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toEqual([]);
  });
});

describe('MCP progress across channels', () => {
  it('reads every channel\'s analytics in turn, reporting one step per channel', async () => {
    const second = await startBlueskyFake({ handle: 'bob.bsky.social' });
    try {
      const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: second.url, identifier: second.handle, appPassword: second.password });
      const client = await connect();
      const updates: { progress: number; total?: number; message?: string }[] = [];
      const result: any = await client.callTool({ name: 'analyticsOverviewTool', arguments: { date: 7 } }, undefined, { onprogress: (progress) => void updates.push(progress) });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent.output.map((entry: any) => entry.integration.id)).toEqual([channelId, connected.body.id]);
      for (const entry of result.structuredContent.output) expect(entry.metrics.map((metric: any) => metric.label)).toContain('Followers');
      expect(updates).toEqual([
        { progress: 1, total: 2, message: 'Read Alice (Bluesky)' },
        { progress: 2, total: 2, message: 'Read Alice (Bluesky)' },
      ]);
      expect((await herald.rest('DELETE', `/integrations/${connected.body.id}`)).status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('MCP subscriptions', () => {
  it('notifies a subscribed client when the worker publishes the post', async () => {
    const client = await connect();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updated.push(notification.params.uri));
    const post = await schedule(client, `<p>watch me go out ${Date.now()}</p>`, { type: 'now' });
    const uri = `herald://posts/${post.postId}`;
    await client.subscribeResource({ uri });
    const worker = await herald.startWorker();
    try {
      await waitFor(async () => (updated.includes(uri) ? true : undefined), 20_000);
    } finally {
      await worker.stop();
    }
    const read = await readJson(client, uri);
    expect(read).toMatchObject({ state: 'PUBLISHED', publishStatus: 'published', releaseURL: expect.stringContaining('bsky.app') });
    expect(fake.records.filter((record) => record.record.text.startsWith('watch me go out'))).toHaveLength(1);
  });

  it('an unsubscribed client hears nothing more', async () => {
    const client = await connect();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updated.push(notification.params.uri));
    const post = await schedule(client, `<p>unwatched ${Date.now()}</p>`, { type: 'now' });
    const uri = `herald://posts/${post.postId}`;
    await client.subscribeResource({ uri });
    await client.unsubscribeResource({ uri });
    await publishUntilSettled(herald, post.postId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(updated).toEqual([]);
  });

  it('reaches a session held by another Herald process, through the session\'s stored stream', async () => {
    // A second process on the same database: its own ORM, services, event bus, MCP sessions and HTTP server.
    const orm = await openDatabase(herald.databaseUrl, { migrate: false });
    const config = { ...herald.services.config };
    const services = await buildServices(config, { orm, secrets: herald.services.secrets, logger: createLogger('silent'), now: () => new Date() });
    const sessions = new McpSessions(services);
    const server = createApp(services, sessions).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    config.publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const elsewhere = await connect(config.publicUrl);
      const updated: string[] = [];
      elsewhere.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updated.push(notification.params.uri));
      const post = await schedule(elsewhere, `<p>published by the other process ${Date.now()}</p>`, { type: 'now' });
      const uri = `herald://posts/${post.postId}`;
      await elsewhere.subscribeResource({ uri });
      // The subscription is in the session's row, readable by any process.
      const [row] = await herald.services.orm.em.fork().getConnection().execute<{ state: { subscriptions?: Record<string, string> } }[]>(
        `select state from mcp_session where jsonb_exists(state->'subscriptions', ?)`,
        [uri],
      );
      expect(row.state.subscriptions?.[uri]).toBe(post.postId);
      // The first process publishes: the update is stored on the session's stream and its holder, the second process, sends it.
      await publishUntilSettled(herald, post.postId);
      await waitFor(async () => (updated.includes(uri) ? true : undefined), 10_000);
      expect(updated).toEqual([uri]);
    } finally {
      await sessions.closeAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await orm.close();
    }
  });
});
