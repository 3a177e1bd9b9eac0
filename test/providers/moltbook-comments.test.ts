// Moltbook comments and changes through Herald against its fake (issue 24): the poll reads a post's comment tree
// (GET /posts/{id}/comments, replies nested) flattened with each comment's parent; a reply lands under THAT comment
// (parent_id), once, and one held for the verification challenge stops with its code and is found once answered; deleting
// another agent's comment is refused (Moltbook lets only its author delete it); a published post and its comments are deleted
// on Moltbook (DELETE /comments/{id}, DELETE /posts/{id}), a repeat after a lost answer deleting nothing else; an edit is
// refused with Moltbook's reason.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CommentSchema } from '../../src/db/comment-entities.js';
import { startMoltbookFake, type MoltbookFake } from '../fakes/moltbook.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { hoursAgo, loseAnswerOf } from '../helpers/lost-answer.js';
import { changeUntilSettled, pollCommentsAt } from '../helpers/after-publishing.js';
import { publishChain } from '../../tools/internal/publish.js';
import { chainOf, publishedPost, publishUntilSettled } from '../helpers/posts.js';

let fake: MoltbookFake;
let herald: Herald;
let channelId: string;

beforeAll(async () => {
  fake = await startMoltbookFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ moltbook: fake.endpoints }), COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  const connected = await herald.rest('POST', '/integrations/moltbook/connect', { apiKey: fake.apiKey });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

beforeEach(() => fake.resetRateLimits());

async function published(parts: string[]) {
  fake.resetRateLimits();
  const id = await publishedPost(herald, channelId, parts, { settings: { __type: 'moltbook', submolt: 'general' }, type: 'now', allowDuplicate: true });
  return { id, items: await chainOf(herald, id) };
}

/** The post as GET /posts lists it (around now), or undefined once it is gone from Herald. */
async function listed(id: string) {
  const day = 86_400_000;
  const query = new URLSearchParams({ startDate: new Date(Date.now() - day).toISOString(), endDate: new Date(Date.now() + 2 * day).toISOString() });
  return ((await herald.rest('GET', `/posts?${query}`)).body.posts as { id: string }[]).find((post) => post.id === id);
}

async function listedComments(postId: string) {
  const answer = await herald.rest('GET', `/comments?post=${postId}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.comments as Record<string, any>[];
}

describe('reading comments', () => {
  it("reads the post's comment tree with each reply's parent, leaving out the agent's own comments", async () => {
    const { id, items } = await published(['Ask the agents', 'My own chain comment']);
    const post = items[0].releaseId!;
    const question = fake.addComment(post, 'What do you run on?', { createdAt: new Date(Date.now() - 60_000) });
    const followUp = fake.addComment(post, 'And how often?', { parentId: question.id, author: 'third_agent' });
    await pollCommentsAt(herald, 5);

    const requests = fake.server.requestsTo('GET', '/api/v1/posts/*/comments');
    expect(requests.at(-1)!.query.get('sort')).toBe('old');
    const stored = await herald.services.orm.em.fork().find(CommentSchema, { postId: id }, { orderBy: { text: 'asc' } });
    // Herald's own chain comment (the agent's) is no comment to answer: only the two by other agents are stored.
    expect(stored.map((comment) => [comment.text, comment.platformId, comment.parentPlatformId ?? null])).toEqual([
      ['And how often?', followUp.id, question.id],
      ['What do you run on?', question.id, null],
    ]);
  });
});

describe('replying to a comment', () => {
  it('publishes the reply once under THAT comment (parent_id), not under the post', async () => {
    const { id, items } = await published(['Questions welcome']);
    const post = items[0].releaseId!;
    const first = fake.addComment(post, 'First question');
    const nested = fake.addComment(post, 'A nested question', { parentId: first.id });
    await pollCommentsAt(herald, 5);
    const target = (await listedComments(id)).find((comment) => comment.text === 'A nested question')!;

    const reply = await herald.rest('POST', `/comments/${target.id}/reply`, { content: 'Here is the answer' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    const sent = fake.comments.filter((comment) => comment.content === 'Here is the answer');
    expect(sent.map((comment) => [comment.postId, comment.parentId])).toEqual([[post, nested.id]]);
    expect(fake.server.requestsTo('POST', `/api/v1/posts/${post}/comments`).at(-1)!.json).toEqual({ content: 'Here is the answer', parent_id: nested.id });
    expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(sent[0].id);
  });

  it('stops a reply held for the verification challenge with its code, and finds it once answered instead of commenting again', async () => {
    const { id, items } = await published(['Prove your replies']);
    fake.addComment(items[0].releaseId!, 'Are you a bot?');
    await pollCommentsAt(herald, 5);
    const [target] = await listedComments(id);
    fake.requireCommentVerification = true;
    try {
      const reply = await herald.rest('POST', `/comments/${target.id}/reply`, { content: 'Of course' });
      expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('failed');
      const held = fake.comments.at(-1)!;
      expect((await chainOf(herald, reply.body.postId))[0].error).toContain(`Moltbook holds comment ${held.id} until its verification challenge is answered`);
      await fetch(`${fake.endpoints.api}/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ verification_code: held.verification!.code, answer: '15.00' }),
      });
      expect((await herald.rest('PUT', `/posts/${reply.body.postId}/status`, { status: 'schedule' })).status).toBe(200);
      const count = fake.comments.length;
      expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
      expect(fake.comments).toHaveLength(count);
      expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(held.id);
    } finally {
      fake.requireCommentVerification = false;
    }
  });
});

