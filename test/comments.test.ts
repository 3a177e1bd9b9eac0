// Comments people leave on published posts: read by the poll from the fake platforms (Mastodon's status context, Bluesky's
// getPostThread), stored once, announced (notification, comment.created webhook event), listed with filters over REST, and
// answered once with a reply published by the same machinery as posts (recorded steps, recovery, the per-comment guard).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted } from './helpers/posts.js';
import { CommentPollSchema, CommentSchema } from '../src/db/comment-entities.js';
import { PostSchema } from '../src/db/entities.js';
import { pollCommentsAt } from './helpers/after-publishing.js';

let herald: Herald;
let mastodon: MastodonFake;
let bluesky: BlueskyFake;
let mastodonChannel: string;
let blueskyChannel: string;

const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

/** Runs the poll as the worker would once the post is due (the clock moved past its next read). */
const pollAt = (date: Date) => pollCommentsAt(herald, date);

async function publishedPost(channel: string, text: string) {
  const id = await createPost(herald, channel, [text]);
  const { outcome } = await publishUntilSettled(herald, id);
  expect(outcome.kind).toBe('published');
  return (await chainOf(herald, id))[0];
}

beforeAll(async () => {
  mastodon = await startMastodonFake();
  bluesky = await startBlueskyFake();
  herald = await startHerald({ COMMENT_POLL_SECONDS: '60' });
  const connect = async (identifier: string, fields: Record<string, string>) => {
    const response = await herald.rest('POST', `/integrations/${identifier}/connect`, fields);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.id as string;
  };
  mastodonChannel = await connect('mastodon', { instance: mastodon.url, accessToken: mastodon.token });
  blueskyChannel = await connect('bluesky', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
});

afterAll(async () => {
  await herald?.stop();
  await mastodon?.close();
  await bluesky?.close();
});

describe('Mastodon comments', () => {
  it('reads the replies under a published status once, announces each, and lists them with filters', async () => {
    const post = await publishedPost(mastodonChannel, 'What do you think of Herald?');
    const first = mastodon.addReply('<b>Love</b> it & more', { inReplyToId: post.releaseId!, createdAt: new Date(Date.now() - 2000) });
    const nested = mastodon.addReply('Me too', { inReplyToId: first.id, author: { id: '110000000000000888', username: 'carol', acct: 'carol@other.example', display_name: 'Carol' } });

    await pollAt(minutesLater(5));
    await pollAt(minutesLater(10)); // a second read stores nothing twice

    const listed = await herald.rest('GET', `/comments?post=${post.id}`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.total).toBe(2);
    const [newest, oldest] = listed.body.comments;
    expect(oldest).toMatchObject({ platform: 'mastodon', postId: post.id, platformId: first.id, parentId: null, text: '<b>Love</b> it & more', state: 'new', author: { name: 'Bob', handle: 'bob@example.social' } });
    expect(newest).toMatchObject({ platformId: nested.id, parentPlatformId: first.id, parentId: oldest.id, author: { name: 'Carol' } });

    const em = herald.services.orm.em.fork();
    const events = await em.getConnection().execute(`select type, data from webhook_event where organization_id = ? and type = 'comment.created' order by created_at`, [herald.organizationId]);
    expect(events.map((event: any) => event.data.platformCommentId).sort()).toEqual([first.id, nested.id].sort());
    expect(events[0].data.hint).toContain(`/comments/`);
    const notes = await em.getConnection().execute(`select content from notification where organization_id = ? and type = 'comment_created'`, [herald.organizationId]);
    expect(notes).toHaveLength(2);
    expect(notes.map((note: any) => note.content).join('\n')).toContain('@carol@other.example');

    expect((await herald.rest('GET', `/comments?channel=${mastodonChannel}&unanswered=true`)).body.total).toBe(2);
    expect((await herald.rest('GET', `/comments?channel=${blueskyChannel}`)).body.total).toBe(0);
    const unknown = await herald.rest('GET', '/comments?channel=nope');
    expect(unknown.status).toBe(404);
    const badPage = await herald.rest('GET', '/comments?pageSize=1000');
    expect(badPage.status).toBe(400);
  });

  it('publishes a reply under the comment once: a second reply is refused, and a crash mid-create makes no second status', async () => {
    const post = await publishedPost(mastodonChannel, 'Ask me anything');
    const question = mastodon.addReply('When is the next release?', { inReplyToId: post.releaseId! });
    await pollAt(minutesLater(5));
    const comment = (await herald.rest('GET', `/comments?post=${post.id}`)).body.comments[0];

    const reply = await herald.rest('POST', `/comments/${comment.id}/reply`, { content: 'Next week!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ commentId: comment.id, state: 'QUEUE' });
    const again = await herald.rest('POST', `/comments/${comment.id}/reply`, { content: 'Next week, really!' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'conflict', details: { state: 'QUEUE' } });
    expect(again.body.message).toContain('already has a reply');

    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    // The crash: the reply's status step was in flight when the process died; the next run must not post it again.
    await reopenAsInterrupted(herald, reply.body.postId, 'status');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');

    const replies = mastodon.statuses.filter((status) => status.in_reply_to_id === question.id);
    expect(replies.map((status) => status.status)).toEqual(['Next week!']);
    const stored = await herald.services.orm.em.fork().findOneOrFail(CommentSchema, { id: comment.id });
    expect(stored.state).toBe('answered');
    const listed = (await herald.rest('GET', `/comments?post=${post.id}`)).body;
    expect(listed.comments[0].reply).toMatchObject({ postId: reply.body.postId, state: 'PUBLISHED' });
    // Herald's own reply is not taken for a comment on the next read; the post it answered is not read as a post.
    await pollAt(minutesLater(20));
    expect((await herald.rest('GET', `/comments?post=${post.id}`)).body.total).toBe(1);
    const polls = await herald.services.orm.em.fork().find(CommentPollSchema, { postId: reply.body.postId });
    expect(polls).toHaveLength(0);
  });

  it('marks a comment answered when the account answered it on the platform itself', async () => {
    const post = await publishedPost(mastodonChannel, 'Answered elsewhere');
    const question = mastodon.addReply('Is it open source?', { inReplyToId: post.releaseId! });
    mastodon.seedStatus('Yes, AGPL.', { createdAt: new Date(), inReplyToId: question.id });
    await pollAt(minutesLater(5));
    const listed = (await herald.rest('GET', `/comments?post=${post.id}`)).body;
    expect(listed.comments.map((comment: any) => [comment.text, comment.state])).toEqual([['Is it open source?', 'answered']]);
  });

  it('answers not_supported for hiding or deleting where Mastodon does not let the post author do so', async () => {
    const post = await publishedPost(mastodonChannel, 'Moderation');
    mastodon.addReply('spam spam', { inReplyToId: post.releaseId! });
    await pollAt(minutesLater(5));
    const comment = (await herald.rest('GET', `/comments?post=${post.id}`)).body.comments[0];
    const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(hidden.status).toBe(400);
    expect(hidden.body).toMatchObject({ code: 'not_supported' });
    expect(hidden.body.message).toContain('Mastodon does not let Herald do hiding comments');
    const deleted = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(deleted.status).toBe(400);
    expect(deleted.body).toMatchObject({ code: 'not_supported' });
    expect((await herald.rest('POST', '/comments/unknown/reply', { content: 'x' })).status).toBe(404);
    expect((await herald.rest('POST', `/comments/${comment.id}/reply`, {})).status).toBe(400);
  });
});

describe('comments after the first read', () => {
  it.each(['mastodon', 'bluesky'] as const)('%s: a comment written after the second poll reaches the inbox, and no poll fails', async (platform) => {
    const post = await publishedPost(platform === 'mastodon' ? mastodonChannel : blueskyChannel, `Polled three times on ${platform}`);
    const add = (text: string) => (platform === 'mastodon' ? mastodon.addReply(text, { inReplyToId: post.releaseId! }).id : bluesky.addReply(post.releaseId!, text).uri);
    add('First!');
    await pollAt(minutesLater(5));
    await pollAt(minutesLater(10));
    const late = add('Written after the second read');
    await pollAt(minutesLater(15));
    const listed = (await herald.rest('GET', `/comments?post=${post.id}`)).body;
    expect(listed.comments.map((comment: { platformId: string }) => comment.platformId)).toContain(late);
    const poll = await herald.services.orm.em.fork().findOneOrFail(CommentPollSchema, { postId: post.id });
    expect({ failures: poll.failures, lastError: poll.lastError }).toEqual({ failures: 0, lastError: null });
  });
});

describe('Bluesky comments', () => {
  it('reads the thread of a post and replies under the comment with root and parent refs', async () => {
    const post = await publishedPost(blueskyChannel, 'Bluesky thread for comments');
    const comment = bluesky.addReply(post.releaseId!, 'Nice post!');
    const deleted = bluesky.addReply(post.releaseId!, 'Removed later');
    bluesky.deleteReply(deleted.uri);
    await pollAt(minutesLater(5));

    const listed = (await herald.rest('GET', `/comments?post=${post.id}`)).body;
    expect(listed.comments).toHaveLength(1);
    expect(listed.comments[0]).toMatchObject({ platform: 'bluesky', platformId: comment.uri, text: 'Nice post!', author: { handle: 'bob.bsky.social', name: 'Bob' } });

    const reply = await herald.rest('POST', `/comments/${listed.comments[0].id}/reply`, { content: 'Thank you!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    const made = bluesky.records.filter((record) => record.record.text === 'Thank you!');
    expect(made).toHaveLength(1);
    expect(made[0].record.reply).toEqual({ root: { uri: post.releaseId, cid: post.releaseMeta!.cid }, parent: { uri: comment.uri, cid: comment.cid } });

    // Interrupted after the create: the record key is Herald's, so the next run finds the record instead of making another.
    const replyPost = await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: reply.body.postId });
    await reopenAsInterrupted(herald, replyPost.id, () => ({ ...replyPost.publishProgress!.steps, post: { state: 'started' } }));
    expect((await publishUntilSettled(herald, replyPost.id)).outcome.kind).toBe('published');
    expect(bluesky.records.filter((record) => record.record.text === 'Thank you!')).toHaveLength(1);

    await pollAt(minutesLater(30));
    expect((await herald.rest('GET', `/comments?post=${post.id}`)).body.comments.map((item: any) => item.state)).toEqual(['answered']);
    expect(bluesky.contractViolations).toEqual([]);
  });
});
