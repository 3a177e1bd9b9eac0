// VK comments and changes through Herald against the fake (issue 24): wall.getComments with threads (inline replies and a
// long thread read on its own), authors from extended=1, the account's own comments marked; a reply lands with
// reply_to_comment on THAT comment, exactly once; hiding refused (VK has no such method); wall.deleteComment, a repeat of a
// gone comment done; wall.edit keeping the attachments, wall.editComment of a chain comment; wall.delete and its repeat
// after a lost answer (104) done; VK's access and rate-limit errors.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { startVkFake, type VkFake } from '../fakes/vk.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { uploadAll } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishUntilSettled, publishedPost } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { changeUntilSettled, pollCommentsAt } from '../helpers/after-publishing.js';

let fake: VkFake;
let herald: Herald;
let channelId: string;
let picture: { id: string; path: string };

beforeAll(async () => {
  fake = await startVkFake();
  herald = await startHerald({ VK_CLIENT_ID: fake.authority.clientId, SOCIAL_ENDPOINTS: JSON.stringify({ vk: fake.endpoints }), COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  ({ png: picture } = await uploadAll(herald, { png: [tinyPng(), 'dot.png'] }));
  channelId = (await connectOAuthChannel(herald, 'vk')).integrationId;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

// Every method call Herald sent matched VK's own method schema (test/contracts/vk/methods.json).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

async function published(parts: (string | { content: string; image: unknown[] })[]) {
  const id = await publishedPost(herald, channelId, parts as never, { settings: { __type: 'vk' }, allowDuplicate: true });
  return chainOf(herald, id);
}

async function poll() {
  for (const minutes of [5, 10]) await pollCommentsAt(herald, minutes);
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

const listedOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}&pageSize=100`)).body.comments as Record<string, any>[];

describe('VK comments', () => {
  it('reads comments and their threads (inline and a long one read on its own), with their authors, once', async () => {
    const [post] = await published(['Tell me what you think']);
    const postId = Number(post.releaseId);
    const first = fake.addComment(postId, 'Great post', { fromId: 777_001, name: 'Anna Petrova', secondsAgo: 300 });
    const club = fake.addComment(postId, 'From our club', { fromId: -42, name: 'Herald Fans', secondsAgo: 290 });
    const long = fake.addComment(postId, 'Long thread here', { fromId: 777_002, name: 'Boris Ivanov', secondsAgo: 280 });
    const replies = Array.from({ length: 12 }, (_, index) => fake.addComment(postId, `Reply ${index}`, { fromId: 777_003, name: 'Vera S', replyTo: long.id, secondsAgo: 200 - index }));
    const deep = fake.addComment(postId, 'Answering reply 3', { fromId: 777_001, replyTo: replies[3].id, secondsAgo: 50 });
    fake.addComment(postId, 'Gone', { secondsAgo: 40 }).deleted = true;
    await poll();

    const listed = await listedOf(post.id);
    expect(listed).toHaveLength(3 + 12 + 1);
    expect(listed.find((comment) => comment.platformId === String(first.id))).toMatchObject({ text: 'Great post', parentPlatformId: null, author: { name: 'Anna Petrova', handle: 'user777001' } });
    expect(listed.find((comment) => comment.platformId === String(club.id))).toMatchObject({ author: { name: 'Herald Fans', handle: 'club42' } });
    expect(listed.find((comment) => comment.platformId === String(replies[11].id))).toMatchObject({ text: 'Reply 11', parentPlatformId: String(long.id) });
    expect(listed.find((comment) => comment.platformId === String(deep.id))).toMatchObject({ parentPlatformId: String(replies[3].id) });
    const reads = fake.server.requestsTo('POST', '/method/wall.getComments').map((call) => Object.fromEntries(call.form!));
    expect(reads[0]).toMatchObject({ owner_id: String(fake.userId), post_id: String(postId), count: '100', offset: '0', sort: 'asc', extended: '1', thread_items_count: '10' });
    // The thread longer than the 10 inline replies was read on its own.
    expect(reads.some((read) => read.comment_id === String(long.id))).toBe(true);
  });

  it('replies to THAT comment (reply_to_comment), exactly once; hiding is refused; deleting works and a repeat is done', async () => {
    const [post] = await published(['Questions welcome']);
    const postId = Number(post.releaseId);
    const question = fake.addComment(postId, 'When is the next release?', { secondsAgo: 100 });
    const other = fake.addComment(postId, 'Another comment', { secondsAgo: 90 });
    await poll();
    const listed = await listedOf(post.id);
    const stored = listed.find((comment) => comment.platformId === String(question.id))!;

    const reply = await herald.rest('POST', `/comments/${stored.id}/reply`, { content: 'Next week!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).not.toBe('failed');
    const answers = fake.comments.filter((comment) => comment.message === 'Next week!');
    expect(answers).toEqual([expect.objectContaining({ postId, replyTo: question.id, fromId: fake.userId })]);
    // Herald's own reply is read back as the account's, not as a new comment to answer.
    await poll();
    expect((await listedOf(post.id)).filter((comment) => comment.state === 'new').map((comment) => comment.platformId)).toEqual([String(other.id)]);

    const hide = await herald.rest('POST', `/comments/${stored.id}/hide`, { hidden: true });
    expect(hide.body).toMatchObject({ code: 'not_supported' });

    const otherStored = listed.find((comment) => comment.platformId === String(other.id))!;
    const deleted = await herald.rest('DELETE', `/comments/${otherStored.id}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(other.deleted).toBe(true);
    // Gone already on VK (deleted there meanwhile): 104 counts as done.
    fake.comments.find((comment) => comment.id === question.id)!.deleted = true;
    expect((await herald.rest('DELETE', `/comments/${stored.id}`)).status).toBe(200);
    expect(fake.server.requestsTo('POST', '/method/wall.deleteComment').map((call) => call.form!.get('comment_id'))).toEqual([String(other.id), String(question.id)]);
  });

  it("fails the read with VK's words when access to the comments is denied (212)", async () => {
    const [post] = await published(['Closed comments']);
    fake.addComment(Number(post.releaseId), 'Hidden from us');
    const before = fake.server.requestsTo('POST', '/method/wall.getComments').length;
    fake.refuseNext('wall.getComments', 212, 'Access to post comments denied', 100);
    await poll();
    expect(fake.server.requestsTo('POST', '/method/wall.getComments').length).toBeGreaterThan(before);
    expect(await listedOf(post.id)).toHaveLength(0);
    fake.refuseNext('wall.getComments', 0, '', 0);
  });
});

