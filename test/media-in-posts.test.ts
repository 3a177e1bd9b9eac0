// Media in posts end to end: library files (by id, or by our own path) and a client's own URL, resolved at validation, the
// platforms' media rules checked there (REST 400, MCP {errors}), and the bytes delivered to the fake platforms' media endpoints.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PostSchema } from '../src/db/entities.js';
import { publishChain } from '../tools/internal/publish.js';
import type { PlanEntry } from '../tools/internal/create-posts.js';
import { mediaByUrlWarnings } from '../tools/internal/entry-warnings.js';
import { publicReachabilityWarning } from '../tools/internal/media.js';
import { providers } from '../providers/index.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { connectFakeChannels } from './helpers/channels.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { acceptedSamples, goodMp4, upload } from './helpers/media-samples.js';
import { tinyPng } from './helpers/provider-context.js';

let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let telegram: TelegramFake;
let mediaServer: http.Server;
let mediaOrigin: string;
let client: Client;
const channel = { bluesky: '', mastodon: '', telegram: '' };
const png = tinyPng();
const jpeg = acceptedSamples()[0].bytes;

interface Uploaded {
  id: string;
  path: string;
}
const library: Record<'png' | 'jpeg' | 'mp4', Uploaded> = { png: { id: '', path: '' }, jpeg: { id: '', path: '' }, mp4: { id: '', path: '' } };

beforeAll(async () => {
  [bluesky, mastodon, telegram] = await Promise.all([startBlueskyFake(), startMastodonFake(), startTelegramFake()]);
  // A client's own media host: loopback, so the guard is relaxed for loopback only in this file.
  mediaServer = http.createServer((request, response) => {
    if (request.url === '/client/cat.jpg') {
      response.writeHead(200, { 'content-type': 'image/jpeg' });
      response.end(jpeg);
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => mediaServer.listen(0, '127.0.0.1', resolve));
  mediaOrigin = `http://127.0.0.1:${(mediaServer.address() as AddressInfo).port}`;
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) }, { guard: { allowLoopback: true } });
  Object.assign(channel, await connectFakeChannels(herald, { bluesky, mastodon, telegram }));
  for (const [key, bytes, name] of [['png', png, 'dot.png'], ['jpeg', jpeg, 'red.jpg'], ['mp4', goodMp4(), 'clip.mp4']] as const) {
    const response = await upload(herald.restUrl, herald.apiKey, bytes, name);
    expect(response.status).toBe(200);
    library[key] = { id: response.body.id, path: response.body.path };
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  client = new Client({ name: 'media-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await Promise.all([bluesky?.close(), mastodon?.close(), telegram?.close()]);
  mediaServer?.closeAllConnections();
  await new Promise((resolve) => mediaServer?.close(resolve));
});

type Image = { id: string; path: string; alt?: string };

const body = (integrationId: string, items: { content: string; image: Image[] }[], type = 'now') => ({
  type,
  date: new Date(Date.now() + 86400_000).toISOString(),
  shortLink: false,
  tags: [],
  posts: [{ integration: { id: integrationId }, value: items, settings: {} }],
});

/** Creates a post now (no worker in this file) and publishes its chain directly. */
async function publishNow(integrationId: string, items: { content: string; image: Image[] }[]) {
  const created = await herald.rest('POST', '/posts', body(integrationId, items));
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const rootId = created.body[0].postId as string;
  const outcome = await publishChain(herald.services, rootId);
  const root = await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: rootId });
  return { rootId, outcome, root };
}

