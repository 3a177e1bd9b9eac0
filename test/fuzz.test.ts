// Hostile input never reaches a 500: a seeded stream of malformed requests across every REST route of the tool registry and
// every MCP tool (NUL bytes, wrong types, huge and odd strings, broken JSON, path tricks). Any 5xx fails the test, with the
// request that caused it, so it can be replayed with the same seed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { tools } from '../tools/index.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const REST_REQUESTS = Number(process.env.FUZZ_REST ?? 2500);
const MCP_CALLS = Number(process.env.FUZZ_MCP ?? 600);

/** mulberry32: small, seeded, repeatable. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let herald: Herald;
let telegram: TelegramFake;
let channelId = '';
let postId = '';

beforeAll(async () => {
  telegram = await startTelegramFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const channel = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  channelId = channel.body.id;
  const created = await herald.rest('POST', '/posts', {
    type: 'draft',
    date: new Date(Date.now() + 86_400_000).toISOString(),
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channelId }, value: [{ content: 'Fuzz target', image: [] }], settings: {} }],
  });
  postId = created.body[0].postId;
});

afterAll(async () => {
  await herald?.stop();
  await telegram?.close();
});

function generator(seed: number) {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const strings = () => [
    '',
    ' ',
    '\u0000',
    `abc\u0000def`,
    '%00',
    '../../etc/passwd',
    '%2e%2e%2f',
    'x'.repeat(5000),
    '👨‍👩‍👧‍👦'.repeat(50),
    '\ud800',
    '<script>alert(1)</script>',
    "' or 1=1 --",
    'null',
    '-1',
    '1e309',
    '2026-13-45T99:99:99Z',
    channelId,
    postId,
    'schedule',
    'draft',
  ];
  const value = (depth = 0): unknown => {
    const kind = Math.floor(next() * (depth > 2 ? 6 : 9));
    switch (kind) {
      case 0:
        return pick(strings());
      case 1:
        return pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER, NaN]);
      case 2:
        return pick([true, false, null]);
      case 3:
        return pick(strings()) + pick(strings());
      case 4:
        return Math.floor(next() * 1000);
      case 5:
        return undefined;
      case 6:
        return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
      default: {
        const keys = ['type', 'date', 'posts', 'integration', 'id', 'value', 'content', 'image', 'settings', 'status', 'releaseId', 'methodName', 'data', 'url', 'startDate', 'endDate', 'page', 'socialPost', '\u0000key', '__proto__', 'constructor'];
        const object: Record<string, unknown> = {};
        for (let index = Math.floor(next() * 5); index > 0; index--) object[pick(keys)] = value(depth + 1);
        return object;
      }
    }
  };
  return { next, pick, value, strings };
}

/** Any generated value as text (objects may have no prototype: String() cannot print them). */
const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/** A path or query value; a lone surrogate cannot be percent-encoded, so it goes as the invalid UTF-8 it would be. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

describe('hostile input', () => {
  it(`${REST_REQUESTS} seeded malformed REST requests across every route answer no 5xx (seed ${SEED})`, async () => {
    const { next, pick, value, strings } = generator(SEED);
    const routes = tools.flatMap((tool) => (tool.rest ? [{ method: tool.rest.method, path: tool.rest.path, multipart: Boolean(tool.rest.multipartFile) }] : []));
    expect(routes.length).toBeGreaterThan(25);
    const failures: string[] = [];
    for (let index = 0; index < REST_REQUESTS; index++) {
      const route = pick(routes);
      const path = route.path.replace(/:(\w+)/g, () => encode(String(pick([...strings(), channelId, postId, 'unknown-id']))));
      const query = next() < 0.5 ? `?${['startDate', 'endDate', 'date', 'page', 'group', 'customer', 'refresh', 'cursor', 'limit'].filter(() => next() < 0.4).map((key) => `${key}=${encode(asText(value()))}`).join('&')}` : '';
      let body: string | undefined;
      let contentType = 'application/json';
      const shape = next();
      if (route.method !== 'GET' && route.method !== 'DELETE') {
        if (shape < 0.1) body = '{"broken": ';
        else if (shape < 0.15) {
          body = 'file=1';
          contentType = 'application/x-www-form-urlencoded';
        } else if (shape < 0.2 && route.multipart) {
          body = '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n\u0000\u0001\r\n--x--\r\n';
          contentType = 'multipart/form-data; boundary=x';
        } else body = JSON.stringify(value());
      }
      const url = `${herald.restUrl}${path}${query}`;
      let status: number;
      try {
        const response = await fetch(url, { method: route.method, headers: { authorization: herald.apiKey, ...(body !== undefined ? { 'content-type': contentType } : {}) }, body });
        status = response.status;
        await response.arrayBuffer();
      } catch (error) {
        failures.push(`${route.method} ${url} ${body?.slice(0, 200)} → ${(error as Error).message}`);
        continue;
      }
      if (status >= 500) failures.push(`${route.method} ${url} ${body?.slice(0, 300)} → ${status}`);
    }
    expect(failures, failures.slice(0, 5).join('\n')).toEqual([]);
  }, 180_000);

  it(`${MCP_CALLS} seeded malformed MCP tool calls answer tool errors, never an internal error (seed ${SEED + 1})`, async () => {
    const { pick, value } = generator(SEED + 1);
    const client = new Client({ name: 'fuzz', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      const internal: string[] = [];
      for (let index = 0; index < MCP_CALLS; index++) {
        const name = pick(names);
        const raw = value();
        const args = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { value: raw };
        const result = await client.callTool({ name, arguments: args });
        const text = (result.content as { type: string; text?: string }[]).map((item) => item.text ?? '').join(' ');
        if (result.isError && /^internal:/.test(text)) internal.push(`${name} ${JSON.stringify(args).slice(0, 300)} → ${text}`);
      }
      expect(internal, internal.slice(0, 5).join('\n')).toEqual([]);
    } finally {
      await client.close();
    }
  }, 180_000);
});
