// Nothing hidden: a thread that stops half way says so on REST, MCP, the console and in notifications, and resumes at the
// first item that did not go out; a post being retried shows its attempts, last error and next attempt, network failures
// worded as such; listings page instead of stopping silently at 1,000 posts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { chainOf, createPost, publishUntilSettled } from './helpers/posts.js';
import { startTelegramFake, telegramError, type TelegramFake } from './fakes/telegram.js';
import { publishChain } from '../tools/internal/publish.js';

let herald: Herald;
let telegram: TelegramFake;
let channelId: string;
let browser: ConsoleClient;

beforeAll(async () => {
  telegram = await startTelegramFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const connected = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  channelId = connected.body.id;
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'a long enough password', invitation: await setupToken(herald) });
});

afterAll(async () => {
  await herald?.stop();
  await telegram?.close();
});

const window = () => `startDate=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}&endDate=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`;

describe('a thread whose second item the platform refuses', () => {
  it('is partial everywhere it is shown, with what went out and what did not, and resumes at item 2 when retried', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Part one</p>', '<p>Part two</p>', '<p>Part three</p>'], { type: 'now' });
    // Item 1 goes out, item 2 is refused for good (Telegram's 400 on sendMessage).
    let sends = 0;
    const realFetch = herald.services.fetch;
    herald.services.fetch = async (request) => {
      if (request.url.endsWith('/sendMessage') && ++sends === 2) telegram.failNext('sendMessage', telegramError(400, 'Bad Request: message is too long'));
      return realFetch(request);
    };
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    } finally {
      herald.services.fetch = realFetch;
    }
    const items = await chainOf(herald, rootId);
    expect(items.map((item) => item.state)).toEqual(['PUBLISHED', 'ERROR', 'ERROR']);
    expect(items[1].error).toContain('message is too long');
    expect(items[2].error).toMatch(/^Not attempted: item 2 failed/);

    // REST
    const listed = (await herald.rest('GET', `/posts?${window()}`)).body.posts.find((post: { id: string }) => post.id === rootId);
    expect(listed.state).toBe('PUBLISHED');
    expect(listed.publishStatus).toBe('partial');
    expect(listed.error).toMatch(/^Published in part: 1 of 3 items went out; item 2 failed: .*message is too long; 1 later item was not attempted/);
    expect(listed.items.map((item: { state: string }) => item.state)).toEqual(['PUBLISHED', 'ERROR', 'ERROR']);
    expect(listed.items[0].releaseURL).toBeTruthy();
    // MCP
    const client = new Client({ name: 'visibility', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
    const result = await client.callTool({ name: 'postsListTool', arguments: { startDate: new Date(Date.now() - 86_400_000).toISOString(), endDate: new Date(Date.now() + 86_400_000).toISOString() } });
    const viaMcp = (result.structuredContent as { posts: { id: string; publishStatus: string }[] }).posts.find((post) => post.id === rootId);
    expect(viaMcp?.publishStatus).toBe('partial');
    await client.close();
    // Notification
    const notifications = (await herald.rest('GET', '/notifications')).body.notifications as { type: string; content: string }[];
    const partial = notifications.find((notification) => notification.type === 'post_partial');
    expect(partial?.content).toMatch(/published only in part: item 1 .* went out; item 2 failed: .*; item 3 was not sent\. Retry the post to resume at item 2\./);
    // Console
    const page = await browser.get('/posts');
    expect(page.text).toContain('Published in part');
    expect(page.text).toContain('Item 1</a>');

    // Retry: resumes at item 2; item 1 is not sent again.
    const before = telegram.messages.length;
    expect((await herald.rest('PUT', `/posts/${rootId}/status`, { status: 'schedule' })).body).toEqual({ id: rootId, state: 'QUEUE' });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(telegram.messages.slice(before).map((message) => message.text)).toEqual(['Part two', 'Part three']);
    const resumed = await chainOf(herald, rootId);
    expect(resumed.map((item) => item.state)).toEqual(['PUBLISHED', 'PUBLISHED', 'PUBLISHED']);
    expect(telegram.messages.at(-1)?.reply_to_message_id).toBe(Number(resumed[1].releaseId));
    // A fully published post is never re-queued.
    expect((await herald.rest('PUT', `/posts/${rootId}/status`, { status: 'schedule' })).status).toBe(409);
  });
});

describe('a post being retried', () => {
  it('shows its attempts, the last error worded as a network failure, and the next attempt, everywhere', async () => {
    herald.services.config.socialEndpoints.telegram = { api: 'http://telegram.invalid' };
    try {
      const rootId = await createPost(herald, channelId, ['<p>Unreachable</p>'], { type: 'now' });
      const outcome = await publishChain(herald.services, rootId);
      expect(outcome.kind).toBe('waiting');
      const listed = (await herald.rest('GET', `/posts?${window()}`)).body.posts.find((post: { id: string }) => post.id === rootId);
      expect(listed.publishStatus).toBe('retrying');
      expect(listed.state).toBe('QUEUE');
      expect(listed.attempts).toBe(1);
      expect(listed.lastError).toBe('Could not reach Telegram: DNS lookup failed');
      expect(new Date(listed.nextAttemptAt).getTime()).toBeGreaterThan(Date.now());
      expect(listed.error).toBeNull();
      const page = await browser.get('/posts');
      expect(page.text).toContain('Retrying');
      expect(page.text).toContain('Attempt 1 failed: Could not reach Telegram: DNS lookup failed. Next attempt');
      await herald.rest('DELETE', `/posts/${rootId}`);
    } finally {
      herald.services.config.socialEndpoints.telegram = { api: telegram.url };
    }
  });
});

describe('listings never truncate silently', () => {
  it('1,200 posts in a window come in pages of at most 1,000, with nextCursor until the last', async () => {
    const date = new Date(Date.now() + 10 * 86_400_000);
    const body = {
      type: 'draft',
      date: date.toISOString(),
      shortLink: false,
      tags: [],
      posts: Array.from({ length: 200 }, (_, index) => ({ integration: { id: channelId }, value: [{ content: `Bulk ${index}`, image: [] }], settings: {} })),
    };
    for (let request = 0; request < 6; request++) expect((await herald.rest('POST', '/posts', body)).status).toBe(200);
    const range = `startDate=${encodeURIComponent(new Date(date.getTime() - 1000).toISOString())}&endDate=${encodeURIComponent(new Date(date.getTime() + 1000).toISOString())}`;
    const first = await herald.rest('GET', `/posts?${range}`);
    expect(first.body.posts).toHaveLength(1000);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await herald.rest('GET', `/posts?${range}&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.posts).toHaveLength(200);
    expect(second.body.nextCursor).toBeNull();
    const ids = new Set([...first.body.posts, ...second.body.posts].map((post: { id: string }) => post.id));
    expect(ids.size).toBe(1200);
    const small = await herald.rest('GET', `/posts?${range}&limit=500`);
    expect(small.body.posts).toHaveLength(500);
    expect((await herald.rest('GET', `/posts?${range}&cursor=bogus`)).status).toBe(400);
  });
});
