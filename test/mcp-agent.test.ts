// Issue 33: the calls an agent makes with only Herald's MCP tools, each of which failed or misled before: inputs that meant
// nothing, errors that said the wrong thing, ids the tools hand out refused, a preview that was not what the platform
// receives, no way to learn or set the organization's zone, and a tools/list that cost 55 KB every turn.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { tinyPng } from './helpers/provider-context.js';
import { uploaded } from './helpers/media-samples.js';
import { findProvider } from '../providers/index.js';
import { saveConnectedAccount } from '../tools/internal/integrations.js';
import { PostSchema } from '../src/db/entities.js';
import { toolByName } from '../tools/index.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { publishedPost } from './helpers/posts.js';

/** The size budget of tools/list for an agent key (read + posts:write): a contract, so a test, not a bench. */
const AGENT_TOOLS_LIST_BUDGET = 24_000;

let herald: Herald;
let agent: Client;
let bluesky: BlueskyFake;
const channel: Record<'x' | 'bluesky' | 'telegram' | 'linkedin', string> = { x: '', bluesky: '', telegram: '', linkedin: '' };
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function connect(identifier: string, name: string): Promise<string> {
  const em = herald.services.orm.em.fork();
  const integration = await saveConnectedAccount(em, herald.services, herald.organizationId, findProvider(identifier)!, {
    internalId: `${identifier}-agent`,
    name,
    profile: 'herald',
    accessToken: 'token',
    refreshToken: 'refresh',
    data: { username: 'herald', botToken: '1:abc', chatId: '@herald' },
  });
  return integration.id;
}

async function call(name: string, args: Record<string, unknown>): Promise<any> {
  return agent.callTool({ name, arguments: args });
}

const textOf = (result: any): string => result.content.find((item: any) => item.type === 'text').text;

beforeAll(async () => {
  herald = await startHerald();
  // Two channels share a name, as they did in the report ("Herald Test").
  channel.x = await connect('x', 'Herald Test');
  channel.bluesky = await connect('bluesky', 'Herald Test');
  channel.telegram = await connect('telegram', 'Herald news');
  channel.linkedin = await connect('linkedin', 'Herald on LinkedIn');
  const key = await herald.rest('POST', '/keys', { name: 'the agent' });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  agent = new Client({ name: 'agent', version: '1.0.0' });
  await agent.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key.body.secret}` } } }));
});

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await herald?.stop();
  await bluesky?.close();
});

describe('the tool surface an agent key pays for every turn', () => {
  it(`tools/list for an agent key is at most ${AGENT_TOOLS_LIST_BUDGET} bytes, with every tool described and validatePostTool's input named by reference`, async () => {
    const listed = await agent.listTools();
    const bytes = Buffer.byteLength(JSON.stringify(listed));
    expect(bytes).toBeLessThanOrEqual(AGENT_TOOLS_LIST_BUDGET);
    const byName = new Map(listed.tools.map((tool) => [tool.name, tool]));
    expect(byName.has('timeZoneTool')).toBe(true);
    const validate = byName.get('validatePostTool')!;
    expect((validate.inputSchema.properties as any).socialPost.description).toBe("Exactly schedulePostTool's socialPost");
    expect(validate.description).toMatch(/text, exactly what the platform receives \(Telegram HTML, X plain text\); visibleText/);
    // Output schemas are listed as objects (the structured content conforms); no listed schema constrains nothing.
    for (const tool of listed.tools) expect(tool.outputSchema, tool.name).toEqual({ type: 'object' });
    const empty = (node: unknown, at: string): string[] =>
      !node || typeof node !== 'object'
        ? []
        : Array.isArray(node)
          ? node.flatMap((item, index) => empty(item, `${at}[${index}]`))
          : [
              ...(Object.keys(node).length === 0 ? [at] : []),
              ...Object.entries(node).flatMap(([key, value]) => (key === 'properties' ? Object.entries(value as object).flatMap(([name, property]) => empty(property, `${at}.${name}`)) : empty(value, `${at}.${key}`))),
            ];
    expect(listed.tools.flatMap((tool) => empty(tool.inputSchema, tool.name))).toEqual([]);
  });

  it('an unknown tool is answered with the tools this key may call, not deleteIntegration', async () => {
    const result = await call('deleteChannelTool', {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Unknown tool "deleteChannelTool"/);
    expect(textOf(result)).toContain('schedulePostTool');
    expect(textOf(result)).not.toContain('deleteIntegration');
  });

  it('integrationSchema needs only the platform (isPremium is read from X)', async () => {
    const result = await call('integrationSchema', { platform: 'x' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent.output.maxLength).toBe(280);
    expect(JSON.stringify(result.structuredContent.output.settings.required ?? [])).not.toContain('who_can_reply_post');
  });
});

