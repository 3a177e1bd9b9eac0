// Signatures (issue 35): text added at the end or start of a post when it is created, a channel's own or the
// organization's default; added once (not on edit, not on each thread item, not on a replay), counted in the platform's
// length (X weighted, Bluesky graphemes), escaped like any user text; over REST, MCP and the preview.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { connectOAuthChannel } from './helpers/oauth-channel.js';
import { startXFake, type XFake } from './fakes/x.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { convertContent } from '../src/lib/content.js';
import { withSignature } from '../tools/internal/signature.js';

let herald: Herald;
let x: XFake;
let bluesky: BlueskyFake;
let xChannel: string;
let blueskyChannel: string;
let client: Client;
let serial = 0;
const later = () => new Date(Date.now() + 86_400_000 * (2 + serial++)).toISOString();

const itemsOf = async (rootId: string) =>
  herald.services.orm.em
    .fork()
    .getConnection()
    .execute<{ content: string; position: number; settings: Record<string, unknown> }[]>('select content, position, settings from post where root_post_id = ? and deleted_at is null order by position', [rootId]);
const plainOf = (html: string) => convertContent(html, 'plain');

/** POST /posts for one channel with these items (the first is the post); answers the response. */
const create = (channel: string, items: string[], extra: { settings?: Record<string, unknown>; headers?: Record<string, string> } = {}) =>
  herald.rest(
    'POST',
    '/posts',
    { type: 'schedule', date: later(), shortLink: false, tags: [], posts: [{ integration: { id: channel }, value: items.map((content) => ({ content, image: [] })), settings: extra.settings ?? {} }] },
    extra.headers,
  );

beforeAll(async () => {
  [x, bluesky] = await Promise.all([startXFake(), startBlueskyFake()]);
  herald = await startHerald({ X_CLIENT_ID: x.oauth.clientId, X_CLIENT_SECRET: x.oauth.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ x: { web: x.url, api: x.url } }) });
  xChannel = (await connectOAuthChannel(herald, 'x')).integrationId;
  blueskyChannel = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  client = new Client({ name: 'signatures-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
}, 120_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await x?.close();
  await bluesky?.close();
});

describe('withSignature', () => {
  const thread = { settings: {}, items: [{ content: '<p>One</p>' }, { content: '<p>Two</p>' }, { content: '<p>Three</p>' }] };
  it('goes on the last item of a thread at the end, on the first at the start, and on a comment platform\'s post itself', () => {
    const end = withSignature(thread, { chain: 'thread' }, { text: '— Ana', position: 'end' }).entry.items.map((item) => plainOf(item.content));
    expect(end).toEqual(['One', 'Two', 'Three\n— Ana']);
    const start = withSignature(thread, { chain: 'thread' }, { text: 'Ana:', position: 'start' }).entry.items.map((item) => plainOf(item.content));
    expect(start).toEqual(['Ana:\nOne', 'Two', 'Three']);
    const comments = withSignature(thread, { chain: 'comments' }, { text: '— Ana', position: 'end' }).entry.items.map((item) => plainOf(item.content));
    expect(comments).toEqual(['One\n— Ana', 'Two', 'Three']);
  });

  it('is not added to a text that already carries it, and settings.signature false leaves it out (and out of the settings)', () => {
    const signed = { settings: {}, items: [{ content: '<p>Hello</p><p>— Ana</p>' }] };
    expect(withSignature(signed, { chain: 'thread' }, { text: '— Ana', position: 'end' }).signature).toBeUndefined();
    const optedOut = withSignature({ settings: { signature: false, who: 1 }, items: [{ content: 'Hi' }] }, { chain: 'thread' }, { text: '— Ana', position: 'end' });
    expect(optedOut.signature).toBeUndefined();
    expect(optedOut.entry.settings).toEqual({ who: 1 });
    expect(optedOut.entry.items[0].content).toBe('Hi');
  });
});

