// LinkedIn comments and changes (issue 24) through Herald against the fake: a page's comments and their replies read, a reply
// landing under THAT comment once (also after a crash mid-create), hiding refused (no API), deleting only the page's own
// comments, the commentary edited with PARTIAL_UPDATE and the post deleted once; a personal profile cannot read comments
// (r_member_social is for approved partners) but edits and deletes its own posts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import linkedinPage from '../../providers/linkedin-page.js';
import { startLinkedinFake, type LinkedinFake } from '../fakes/linkedin.js';
import { providerContext } from '../helpers/provider-context.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishUntilSettled, reopenAsInterrupted, publishedPost } from '../helpers/posts.js';
import { CommentPollSchema } from '../../src/db/comment-entities.js';
import { runPlatformChanges } from '../../tools/internal/platform-change-run.js';
import { pollCommentsAt } from '../helpers/after-publishing.js';

const ORGANIZATION = 'urn:li:organization:101';
let fake: LinkedinFake;
let herald: Herald;
let page: string;
let member: string;
const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

beforeAll(async () => {
  fake = await startLinkedinFake();
  herald = await startHerald(fake.heraldEnvironment({ COMMENT_POLL_SECONDS: '60' }), { guard: { allowLoopback: true } });
  page = (await connectOAuthChannel(herald, 'linkedin-page')).integrationId;
  expect((await herald.rest('POST', `/integrations/${page}/accounts`, { id: ORGANIZATION })).status).toBe(200);
  member = (await connectOAuthChannel(herald, 'linkedin')).integrationId;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const pollAt = (date: Date) => pollCommentsAt(herald, date);

async function published(channel: string, parts: string[]) {
  return publishedPost(herald, channel, parts, { allowDuplicate: true });
}

async function changeUntilDone(id: string) {
  let outcome = await runPlatformChanges(herald.services, id);
  for (let run = 0; run < 5 && outcome.kind === 'waiting'; run++) outcome = await runPlatformChanges(herald.services, id);
  return outcome;
}

const commentsOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}`)).body;

describe('LinkedIn Page comments', () => {
  it('reads comments and their replies, and answers one under THAT comment once', async () => {
    const id = await published(page, ['What should we build next?']);
    const [post] = await chainOf(herald, id);
    const question = fake.addComment(post.releaseId!, 'Comments support!', { createdAt: Date.now() - 5000 });
    const nested = fake.addComment(post.releaseId!, 'Yes please', { parentComment: question.urn, actor: 'urn:li:person:visitor77' });

    await pollAt(minutesLater(5));
    const listed = await commentsOf(id);
    expect(listed.total).toBe(2);
    const top = listed.comments.find((comment: { platformId: string }) => comment.platformId === question.urn);
    expect(top).toMatchObject({ platform: 'linkedin-page', text: 'Comments support!', parentId: null });
    expect(listed.comments.find((comment: { platformId: string }) => comment.platformId === nested.urn)).toMatchObject({ parentPlatformId: question.urn, parentId: top.id });

    const reply = await herald.rest('POST', `/comments/${top.id}/reply`, { content: 'On the roadmap (Q1)!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    await reopenAsInterrupted(herald, reply.body.postId, 'comment');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    const made = fake.comments.filter((comment) => comment.text === 'On the roadmap (Q1)!');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ parentComment: question.urn, actor: ORGANIZATION, object: post.releaseId });
    // Sent as little text (parentheses escaped), to the comment's own socialActions.
    const [create] = fake.server.requestsTo('POST', '/rest/socialActions/*/comments').filter((request) => request.json?.parentComment);
    expect(create.json.message.text).toBe('On the roadmap \\(Q1\\)!');
    expect(decodeURIComponent(create.path.split('/')[3])).toBe(question.urn);

    await pollAt(minutesLater(10));
    expect((await commentsOf(id)).comments.find((comment: { platformId: string }) => comment.platformId === question.urn).state).toBe('answered');
  });

  it("refuses hiding (no API) and deleting someone else's comment; deletes the page's own comment once", async () => {
    const id = await published(page, ['Moderated page post']);
    const [post] = await chainOf(herald, id);
    const theirs = fake.addComment(post.releaseId!, 'spam');
    await pollAt(minutesLater(5));
    const comment = (await commentsOf(id)).comments[0];
    const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(hidden.status).toBe(400);
    expect(hidden.body.code).toBe('not_supported');
    const refused = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/only as its author/);
    expect(fake.comments).toContain(theirs);

    // The page's own comments are not listed as comments to answer (they are its answers): deleted through the provider.
    const ours = fake.addComment(post.releaseId!, 'A note from the page', { actor: ORGANIZATION });
    const context = providerContext({ endpoints: fake.endpoints, auth: fake.channelAuth('page') });
    await linkedinPage.deleteComment!(context, { id: ours.urn, meta: { actor: ORGANIZATION } }, { id: post.releaseId! });
    expect(fake.comments).not.toContain(ours);
    // Gone already: done, not an error.
    await linkedinPage.deleteComment!(context, { id: ours.urn, meta: { actor: ORGANIZATION } }, { id: post.releaseId! });
    expect(fake.server.requestsTo('DELETE', '/rest/socialActions/*/comments/*').at(-1)!.query.get('actor')).toBe(ORGANIZATION);
  });
});

describe('changing LinkedIn posts', () => {
  it("edits a page post's commentary and its comment with PARTIAL_UPDATE, then deletes both once", async () => {
    const id = await published(page, ['Frist #launch', 'A comment']);
    const [post, comment] = await chainOf(herald, id);
    const answer = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'First #launch', image: [] }, { content: 'A comment, edited', image: [] }] });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await changeUntilDone(id)).toEqual({ kind: 'done' });
    const onLinkedin = fake.posts.find((entry) => entry.urn === post.releaseId)!;
    expect(onLinkedin.commentary).toBe('First {hashtag|\\#|launch}');
    expect(fake.comments.find((entry) => entry.urn === comment.releaseId)!.text).toBe('A comment, edited');

    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    expect(await changeUntilDone(id)).toEqual({ kind: 'done' });
    expect(fake.posts.some((entry) => entry.urn === post.releaseId)).toBe(false);
    expect(fake.server.requestsTo('DELETE', '/rest/posts/*').at(-1)!.headers['x-restli-method']).toBe('DELETE');
  });

  it('a personal profile cannot read comments (not_supported, naming r_member_social) but edits and deletes its post', async () => {
    const id = await published(member, ['Personal post']);
    const [post] = await chainOf(herald, id);
    fake.addComment(post.releaseId!, 'Nice!');
    await pollAt(minutesLater(5));
    const poll = await herald.services.orm.em.fork().findOneOrFail(CommentPollSchema, { postId: id });
    expect(poll.lastError).toMatch(/r_member_social/);

    expect((await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Personal post, edited', image: [] }] })).status).toBe(200);
    expect(await changeUntilDone(id)).toEqual({ kind: 'done' });
    expect(fake.posts.find((entry) => entry.urn === post.releaseId)!.text).toBe('Personal post, edited');
    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    expect(await changeUntilDone(id)).toEqual({ kind: 'done' });
    expect(fake.posts.some((entry) => entry.urn === post.releaseId)).toBe(false);
  });
});
