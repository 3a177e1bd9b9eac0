// One request may hold several entries for the same channel: each entry is its own chain, published exactly once, in order,
// with its replies pointing at its own items (REST and MCP alike), while deleting one post still deletes its whole group.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { chainOf, waitFor } from './helpers/posts.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { PostSchema } from '../src/db/entities.js';
import type { Worker } from '../src/jobs/index.js';

let herald: Herald;
let telegram: TelegramFake;
let channelId: string;
let worker: Worker;

beforeAll(async () => {
  telegram = await startTelegramFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const connected = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
  worker = await herald.startWorker();
});

afterAll(async () => {
  await herald?.stop();
  await telegram?.close();
});

/** Every message received, by text: each must appear once; replies must point at the message of the same entry. */
function checkExactlyOnce(texts: string[][]) {
  const byText = new Map<string, typeof telegram.messages>();
  for (const message of telegram.messages) byText.set(message.text ?? '', [...(byText.get(message.text ?? '') ?? []), message]);
  for (const entry of texts) {
    const [first, ...rest] = entry;
    expect(byText.get(first), first).toHaveLength(1);
    let parent = byText.get(first)![0];
    expect(parent.reply_to_message_id).toBeUndefined();
    for (const text of rest) {
      expect(byText.get(text), text).toHaveLength(1);
      const message = byText.get(text)![0];
      expect(message.reply_to_message_id, `${text} replies to its own entry's previous item`).toBe(parent.message_id);
      expect(message.message_id).toBeGreaterThan(parent.message_id);
      parent = message;
    }
  }
}

const allPublished = (rootIds: string[]) => async () => {
  const chains = await Promise.all(rootIds.map((id) => chainOf(herald, id)));
  return chains.every((chain) => chain.every((item) => item.state === 'PUBLISHED')) ? chains : undefined;
};

describe('several entries for one channel in one request', () => {
  it('REST: ten two-item threads for one Telegram channel are each published exactly once, in order, through the worker', async () => {
    const before = telegram.messages.length;
    const texts = Array.from({ length: 10 }, (_, index) => [`Entry ${index} first`, `Entry ${index} second`]);
    const response = await herald.rest('POST', '/posts', {
      type: 'now',
      shortLink: false,
      tags: [],
      posts: texts.map((entry) => ({ integration: { id: channelId }, value: entry.map((content) => ({ content: `<p>${content}</p>`, image: [] })), settings: {} })),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const rootIds = (response.body as { postId: string }[]).map((created) => created.postId);
    expect(new Set(rootIds).size).toBe(10);
    const chains = await waitFor(allPublished(rootIds), 30_000);
    expect(telegram.messages.length - before).toBe(20);
    checkExactlyOnce(texts);
    // All ten entries share the request's group; each chain has its own root.
    expect(new Set(chains.map((chain) => chain[0].group)).size).toBe(1);
    for (const [index, chain] of chains.entries()) {
      expect(chain.map((item) => item.rootPostId)).toEqual([rootIds[index], rootIds[index]]);
      expect(chain[1].parentPostId).toBe(chain[0].id);
    }
    // Time passing sends nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(telegram.messages.length - before).toBe(20);

    // GET /posts lists the ten roots, not the thread items.
    const listed = await herald.rest('GET', `/posts?startDate=${new Date(Date.now() - 3600_000).toISOString()}&endDate=${new Date(Date.now() + 3600_000).toISOString()}`);
    const listedIds = (listed.body.posts as { id: string }[]).map((post) => post.id);
    expect(rootIds.every((id) => listedIds.includes(id))).toBe(true);

    // Deleting one post deletes its whole group (every entry of the request).
    expect((await herald.rest('DELETE', `/posts/${rootIds[3]}`)).status).toBe(200);
    const remaining = await herald.services.orm.em.fork().count(PostSchema, { group: chains[0][0].group, deletedAt: null });
    expect(remaining).toBe(0);
  });

  it('MCP: several socialPost items for one channel, each a two-item thread, are each published exactly once', async () => {
    const before = telegram.messages.length;
    const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
    const client = new Client({ name: 'chains-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const texts = Array.from({ length: 5 }, (_, index) => [`MCP ${index} one`, `MCP ${index} two`]);
      const result = await client.callTool({
        name: 'schedulePostTool',
        arguments: {
          socialPost: texts.map((entry) => ({
            integrationId: channelId,
            isPremium: false,
            date: new Date().toISOString(),
            shortLink: false,
            type: 'now',
            postsAndComments: entry.map((content) => ({ content: `<p>${content}</p>`, attachments: [] })),
            settings: [],
          })),
        },
      });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const created = (result.structuredContent as { output: { postId: string }[] }).output;
      expect(created).toHaveLength(5);
      await waitFor(allPublished(created.map((item) => item.postId)), 30_000);
      expect(telegram.messages.length - before).toBe(10);
      checkExactlyOnce(texts);
    } finally {
      await client.close();
    }
  });

  it('the sweep re-enqueues each chain by its own root, never by group and channel', async () => {
    await worker.stop();
    const before = telegram.messages.length;
    const texts = Array.from({ length: 3 }, (_, index) => [`Swept ${index} a`, `Swept ${index} b`]);
    const response = await herald.rest('POST', '/posts', {
      type: 'now',
      shortLink: false,
      tags: [],
      posts: texts.map((entry) => ({ integration: { id: channelId }, value: entry.map((content) => ({ content, image: [] })), settings: {} })),
    });
    const rootIds = (response.body as { postId: string }[]).map((created) => created.postId);
    // Lose every job, then let the sweep find the due chains again.
    await herald.services.orm.em.fork().getConnection().execute(`delete from graphile_worker._private_jobs`);
    const { sweepDuePosts } = await import('../tools/internal/queue.js');
    expect(await sweepDuePosts(herald.services.orm.em.fork(), new Date())).toBe(3);
    worker = await herald.startWorker();
    await waitFor(allPublished(rootIds), 30_000);
    expect(telegram.messages.length - before).toBe(6);
    checkExactlyOnce(texts);
  });
});