describe('publishing media on each platform', () => {
  it('Bluesky: a library picture (by id) is uploaded as a blob and embedded with its aspect ratio', async () => {
    const { outcome, root } = await publishNow(channel.bluesky, [{ content: '<p>With a dot</p>', image: [{ ...library.png, alt: 'A red dot' }] }]);
    expect(outcome).toEqual({ kind: 'published' });
    expect(root.media).toEqual([{ id: library.png.id, path: library.png.path, type: 'image/png', alt: 'A red dot' }]);
    const blob = bluesky.blobs.at(-1)!;
    expect(blob.bytes.equals(png)).toBe(true);
    expect(blob.mimeType).toBe('image/png');
    const embed = bluesky.records.at(-1)!.record.embed;
    expect(embed.$type).toBe('app.bsky.embed.images');
    expect(embed.images).toEqual([{ alt: 'A red dot', image: expect.objectContaining({ $type: 'blob', mimeType: 'image/png' }), aspectRatio: { width: 1, height: 1 } }]);
  });

  it('Bluesky: a client URL with a made-up id is fetched through the guard at publish time', async () => {
    const { outcome, root } = await publishNow(channel.bluesky, [{ content: '<p>Cat</p>', image: [{ id: 'client-made-up-1', path: `${mediaOrigin}/client/cat.jpg` }] }]);
    expect(outcome).toEqual({ kind: 'published' });
    expect(root.media).toEqual([{ id: 'client-made-up-1', path: `${mediaOrigin}/client/cat.jpg` }]);
    expect(bluesky.blobs.at(-1)!.bytes.equals(jpeg)).toBe(true);
    expect(bluesky.blobs.at(-1)!.mimeType).toBe('image/jpeg');
  });

  it('Mastodon: pictures and a video go to POST /api/v2/media, then their ids to the status', async () => {
    const pictures = await publishNow(channel.mastodon, [{ content: '<p>Two pictures</p>', image: [library.png, library.jpeg] }]);
    expect(pictures.outcome).toEqual({ kind: 'published' });
    const [first, second] = mastodon.media.slice(-2);
    expect(first.bytes.equals(png)).toBe(true);
    expect(first.mimeType).toBe('image/png');
    expect(second.bytes.equals(jpeg)).toBe(true);
    expect(mastodon.statuses.at(-1)!.media_ids).toEqual([first.id, second.id]);

    const video = await publishNow(channel.mastodon, [{ content: '<p>A clip</p>', image: [library.mp4] }]);
    expect(video.outcome).toEqual({ kind: 'published' });
    const uploaded = mastodon.media.at(-1)!;
    expect(uploaded.mimeType).toBe('video/mp4');
    expect(uploaded.bytes.equals(goodMp4())).toBe(true);
    expect(uploaded.filename).toMatch(/^[0-9a-f]{32}\.mp4$/);
    expect(mastodon.statuses.at(-1)!.media_ids).toEqual([uploaded.id]);
  });

  it('Telegram: one picture is sendPhoto, several are one sendMediaGroup album with the caption on the first', async () => {
    const single = await publishNow(channel.telegram, [{ content: '<p>One</p>', image: [library.jpeg] }]);
    expect(single.outcome).toEqual({ kind: 'published' });
    expect(telegram.messages.at(-1)!.photo!.bytes.equals(jpeg)).toBe(true);
    expect(telegram.server.requestsTo('POST', `/bot${telegram.token}/sendPhoto`)).toHaveLength(1);

    const album = await publishNow(channel.telegram, [{ content: '<p>Album</p>', image: [library.png, library.jpeg] }]);
    expect(album.outcome).toEqual({ kind: 'published' });
    const [a, b] = telegram.messages.slice(-2);
    expect(a.photo!.bytes.equals(png)).toBe(true);
    expect(b.photo!.bytes.equals(jpeg)).toBe(true);
    expect(a.media_group_id).toBeDefined();
    expect(a.media_group_id).toBe(b.media_group_id);
    expect(a.caption).toBe('Album');
  });

  it('MCP: an attachment that is our own upload URL uses the stored file, not an HTTP fetch', async () => {
    const result: any = await client.callTool({
      name: 'schedulePostTool',
      arguments: {
        socialPost: [
          {
            integrationId: channel.bluesky,
            isPremium: false,
            date: new Date().toISOString(),
            shortLink: false,
            type: 'now',
            postsAndComments: [{ content: '<p>From an agent</p>', attachments: [library.jpeg.path] }],
            settings: [],
          },
        ],
      },
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const rootId = result.structuredContent.output[0].postId;
    const root = await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: rootId });
    expect(root.media).toEqual([{ id: library.jpeg.id, path: library.jpeg.path, type: 'image/jpeg' }]);
    expect(await publishChain(herald.services, rootId)).toEqual({ kind: 'published' });
    expect(bluesky.blobs.at(-1)!.bytes.equals(jpeg)).toBe(true);
  });

  it('media deleted from the library after scheduling fails the item with a clear message', async () => {
    const doomed = (await upload(herald.restUrl, herald.apiKey, png, 'doomed.png')).body;
    const created = await herald.rest('POST', '/posts', body(channel.mastodon, [{ content: '<p>Soon gone</p>', image: [{ id: doomed.id, path: doomed.path }] }]));
    expect(created.status).toBe(200);
    expect((await herald.rest('DELETE', `/media/${doomed.id}`)).status).toBe(200);
    const outcome = await publishChain(herald.services, created.body[0].postId);
    expect(outcome.kind).toBe('failed');
    expect((outcome as { error: string }).error).toContain('was deleted from the media library');
  });
});

