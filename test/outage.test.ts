// Postgres goes away under load and comes back: a real Herald process keeps running, answers 503 `unavailable` with
// Retry-After on REST and MCP while the database is unreachable, reports it on /healthz and /readyz, and resumes by itself
// afterwards: posts due during the outage go out once, nothing is lost or duplicated.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { createLogger } from '../src/lib/logger.js';
import { freePort, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { restCall } from './helpers/harness.js';
import { waitFor } from './helpers/posts.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';

let dataDir: string;
let port: number;
let database: EmbeddedDatabase | undefined;
let herald: HeraldProcess | undefined;
let telegram: TelegramFake;

const startDatabase = () => startEmbeddedPostgres({ dataDir, port, logger: createLogger('silent') });

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-outage-'));
  fs.chmodSync(dataDir, 0o755);
  port = await freePort();
  database = await startDatabase();
  await database.createDatabase('herald');
  telegram = await startTelegramFake();
});

afterAll(async () => {
  await herald?.stop();
  await database?.stop();
  await telegram?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* an SSE answer or text */
  }
  return { status: response.status, body, headers: response.headers };
}

/** waitFor, with a check that fails (the database or Herald still down) counted as not yet. */
const until = <T>(check: () => Promise<T | undefined>, timeoutMs: number) => waitFor(() => check().catch(() => undefined), timeoutMs);

describe('a Postgres restart under load', () => {
  it('answers 503 unavailable while the database is down, never crashes, and resumes publishing by itself', async () => {
    herald = await startHeraldProcess({
      env: { DATABASE_URL: database!.urlFor('herald'), SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }), WORKER_CONCURRENCY: '2' },
    });
    const apiKey = herald.apiKey!;
    const rest = (method: string, route: string, body?: unknown) => restCall(`${herald!.url}/api/public/v1`, apiKey, method, route, body);
    const channel = await rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
    expect(channel.status).toBe(200);
    // An MCP session opened before the outage.
    const mcpHeaders = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const initialized = await fetch(`${herald.url}/api/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'outage', version: '1' } } }),
    });
    const sessionId = initialized.headers.get('mcp-session-id')!;
    await initialized.text();
    // Posts due while the database is away: ten two-item threads, due in 4 seconds.
    const texts = Array.from({ length: 10 }, (_, index) => [`Outage ${index} one`, `Outage ${index} two`]);
    const created = await rest('POST', '/posts', {
      type: 'schedule',
      date: new Date(Date.now() + 4000).toISOString(),
      shortLink: false,
      tags: [],
      posts: texts.map((entry) => ({ integration: { id: channel.body.id }, value: entry.map((content) => ({ content, image: [] })), settings: {} })),
    });
    expect(created.status).toBe(200);

    await database!.stop();
    database = undefined;
    // Under load while it is away: REST and MCP keep answering, with 503 and Retry-After.
    const during = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        index % 2
          ? rest('GET', '/integrations')
          : call(`${herald!.url}/api/mcp`, {
              method: 'POST',
              headers: { ...mcpHeaders, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
              body: JSON.stringify({ jsonrpc: '2.0', id: index + 2, method: 'tools/call', params: { name: 'integrationList', arguments: {} } }),
            }),
      ),
    );
    for (const answer of during) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.body.code).toBe('unavailable');
      expect(answer.headers.get('retry-after')).toBe('5');
    }
    expect((await call(`${herald.url}/healthz`)).body).toEqual({ status: 'ok', database: 'unreachable' });
    expect((await call(`${herald.url}/readyz`)).status).toBe(503);
    // Let the posts fall due and the worker meet the outage for a while.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect(herald.child.exitCode).toBeNull();

    database = await startDatabase();
    await until(async () => ((await call(`${herald!.url}/readyz`)).status === 200 ? true : undefined), 30_000);
    expect((await rest('GET', '/integrations')).status).toBe(200);
    // Everything due goes out, once, in order.
    await until(async () => (telegram.messages.length >= 20 ? true : undefined), 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const counts = new Map<string, number>();
    for (const message of telegram.messages) counts.set(message.text ?? '', (counts.get(message.text ?? '') ?? 0) + 1);
    for (const [first, second] of texts) {
      expect(counts.get(first), first).toBe(1);
      expect(counts.get(second), second).toBe(1);
    }
    expect(telegram.messages).toHaveLength(20);
    expect(herald.child.exitCode).toBeNull();
    expect(herald.stderr()).not.toMatch(/Unhandled|ECONNREFUSED.*\n\s+at /);
  }, 180_000); // its waits alone (the outage, readiness, publishing) may take 100 s on a busy machine
});