describe('schedulePostTool without boilerplate', () => {
  it('takes an item with only integrationId, type, date and postsAndComments (no isPremium, shortLink, settings, attachments), and X without who_can_reply_post', async () => {
    const result = await call('schedulePostTool', {
      socialPost: [
        { integrationId: channel.x, type: 'schedule', date: inDays(3), postsAndComments: [{ content: '<p>Thread, part one</p>' }, { content: '<p>Part two</p>' }] },
        { integrationId: channel.bluesky, type: 'schedule', date: inDays(3), postsAndComments: [{ content: '<p>Thread, part one</p>' }] },
      ],
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent.output).toHaveLength(2);
  });

  it('type "now" needs no date', async () => {
    const result = await call('schedulePostTool', { socialPost: [{ integrationId: channel.bluesky, type: 'now', postsAndComments: [{ content: `<p>Right now ${Date.now()}</p>` }] }] });
    expect(result.isError, textOf(result)).toBeFalsy();
    const post = await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: result.structuredContent.output[0].postId });
    expect(Math.abs(post.publishDate.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('a scheduled item without a date is refused with what to send', async () => {
    const result = await call('schedulePostTool', { socialPost: [{ integrationId: channel.bluesky, type: 'schedule', postsAndComments: [{ content: '<p>When?</p>' }] }] });
    expect(result.isError).toBe(true);
    expect(result.structuredContent.output.errors).toMatch(/a date is required .*2026-12-01T09:00:00Z/);
  });

  it('an error names the channel by name, platform and id (two channels share "Herald Test"), and a thread platform is told it may split the text', async () => {
    const result = await call('schedulePostTool', { socialPost: [{ integrationId: channel.bluesky, type: 'schedule', date: inDays(3), postsAndComments: [{ content: `<p>${'word '.repeat(70)}</p>` }] }] });
    expect(result.isError).toBe(true);
    const errors: string = result.structuredContent.output.errors;
    expect(errors.startsWith(`Herald Test (bluesky, id ${channel.bluesky}): `)).toBe(true);
    expect(errors).toMatch(/shorten the text or split it into several items of postsAndComments/);
  });

  it('a media id from an upload (or generateImageTool) is taken alone or as {id, path}; an unknown one is named as sent', async () => {
    const picture = await uploaded(herald, tinyPng(), 'dot.png');
    for (const attachment of [picture.id, picture, picture.path]) {
      const result = await call('schedulePostTool', {
        socialPost: [{ integrationId: channel.linkedin, type: 'draft', date: inDays(4), postsAndComments: [{ content: `<p>With a picture ${JSON.stringify(attachment).length}</p>`, attachments: [attachment] }] }],
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const post = await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: result.structuredContent.output[0].postId });
      expect(post.media).toEqual([expect.objectContaining({ id: picture.id, path: picture.path, type: 'image/png' })]);
    }
    const unknown = await call('schedulePostTool', {
      socialPost: [{ integrationId: channel.linkedin, type: 'draft', date: inDays(4), postsAndComments: [{ content: '<p>Lost picture</p>', attachments: ['no-such-media'] }] }],
    });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent.output.errors).toContain('media "no-such-media" is neither a media id of this organization nor an http(s) URL');
  });

  it('updatePost takes media as schedulePostTool does (a media id), and changes only that channel\'s post', async () => {
    const picture = await uploaded(herald, tinyPng(), 'edit.png');
    const created = await call('schedulePostTool', {
      socialPost: [
        { integrationId: channel.linkedin, type: 'draft', date: inDays(6), postsAndComments: [{ content: '<p>Edit me</p>' }] },
        { integrationId: channel.bluesky, type: 'draft', date: inDays(6), postsAndComments: [{ content: '<p>Leave me</p>' }] },
      ],
    });
    const [linkedin, bluesky] = created.structuredContent.output;
    const edited = await call('updatePost', { id: linkedin.postId, value: [{ content: '<p>Edited</p>', image: [picture.id] }] });
    expect(edited.isError, textOf(edited)).toBeFalsy();
    const em = herald.services.orm.em.fork();
    expect((await em.findOneOrFail(PostSchema, { id: linkedin.postId })).media).toEqual([expect.objectContaining({ id: picture.id })]);
    expect((await em.findOneOrFail(PostSchema, { id: bluesky.postId })).content).toBe('<p>Leave me</p>');
  });
});

describe('the preview is what the platform receives', () => {
  it('Telegram: text is the HTML the bot sends, visibleText what readers see (bold is bold, not Unicode letters), counted on that', async () => {
    const result = await call('validatePostTool', { socialPost: [{ integrationId: channel.telegram, type: 'now', postsAndComments: [{ content: '<p><strong>Release day.</strong> Version 2 is out &amp; ready</p>' }] }] });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [item] = result.structuredContent.entries[0].items;
    expect(item.text).toBe('<strong>Release day.</strong> Version 2 is out &amp; ready');
    expect(item.visibleText).toBe('Release day. Version 2 is out & ready');
    expect(item.length).toBe('Release day. Version 2 is out & ready'.length);
  });

  it('X: text is the plain text X receives, not HTML', async () => {
    const result = await call('validatePostTool', { socialPost: [{ integrationId: channel.x, type: 'now', postsAndComments: [{ content: '<p>Launch <strong>day</strong></p>' }] }] });
    const [item] = result.structuredContent.entries[0].items;
    expect(item.text).toBe('Launch 𝗱𝗮𝘆');
    expect(item.visibleText).toBe(item.text);
  });

  it('a required setting left out is called missing, with its choices', async () => {
    const pinterest = await connect('pinterest', 'Herald pins');
    const result = await call('validatePostTool', { socialPost: [{ integrationId: pinterest, type: 'now', postsAndComments: [{ content: '<p>A pin</p>' }] }] });
    expect(result.structuredContent.entries[0].problem).toMatch(/^settings\.board is missing; it is required/);
  });
});

describe("the organization's time zone", () => {
  it('timeZoneTool reads and sets it; findSlotTool then answers the slot in it as well as in UTC', async () => {
    const read = await call('timeZoneTool', {});
    expect(read.structuredContent).toMatchObject({ timeZone: 'UTC', changed: false });
    const set = await call('timeZoneTool', { timeZone: 'America/New_York' });
    expect(set.structuredContent).toMatchObject({ timeZone: 'America/New_York', changed: true });
    expect(set.structuredContent.now).toMatch(/-0[45]:00$/);
    const bad = await call('timeZoneTool', { timeZone: '+02:00' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/not an IANA time zone/);
    const slot = await call('findSlotTool', { id: channel.linkedin });
    expect(slot.isError, textOf(slot)).toBeFalsy();
    expect(slot.structuredContent.timeZone).toBe('America/New_York');
    expect(slot.structuredContent.localDate).toMatch(/-0[45]:00$/);
    expect(new Date(slot.structuredContent.localDate).getTime()).toBe(new Date(slot.structuredContent.date).getTime());
    await call('timeZoneTool', { timeZone: 'UTC' });
  });
});

describe('names that said the wrong thing', () => {
  it("analytics' `date` says it is a number of days, and a date there is refused saying so", async () => {
    const { tools } = await agent.listTools();
    for (const name of ['channelAnalyticsTool', 'analyticsOverviewTool', 'postAnalyticsTool']) {
      expect((tools.find((tool) => tool.name === name)!.inputSchema.properties as any).date.description, name).toMatch(/number of days .*not a date/);
    }
    const misread = await call('channelAnalyticsTool', { integration: channel.bluesky, date: '2026-12-01' });
    expect(textOf(misread)).toMatch(/^invalid_input.*date: must be a number of days, e\.g\. 7, 30 or 90/);
  });

  it('deleting a post alone says "Delete 1 post", never "The others will not be published"', async () => {
    const created = await call('schedulePostTool', {
      socialPost: [
        { integrationId: channel.linkedin, type: 'schedule', date: inDays(8), postsAndComments: [{ content: '<p>Delete me</p>' }] },
        { integrationId: channel.bluesky, type: 'schedule', date: inDays(8), postsAndComments: [{ content: '<p>Keep me</p>' }] },
      ],
    });
    const [doomed] = created.structuredContent.output;
    const asked = await call('deletePost', { id: doomed.postId });
    expect(asked.isError, textOf(asked)).toBeFalsy();
    const message: string = asked.structuredContent.message;
    // Each socialPost item is its own group: only this one post would go.
    expect(message).toMatch(/Delete 1 post \(group /);
    expect(message).not.toContain('The others');
    expect(message).toContain('It will not be published.');
  });
});

describe('analytics count what people did', () => {
  it("a thread's replies leave out the thread's own next item", async () => {
    bluesky = await startBlueskyFake();
    const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    const rootId = await publishedPost(herald, connected.body.id, ['<p>Thread one</p>', '<p>Thread two</p>', '<p>Thread three</p>']);
    const result = await call('postAnalyticsTool', { postId: rootId });
    expect(result.isError, textOf(result)).toBeFalsy();
    const replies = result.structuredContent.output.find((metric: any) => metric.label === 'Replies');
    // Bluesky counts one reply (the thread's second post, Herald's own): people wrote none.
    expect(replies.data.at(-1).total).toBe('0');
  });
});

describe('the skill and the Claude Code plugin', () => {
  it('SKILL.md has the frontmatter a skill needs and names only tools that exist (and timeZoneTool, validatePostTool, idempotencyKey)', () => {
    const skill = fs.readFileSync(new URL('../SKILL.md', import.meta.url), 'utf8');
    const front = /^---\nname: ([a-z0-9-]+)\ndescription: (.+)\n---\n/.exec(skill);
    expect(front?.[1]).toBe('herald');
    expect(front![2].length).toBeLessThanOrEqual(1024);
    const named = [...skill.matchAll(/`([a-z][A-Za-z]+(?:Tool|List|Schema))\b/g)].map((match) => match[1]).concat(['updatePost', 'deletePost', 'changePostStatus']);
    expect(named.length).toBeGreaterThan(10);
    for (const name of named) expect(toolByName.has(name), name).toBe(true);
    for (const step of ['timeZoneTool', 'validatePostTool', 'idempotencyKey', 'confirm: true']) expect(skill).toContain(step);
  });

  it('the plugin manifest connects to the MCP endpoint Herald serves, with the key from the environment', async () => {
    const manifest = JSON.parse(fs.readFileSync(new URL('../.claude-plugin/plugin.json', import.meta.url), 'utf8'));
    expect(manifest.name).toBe('herald');
    const server = manifest.mcpServers.herald;
    expect(server).toMatchObject({ type: 'http', headers: { Authorization: 'Bearer ${HERALD_API_KEY}' } });
    expect(server.url).toMatch(/\/api\/mcp$/);
    const key = (await herald.rest('POST', '/keys', { name: 'plugin' })).body.secret;
    const url = server.url.replace(/\$\{HERALD_URL:-[^}]*\}/, herald.url);
    const client = new Client({ name: 'plugin', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: server.headers.Authorization.replace('${HERALD_API_KEY}', key) } } }));
    expect((await client.listTools()).tools.some((tool) => tool.name === 'schedulePostTool')).toBe(true);
    await client.close();
  });
});
