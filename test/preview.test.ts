// Dry run: POST /posts/validate and validatePostTool answer what each platform would receive, counted the platform's way,
// with every refusal named, and store nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { tinyPng } from './helpers/provider-context.js';
import { upload } from './helpers/media-samples.js';
import { PostSchema } from '../src/db/entities.js';
import { findProvider } from '../providers/index.js';
import { saveConnectedAccount } from '../tools/internal/integrations.js';

let herald: Herald;
let client: Client;
const channel: Record<'x' | 'bluesky' | 'devto', string> = { x: '', bluesky: '', devto: '' };
const date = new Date(Date.now() + 5 * 86_400_000).toISOString();

async function connect(identifier: string, name: string): Promise<string> {
  const em = herald.services.orm.em.fork();
  const integration = await saveConnectedAccount(em, herald.services, herald.organizationId, findProvider(identifier)!, {
    internalId: `${identifier}-1`,
    name,
    profile: name.toLowerCase(),
    accessToken: 'token',
    refreshToken: 'refresh',
    data: { username: 'herald' },
  });
  return integration.id;
}

const restBody = (integrationId: string, contents: string[], options: { settings?: Record<string, unknown>; image?: { id: string; path: string }[]; shortLink?: boolean } = {}) => ({
  type: 'schedule',
  date,
  shortLink: options.shortLink ?? false,
  tags: [],
  posts: [
    { integration: { id: integrationId }, value: contents.map((content, index) => ({ content, image: index === 0 ? (options.image ?? []) : [] })), settings: options.settings ?? {} },
  ],
});

const countPosts = () => herald.services.orm.em.fork().count(PostSchema, { organizationId: herald.organizationId });

