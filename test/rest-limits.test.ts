// REST v1 rate limits (per organization, counted in Postgres) and the OAuth connect URL of a configured platform.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { counted } from '../src/lib/words.js';

// Mid-hour, with nothing in the previous window: the sliding hour counts only this window, and Reset is exact.
const FIXED_NOW = new Date('2031-03-10T10:30:00.000Z');

function expectRateLimitHeaders(headers: Headers, limit: number, remaining: number, reset = '1800'): void {
  expect(headers.get('ratelimit-limit')).toBe(String(limit));
  expect(headers.get('ratelimit-remaining')).toBe(String(remaining));
  expect(headers.get('ratelimit-reset')).toBe(reset);
}

describe('REST rate limit, the spec\'s strict reading (API_RATE_LIMIT_PER_HOUR=3)', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald({ API_RATE_LIMIT_PER_HOUR: '3' });
    herald.setNow(FIXED_NOW);
  });
  afterAll(async () => herald?.stop());

  it('answers 3 requests with RateLimit-* headers, then 429 rate_limited; another organization is not affected', async () => {
    const answers = [];
    for (let index = 0; index < 3; index++) answers.push(await herald.rest('GET', '/is-connected'));
    answers.forEach((answer, index) => {
      expect(answer.status).toBe(200);
      expectRateLimitHeaders(answer.headers, 3, 2 - index);
    });

    const limited = await herald.rest('GET', '/is-connected');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, code: 'rate_limited', message: expect.any(String), hint: expect.any(String), requestId: expect.any(String) });
    expect(limited.body.message).toContain('3 REST requests per hour');
    // The next window starts in 30 minutes, and this window's 3 requests weigh in the sliding hour for 20 more.
    expect(limited.headers.get('retry-after')).toBe('3000');
    expectRateLimitHeaders(limited.headers, 3, 0, '3000');
    // Still limited on any other route.
    expect((await herald.rest('GET', '/integrations')).status).toBe(429);

    const other = await herald.newOrganization('Other');
    const fresh = await herald.rest('GET', '/is-connected', undefined, { authorization: other.apiKey });
    expect(fresh.status).toBe(200);
    expectRateLimitHeaders(fresh.headers, 3, 2);
  });

  it('a 401 is not counted against the organization', async () => {
    const other = await herald.newOrganization('Third');
    for (let index = 0; index < 5; index++) {
      const refused = await herald.rest('GET', '/is-connected', undefined, { authorization: 'hrld_wrong-key-value' });
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('unauthenticated');
    }
    const first = await herald.rest('GET', '/is-connected', undefined, { authorization: other.apiKey });
    expect(first.status).toBe(200);
    expectRateLimitHeaders(first.headers, 3, 2);
  });
});

describe('sliding windows', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald({ API_RATE_LIMIT_PER_HOUR: '3' });
  });
  afterAll(async () => herald?.stop());

  it('let no double burst through at the top of the hour, and free up as the previous hour slides out', async () => {
    herald.setNow(new Date('2031-03-10T10:59:30.000Z'));
    for (let index = 0; index < 3; index++) expect((await herald.rest('GET', '/is-connected')).status).toBe(200);
    expect((await herald.rest('GET', '/is-connected')).status).toBe(429);
    // A minute later a fixed clock-hour window would allow 3 more at once.
    herald.setNow(new Date('2031-03-10T11:00:30.000Z'));
    expect((await herald.rest('GET', '/is-connected')).status).toBe(429);
    // Two thirds into the new hour, a third of the previous hour's 3 still counts (0.975): room for two more, not three.
    herald.setNow(new Date('2031-03-10T11:40:30.000Z'));
    expect((await herald.rest('GET', '/is-connected')).status).toBe(200);
    expect((await herald.rest('GET', '/is-connected')).status).toBe(200);
    expect((await herald.rest('GET', '/is-connected')).status).toBe(429);
    herald.setNow(new Date('2031-03-10T12:00:30.000Z'));
    expect((await herald.rest('GET', '/is-connected')).status).toBe(200);
  });
});

describe('the general per-minute limit', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald({ API_RATE_LIMIT_PER_MINUTE: '5' });
    herald.setNow(new Date('2031-03-10T10:30:00.000Z'));
  });
  afterAll(async () => herald?.stop());

  it('answers 429 past the minute\'s allowance with a Retry-After within the minute', async () => {
    for (let index = 0; index < 5; index++) expect((await herald.rest('GET', '/integrations')).status).toBe(200);
    const limited = await herald.rest('GET', '/integrations');
    expect(limited.status).toBe(429);
    expect(limited.body.message).toContain('5 REST requests per minute');
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(120);
  });
});