describe('the comment limit', () => {
  it("waits out Moltbook's one comment every 20 seconds with the retry it answers, then replies", async () => {
    const { id, items } = await published(['Busy thread']);
    fake.addComment(items[0].releaseId!, 'Quick question');
    await pollCommentsAt(herald, 5);
    const [target] = await listedComments(id);
    const reply = await herald.rest('POST', `/comments/${target.id}/reply`, { content: 'Quick answer' });
    fake.commentCooldownSeconds = 20;
    try {
      // Another comment of the agent just went out: the reply must wait, not fail.
      await fetch(`${fake.endpoints.api}/posts/${items[0].releaseId}/comments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'Said elsewhere just now' }),
      });
      const started = Date.now();
      expect((await publishChain(herald.services, reply.body.postId)).kind).toBe('waiting');
      const [waiting] = await chainOf(herald, reply.body.postId);
      expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(15_000);
      expect(waiting.lastError).toMatch(/one comment every 20 seconds/);
      fake.resetRateLimits();
      expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
      expect(fake.comments.filter((comment) => comment.content === 'Quick answer')).toHaveLength(1);
    } finally {
      fake.commentCooldownSeconds = 0;
    }
  });
});

describe('an interrupted reply', () => {
  it('finds the reply whose answer was lost among the newest comments, never an older identical one, and never comments twice', async () => {
    const { id, items } = await published(['Lost replies']);
    const question = fake.addComment(items[0].releaseId!, 'Did it arrive?');
    await pollCommentsAt(herald, 5);
    const [target] = await listedComments(id);
    // The agent said the same under the same comment hours ago: that one is not the reply.
    const older = fake.addComment(items[0].releaseId!, 'Yes', { parentId: question.id, author: 'herald_agent', createdAt: hoursAgo(3) });
    const reply = await herald.rest('POST', `/comments/${target.id}/reply`, { content: 'Yes' });
    const posted = () => fake.server.requestsTo('POST', `/api/v1/posts/${items[0].releaseId}/comments`).length;
    const before = posted();
    const restore = loseAnswerOf(herald, (request) => request.json !== undefined && request.url.endsWith(`/posts/${items[0].releaseId}/comments`));
    try {
      expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(posted() - before).toBe(1);
    const sent = fake.comments.filter((comment) => comment.content === 'Yes' && comment.parentId === question.id);
    expect(sent).toHaveLength(2);
    expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(sent.find((comment) => comment.id !== older.id)!.id);
  });
});

describe('moderating comments', () => {
  it("refuses to delete or hide another agent's comment: Moltbook lets only its author delete it", async () => {
    const { id, items } = await published(['Moderation on Moltbook']);
    const spam = fake.addComment(items[0].releaseId!, 'spam spam');
    await pollCommentsAt(herald, 5);
    const [comment] = await listedComments(id);
    const deleted = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(deleted.status).toBe(400);
    expect(deleted.body).toMatchObject({ code: 'not_supported' });
    expect(deleted.body.message).toContain('Moltbook lets an agent delete only its own comments');
    expect(fake.server.requestsTo('DELETE', `/api/v1/comments/${spam.id}`)).toHaveLength(1);
    expect(spam.deleted).toBeUndefined();
    const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(hidden.body).toMatchObject({ code: 'not_supported' });
  });
});

describe('changing what went out', () => {
  it('deletes a post and its comment on Moltbook, and a repeat after a lost answer deletes nothing else', async () => {
    const other = await published(['Another post that must stay']);
    const { id, items } = await published(['Delete me', 'And my comment']);
    const [root, comment] = items;
    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE' && request.url.includes('/api/v1/posts/'));
    let runs;
    try {
      runs = await changeUntilSettled(herald, id);
    } finally {
      restore();
    }
    // The answer of the post's DELETE was lost; the run again finds it gone (404) and counts it deleted.
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(await listed(id)).toBeUndefined();
    expect(fake.server.requestsTo('DELETE', `/api/v1/comments/${comment.releaseId}`)).toHaveLength(1);
    expect(fake.comments.find((item) => item.id === comment.releaseId)!.deleted).toBe(true);
    expect(fake.deletedPosts.map((post) => post.id)).toEqual([root.releaseId]);
    expect(fake.posts.some((post) => post.id === other.items[0].releaseId)).toBe(true);
    expect(fake.server.requestsTo('DELETE', '/api/v1/posts/*').map((request) => request.path)).toEqual([
      `/api/v1/posts/${root.releaseId}`,
      `/api/v1/posts/${root.releaseId}`,
    ]);
  });

  it("refuses an edit with Moltbook's reason: its API has no edit", async () => {
    const { id } = await published(['Cannot be edited']);
    const refused = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Edited', image: [] }] });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain('Moltbook cannot edit a post or comment');
  });
});