describe('validation of media items', () => {
  it('an item with neither a media id of this organization nor an http(s) path is 400 naming the item', async () => {
    const response = await herald.rest('POST', '/posts', body(channel.bluesky, [{ content: '<p>x</p>', image: [{ id: 'made-up', path: '/uploads/x.png' }] }]));
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('media "made-up" is neither a media id of this organization nor an http(s) URL');
    const second = await herald.rest('POST', '/posts', body(channel.bluesky, [{ content: '<p>one</p>', image: [] }, { content: '<p>two</p>', image: [{ id: 'x', path: 'ftp://h/x.png' }] }]));
    expect(second.status).toBe(400);
    expect(second.body.message).toContain('item 2: media "x" is neither');
  });

  it('a media id of another organization is not usable', async () => {
    const other = await herald.newOrganization('Other');
    const theirs = (await upload(herald.restUrl, other.apiKey, png, 'theirs.png')).body;
    const response = await herald.rest('POST', '/posts', body(channel.bluesky, [{ content: '<p>x</p>', image: [{ id: theirs.id, path: 'relative/path.png' }] }]));
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(`media "${theirs.id}" is neither`);
  });

  it.each([
    ['bluesky', 'five pictures', () => Array.from({ length: 5 }, () => library.png), 'There can be maximum 4 pictures in a post.'],
    ['bluesky', 'a video with a picture', () => [library.mp4, library.png], 'A Bluesky post carries one video alone'],
    ['mastodon', 'a video with a picture', () => [library.mp4, library.png], 'Mastodon allows a video only on its own'],
    ['mastodon', 'five pictures', () => Array.from({ length: 5 }, () => library.jpeg), 'Mastodon instance allows at most 4 attachments per post'],
    ['telegram', 'eleven pictures and videos', () => Array.from({ length: 11 }, (_, index) => (index % 2 ? library.mp4 : library.png)), 'Telegram takes at most 10 pictures and videos'],
    ['telegram', 'eleven pictures', () => Array.from({ length: 11 }, () => library.png), 'Telegram takes at most 10 pictures'],
  ] as const)('%s with %s: REST 400 and MCP {errors} carry the platform rule', async (platform, _label, images, rule) => {
    const integrationId = channel[platform];
    const rest = await herald.rest('POST', '/posts', body(integrationId, [{ content: '<p>media</p>', image: images() }]));
    expect(rest.status).toBe(400);
    expect(rest.body.message).toContain(rule);
    const mcp: any = await client.callTool({
      name: 'schedulePostTool',
      arguments: {
        socialPost: [
          {
            integrationId,
            isPremium: false,
            date: new Date(Date.now() + 86400_000).toISOString(),
            shortLink: false,
            type: 'schedule',
            postsAndComments: [{ content: '<p>media</p>', attachments: images().map((image) => image.path) }],
            settings: [],
          },
        ],
      },
    });
    expect(mcp.isError).toBe(true);
    expect(mcp.structuredContent.output.errors).toContain(rule);
  });

  it('the media kind of a library file comes from its detected type, not its URL', async () => {
    // The same video under a URL without a video extension is still a video for the rules.
    const response = await herald.rest('POST', '/posts', body(channel.bluesky, [{ content: '<p>x</p>', image: [{ id: library.mp4.id, path: 'https://elsewhere.example/clip' }, library.png] }]));
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('A Bluesky post carries one video alone');
  });
});

