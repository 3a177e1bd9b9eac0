// Facebook Page comments and changes (issue 24) against the Meta fake, through Herald: people's comments read at every depth
// (filter=stream, paged), a reply published once as a comment on THAT comment (a reply to a reply goes under its top-level
// comment, with a warning), hiding and deleting comments, a post's text edited and the post deleted on Facebook exactly once,
// a link change refused with the reason, and Meta's refusals without the permissions.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import facebook from '../../providers/facebook.js';
import { PostSchema } from '../../src/db/entities.js';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { rateLimited, startFacebookFake, type FacebookFake } from '../fakes/facebook.js';
import { CommentPollSchema } from '../../src/db/comment-entities.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishUntilSettled, reopenAsInterrupted, publishedPost } from '../helpers/posts.js';
import { providerContext } from '../helpers/provider-context.js';
import { pollCommentsAt, changeUntilSettled } from '../helpers/after-publishing.js';

let fake: FacebookFake;
let herald: Herald;
let page = '';
const em = () => herald.services.orm.em.fork();

beforeAll(async () => {
  fake = await startFacebookFake();
  herald = await startHerald({ ...fake.environment(), COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  const { integrationId } = await connectOAuthChannel(herald, 'facebook');
  expect((await herald.rest('POST', `/integrations/${integrationId}/accounts`, { id: '101' })).status).toBe(200);
  page = integrationId;
});

// Every Graph request Herald sent fits Meta's own node and edge specs (test/contracts/meta/graph.json).
afterEach(() => {
  expect(fake.contractViolations.splice(0)).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const pollAt = (minutes: number) => pollCommentsAt(herald, minutes);

async function published(parts: string[], settings: Record<string, unknown> = {}) {
  return publishedPost(herald, page, parts, { type: 'now', allowDuplicate: true, settings: { __type: 'facebook', ...settings } });
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

const commentsOf = async (id: string) => (await herald.rest('GET', `/comments?post=${id}`)).body.comments as any[];

describe('Facebook Page comments', () => {
  it('asks for pages_read_user_content, which reading people\'s comments needs', () => {
    expect(facebook.auth.scopes).toEqual(expect.arrayContaining(['pages_read_user_content', 'pages_manage_engagement', 'pages_read_engagement']));
  });

  it('reads every comment at any depth over several pages, and replies once under THAT comment', async () => {
    const id = await published(['Fresh bread today']);
    const [post] = await chainOf(herald, id);
    const question = fake.addComment(post.releaseId!, 'Is there rye?', { createdAt: new Date(Date.now() - 3000) });
    const answer = fake.addComment(question.id, 'I hope so', { authorId: '7770002', authorName: 'Carol Crumb', createdAt: new Date(Date.now() - 2000) });
    const other = fake.addComment(post.releaseId!, 'Open on Sunday?', { createdAt: new Date(Date.now() - 1000) });
    fake.setCommentPageSize(2);
    try {
      await pollAt(5);
      await pollAt(10);
    } finally {
      fake.setCommentPageSize(100);
    }
    const reads = fake.server.requestsTo('GET', `/${fake.version}/${post.releaseId}/comments`);
    expect(reads[0].query.get('filter')).toBe('stream');
    expect(reads.some((request) => request.query.get('after') === '2')).toBe(true);
    const listed = await commentsOf(id);
    expect(listed).toHaveLength(3);
    const byId = Object.fromEntries(listed.map((comment) => [comment.platformId, comment]));
    expect(byId[question.id]).toMatchObject({ platform: 'facebook', text: 'Is there rye?', parentId: null, author: { name: 'Bob Reader', id: '7770001' } });
    expect(byId[answer.id]).toMatchObject({ parentPlatformId: question.id, parentId: byId[question.id].id, author: { name: 'Carol Crumb' } });

    const reply = await herald.rest('POST', `/comments/${byId[other.id].id}/reply`, { content: 'Yes, 8 to 12' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    // Interrupted after the comment reached Facebook: the recovery finds the Page's reply under that comment.
    const row = await em().findOneOrFail(PostSchema, { id: reply.body.postId });
    await reopenAsInterrupted(herald, row.id, () => ({ ...row.publishProgress!.steps, comment: { state: 'started' } }));
    expect((await publishUntilSettled(herald, row.id)).outcome.kind).toBe('published');
    const made = fake.comments.filter((comment) => comment.message === 'Yes, 8 to 12');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ parentId: other.id, authorId: '101' });

    // A reply to a reply: Facebook nests two levels, so it goes under the top-level comment, and the item says so.
    const nested = await herald.rest('POST', `/comments/${byId[answer.id].id}/reply`, { content: 'Rye on Fridays' });
    expect((await publishUntilSettled(herald, nested.body.postId)).outcome.kind).toBe('published');
    expect(fake.comments.find((comment) => comment.message === 'Rye on Fridays')).toMatchObject({ parentId: question.id, authorId: '101' });
    const nestedRow = await em().findOneOrFail(PostSchema, { id: nested.body.postId });
    expect(JSON.stringify(nestedRow)).toMatch(/nests replies two levels deep/);

    // The Page's own replies are read back but not stored as comments; the comments they answer are answered.
    await pollAt(20);
    const after = await commentsOf(id);
    expect(after).toHaveLength(3);
    expect(after.find((comment) => comment.platformId === other.id).state).toBe('answered');
  });

  it('hides, shows again and deletes a comment; a delete of one already gone answers as done', async () => {
    const id = await published(['Moderated post']);
    const [post] = await chainOf(herald, id);
    const spam = fake.addComment(post.releaseId!, 'Cheap followers here');
    await pollAt(5);
    const [comment] = await commentsOf(id);

    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true })).status).toBe(200);
    expect(spam.hidden).toBe(true);
    expect(fake.server.requestsTo('POST', `/${fake.version}/${spam.id}`).at(-1)!.json).toEqual({ is_hidden: true });
    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: false })).status).toBe(200);
    expect(spam.hidden).toBe(false);

    const deleted = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(fake.comments).not.toContain(spam);
    const context = providerContext({ endpoints: fake.endpoints.facebook, auth: fake.pageAuth('101') });
    await expect(facebook.deleteComment!(context, { id: spam.id }, { id: post.releaseId! })).resolves.toBeUndefined();
  });

  it('is refused as Meta refuses: without pages_read_user_content or pages_manage_engagement, and hiding the Page\'s own comment', async () => {
    const id = await published(['Permissions']);
    const [post] = await chainOf(herald, id);
    const comment = fake.addComment(post.releaseId!, 'Hello');
    const context = providerContext({ endpoints: fake.endpoints.facebook, auth: fake.pageAuth('101') });
    fake.pageGrants.delete('pages_read_user_content');
    try {
      await expect(facebook.comments!(context, { id: post.releaseId! }, undefined)).rejects.toThrow(/lacks a permission.*pages_read_user_content/);
    } finally {
      fake.pageGrants.add('pages_read_user_content');
    }
    fake.pageGrants.delete('pages_manage_engagement');
    try {
      await expect(facebook.hideComment!(context, { id: comment.id }, true, { id: post.releaseId! })).rejects.toThrow(/pages_manage_engagement/);
      await expect(facebook.deleteComment!(context, { id: comment.id }, { id: post.releaseId! })).rejects.toThrow(/pages_manage_engagement/);
    } finally {
      fake.pageGrants.add('pages_manage_engagement');
    }
    const own = fake.addComment(post.releaseId!, 'From the Page', { authorId: '101', authorName: 'Herald Bakery' });
    await expect(facebook.hideComment!(context, { id: own.id }, true, { id: post.releaseId! })).rejects.toThrow(/own comments cannot be hidden/);
    // Another Page's token sees nothing of this Page's comments.
    await expect(facebook.comments!(providerContext({ endpoints: fake.endpoints.facebook, auth: fake.pageAuth('102') }), { id: post.releaseId! }, undefined)).rejects.toThrow(/does not exist/);
  });

  it('waits for Meta\'s reset when reading comments is rate limited, then reads them', async () => {
    const id = await published(['Busy Page']);
    const [post] = await chainOf(herald, id);
    fake.addComment(post.releaseId!, 'Hello from the queue');
    fake.server.failNext('GET', `/${fake.version}/*/comments`, rateLimited(30));
    const before = Date.now();
    await pollAt(5);
    // The refused read (of whichever of the Page's posts came first) holds every post of the channel until Meta's reset.
    const polls = await em().find(CommentPollSchema, { integrationId: page });
    const refused = polls.find((poll) => /rate limit/.test(poll.lastError ?? ''));
    expect(refused, JSON.stringify(polls)).toBeDefined();
    expect(refused!.nextPollAt.getTime() - before).toBeGreaterThanOrEqual(5 * 60_000 + 30 * 60_000 - 5000);
    expect(await commentsOf(id)).toHaveLength(0);
    await pollAt(40);
    expect((await commentsOf(id)).map((comment) => comment.text)).toEqual(['Hello from the queue']);
  });
});

