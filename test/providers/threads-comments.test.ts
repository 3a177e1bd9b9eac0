// Threads replies and changes (issue 24) against the Threads fake, through Herald: the replies under a published post read
// by the comment poll (every depth, paged), a reply published once as a reply to THAT reply, hiding (top-level replies only),
// deleting a reply refused (the API has none), a post deleted on Threads exactly once, an edit refused with the reason, and
// the fake's refusals (a token without the permission, another person's post).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import threads from '../../providers/threads/index.js';
import { PostSchema } from '../../src/db/entities.js';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { startThreadsFake, type ThreadsFake } from '../fakes/threads.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishUntilSettled, reopenAsInterrupted, publishedPost } from '../helpers/posts.js';
import { providerContext } from '../helpers/provider-context.js';
import { pollCommentsAt, changeUntilSettled } from '../helpers/after-publishing.js';

let fake: ThreadsFake;
let herald: Herald;
let channelId: string;
const endpoints = () => ({ authorize: fake.url, graph: fake.url, graphVersion: 'v1.0' });

beforeAll(async () => {
  fake = await startThreadsFake();
  herald = await startHerald(
    {
      THREADS_CLIENT_ID: fake.oauth.clientId,
      THREADS_CLIENT_SECRET: fake.oauth.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ threads: { authorize: fake.url, graph: fake.url } }),
      COMMENT_POLL_SECONDS: '60',
    },
    { guard: { allowLoopback: true } },
  );
  channelId = (await connectOAuthChannel(herald, 'threads')).integrationId;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const pollAt = (minutes: number) => pollCommentsAt(herald, minutes);