describe('signatures over REST', () => {
  it('the default, then a channel\'s own overriding it; each stored once on the created post, shown by the preview', async () => {
    expect((await herald.rest('PUT', '/signatures/default', { text: 'Sent with Herald' })).body).toMatchObject({ channel: 'default', text: 'Sent with Herald', position: 'end' });
    const created = await create(blueskyChannel, ['<p>Hello there</p>']);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const [root] = await itemsOf(created.body[0].postId);
    expect(plainOf(root.content)).toBe('Hello there\nSent with Herald');

    const own = await herald.rest('PUT', `/signatures/${blueskyChannel}`, { text: '— The Bluesky team', position: 'end' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body).toMatchObject({ channel: blueskyChannel, channelName: expect.any(String) });
    const preview = await herald.rest('POST', '/posts/validate', { type: 'schedule', date: later(), shortLink: false, tags: [], posts: [{ integration: { id: blueskyChannel }, value: [{ content: '<p>Preview me</p>' }], settings: {} }] });
    expect(preview.body.entries[0].items[0].visibleText).toBe('Preview me\n— The Bluesky team');
    const onX = await create(xChannel, ['<p>On X</p>']);
    expect(plainOf((await itemsOf(onX.body[0].postId))[0].content)).toBe('On X\nSent with Herald');

    const listed = await herald.rest('GET', '/signatures');
    expect(listed.body.map((row: { channel: string }) => row.channel).sort()).toEqual([blueskyChannel, 'default'].sort());
    await herald.rest('DELETE', `/signatures/${blueskyChannel}`);
  });

  it('on a thread: only the last item at the end, only the first at the start', async () => {
    const thread = await create(xChannel, ['<p>First</p>', '<p>Second</p>', '<p>Last</p>']);
    expect((await itemsOf(thread.body[0].postId)).map((item) => plainOf(item.content))).toEqual(['First', 'Second', 'Last\nSent with Herald']);
    await herald.rest('PUT', `/signatures/${xChannel}`, { text: 'Herald says:', position: 'start' });
    const started = await create(xChannel, ['<p>Opening</p>', '<p>Second</p>']);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect((await itemsOf(started.body[0].postId)).map((item) => plainOf(item.content))).toEqual(['Herald says:\nOpening', 'Second']);
    await herald.rest('DELETE', `/signatures/${xChannel}`);
  });

  it('not again on an idempotent replay, nor on an edit, nor when the text already ends with it; settings signature false opts out', async () => {
    const headers = { 'Idempotency-Key': `signature-replay-${Date.now()}` };
    const body = { type: 'schedule', date: later(), shortLink: false, tags: [], posts: [{ integration: { id: blueskyChannel }, value: [{ content: '<p>Replayed</p>', image: [] }], settings: {} }] };
    const first = await herald.rest('POST', '/posts', body, headers);
    const again = await herald.rest('POST', '/posts', body, headers);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body[0].postId).toBe(first.body[0].postId);
    const [root] = await itemsOf(first.body[0].postId);
    expect(plainOf(root.content)).toBe('Replayed\nSent with Herald');

    const edited = await herald.rest('PUT', `/posts/${first.body[0].postId}`, { value: [{ content: root.content }] });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(plainOf((await itemsOf(first.body[0].postId))[0].content)).toBe('Replayed\nSent with Herald');
    await herald.rest('PUT', `/posts/${first.body[0].postId}`, { value: [{ content: '<p>Rewritten</p>' }] });
    expect(plainOf((await itemsOf(first.body[0].postId))[0].content)).toBe('Rewritten');

    const already = await create(blueskyChannel, ['<p>Signed by hand</p><p>Sent with Herald</p>']);
    expect(plainOf((await itemsOf(already.body[0].postId))[0].content)).toBe('Signed by hand\nSent with Herald');

    const optedOut = await create(blueskyChannel, ['<p>No signature here</p>'], { settings: { signature: false } });
    const [bare] = await itemsOf(optedOut.body[0].postId);
    expect(plainOf(bare.content)).toBe('No signature here');
    expect(bare.settings).toEqual({ __type: 'bluesky' });
  });

  it('counts the signature in X\'s weighted length: a post that fits without it is refused naming it', async () => {
    await herald.rest('PUT', `/signatures/${xChannel}`, { text: '— Sent by the Herald team' }); // 25 characters, a line break before it
    const fits = 'a'.repeat(250);
    expect((await herald.rest('POST', '/posts/validate', { type: 'draft', shortLink: false, tags: [], posts: [{ integration: { id: xChannel }, value: [{ content: fits }], settings: {} }] })).body.valid).toBe(true);
    // 130 CJK characters weigh 260 on X: 260 alone fits 280, with the signature (1 + 25) it is 286.
    const refused = await create(xChannel, ['界'.repeat(130)]);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/signature "— Sent by the Herald team" \(at the end, 26 more\) the text is 286 of at most 280 \(260 without it\).*signature: false/);
    const without = await create(xChannel, ['界'.repeat(130)], { settings: { signature: false } });
    expect(without.status, JSON.stringify(without.body)).toBe(200);
    // A text too long on its own is refused as any: no word of the signature.
    const tooLong = await create(xChannel, ['b'.repeat(300)]);
    expect(tooLong.body.message).toMatch(/The maximum characters is 280, we got 326/);
    expect(tooLong.body.message).not.toMatch(/signature/);
    await herald.rest('DELETE', `/signatures/${xChannel}`);
  });

  it('counts the signature in Bluesky\'s graphemes (300)', async () => {
    await herald.rest('PUT', `/signatures/${blueskyChannel}`, { text: '👩‍👩‍👧 Team' });
    // Each family emoji is one grapheme of several code points: 295 of them fit, 295 + 1 + 6 do not.
    const refused = await create(blueskyChannel, ['👩‍👩‍👧'.repeat(295)]);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/signature "👩‍👩‍👧 Team" \(at the end, 7 more\) the text is 302 of at most 300 \(295 without it\)/);
    await herald.rest('DELETE', `/signatures/${blueskyChannel}`);
  });

  it('escapes a signature like any user text: markup and entities are shown as typed, never as HTML', async () => {
    const corpus = ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '"quoted" & \'single\'', '</p><p onclick="x">', '{{7*7}} ${7*7} %s', '&lt;b&gt;already escaped&lt;/b&gt;'];
    for (const text of corpus) {
      expect((await herald.rest('PUT', '/signatures/default', { text })).status).toBe(200);
      const created = await create(blueskyChannel, [`<p>Corpus ${serial}</p>`]);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const [root] = await itemsOf(created.body[0].postId);
      expect(root.content).not.toMatch(/<(script|img|p on)/);
      expect(plainOf(root.content).split('\n').at(-1)).toBe(text);
    }
    await herald.rest('PUT', '/signatures/default', { text: 'Sent with Herald' });
  });

  it('refuses what a client can get wrong with a 4xx that says how to fix it', async () => {
    expect((await herald.rest('PUT', '/signatures/default', { text: '   ' })).body).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/empty/) });
    expect((await herald.rest('PUT', '/signatures/default', { text: 'x'.repeat(501) })).body.message).toMatch(/at most 500/);
    expect((await herald.rest('PUT', '/signatures/nope', { text: 'Hi' })).status).toBe(404);
    expect((await herald.rest('PUT', '/signatures/default', { text: 'Hi', position: 'middle' })).status).toBe(400);
    const other = await herald.newOrganization('Other signatures');
    const foreign = await fetch(`${herald.restUrl}/signatures/${blueskyChannel}`, { method: 'PUT', headers: { authorization: other.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Mine now' }) });
    expect(foreign.status).toBe(404);
  });
});

