// GET /metrics: who may read it (loopback by default, METRICS_ALLOW ranges, a bearer METRICS_TOKEN; never a public client
// through the local reverse proxy), and that what it says follows what Herald did: HTTP routes by pattern, MCP tools,
// publish outcomes per platform, retries, rate-limit refusals, the queue, due posts, channel health and the ORM pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { createPost, publishUntilSettled } from './helpers/posts.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { IntegrationSchema } from '../src/db/entities.js';
import { ConfigError, loadConfig } from '../src/config.js';

let herald: Herald;
let mastodon: MastodonFake;
let channelId: string;

beforeAll(async () => {
  mastodon = await startMastodonFake();
  herald = await startHerald();
  const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await mastodon?.close();
});

async function scrape(target: Herald = herald, headers: Record<string, string> = {}): Promise<{ status: number; text: string; type: string | null }> {
  const response = await fetch(`${target.url}/metrics`, { headers });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
}

/** The value of one sample (`name` with exactly these labels, in any order) in a scrape; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').match(/\w+="(?:[^"\\]|\\.)*"/g) ?? [];
    if (present.length === wanted.length && [...present].sort().every((pair, index) => pair === wanted[index])) return Number(match[3]);
  }
  return 0;
}

describe('who may read the metrics', () => {
  it('answers a loopback scraper by default, in the Prometheus text format', async () => {
    const { status, text, type } = await scrape();
    expect(status).toBe(200);
    expect(type).toContain('text/plain; version=0.0.4');
    expect(text).toContain('# TYPE herald_http_request_duration_seconds histogram');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(sample(text, 'herald_database_up')).toBe(1);
  });

  it('refuses a public client forwarded by the reverse proxy on the same machine', async () => {
    const { status, text } = await scrape(herald, { 'x-forwarded-for': '203.0.113.9' });
    expect(status).toBe(403);
    expect(JSON.parse(text)).toMatchObject({ code: 'forbidden' });
    expect(text).toContain('203.0.113.9');
    expect(text).toContain('METRICS_ALLOW');
  });

  it('with a token: the right Bearer token reads them from anywhere, a missing or wrong one gets a 401 that says what to send', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const guarded = await startHerald({ METRICS_ALLOW: 'none', METRICS_TOKEN: token });
    try {
      const missing = await scrape(guarded);
      expect(missing.status).toBe(401);
      expect(missing.text).toContain('METRICS_TOKEN');
      expect((await scrape(guarded, { authorization: 'Bearer metrics-token-wrong-0123456' })).status).toBe(401);
      const read = await scrape(guarded, { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' });
      expect(read.status).toBe(200);
      expect(read.text).toContain('herald_database_up 1');
    } finally {
      await guarded.stop();
    }
  });

  it('serves only the configured ranges: a loopback scraper outside METRICS_ALLOW is refused without a token', async () => {
    const ranged = await startHerald({ METRICS_ALLOW: '10.0.0.0/8' });
    try {
      expect((await scrape(ranged)).status).toBe(403);
      expect((await scrape(ranged, { 'x-forwarded-for': '10.1.2.3' })).status).toBe(200);
    } finally {
      await ranged.stop();
    }
  });

  it('refuses settings that cannot be meant: an unreadable range, a short token', () => {
    expect(() => loadConfig({ METRICS_ALLOW: 'loopback,10.0.0.0/33' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_ALLOW: '10' })).toThrow(/METRICS_ALLOW/);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN: must be at least 16/);
    expect(loadConfig({}).metrics.allow).toEqual(['127.0.0.0/8', '::1/128']);
  });
});

describe('what the metrics say', () => {
  it('times HTTP requests by route pattern, never by the raw path', async () => {
    const before = await scrape();
    const missing = await herald.rest('GET', '/generations/no-such-generation-id');
    expect(missing.status).toBe(404);
    const after = await scrape();
    const labels = { method: 'GET', route: '/api/public/v1/generations/:id', status: '404' };
    expect(sample(after.text, 'herald_http_request_duration_seconds_count', labels) - sample(before.text, 'herald_http_request_duration_seconds_count', labels)).toBe(1);
    expect(after.text).not.toContain('no-such-generation-id');
  });

  it('times MCP tool calls by tool', async () => {
    const before = await scrape();
    const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
    const client = new Client({ name: 'metrics-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      await client.callTool({ name: 'integrationList', arguments: {} });
      await client.callTool({ name: 'no-such-tool', arguments: {} }).catch(() => undefined);
    } finally {
      await client.close();
    }
    const after = await scrape();
    const delta = (labels: Record<string, string>) => sample(after.text, 'herald_mcp_tool_duration_seconds_count', labels) - sample(before.text, 'herald_mcp_tool_duration_seconds_count', labels);
    expect(delta({ tool: 'integrationList', outcome: 'ok' })).toBe(1);
    expect(delta({ tool: 'unknown', outcome: 'error' })).toBe(1);
  });

  it('counts publish outcomes, retries and lateness per platform', async () => {
    const before = await scrape();
    const published = await createPost(herald, channelId, ['Metrics: this one goes out after one retry']);
    mastodon.server.failNext('POST', '/api/v1/statuses', { status: 503, json: { error: 'Service Unavailable' } });
    expect((await publishUntilSettled(herald, published)).outcome.kind).toBe('published');
    const refused = await createPost(herald, channelId, ['Metrics: this one is refused']);
    mastodon.server.failNext('POST', '/api/v1/statuses', { status: 422, json: { error: 'Validation failed: Text character limit of 500 exceeded' } });
    await publishUntilSettled(herald, refused);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sample(after.text, name, labels) - sample(before.text, name, labels);
    expect(delta('herald_publish_items_total', { platform: 'mastodon', outcome: 'published' })).toBe(1);
    expect(delta('herald_publish_items_total', { platform: 'mastodon', outcome: 'failed' })).toBe(1);
    expect(delta('herald_publish_retries_total', { platform: 'mastodon' })).toBe(1);
    expect(delta('herald_publish_duration_seconds_count', { platform: 'mastodon', outcome: 'retry' })).toBe(1);
    expect(delta('herald_publish_duration_seconds_count', { platform: 'mastodon', outcome: 'published' })).toBe(1);
    expect(delta('herald_publish_duration_seconds_count', { platform: 'mastodon', outcome: 'failed' })).toBe(1);
    expect(delta('herald_publish_lateness_seconds_count', { platform: 'mastodon' })).toBe(1);
  });

  it('reads the queue, due posts, channel health and the pool from Postgres at scrape time', async () => {
    // No worker runs in this file: a post dated a minute ago waits as a due job, one dated tomorrow as a scheduled job.
    await createPost(herald, channelId, ['Metrics: due and waiting'], { date: new Date(Date.now() - 60_000) });
    await createPost(herald, channelId, ['Metrics: tomorrow'], { date: new Date(Date.now() + 86_400_000) });
    let { text } = await scrape();
    expect(sample(text, 'herald_jobs', { task: 'publish_post', state: 'due' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'herald_jobs', { task: 'publish_post', state: 'scheduled' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'herald_jobs_due_lateness_seconds', { task: 'publish_post' })).toBeGreaterThanOrEqual(55);
    expect(sample(text, 'herald_posts_due')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'herald_posts_due_oldest_seconds')).toBeGreaterThanOrEqual(55);
    expect(sample(text, 'herald_channels', { platform: 'mastodon', health: 'active' })).toBe(1);
    expect(sample(text, 'herald_db_pool_max')).toBeGreaterThan(0);
    expect(text).toMatch(/^herald_db_pool_connections\{state="used"\} \d+$/m);

    const em = herald.services.orm.em.fork();
    await em.nativeUpdate(IntegrationSchema, { id: channelId }, { refreshNeeded: true });
    ({ text } = await scrape());
    expect(sample(text, 'herald_channels', { platform: 'mastodon', health: 'needs_reconnection' })).toBe(1);
    expect(sample(text, 'herald_channels', { platform: 'mastodon', health: 'active' })).toBe(0);
    await em.nativeUpdate(IntegrationSchema, { id: channelId }, { refreshNeeded: false });
  });

  it('counts requests refused by the rate limit', async () => {
    const limited = await startHerald({ API_RATE_LIMIT_PER_MINUTE: '1' });
    try {
      const before = await scrape(limited);
      const answers = [await limited.rest('GET', '/integrations'), await limited.rest('GET', '/integrations'), await limited.rest('GET', '/integrations')];
      expect(answers.map((answer) => answer.status)).toEqual([200, 429, 429]);
      const after = await scrape(limited);
      expect(sample(after.text, 'herald_rate_limit_refusals_total', { limit: 'rest' }) - sample(before.text, 'herald_rate_limit_refusals_total', { limit: 'rest' })).toBe(2);
    } finally {
      await limited.stop();
    }
  });
});
