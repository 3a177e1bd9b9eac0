// Whop comments and changes through Herald against the fake (issue 24): a post's comments read by the poll page by page and
// down the tree (a comment's own comments), the account's own left out; a reply under THAT comment exactly once (a lost answer
// found, not repeated); no hide or delete of a comment (Whop's API has none); a missing app permission refused with Whop's
// words; editing a post's text and title and a comment's text in place (attachments kept); what Whop cannot change refused
// before anything is sent (another forum, removing a title, deleting); an edit of a post that is not the user's failed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import whop from '../../providers/whop.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startWhopFake, type WhopFake } from '../fakes/whop.js';
import { changeUntilSettled, pollCommentsAt } from '../helpers/after-publishing.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishedPost, publishUntilSettled } from '../helpers/posts.js';
import { providerContext } from '../helpers/provider-context.js';

let fake: WhopFake;
let herald: Herald;
let channelId: string;
const settings = (extra: Record<string, string> = {}) => ({ __type: 'whop', company: 'biz_herald', experience: 'exp_announce', ...extra });

beforeAll(async () => {
  fake = await startWhopFake();
  herald = await startHerald(
    { WHOP_CLIENT_ID: fake.authority.clientId, SOCIAL_ENDPOINTS: JSON.stringify({ whop: fake.endpoints }), COMMENT_POLL_SECONDS: '60' },
    { guard: { allowLoopback: true } },
  );
  channelId = (await connectOAuthChannel(herald, 'whop')).integrationId;
});

// Every API v1 request Herald made fits Whop's contract (the SDK's request types, test/contracts/whop/).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

async function published(items: string[], value: Record<string, string>) {
  const id = await publishedPost(herald, channelId, items, { settings: value, allowDuplicate: true });
  return chainOf(herald, id);
}

const commentsOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}&pageSize=100`)).body.comments as Record<string, any>[];
const secondsAgo = (seconds: number) => Date.now() - seconds * 1000;

describe('Whop comments', () => {
  let postId: string;
  let question: { id: string };

  it("reads a post's comments page by page and the comments under a comment, once; the account's own left out", async () => {
    const [root, own] = await published(['Ask us anything', 'Our own first comment'], settings({ title: 'AMA' }));
    postId = root.id;
    question = fake.postAs('When is the next release?', { userId: 'user_ana', parentId: root.releaseId!, at: secondsAgo(60) });
    const nested = fake.postAs('Me too', { userId: 'user_bo', parentId: question.id, at: secondsAgo(50) });
    fake.posts.find((post) => post.id === question.id)!.commentCount = 1;
    // More than one page (50) of direct comments.
    for (let index = 0; index < 52; index++) fake.postAs(`Filler ${index}`, { userId: 'user_ana', parentId: root.releaseId!, at: secondsAgo(200 + index) });
    await pollCommentsAt(herald, 5);
    await pollCommentsAt(herald, 10);

    const listed = await commentsOf(postId);
    expect(listed).toHaveLength(54);
    const byId = (id: string) => listed.find((comment) => comment.platformId === id)!;
    expect(byId(own.releaseId!)).toBeUndefined();
    expect(byId(question.id)).toMatchObject({ parentPlatformId: null, text: 'When is the next release?', author: { id: 'user_ana', name: 'Ana Lima', handle: 'ana' }, state: 'new' });
    expect(byId(question.id).url).toBe(`${fake.url}/experiences/exp_announce/${root.releaseId}`);
    expect(byId(nested.id)).toMatchObject({ parentPlatformId: question.id, parentId: byId(question.id).id });
    const reads = fake.server.requestsTo('GET', '/api/v1/forum_posts').map((call) => [call.query.get('experience_id'), call.query.get('parent_id'), call.query.get('after') !== null]);
    expect(reads).toContainEqual(['exp_announce', root.releaseId, true]);
    expect(reads).toContainEqual(['exp_announce', question.id, false]);
  });

  it('publishes a reply under THAT comment (its parent_id), exactly once after a lost answer', async () => {
    const comment = (await commentsOf(postId)).find((item) => item.platformId === question.id)!;
    const reply = await herald.rest('POST', `/comments/${comment.id}/reply`, { content: 'Next Tuesday.' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.json !== undefined && request.url.endsWith('/api/v1/forum_posts'));
    try {
      expect((await publishChain(herald.services, reply.body.postId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    // Found among the comment's own comments (parent_id), not made again.
    expect(fake.server.requestsTo('GET', '/api/v1/forum_posts').some((call) => call.query.get('parent_id') === question.id && call.query.get('first') === '50')).toBe(true);
    const made = fake.posts.filter((post) => post.content === 'Next Tuesday.');
    expect(made.map((post) => [post.experienceId, post.parentId, post.userId])).toEqual([['exp_announce', question.id, 'user_herald']]);
    expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(made[0].id);
    expect((await commentsOf(postId)).find((item) => item.platformId === question.id)!.state).toBe('answered');
  });

  it("neither hides nor deletes someone's comment: Whop's API has no way to", async () => {
    const comment = (await commentsOf(postId)).find((item) => item.platformId === question.id)!;
    const before = fake.server.requests.length;
    const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect([hidden.status, hidden.body.code]).toEqual([400, 'not_supported']);
    expect((await herald.rest('DELETE', `/comments/${comment.id}`)).body.code).toBe('not_supported');
    expect(fake.server.requests.length).toBe(before);
    expect(fake.posts.some((post) => post.id === question.id)).toBe(true);
  });

  it("refuses reading comments without the app's forum:read permission (Whop's words) or past the rate limit (retryable)", async () => {
    const [root] = await chainOf(herald, postId);
    const tokens = fake.authority.issue('user_herald');
    const context = providerContext({ endpoints: fake.endpoints, auth: { accessToken: tokens.accessToken, internalId: 'user_herald' } });
    fake.withhold('forum:read');
    try {
      const refused = await whop.comments!(context, { id: root.releaseId!, url: root.releaseUrl! }, undefined).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PlatformHttpError);
      expect((refused as PlatformHttpError).message).toMatch(/Missing permission: forum:read/);
    } finally {
      fake.grant('forum:read');
    }
    // A rate limit is a retryable refusal with Whop's wait, for the poll to come back later.
    fake.server.failNext('GET', '/api/v1/forum_posts', { status: 429, headers: { 'retry-after': '90' }, json: { error: { type: 'rate_limited', message: 'Too many requests' } } });
    const limited = await whop.comments!(context, { id: root.releaseId!, url: root.releaseUrl! }, undefined).catch((error: unknown) => error);
    expect(limited).toMatchObject({ retryable: true, retryAfterSeconds: 90 });
    // Read from the post's URL when it was published before Herald kept its experience.
    expect((await whop.comments!(context, { id: root.releaseId!, url: root.releaseUrl! }, undefined)).map((comment) => comment.id)).toContain(question.id);
  });
});

describe('changing what went out on Whop', () => {
  it("edits a post's text and title and a comment's text in place, the attachments kept", async () => {
    const [root, second] = await published(['Frist text', 'A comment with a typo'], settings({ title: 'Old title' }));
    fake.posts.find((post) => post.id === root.releaseId)!.attachments = ['file_kept'];
    const answer = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'First text', image: [] }, { content: 'A comment, fixed', image: [] }], settings: settings({ title: 'New title' }) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await changeUntilSettled(herald, root.id)).at(-1)).toEqual({ kind: 'done' });
    const post = fake.posts.find((item) => item.id === root.releaseId)!;
    expect([post.title, post.content, post.attachments, post.edited]).toEqual(['New title', 'First text', ['file_kept'], true]);
    expect(fake.posts.find((item) => item.id === second.releaseId)!.content).toBe('A comment, fixed');
    const patches = fake.server.requestsTo('PATCH', `/api/v1/forum_posts/${second.releaseId}`);
    expect(patches.map((call) => call.json)).toEqual([{ content: 'A comment, fixed' }]);
  });

  it('refuses moving a post to another forum or removing its title, before anything is sent', async () => {
    const [root] = await published(['Stays here'], settings({ title: 'Kept' }));
    const moved = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'Stays here', image: [] }], settings: settings({ title: 'Kept', experience: 'exp_other' }) });
    expect(moved.status).toBe(409);
    expect(JSON.stringify(moved.body)).toMatch(/Whop keeps a forum post in the forum it went to/);
    const untitled = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'Stays here', image: [] }], settings: settings() });
    expect(untitled.status).toBe(409);
    expect(JSON.stringify(untitled.body)).toMatch(/does not remove it/);
    expect(fake.server.requestsTo('PATCH', `/api/v1/forum_posts/${root.releaseId}`)).toHaveLength(0);
  });

  it('leaves a deleted post on Whop with the reason: the API cannot delete a forum post', async () => {
    const [root] = await published(['Cannot go'], settings());
    const answer = await herald.rest('DELETE', `/posts/${root.id}`, { deleteOnPlatform: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.onPlatform.stayed).toEqual([expect.objectContaining({ platform: 'whop', reason: expect.stringMatching(/Whop's API cannot delete a forum post.*on Whop itself/) })]);
    expect(fake.posts.some((post) => post.id === root.releaseId)).toBe(true);
  });

  it("fails an edit of a post that is no longer the user's with Whop's reason", async () => {
    const [root] = await published(['Mine'], settings());
    fake.posts.find((post) => post.id === root.releaseId)!.userId = 'user_ana';
    expect((await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'Not mine any more', image: [] }] })).status).toBe(200);
    expect((await changeUntilSettled(herald, root.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/only edit your own forum posts/) });
    expect(fake.posts.find((post) => post.id === root.releaseId)!.content).toBe('Mine');
  });
});
