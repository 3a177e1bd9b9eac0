// X comments and changes (issue 24) through Herald against the fake, every request checked against X's OpenAPI contract:
// replies read by recent search (conversation_id), refused as not_supported on the Free access level, a reply landing under
// THAT reply once (also after a crash mid-create), hiding (needs tweet.moderate.write), deleting someone's reply refused,
// the account's own post deleted once, and editing refused with X's reason.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startXFake, type XFake } from '../fakes/x.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted } from '../helpers/posts.js';
import { CommentPollSchema } from '../../src/db/comment-entities.js';
import { runPlatformChanges } from '../../tools/internal/platform-change-run.js';
import { pollCommentsAt } from '../helpers/after-publishing.js';

let fake: XFake;
let herald: Herald;
let channelId: string;
const settings = { who_can_reply_post: 'everyone' };
const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

beforeAll(async () => {
  fake = await startXFake();
  herald = await startHerald(
    { X_CLIENT_ID: fake.oauth.clientId, X_CLIENT_SECRET: fake.oauth.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ x: { web: fake.url, api: fake.url } }), COMMENT_POLL_SECONDS: '60' },
    { guard: { allowLoopback: true } },
  );
  channelId = (await connectOAuthChannel(herald, 'x')).integrationId;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
  fake.accessLevel = 'basic';
});

const pollAt = (date: Date) => pollCommentsAt(herald, date);

async function publishedPost(text: string) {
  const id = await createPost(herald, channelId, [text], { settings, allowDuplicate: true });
  expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
  return (await chainOf(herald, id))[0];
}

const commentsOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}`)).body;

describe('X replies', () => {
  it('keeps reading after the first read: a reply written after the second poll reaches the inbox, and no poll fails', async () => {
    const post = await publishedPost('Polled three times');
    fake.addReply('First!', { inReplyTo: post.releaseId!, createdAt: new Date(Date.now() - 3000) });
    await pollAt(minutesLater(5));
    await pollAt(minutesLater(10));
    const late = fake.addReply('Written after the second read', { inReplyTo: post.releaseId! });
    await pollAt(minutesLater(15));
    const listed = await commentsOf(post.id);
    expect(listed.comments.map((comment: { platformId: string }) => comment.platformId)).toContain(late.id);
    const poll = await herald.services.orm.em.fork().findOneOrFail(CommentPollSchema, { postId: post.id });
    expect({ failures: poll.failures, lastError: poll.lastError }).toEqual({ failures: 0, lastError: null });
    expect(fake.server.requestsTo('GET', '/2/tweets/search/recent').filter((request) => request.query.get('query') === `conversation_id:${post.releaseId}`)).toHaveLength(3);
  });

  it('reads the replies of a post (nested ones too) with recent search and answers one under THAT reply, once', async () => {
    const post = await publishedPost('What should Herald do next?');
    const question = fake.addReply('@heraldtest Comments & replies!', { inReplyTo: post.releaseId!, createdAt: new Date(Date.now() - 3000) });
    const nested = fake.addReply('Agreed', { inReplyTo: question.id, author: fake.others[1] });
    fake.seedPost('Unrelated post', { createdAt: new Date() });

    await pollAt(minutesLater(5));
    await pollAt(minutesLater(10));
    expect(fake.server.requestsTo('GET', '/2/tweets/search/recent').map((request) => request.query.get('query'))).toContain(`conversation_id:${post.releaseId}`);
    const listed = await commentsOf(post.id);
    expect(listed.total).toBe(2);
    const [newest, oldest] = listed.comments;
    expect(oldest).toMatchObject({ platform: 'x', platformId: question.id, parentId: null, text: '@heraldtest Comments &amp; replies!', author: { name: 'Bob Builder', handle: 'bob' }, state: 'new' });
    expect(newest).toMatchObject({ platformId: nested.id, parentPlatformId: question.id, parentId: oldest.id, author: { handle: 'carol' } });

    const reply = await herald.rest('POST', `/comments/${oldest.id}/reply`, { content: 'Thank you, Bob!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    // A crash while the create was in flight: the recovery finds the reply made since the attempt, and posts nothing again.
    await reopenAsInterrupted(herald, reply.body.postId, 'post');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    const made = fake.posts.filter((item) => item.text === 'Thank you, Bob!');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ in_reply_to: question.id, author_id: fake.user.id });

    // The account's own reply is read as the answer, not as a new comment.
    await pollAt(minutesLater(20));
    const after = await commentsOf(post.id);
    expect(after.total).toBe(2);
    expect(after.comments.find((comment: { platformId: string }) => comment.platformId === question.id).state).toBe('answered');
  });

  it("says not_supported, naming the tier, when the app's access level cannot search (X's Free tier)", async () => {
    const post = await publishedPost('Free tier post');
    fake.addReply('Hello?', { inReplyTo: post.releaseId! });
    fake.accessLevel = 'free';
    await pollAt(minutesLater(5));
    const poll = await herald.services.orm.em.fork().findOneOrFail(CommentPollSchema, { postId: post.id });
    expect(poll.lastError).toMatch(/Free tier.*recent search.*client-forbidden/);
    expect((await commentsOf(post.id)).total).toBe(0);
  });

  it('waits for the rate limit reset X answers with a 429', async () => {
    const post = await publishedPost('Rate limited post');
    fake.addReply('Anyone?', { inReplyTo: post.releaseId! });
    fake.server.failNext('GET', '/2/tweets/search/recent', { status: 429, headers: { 'x-rate-limit-reset': String(Math.floor(Date.now() / 1000) + 900) }, json: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 } });
    const at = minutesLater(5);
    await pollAt(at);
    const poll = await herald.services.orm.em.fork().findOneOrFail(CommentPollSchema, { postId: post.id });
    expect(poll.lastError).toMatch(/rate limit/);
    expect(poll.nextPollAt.getTime()).toBeGreaterThan(at.getTime() + 800_000);
  });

  it('hides and shows a reply; refuses without tweet.moderate.write, and refuses deleting someone else\'s reply', async () => {
    const post = await publishedPost('Moderated post');
    const spam = fake.addReply('spam spam', { inReplyTo: post.releaseId! });
    await pollAt(minutesLater(5));
    const comment = (await commentsOf(post.id)).comments[0];

    const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(hidden.status, JSON.stringify(hidden.body)).toBe(200);
    expect(spam.hidden).toBe(true);
    expect(fake.server.requestsTo('PUT', '/2/tweets/*/hidden').at(-1)!.json).toEqual({ hidden: true });
    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: false })).status).toBe(200);
    expect(spam.hidden).toBe(false);

    const deleted = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(deleted.status).toBe(400);
    expect(deleted.body).toMatchObject({ code: 'not_supported' });
    expect(deleted.body.message).toMatch(/only its own posts/);
    expect(fake.posts.some((item) => item.id === spam.id)).toBe(true);

    // A channel connected before Herald asked for tweet.moderate.write: X answers 403, said with what to do.
    fake.dropScope('tweet.moderate.write');
    const refused = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(refused.status).toBe(400);
    expect(refused.body.hint).toMatch(/tweet\.moderate\.write permission: reconnect/);
    expect(spam.hidden).toBe(false);
  });
});

describe('changing X posts', () => {
  it('deletes a published thread on X, once, and a post already gone counts as deleted', async () => {
    const id = await createPost(herald, channelId, ['Thread to delete', 'Its second post'], { settings, allowDuplicate: true });
    expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
    const [first, second] = await chainOf(herald, id);
    const someone = fake.addReply('A reply that is not ours', { inReplyTo: first.releaseId! });
    fake.posts.splice(fake.posts.findIndex((item) => item.id === second.releaseId), 1); // removed on X already

    const answer = await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    let outcome = await runPlatformChanges(herald.services, id);
    for (let run = 0; run < 5 && outcome.kind === 'waiting'; run++) outcome = await runPlatformChanges(herald.services, id);
    expect(outcome).toEqual({ kind: 'done' });
    expect(fake.posts.some((item) => item.id === first.releaseId)).toBe(false);
    expect(fake.posts.some((item) => item.id === someone.id)).toBe(true);
    expect(fake.server.requestsTo('DELETE', '/2/tweets/*').map((request) => request.path.split('/')[3]).sort()).toEqual([first.releaseId, second.releaseId].sort());
  });

  it('refuses an edit, naming what X allows instead', async () => {
    const post = await publishedPost('Cannot be edited');
    const refused = await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'Edited', image: [] }] });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/30 minutes/);
  });
});