async function published(parts: string[]) {
  return publishedPost(herald, channelId, parts, { type: 'now', allowDuplicate: true });
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

describe('Threads replies', () => {
  it('asks for the permissions replies and deletions need', async () => {
    expect(threads.auth.scopes).toEqual(expect.arrayContaining(['threads_read_replies', 'threads_manage_replies', 'threads_delete']));
  });

  it('reads every reply under a post at any depth (several pages), stores each once, and answers one as a reply to THAT reply, once', async () => {
    const id = await published(['What do you think of Herald?']);
    const [post] = await chainOf(herald, id);
    const first = fake.addReply(post.releaseId!, 'Love it', { createdAt: new Date(Date.now() - 3000) });
    const nested = fake.addReply(first.id, 'Me too', { username: 'carol.threads', createdAt: new Date(Date.now() - 2000) });
    const second = fake.addReply(post.releaseId!, 'When is the next release?', { createdAt: new Date(Date.now() - 1000) });
    await pollAt(5);
    await pollAt(10);

    const listed = await herald.rest('GET', `/comments?post=${id}`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.total).toBe(3);
    const byId = Object.fromEntries(listed.body.comments.map((comment: any) => [comment.platformId, comment]));
    expect(byId[first.id]).toMatchObject({ platform: 'threads', text: 'Love it', parentId: null, author: { handle: 'bob.threads' } });
    expect(byId[nested.id]).toMatchObject({ text: 'Me too', parentPlatformId: first.id, parentId: byId[first.id].id, author: { handle: 'carol.threads' } });
    // Three replies at two per page: the conversation was read over two pages, newest first.
    const reads = fake.server.requestsTo('GET', '/v1.0/*/conversation');
    expect(reads.some((request) => request.query.get('after') === '2')).toBe(true);

    const reply = await herald.rest('POST', `/comments/${byId[second.id].id}/reply`, { content: 'Next week!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    // Interrupted after the publish call reached Threads: the container says PUBLISHED, the reply is found, not made again.
    const replyPost = await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: reply.body.postId });
    await reopenAsInterrupted(herald, replyPost.id, () => ({ ...replyPost.publishProgress!.steps, publish: { state: 'started' } }));
    expect((await publishUntilSettled(herald, replyPost.id)).outcome.kind).toBe('published');

    const answers = fake.posts.filter((item) => item.text === 'Next week!');
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ reply_to_id: second.id, username: fake.user.username });
    expect((await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: replyPost.id })).releaseId).toBe(answers[0].id);

    // Herald's own reply shows in the conversation, but is not stored as a comment; the one it answers is answered.
    await pollAt(20);
    const after = (await herald.rest('GET', `/comments?post=${id}`)).body;
    expect(after.total).toBe(3);
    expect(after.comments.find((comment: any) => comment.platformId === second.id).state).toBe('answered');
  });

  it('hides and shows again a top-level reply; a nested one is refused with the reason; deleting a reply is not offered', async () => {
    const id = await published(['Moderation on Threads']);
    const [post] = await chainOf(herald, id);
    const spam = fake.addReply(post.releaseId!, 'Buy followers');
    const under = fake.addReply(spam.id, 'Nested spam');
    await pollAt(5);
    const comments = (await herald.rest('GET', `/comments?post=${id}`)).body.comments as any[];
    const top = comments.find((comment) => comment.platformId === spam.id);
    const nested = comments.find((comment) => comment.platformId === under.id);

    const hidden = await herald.rest('POST', `/comments/${top.id}/hide`, { hidden: true });
    expect(hidden.status, JSON.stringify(hidden.body)).toBe(200);
    expect(spam.hide_status).toBe('HIDDEN');
    const [call] = fake.server.requestsTo('POST', `/v1.0/${spam.id}/manage_reply`);
    expect(call.form?.get('hide')).toBe('true');
    expect((await herald.rest('POST', `/comments/${top.id}/hide`, { hidden: false })).status).toBe(200);
    expect(spam.hide_status).toBe('UNHUSHED');

    const refused = await herald.rest('POST', `/comments/${nested.id}/hide`, { hidden: true });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'not_supported' });
    expect(refused.body.message).toMatch(/only the replies directly under your post/);
    expect(fake.server.requestsTo('POST', `/v1.0/${under.id}/manage_reply`)).toHaveLength(0);

    const deleted = await herald.rest('DELETE', `/comments/${top.id}`);
    expect(deleted.status).toBe(400);
    expect(deleted.body).toMatchObject({ code: 'not_supported' });
    expect(fake.posts).toContain(spam);
  });

  it('reads a hidden reply as hidden', async () => {
    const id = await published(['Hidden before Herald read it']);
    const [post] = await chainOf(herald, id);
    const reply = fake.addReply(post.releaseId!, 'Hidden in the app');
    reply.hide_status = 'HIDDEN';
    await pollAt(5);
    const [comment] = (await herald.rest('GET', `/comments?post=${id}`)).body.comments;
    expect(comment).toMatchObject({ platformId: reply.id, state: 'hidden' });
  });

  it('the fake refuses as Threads does: no threads_read_replies, no threads_manage_replies, another person\'s post', async () => {
    const own = fake.posts.find((item) => item.username === fake.user.username && item.reply_to_id === null)!;
    const context = (permissions: string[]) => providerContext({ endpoints: endpoints(), auth: fake.channelAuth(permissions) });
    await expect(threads.comments!(context(['threads_basic']), { id: own.id }, undefined)).rejects.toThrow(/lacks a permission .*threads_read_replies/);
    const reply = fake.addReply(own.id, 'To hide');
    await expect(threads.hideComment!(context(['threads_basic', 'threads_read_replies']), { id: reply.id, meta: { parent: own.id } }, true, { id: own.id })).rejects.toThrow(/threads_manage_replies/);
    const foreign = fake.addReply(own.id, 'Someone else\'s reply');
    const theirs = fake.addReply(foreign.id, 'Under someone else\'s reply', { username: 'dan.threads' });
    // A reply under a reply is not the account's post: its replies are not the account's to read, nor to delete.
    foreign.reply_to_id = null;
    try {
      await expect(threads.comments!(context(['threads_basic', 'threads_read_replies']), { id: foreign.id }, undefined)).rejects.toThrow(/another person's post/);
    } finally {
      foreign.reply_to_id = own.id;
    }
    await expect(threads.deletePublished!(context(['threads_basic', 'threads_delete']), { id: theirs.id })).rejects.toThrow(/lacks a permission .*only the author/);
    expect(fake.posts).toContain(theirs);
  });
});

describe('changing a Threads post', () => {
  it('deletes a published thread on Threads, exactly once, a lost answer resumed without deleting anything else', async () => {
    const id = await published(['Delete me, one', 'Delete me, two']);
    const [first, second] = await chainOf(herald, id);
    const answer = await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.onPlatform.pending.map((item: { id: string }) => item.id)).toEqual([first.id, second.id]);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE');
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(fake.deleted.map((post) => post.id)).toEqual([second.releaseId, first.releaseId]);
    // Each lost answer was followed by a second call that found the post gone (code 100/33) and took that as done.
    expect(fake.server.requestsTo('DELETE', '/v1.0/*').length).toBeGreaterThanOrEqual(3);
    expect(fake.posts.some((post) => post.id === first.releaseId || post.id === second.releaseId)).toBe(false);
  });

  it('refuses an edit with the reason: the Threads API cannot edit a post', async () => {
    const id = await published(['Cannot be edited']);
    const refused = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Edited', image: [] }] });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/Threads API cannot edit a published post/);
  });
});