describe('changing a Facebook post', () => {
  it('edits the text of a published post and of its comment in place', async () => {
    const id = await published(['Opening hours: 8 to 12', 'Closed on Monday']);
    const [post, comment] = await chainOf(herald, id);
    const answer = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Opening hours: 7 to 13', image: [] }, { content: 'Closed on Tuesday', image: [] }] });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
    expect(fake.posts.find((entry) => entry.id === post.releaseId)!.message).toBe('Opening hours: 7 to 13');
    expect(fake.comments.find((entry) => entry.id === comment.releaseId)!.message).toBe('Closed on Tuesday');
    expect(fake.server.requestsTo('POST', `/${fake.version}/${post.releaseId}`).at(-1)!.json).toEqual({ message: 'Opening hours: 7 to 13' });
  });

  it('refuses a change of the link with the reason', async () => {
    const id = await published(['See the menu'], { url: 'https://bakery.example/menu' });
    const refused = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'See the new menu', image: [] }], settings: { url: 'https://bakery.example/new' } });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/cannot change the link of a published post/);
  });

  it('deletes a published post and its comment on Facebook exactly once, a lost answer resumed without deleting anything else', async () => {
    const keep = await published(['This one stays']);
    const id = await published(['Delete me', 'And my comment']);
    const [post, comment] = await chainOf(herald, id);
    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE');
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(fake.deletedNodes.map((entry) => entry.id).filter((entry) => entry === comment.releaseId || entry === post.releaseId)).toEqual([comment.releaseId, post.releaseId]);
    expect(fake.server.requestsTo('DELETE', `/${fake.version}/*`).length).toBeGreaterThanOrEqual(3);
    expect(fake.posts.some((entry) => entry.id === post.releaseId)).toBe(false);
    const [kept] = await chainOf(herald, keep);
    expect(fake.posts.some((entry) => entry.id === kept.releaseId)).toBe(true);
  });
});