describe('at publish time, the guard applies to client URLs', () => {
  it('a client URL on a private address fails the item with "fetch failed"; a library file is read from storage (default guard)', async () => {
    const strict = await startHerald();
    try {
      const fake = await startBlueskyFake();
      try {
        const connected = await strict.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
        const created = await strict.rest('POST', '/posts', body(connected.body.id, [{ content: '<p>x</p>', image: [{ id: 'm', path: `${mediaOrigin}/client/cat.jpg` }] }]));
        expect(created.status).toBe(200);
        const outcome = await publishChain(strict.services, created.body[0].postId);
        expect(outcome.kind).toBe('failed');
        expect((outcome as { error: string }).error).toContain('fetch failed: 127.0.0.1 is a blocked address (loopback)');
        expect(fake.blobs).toHaveLength(0);
        expect(fake.records).toHaveLength(0);
        // A library file still publishes there: it is read from storage, never fetched back from our loopback PUBLIC_URL.
        const stored = (await upload(strict.restUrl, strict.apiKey, png, 'dot.png')).body;
        const fromLibrary = await strict.rest('POST', '/posts', body(connected.body.id, [{ content: '<p>y</p>', image: [{ id: stored.id, path: stored.path }] }]));
        expect(await publishChain(strict.services, fromLibrary.body[0].postId)).toEqual({ kind: 'published' });
        expect(fake.blobs).toHaveLength(1);
        expect(fake.blobs[0].bytes.equals(png)).toBe(true);
      } finally {
        await fake.close();
      }
    } finally {
      await strict.stop();
    }
  });
});

describe('platforms that pull media by URL need a public PUBLIC_URL', () => {
  const entry = (path: string): PlanEntry => ({
    integrationId: 'x',
    type: 'schedule',
    shortLink: false,
    groupKey: 0,
    settings: {},
    items: [{ content: 'x', delay: 0, media: [{ id: 'm', path }] }],
  });
  const provider = (identifier: string) => providers.find((candidate) => candidate.identifier === identifier)!;

  it('warns for URL-pulling platforms when media are on a loopback, private or plain-http address, never for upload platforms', () => {
    for (const identifier of ['instagram', 'instagram-standalone', 'threads', 'tiktok']) {
      const warnings = mediaByUrlWarnings(provider(identifier), entry('http://localhost:3000/uploads/2026/01/01/a.png'));
      expect(warnings, identifier).toEqual([expect.stringContaining('which platforms cannot reach')]);
    }
    expect(mediaByUrlWarnings(provider('instagram'), entry('http://192.168.1.20/uploads/a.png'))).toHaveLength(1);
    expect(mediaByUrlWarnings(provider('instagram'), entry('http://media.example.com/a.png'))).toEqual([expect.stringContaining('plain http')]);
    expect(mediaByUrlWarnings(provider('instagram'), entry('https://media.example.com/a.png'))).toEqual([]);
    // Pinterest pulls pictures by URL only when the URL is public https, and receives them inline otherwise.
    for (const identifier of ['bluesky', 'mastodon', 'telegram', 'pinterest']) expect(mediaByUrlWarnings(provider(identifier), entry('http://localhost/a.png'))).toEqual([]);
    expect(publicReachabilityWarning('https://herald.example.com/uploads/a.png')).toBeUndefined();
  });
});
