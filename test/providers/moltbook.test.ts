// Moltbook end to end against its fake: the agent API key checked at connect (unclaimed agents refused), text posts in the
// submolt with comments replying down the chain, the 30-minute post limit waited out, refusals, the verification challenge
// Herald cannot answer (the post found again once answered, never created twice), and analytics.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startMoltbookFake, type MoltbookFake } from '../fakes/moltbook.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { upload } from '../helpers/media-samples.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

let fake: MoltbookFake;
let herald: Herald;
let channelId: string;
const settings = (submolt = 'general') => ({ __type: 'moltbook', submolt });

beforeAll(async () => {
  fake = await startMoltbookFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ moltbook: fake.endpoints }) }, { guard: { allowLoopback: true } });
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

beforeEach(() => fake.resetRateLimits());

describe('connecting an agent', () => {
  it("refuses a wrong API key with Moltbook's reason", async () => {
    const refused = await herald.rest('POST', '/integrations/moltbook/connect', { apiKey: 'moltbook_sk_wrong' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Moltbook refused the connection: the agent API key was refused (Invalid API key — Check your API key; it starts with moltbook_)');
  });

  it('refuses an agent its human has not claimed yet, naming the claim link', async () => {
    fake.agent.status = 'pending_claim';
    try {
      const refused = await herald.rest('POST', '/integrations/moltbook/connect', { apiKey: fake.apiKey });
      expect(refused.body.message).toMatch(/the agent "herald_agent" is not claimed yet \(pending_claim\): its human must claim it at https:\/\/www\.moltbook\.com\/claim\//);
    } finally {
      fake.agent.status = 'claimed';
    }
  });

  it('connects a claimed agent with its key as the bearer token', async () => {
    const connected = await herald.rest('POST', '/integrations/moltbook/connect', { apiKey: fake.apiKey });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    channelId = connected.body.id;
    expect(connected.body).toMatchObject({ identifier: 'moltbook', name: 'Herald Agent', profile: 'herald_agent' });
    expect(fake.server.requestsTo('GET', '/api/v1/agents/me').at(-1)!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
  });
});

describe('publishing', () => {
  it('posts in the submolt through the worker, titled by its first line, then comments down the chain', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, ['Agents can schedule now\nHerald publishes for us.', 'Details in a comment', 'And a reply'], { settings: settings('agents') });
      const items = await waitForPublished(herald, rootId);
      const post = fake.posts.at(-1)!;
      expect(post).toMatchObject({ submolt: 'agents', title: 'Agents can schedule now', content: 'Agents can schedule now\nHerald publishes for us.' });
      expect(items[0]).toMatchObject({ releaseId: post.id, releaseUrl: `${fake.url}/post/${post.id}` });
      const [first, reply] = fake.comments.slice(-2);
      expect([first.postId, first.parentId, first.content]).toEqual([post.id, null, 'Details in a comment']);
      expect([reply.postId, reply.parentId]).toEqual([post.id, first.id]);
      expect(items[2].releaseId).toBe(reply.id);
    } finally {
      await worker.stop();
    }
  });

  it('refuses pictures at creation: Moltbook takes text only', async () => {
    const uploaded = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
    const refused = await submitPost(herald, channelId, [{ content: 'x', image: [{ id: uploaded.body.id, path: uploaded.body.path }] }], { settings: settings() });
    expect(refused.body.message).toMatch(/Moltbook takes text only/);
  });

  it('waits out the 30-minute post limit Moltbook answers with a 429', async () => {
    await createPost(herald, channelId, ['First'], { settings: settings() }).then((id) => publishChain(herald.services, id));
    const rootId = await createPost(herald, channelId, ['Too soon'], { settings: settings() });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(29 * 60_000);
    expect(waiting.lastError).toMatch(/one post every 30 minutes/);
    fake.resetRateLimits();
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it("puts a post in an unknown submolt in ERROR with Moltbook's words, and notifies", async () => {
    const rootId = await createPost(herald, channelId, ['Where?'], { settings: settings('nowhere') });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toBe('Moltbook refused the post: Submolt not found — m/nowhere does not exist (HTTP 404)');
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('Submolt not found'))).toBe(true);
  });

  it('stops a post held for the verification challenge with its code, and finds it once answered instead of posting again', async () => {
    fake.requireVerification = true;
    try {
      const rootId = await createPost(herald, channelId, ['Prove it'], { settings: settings() });
      expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
      const held = fake.posts.at(-1)!;
      const [failed] = await chainOf(herald, rootId);
      expect(failed.error).toContain(`Moltbook holds post ${held.id} until its verification challenge is answered ("A] lObStEr ClAw FoRcE Is TeN AnD GaInS FiVe")`);
      expect(failed.error).toContain(`"verification_code": "${held.verification!.code}"`);
      // The agent answers the challenge itself, then the post is retried.
      await fetch(`${fake.endpoints.api}/verify`, { method: 'POST', headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ verification_code: held.verification!.code, answer: '15.00' }) });
      expect((await herald.rest('PUT', `/posts/${rootId}/status`, { status: 'schedule' })).status).toBe(200);
      const count = fake.posts.length;
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      expect(fake.posts).toHaveLength(count);
      expect((await chainOf(herald, rootId))[0].releaseId).toBe(held.id);
    } finally {
      fake.requireVerification = false;
    }
  });
});

describe('an interrupted post', () => {
  it('stops a post whose answer was lost after Moltbook made it with "could not confirm" (no marker to look it up by), and never posts it twice', async () => {
    fake.resetRateLimits();
    const rootId = await createPost(herald, channelId, ['Lost on the way back'], { settings: settings() });
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/api/v1/posts') || request.url.endsWith('/posts'));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    } finally {
      restore();
    }
    expect((await chainOf(herald, rootId))[0].error).toMatch(/^Could not confirm whether Moltbook published this item/);
    expect(fake.posts.filter((post) => post.content === 'Lost on the way back')).toHaveLength(1);
  });
});

describe('analytics', () => {
  it("reads a post's votes and comments, and the agent's karma", async () => {
    const post = fake.posts.find((item) => item.submolt === 'agents')!;
    post.upvotes = 9;
    const [root] = (await herald.rest('GET', `/posts?startDate=${new Date(Date.now() - 86_400_000).toISOString()}&endDate=${new Date(Date.now() + 86_400_000).toISOString()}`)).body.posts.filter(
      (item: { releaseId: string }) => item.releaseId === post.id,
    );
    const metrics = await herald.rest('GET', `/analytics/post/${root.id}?date=7`);
    expect(metrics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Upvotes', '9'],
      ['Downvotes', '0'],
      ['Comments', '2'],
    ]);
    const account = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(account.body).toEqual([{ label: 'Karma', data: [{ total: '42', date: expect.any(String) }], percentageChange: 0 }]);
  });
});