describe('the defaults let an agent work', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald({ API_RATE_LIMIT_PER_MINUTE: '' });
  });
  afterAll(async () => herald?.stop());

  it('a hundred calls in a row (list channels, settings, posts...) are all answered, with the per-minute headers', async () => {
    for (let index = 0; index < 100; index++) {
      const answer = await herald.rest('GET', index % 2 ? '/integrations' : '/is-connected');
      expect(answer.status).toBe(200);
    }
    const last = await herald.rest('GET', '/is-connected');
    expect(last.headers.get('ratelimit-limit')).toBe('300');
    expect(Number(last.headers.get('ratelimit-remaining'))).toBeLessThan(300 - 100);
  });
});

describe('post creation limit (CREATE_POST_RATE_LIMIT_PER_HOUR=1)', () => {
  let herald: Herald;
  let fake: BlueskyFake;
  beforeAll(async () => {
    herald = await startHerald({ CREATE_POST_RATE_LIMIT_PER_HOUR: '1' });
    herald.setNow(FIXED_NOW);
    fake = await startBlueskyFake();
  });
  afterAll(async () => {
    await herald?.stop();
    await fake?.close();
  });

  it('the second POST /posts in the hour is 429; other routes still answer', async () => {
    const channel = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
    expect(channel.status).toBe(200);
    const body = {
      type: 'draft',
      date: '2031-03-12T09:00:00.000Z',
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: channel.body.id }, value: [{ content: 'Limited', image: [] }], settings: { __type: 'bluesky' } }],
    };
    const first = await herald.rest('POST', '/posts', body);
    expect(first.status).toBe(200);
    expect(first.body).toEqual([{ postId: expect.any(String), integration: channel.body.id }]);
    const second = await herald.rest('POST', '/posts', body);
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ statusCode: 429, code: 'rate_limited', requestId: expect.any(String) });
    // The weighted sliding hour: this window's one post still weighs fully as the next window opens, then slides out over an hour.
    expect(second.headers.get('retry-after')).toBe('5400');
    expect(second.headers.get('ratelimit-limit')).toBe('1');
    expect((await herald.rest('GET', '/is-connected')).status).toBe(200);
  });
});

describe('post creation limit counts only creates that create something (CREATE_POST_RATE_LIMIT_PER_HOUR=3)', () => {
  let herald: Herald;
  let fake: BlueskyFake;
  beforeAll(async () => {
    herald = await startHerald({ CREATE_POST_RATE_LIMIT_PER_HOUR: '3' });
    herald.setNow(FIXED_NOW);
    fake = await startBlueskyFake();
  });
  afterAll(async () => {
    await herald?.stop();
    await fake?.close();
  });

  it('refused creates (REST 400, MCP {errors}) do not use up the allowance; the fourth real create is 429', async () => {
    const channel = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
    const body = (integration: string, content: string) => ({
      type: 'draft',
      date: '2031-03-12T09:00:00.000Z',
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: integration }, value: [{ content, image: [] }], settings: { __type: 'bluesky' } }],
    });
    for (let attempt = 0; attempt < 5; attempt++) expect((await herald.rest('POST', '/posts', body('no-such-channel', `Mistake ${attempt}`))).status).toBe(400);
    const client = new Client({ name: 'limits', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
    try {
      const refused: any = await client.callTool({
        name: 'schedulePostTool',
        arguments: { socialPost: [{ integrationId: 'no-such-channel', isPremium: false, date: '2031-03-12T09:00:00.000Z', shortLink: false, type: 'draft', postsAndComments: [{ content: 'x', attachments: [] }], settings: [] }] },
      });
      // An agent that checks isError learns that nothing was created; the errors stay in the structured answer.
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent.output.errors).toContain('no-such-channel');
    } finally {
      await client.close();
    }
    for (let created = 0; created < 3; created++) expect((await herald.rest('POST', '/posts', body(channel.body.id, `Real post ${created}`))).status).toBe(200);
    const over = await herald.rest('POST', '/posts', body(channel.body.id, 'One too many'));
    expect(over.status).toBe(429);
  });

  it('says "1 second", not "1 seconds"', () => {
    expect(counted(1, 'second')).toBe('1 second');
    expect(counted(2, 'second')).toBe('2 seconds');
  });
});

describe('GET /social/x with X_CLIENT_ID configured', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald({ X_CLIENT_ID: 'abc' });
  });
  afterAll(async () => herald?.stop());

  it('answers {url} of the X authorization page with PKCE and a sealed state', async () => {
    const response = await herald.rest('GET', '/social/x');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['url']);
    const url = new URL(response.body.url);
    expect(url.pathname).toMatch(/\/i\/oauth2\/authorize$/);
    expect(url.searchParams.get('client_id')).toBe('abc');
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('redirect_uri')).toBe(`${herald.url}/api/integrations/social/x/callback`);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('code_challenge')).toBeTruthy();
    // linkedin is still not configured on this Herald.
    const linkedin = await herald.rest('GET', '/social/linkedin');
    expect(linkedin.status).toBe(400);
    expect(linkedin.body.code).toBe('invalid_input');
    // refresh of an unknown channel is 404.
    const refresh = await herald.rest('GET', '/social/x?refresh=nope');
    expect(refresh.status).toBe(404);
    expect(refresh.body.code).toBe('not_found');
  });
});