beforeAll(async () => {
  herald = await startHerald();
  channel.x = await connect('x', 'Herald on X');
  channel.bluesky = await connect('bluesky', 'Herald on Bluesky');
  channel.devto = await connect('devto', 'Herald on DEV');
  client = new Client({ name: 'preview-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
});

describe('POST /posts/validate', () => {
  it('X: the plain text X posts, counted with weighted length (a URL is 23, CJK and bold letters 2), nothing stored', async () => {
    const before = await countPosts();
    const url = 'https://example.com/a/very/long/path/that/x/counts/as/twenty-three';
    const response = await herald.rest('POST', '/posts/validate', restBody(channel.x, [`<p>Launch <strong>day</strong></p><p>日本語 ${url}</p>`], { settings: { who_can_reply_post: 'everyone' } }));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const [entry] = response.body.entries;
    expect(response.body.valid).toBe(true);
    expect(entry).toMatchObject({ integrationId: channel.x, channel: 'Herald on X', platform: 'x', valid: true, state: 'QUEUE', maxLength: 280, lengthMethod: 'twitter' });
    expect(entry.items[0].visibleText).toBe(`Launch 𝗱𝗮𝘆\n日本語 ${url}`);
    // "Launch " 7 + 3 bold letters × 2 + "\n" 1 + 3 CJK × 2 + " " 1 + URL 23
    expect(entry.items[0].length).toBe(7 + 6 + 1 + 6 + 1 + 23);
    expect(entry.items[0].withinLimit).toBe(true);
    expect(entry.settings).toEqual({ valid: true, values: { who_can_reply_post: 'everyone' } });
    expect(entry.slot.date).toBe(date);
    expect(entry.slot.takenBy).toEqual([]);
    expect(entry.slot.nextFreeSlot).toEqual(expect.any(String));
    expect(await countPosts()).toBe(before);
  });

  it('X: over 280 weighted characters is refused with the count, settings checked against the schema', async () => {
    const response = await herald.rest('POST', '/posts/validate', restBody(channel.x, [`<p>${'日'.repeat(141)}</p>`], { settings: { who_can_reply_post: 'nobody' } }));
    const [entry] = response.body.entries;
    expect(response.body.valid).toBe(false);
    expect(entry.items[0].length).toBe(282);
    expect(entry.items[0].withinLimit).toBe(false);
    expect(entry.settings.valid).toBe(false);
    expect(entry.settings.problem).toMatch(/^settings\.who_can_reply_post: /);
    expect(entry.problem).toMatch(/^settings\.who_can_reply_post: .*call integrationSchema/);
    expect(response.body.errors).toBe(`Herald on X (x, id ${channel.x}): ${entry.problem}`);
  });

  it('Bluesky: length in graphemes (a family emoji is one), and the 3000-byte rule named', async () => {
    const family = '👨‍👩‍👧‍👦';
    const short = await herald.rest('POST', '/posts/validate', restBody(channel.bluesky, [`<p>${family} é</p>`]));
    expect(short.body.entries[0].items[0]).toMatchObject({ text: `${family} é`, visibleText: `${family} é`, length: 3, withinLimit: true });
    expect(short.body.entries[0].maxLength).toBe(300);
    expect(short.body.entries[0].lengthMethod).toBe('graphemes');

    const heavy = await herald.rest('POST', '/posts/validate', restBody(channel.bluesky, [family.repeat(300)]));
    const [entry] = heavy.body.entries;
    expect(entry.items[0].length).toBe(300);
    expect(entry.items[0].withinLimit).toBe(true);
    expect(entry.valid).toBe(false);
    expect(entry.problem).toBe('The post is 7500 bytes long; Bluesky takes at most 3000 bytes of text (an emoji takes 4 or more): shorten it.');
  });

  it('Bluesky: each attachment accepted or refused with the rule; a library picture is measured', async () => {
    const picture = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
    expect(picture.status).toBe(200);
    const video = { id: 'clip', path: 'https://cdn.example.com/clip.mp4' };
    const response = await herald.rest('POST', '/posts/validate', restBody(channel.bluesky, ['<p>With media</p>'], { image: [{ id: picture.body.id, path: picture.body.path }, video] }));
    const [entry] = response.body.entries;
    const [png, mp4] = entry.items[0].media;
    expect(png).toMatchObject({ id: picture.body.id, kind: 'image', source: 'library', type: 'image/png', accepted: true });
    expect(png.size).toBe(tinyPng().length);
    // Each attachment alone is one Bluesky takes (a picture, or a video); together they break the one-video-alone rule.
    expect(mp4).toMatchObject({ id: 'clip', kind: 'video', source: 'url', accepted: true });
    expect(entry.valid).toBe(false);
    expect(entry.problem).toMatch(/one video alone: no second video and no pictures with it/);
  });

  it('an article platform: the Markdown it receives, and its settings refused with the field', async () => {
    const response = await herald.rest('POST', '/posts/validate', restBody(channel.devto, ['<h1>Release notes</h1><p>We shipped <strong>webhooks</strong>.</p><ul><li>one</li><li>two</li></ul>']));
    const [entry] = response.body.entries;
    expect(entry.platform).toBe('devto');
    expect(entry.items[0].text).toBe('# Release notes\n\nWe shipped **webhooks**.\n\n- one\n- two');
    expect(entry.items[0].length).toBe(entry.items[0].text.length);
    expect(entry.settings.valid).toBe(false);
    // A required setting left out is called missing, not "Invalid input".
    expect(entry.settings.problem).toMatch(/^settings\.title is missing; it is required/);
    expect(entry.problem).toMatch(/^settings\.title is missing; it is required/);
  });

  it('counts links in their short form when shortLink is true, so a long link fits', async () => {
    const long = `https://example.com/${'a'.repeat(290)}`;
    const plain = await herald.rest('POST', '/posts/validate', restBody(channel.bluesky, [`<p>Read ${long}</p>`]));
    expect(plain.body.entries[0].items[0].withinLimit).toBe(false);
    const shortened = await herald.rest('POST', '/posts/validate', restBody(channel.bluesky, [`<p>Read ${long}</p>`], { shortLink: true }));
    const [entry] = shortened.body.entries;
    expect(entry.valid).toBe(true);
    expect(entry.items[0].text).toBe(`Read ${herald.url}/l/xxxxxxx`);
    expect(entry.items[0].length).toBe(`Read ${herald.url}/l/xxxxxxx`.length);
    expect(entry.warnings[0]).toContain('will be shortened');
  });

  it('names a channel that is not in the organization, and the slot a scheduled post would share', async () => {
    const created = await herald.rest('POST', '/posts', restBody(channel.bluesky, ['<p>Taken slot</p>']));
    expect(created.status).toBe(200);
    const response = await herald.rest('POST', '/posts/validate', {
      ...restBody(channel.bluesky, ['<p>Same minute</p>']),
      posts: [...restBody(channel.bluesky, ['<p>Same minute</p>']).posts, { integration: { id: 'missing' }, value: [{ content: 'x', image: [] }] }],
    });
    const [same, missing] = response.body.entries;
    expect(same.slot.takenBy).toEqual([created.body[0].postId]);
    expect(same.warnings).toContain('This channel already has a post at that minute.');
    expect(missing).toMatchObject({ integrationId: 'missing', valid: false, items: [] });
    expect(missing.problem).toContain('channel not found');
  });
});

describe('validatePostTool (MCP)', () => {
  it('takes schedulePostTool arguments and answers the same preview as REST', async () => {
    const result: any = await client.callTool({
      name: 'validatePostTool',
      arguments: {
        socialPost: [
          {
            integrationId: channel.x,
            isPremium: false,
            date,
            shortLink: false,
            type: 'draft',
            postsAndComments: [{ content: '<p>One</p>', attachments: [] }, { content: '<p>Two</p>', attachments: [] }],
            settings: [{ key: 'who_can_reply_post', value: 'followers' }],
          },
        ],
      },
    });
    expect(result.isError).toBeFalsy();
    const preview = result.structuredContent;
    expect(preview.valid).toBe(true);
    expect(preview.entries[0].state).toBe('DRAFT');
    expect(preview.entries[0].items.map((item: { visibleText: string }) => item.visibleText)).toEqual(['One', 'Two']);
    const tools = await client.listTools();
    const schedule = tools.tools.find((tool) => tool.name === 'schedulePostTool')!;
    expect(schedule.description).toContain('validatePostTool with the same arguments');
    expect(tools.tools.find((tool) => tool.name === 'validatePostTool')!.annotations?.readOnlyHint).toBe(true);
  });
});
