// Several Herald processes on one Postgres: two web processes (`--role web`) and one worker (`HERALD_ROLE=worker`), started
// as `npm start` starts them, behind a small proxy that sends each HTTP request to the next web process in turn. REST,
// rate limits, an MCP session whose requests alternate between the processes, a worker's notification reaching that
// session, an SSE stream resumed with Last-Event-ID on the other process, and publishing by the worker alone.
import { execFile } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { newTestDatabase, restCall } from './helpers/harness.js';
import { openDatabase } from '../src/db/orm.js';
import { firstOrganization } from '../tools/internal/credentials.js';
import { freePort, repositoryRoot, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { waitFor } from './helpers/posts.js';

interface Proxied {
  method: string;
  path: string;
  session?: string;
  backend: number;
}

/**
 * A round-robin HTTP proxy: each request (not each connection) goes to the next backend; streams are piped as they come.
 * Like nginx, it keeps its clients' idle connections 75 s, and reuses its idle upstream connections (Node's agent: 5 s).
 */
async function startProxy(backends: () => string[]): Promise<{ url: string; log: Proxied[]; close(): Promise<void> }> {
  const log: Proxied[] = [];
  let next = 0;
  const server = http.createServer({ keepAliveTimeout: 75_000 }, (request, response) => {
    const targets = backends();
    const backend = next++ % targets.length;
    log.push({ method: request.method!, path: request.url!, session: request.headers['mcp-session-id'] as string | undefined, backend });
    const upstream = http.request(`${targets[backend]}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      response.flushHeaders();
      answer.pipe(response);
    });
    upstream.on('error', () => response.destroy());
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** REST calls per minute and organization; the rate-limit burst is 10 more. */
const LIMIT = 1000;

/**
 * `count` GETs at once, as an API client sends them: over a pool of 32 keep-alive connections. Not one connection per
 * request (what fetch does with nothing to hold it back): a thousand connections at once overflow the proxy's listen backlog
 * (511) while a busy machine lets this process accept only a few dozen a second, and the kernel answers the connections it
 * dropped meanwhile with resets (the "fetch failed … ECONNRESET" of a loaded machine). Answers the status codes.
 */
async function burst(url: string, apiKey: string, count: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  try {
    return await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<number>((resolve, reject) => {
            http.get(url, { agent, headers: { authorization: apiKey } }, (response) => {
              response.resume();
              response.on('end', () => resolve(response.statusCode!));
            }).on('error', reject);
          }),
      ),
    );
  } finally {
    agent.destroy();
  }
}

const running: HeraldProcess[] = [];
let proxy: Awaited<ReturnType<typeof startProxy>>;
let telegram: TelegramFake;
let apiKey: string;
let databaseUrl: string;
const webUrls: string[] = [];

beforeAll(async () => {
  telegram = await startTelegramFake();
  databaseUrl = await newTestDatabase();
  proxy = await startProxy(() => webUrls);
  const env = {
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: proxy.url,
    SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }),
    API_RATE_LIMIT_PER_MINUTE: String(LIMIT),
  };
  // The first web process migrates and mints the first key; the others start together.
  const first = await startHeraldProcess({ env: { ...env, PORT: String(await freePort()) }, args: ['--role', 'web'] });
  running.push(first);
  apiKey = first.apiKey!;
  const [second, worker] = await Promise.all([
    startHeraldProcess({ env: { ...env, PORT: String(await freePort()) }, args: ['--role=web'] }),
    startHeraldProcess({ env: { ...env, HERALD_ROLE: 'worker' } }),
  ]);
  running.push(second, worker);
  webUrls.push(first.url, second.url);
  expect(worker.stdout()).toContain('Herald is running as a worker only');
  expect(first.stdout()).toContain('web only: publishing runs in the worker processes');
}, 90_000);

afterAll(async () => {
  for (const process of running) await process.stop().catch(() => undefined);
  await proxy?.close();
  await telegram?.close();
});

const rest = (method: string, route: string, body?: unknown, key = apiKey) => restCall(`${proxy.url}/api/public/v1`, key, method, route, body);

const mcpHeaders = (sessionId?: string) => ({
  authorization: `Bearer ${apiKey}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
});

/** Reads SSE events from a response until `enough` says stop; answers them (id and parsed data). */
async function readEvents(response: Response, enough: (events: { id?: string; data: any }[]) => boolean): Promise<{ id?: string; data: any }[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: { id?: string; data: any }[] = [];
  let buffer = '';
  while (!enough(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data) events.push({ id: /^id: (.*)$/m.exec(block)?.[1], data: JSON.parse(data) });
    }
  }
  await reader.cancel().catch(() => undefined);
  return events;
}

let channelId: string;

/** The platform link of the published post with this text (the notification's link). */
async function releaseUrlOf(content: string): Promise<string> {
  return waitFor(async () => {
    const listed = await rest('GET', `/posts?startDate=${new Date(Date.now() - 3600_000).toISOString()}&endDate=${new Date(Date.now() + 3600_000).toISOString()}`);
    const post = listed.body.posts.find((item: any) => item.content === content && item.state === 'PUBLISHED');
    return post?.releaseURL ?? undefined;
  });
}

describe('two web processes and a worker on one Postgres, behind a round-robin proxy', () => {
  it('serves REST from both processes, and the worker alone publishes what they scheduled, once', async () => {
    const connected = await rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
    expect(connected.status).toBe(200);
    channelId = connected.body.id;
    const created = await Promise.all(
      [0, 1, 2, 3].map((index) =>
        rest('POST', '/posts', {
          type: 'now',
          date: new Date().toISOString(),
          shortLink: false,
          tags: [],
          posts: [{ integration: { id: channelId }, value: [{ content: `Cluster ${index} one`, image: [] }, { content: `Cluster ${index} two`, image: [] }], settings: {} }],
        }),
      ),
    );
    for (const answer of created) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    await waitFor(async () => (telegram.messages.length >= 8 ? true : undefined));
    const texts = telegram.messages.map((message) => message.text).sort();
    expect(texts).toEqual([0, 1, 2, 3].flatMap((index) => [`Cluster ${index} one`, `Cluster ${index} two`]).sort());
    const listed = await rest('GET', `/posts?startDate=${new Date(Date.now() - 3600_000).toISOString()}&endDate=${new Date(Date.now() + 3600_000).toISOString()}`);
    expect(listed.body.posts.map((post: any) => post.state)).toEqual(['PUBLISHED', 'PUBLISHED', 'PUBLISHED', 'PUBLISHED']);
    // Both web processes answered REST requests.
    expect(new Set(proxy.log.filter((entry) => entry.path.startsWith('/api/public/v1')).map((entry) => entry.backend))).toEqual(new Set([0, 1]));
  });

  it('counts the rate limit of an organization exactly across both processes', async () => {
    // A second organization, made with the command line (npm run herald) on the same database. Not spawnSync: the proxy
    // runs in this process, and goes on serving meanwhile.
    const cli = await promisify(execFile)(process.execPath, [path.join(repositoryRoot, 'scripts/run.mjs'), 'cli', 'org:create', 'Limited'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    });
    const otherKey = /API key: (\S+)/.exec(cli.stdout)?.[1];
    expect(otherKey, cli.stderr).toMatch(/^hrld_/);
    // The limit is a sliding window estimated from two fixed minutes: a burst that straddles a minute's end is counted with
    // the earlier minute partly expired, so it may let a few more through. Start well inside a minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200));
    const statuses = await burst(`${proxy.url}/api/public/v1/is-connected`, otherKey!, LIMIT + 10);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
  }, 90_000);

  it('keeps an idle connection open for longer than a proxy keeps it for reuse', async () => {
    // Node's default (5 s) is the very idle time after which Node's agent stops reusing a connection, and shorter than
    // nginx's (60 s): Herald closed connections just as the proxy sent its next request on them (ECONNRESET under load).
    const { port } = new URL(webUrls[0]);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const answers = () => received.split('HTTP/1.1 200').length - 1;
    const ask = () => socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    try {
      ask();
      await waitFor(async () => (answers() === 1 ? true : undefined));
      expect(received).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i);
      await new Promise((resolve) => setTimeout(resolve, 6000));
      ask();
      await waitFor(async () => (answers() === 2 ? true : undefined));
    } finally {
      socket.destroy();
    }
  });

  it('keeps an MCP session whose requests alternate between the processes, and the worker\'s notifications reach it', async () => {
    const client = new Client({ name: 'cluster', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } });
    const logs: any[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    for (let index = 0; index < 4; index++) {
      const listed = await client.callTool({ name: 'integrationList', arguments: {} });
      expect((listed.structuredContent as any).output.map((channel: any) => channel.id)).toEqual([channelId]);
    }
    expect((await client.listTools()).tools.some((tool) => tool.name === 'schedulePostTool')).toBe(true);
    await client.setLoggingLevel('info');
    const posts = proxy.log.filter((entry) => entry.session === sessionId && entry.method === 'POST');
    expect(new Set(posts.map((entry) => entry.backend))).toEqual(new Set([0, 1]));
    // The worker publishes; its notification reaches the session's stream, held by one of the web processes.
    const scheduled = await client.callTool({
      name: 'schedulePostTool',
      arguments: { socialPost: [{ integrationId: channelId, isPremium: false, date: new Date().toISOString(), shortLink: false, type: 'now', postsAndComments: [{ content: 'Told over MCP', attachments: [] }], settings: [] }] },
    });
    expect(scheduled.isError, JSON.stringify(scheduled.content)).toBeFalsy();
    const told = await waitFor(async () => logs.find((log) => log.data?.type === 'post_published'));
    expect(told).toMatchObject({ level: 'info', logger: 'herald', data: { type: 'post_published' } });
    expect(told.data.message).toMatch(/published on Telegram/);
    await client.close();
  });

  it('resumes a cut SSE stream with Last-Event-ID on the other process, with what was sent meanwhile', async () => {
    const initialized = await fetch(`${proxy.url}/api/mcp`, {
      method: 'POST',
      headers: mcpHeaders(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    const sessionId = initialized.headers.get('mcp-session-id')!;
    await initialized.text();
    const setLevel = await fetch(`${proxy.url}/api/mcp`, { method: 'POST', headers: mcpHeaders(sessionId), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } }) });
    expect(setLevel.status).toBe(200);
    await setLevel.text();
    const publish = (content: string) =>
      rest('POST', '/posts', { type: 'now', date: new Date().toISOString(), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }] });

    const streamed = proxy.log.length;
    const first = await fetch(`${proxy.url}/api/mcp`, { headers: mcpHeaders(sessionId) });
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const firstBackend = proxy.log[streamed].backend;
    const reading = readEvents(first, (events) => events.length > 0);
    await publish('Before the cut');
    const before = await reading;
    expect(before.map((event) => event.data.params.data.link)).toEqual([await releaseUrlOf('Before the cut')]);
    const lastEventId = before[0].id!;
    expect(lastEventId).toBeTruthy();

    // The stream is cut (the reader cancelled it); meanwhile the worker publishes again.
    await publish('While away');
    await waitFor(async () => (telegram.messages.some((message) => message.text === 'While away') ? true : undefined));
    // Make sure the resume reaches the other process.
    if (proxy.log.length % 2 === firstBackend) await fetch(`${proxy.url}/healthz`).then((response) => response.text());
    const resumed = await fetch(`${proxy.url}/api/mcp`, { headers: { ...mcpHeaders(sessionId), 'last-event-id': lastEventId } });
    expect(proxy.log.at(-1)!.backend).not.toBe(firstBackend);
    const after = await readEvents(resumed, (events) => events.length > 0);
    // Only what was sent after the last event the client saw.
    expect(after.map((event) => event.data.params.data.link)).toEqual([await releaseUrlOf('While away')]);

    const deleted = await fetch(`${proxy.url}/api/mcp`, { method: 'DELETE', headers: mcpHeaders(sessionId) });
    expect(deleted.status).toBe(200);
    const gone = await fetch(`${proxy.url}/api/mcp`, { method: 'POST', headers: mcpHeaders(sessionId), body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }) });
    expect(gone.status).toBe(404);
  });
});

describe('web processes starting together on a fresh database', () => {
  it('make one organization and one key: the first start of each runs at once, and one of them makes it', async () => {
    const orm = await openDatabase(await newTestDatabase(), { migrate: false });
    try {
      // Five connections open first, so the five starts really overlap.
      await Promise.all(Array.from({ length: 5 }, () => orm.em.fork().getConnection().execute('select pg_sleep(0.05)')));
      const keys = await Promise.all(Array.from({ length: 5 }, () => firstOrganization(orm.em.fork())));
      expect(keys.filter((key) => key !== undefined)).toHaveLength(1);
      const connection = orm.em.fork().getConnection();
      expect(await connection.execute('select count(*)::int as n from organization')).toEqual([{ n: 1 }]);
      expect(await connection.execute('select count(*)::int as n from api_key where revoked_at is null')).toEqual([{ n: 1 }]);
    } finally {
      await orm.close();
    }
  });
});