describe('signatures over MCP', () => {
  it('setSignature and clearSignature for a key that manages channels; schedulePostTool\'s posts get it, validatePostTool shows it', async () => {
    const set = await client.callTool({ name: 'setSignature', arguments: { channel: blueskyChannel, text: '— via MCP' } });
    expect(set.isError, JSON.stringify(set.content)).toBeFalsy();
    const socialPost = [{ integrationId: blueskyChannel, type: 'draft', postsAndComments: [{ content: '<p>From an agent</p>' }] }];
    const preview = (await client.callTool({ name: 'validatePostTool', arguments: { socialPost } })).structuredContent as { entries: { items: { visibleText: string }[] }[] };
    expect(preview.entries[0].items[0].visibleText).toBe('From an agent\n— via MCP');
    const created = (await client.callTool({ name: 'schedulePostTool', arguments: { socialPost } })).structuredContent as { output: { postId: string }[] };
    expect(plainOf((await itemsOf(created.output[0].postId))[0].content)).toBe('From an agent\n— via MCP');
    const optOut = (await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [{ ...socialPost[0], postsAndComments: [{ content: '<p>Bare agent</p>' }], settings: [{ key: 'signature', value: false }] }] } })).structuredContent as { output: { postId: string }[] };
    expect(plainOf((await itemsOf(optOut.output[0].postId))[0].content)).toBe('Bare agent');
    const cleared = await client.callTool({ name: 'clearSignature', arguments: { channel: blueskyChannel } });
    expect(cleared.structuredContent).toEqual({ channel: blueskyChannel, cleared: true });
  });
});
