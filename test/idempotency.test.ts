// Idempotent creates: Idempotency-Key on REST and idempotencyKey on MCP tools, decided in Postgres.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { tinyPng } from './helpers/provider-context.js';
import { MediaSchema, PostSchema } from '../src/db/entities.js';
import { pruneIdempotencyKeys } from '../tools/internal/idempotency.js';

let herald: Herald;
let telegram: TelegramFake;
let channelId: string;
let client: Client;

const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const body = (content: string) => ({
  type: 'schedule',
  date: future(3),
  shortLink: false,
  tags: [],
  posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }],
});
const countPosts = () => herald.services.orm.em.fork().count(PostSchema, { organizationId: herald.organizationId, deletedAt: null });

/** A POST on its own TCP connection (no pooling), as separate clients would send it. */
function postOnOwnConnection(path: string, payload: unknown, key: string): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${herald.restUrl}${path}`,
      { method: 'POST', agent: false, headers: { authorization: herald.apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'idempotency-key': key } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}

async function uploadWithKey(bytes: Buffer, filename: string, key: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), filename);
  const response = await fetch(`${herald.restUrl}/upload`, { method: 'POST', headers: { authorization: herald.apiKey, 'idempotency-key': key }, body: form });
  return { status: response.status, body: await response.json(), replayed: response.headers.get('idempotent-replayed') };
}

beforeAll(async () => {
  telegram = await startTelegramFake();
  herald = await startHerald({ WEBHOOKS_ALLOW_PRIVATE: 'true', SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const connected = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  expect(connected.status).toBe(200);
  channelId = connected.body.id;
  client = new Client({ name: 'idempotency-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await telegram?.close();
});

describe('REST Idempotency-Key', () => {
  it('answers the first answer again for the same key and body (same status and post ids), creating nothing', async () => {
    const before = await countPosts();
    const payload = body('<p>Once only</p>');
    const first = await herald.rest('POST', '/posts', payload, { 'idempotency-key': 'replay-1' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await herald.rest('POST', '/posts', payload, { 'idempotency-key': 'replay-1' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await countPosts()).toBe(before + 1);
    // Keys are compared after parsing: the same request with its keys in another order is the same request.
    const reordered = { posts: payload.posts, tags: [], shortLink: false, date: payload.date, type: 'schedule' };
    expect((await herald.rest('POST', '/posts', reordered, { 'idempotency-key': 'replay-1' })).body).toEqual(first.body);
  });

  it('answers 422 idempotency_conflict for the same key with another body, or on another operation', async () => {
    const first = await herald.rest('POST', '/posts', body('<p>First body</p>'), { 'idempotency-key': 'conflict-1' });
    expect(first.status).toBe(200);
    const other = await herald.rest('POST', '/posts', body('<p>Another body</p>'), { 'idempotency-key': 'conflict-1' });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ statusCode: 422, code: 'idempotency_conflict', message: 'The Idempotency-Key "conflict-1" was already used with a different request body.' });
    expect(other.body.hint).toContain('new key');
    const elsewhere = await herald.rest('POST', '/upload-from-url', { url: 'https://example.com/a.png' }, { 'idempotency-key': 'conflict-1' });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.message).toContain('for another operation (createPost)');
  });

  it('creates one post when several connections send the same key at the same time; the others get its answer', async () => {
    const before = await countPosts();
    const payload = body('<p>Concurrent</p>');
    const answers = await Promise.all(Array.from({ length: 8 }, () => postOnOwnConnection('/posts', payload, 'concurrent-1')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const ids = new Set(answers.map((answer) => answer.body[0].postId));
    expect(ids.size).toBe(1);
    expect(await countPosts()).toBe(before + 1);
  });

  it('answers 409 request_in_progress, outcome unknown, when the request holding the key never finished (a restart mid-request)', async () => {
    await herald.services.orm.em
      .fork()
      .getConnection()
      .execute("insert into idempotency_key (organization_id, key, operation, request_hash, state, created_at) values (?, 'running-1', 'createPost', null, 'running', now() - interval '20 minutes')", [herald.organizationId]);
    const before = await countPosts();
    const answer = await herald.rest('POST', '/posts', body('<p>Waiting</p>'), { 'idempotency-key': 'running-1' });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('request_in_progress');
    expect(answer.body.message).toContain('never finished');
    expect(answer.body.hint).toContain('use a new key');
    expect(await countPosts()).toBe(before);
  });

  it('forgets a key after 24 hours: the same key then creates again, and the daily prune deletes old keys', async () => {
    // The same body again after the key expired: a deliberate repetition, so the duplicate guard is told.
    const payload = { ...body('<p>Expiring</p>'), allowDuplicate: true };
    const first = await herald.rest('POST', '/posts', payload, { 'idempotency-key': 'expiry-1' });
    herald.setNow(new Date(Date.now() + 25 * 3600_000));
    try {
      const later = await herald.rest('POST', '/posts', payload, { 'idempotency-key': 'expiry-1' });
      expect(later.status).toBe(200);
      expect(later.body[0].postId).not.toBe(first.body[0].postId);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      herald.setNow(undefined);
    }
    expect((await herald.rest('POST', '/posts', payload, { 'idempotency-key': 'expiry-2' })).status).toBe(200);
    const pruned = await pruneIdempotencyKeys(herald.services.orm.em.fork(), new Date(Date.now() + 25 * 3600_000));
    expect(pruned).toBeGreaterThanOrEqual(2);
    const left = await herald.services.orm.em.fork().getConnection().execute<{ key: string }[]>("select key from idempotency_key where key like 'expiry-%'");
    expect(left.map((row) => row.key)).toEqual(['expiry-1']); // the one made at "now + 25 h" is not old yet
  });

  it('keeps no failed answer: a refused request releases its key, so the fixed request can use it', async () => {
    const refused = await herald.rest('POST', '/posts', { ...body('x'), posts: [{ integration: { id: 'nope' }, value: [{ content: 'x', image: [] }] }] }, { 'idempotency-key': 'failed-1' });
    expect(refused.status).toBe(400);
    const fixed = await herald.rest('POST', '/posts', body('<p>Fixed</p>'), { 'idempotency-key': 'failed-1' });
    expect(fixed.status).toBe(200);
  });

  it('keeps no secret in clear in the replay store: a webhook created with a key is replayed with its secret, stored sealed', async () => {
    const receiver = http.createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
      const first = await herald.rest('POST', '/webhooks', { url, events: ['post.published'] }, { 'idempotency-key': 'webhook-secret-1' });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.secret).toMatch(/^whsec_/);
      const rows = await herald.services.orm.em.fork().getConnection().execute<{ output: string }[]>("select output from idempotency_key where key = 'webhook-secret-1'");
      expect(rows[0].output).not.toContain('whsec_');
      expect(rows[0].output).not.toContain(first.body.secret.slice('whsec_'.length));
      const again = await herald.rest('POST', '/webhooks', { url, events: ['post.published'] }, { 'idempotency-key': 'webhook-secret-1' });
      expect(again.body).toEqual(first.body);
    } finally {
      receiver.close();
    }
  });

  it('refuses a malformed key', async () => {
    const answer = await herald.rest('POST', '/posts', body('<p>x</p>'), { 'idempotency-key': 'has space' });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('printable ASCII');
  });

  it('identifies an upload by its bytes: the same file again answers the same media, another file 422', async () => {
    const picture = tinyPng();
    const first = await uploadWithKey(picture, 'a.png', 'upload-1');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await uploadWithKey(picture, 'a.png', 'upload-1');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.replayed).toBe('true');
    const other = await uploadWithKey(Buffer.concat([picture, Buffer.from('trailing bytes')]), 'a.png', 'upload-1');
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_conflict');
    expect(await herald.services.orm.em.fork().count(MediaSchema, { organizationId: herald.organizationId })).toBe(1);
  });
});

describe('MCP idempotencyKey', () => {
  const socialPost = (content: string) => [
    { integrationId: channelId, isPremium: false, date: future(4), shortLink: false, type: 'schedule', postsAndComments: [{ content, attachments: [] }], settings: [] },
  ];

  it('schedulePostTool with the same idempotencyKey answers the first answer and creates one post', async () => {
    const before = await countPosts();
    const args = { socialPost: socialPost('<p>MCP once</p>'), idempotencyKey: 'mcp-1' };
    const call = () => client.callTool({ name: 'schedulePostTool', arguments: args });
    const first: any = await call();
    const second: any = await call();
    expect(first.isError).toBeFalsy();
    expect(second.isError, JSON.stringify(second.content)).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(await countPosts()).toBe(before + 1);
    const conflicting: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: socialPost('<p>MCP other</p>'), idempotencyKey: 'mcp-1' } });
    expect(conflicting.isError).toBe(true);
    expect(conflicting.content[0].text).toMatch(/^idempotency_conflict: /);
  });

  it('shares keys with REST within the organization: a REST key reused on MCP is another operation', async () => {
    await herald.rest('POST', '/posts', body('<p>REST first</p>'), { 'idempotency-key': 'shared-1' });
    const result: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: socialPost('<p>x</p>'), idempotencyKey: 'shared-1' } });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain('for another operation (createPost)');
  });

  it('scopes keys per organization', async () => {
    const other = await herald.newOrganization('Other');
    const answer = await fetch(`${herald.restUrl}/posts`, {
      method: 'POST',
      headers: { authorization: other.apiKey, 'content-type': 'application/json', 'idempotency-key': 'replay-1' },
      body: JSON.stringify(body('<p>Other org</p>')),
    });
    // Not a replay of the first organization's answer: its own request, refused because the channel is not its own.
    expect(answer.status).toBe(400);
    expect((await answer.json()).message).toContain('channel not found');
  });
});