describe('changing what went out on VK', () => {
  it('edits the post with wall.edit keeping its picture, and a chain comment with wall.editComment, once', async () => {
    const [post, comment] = await published([{ content: 'Frist post', image: [picture] }, 'A comment with a tpyo']);
    const wallPost = fake.posts.find((entry) => String(entry.id) === post.releaseId)!;
    const attached = wallPost.attachments;
    expect(attached).toHaveLength(1);
    const answer = await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'First post', image: [picture] }, { content: 'A comment with a typo fixed', image: [] }] });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(post.id)).at(-1)).toEqual({ kind: 'done' });
    expect(wallPost.edits).toEqual([{ message: 'First post', attachments: attached }]);
    const vkComment = fake.comments.find((entry) => String(entry.id) === comment.releaseId)!;
    expect(vkComment.edits).toEqual([{ message: 'A comment with a typo fixed', attachments: [] }]);
  });

  it('deletes the post with wall.delete; the repeat after a lost answer (104) is done and deletes nothing else', async () => {
    const [keep] = await published(['Stays on the wall']);
    const [post] = await published(['Short-lived']);
    expect((await herald.rest('DELETE', `/posts/${post.id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => String(request.url).endsWith('/method/wall.delete'));
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(post.id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(fake.posts.find((entry) => String(entry.id) === post.releaseId)!.deleted).toBe(true);
    expect(fake.posts.find((entry) => String(entry.id) === keep.releaseId)!.deleted).toBeUndefined();
    expect(fake.server.requestsTo('POST', '/method/wall.delete').map((call) => call.form!.get('post_id'))).toEqual([post.releaseId, post.releaseId]);
  });

  it("fails a deletion VK refuses (210) with VK's words", async () => {
    const [post] = await published(['Not deletable']);
    fake.refuseNext('wall.delete', 210, "Access to wall's post denied");
    expect((await herald.rest('DELETE', `/posts/${post.id}`, { deleteOnPlatform: true })).status).toBe(200);
    expect((await settleChanges(post.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/Access to wall's post denied/) });
    expect(fake.posts.find((entry) => String(entry.id) === post.releaseId)!.deleted).toBeUndefined();
  });
});
