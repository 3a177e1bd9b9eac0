// Lemmy comments and changes through Herald against the fake instance (issue 24): the comments of every community post read
// by the poll page by page (nested by path, deleted ones and the account's own left out), a reply under THAT comment on the
// post it was left on exactly once (a lost answer found, not repeated), removal only as the community's moderator, editing a
// post's title, link and text and a comment's text, what a post keeps (its communities), and deleting on the instance, again
// after a lost answer (Lemmy refuses a second delete: read back and taken as done).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { startLemmyFake, type LemmyFake } from '../fakes/lemmy.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { chainOf, publishUntilSettled, publishedPost } from '../helpers/posts.js';
import { pollCommentsAt, changeUntilSettled } from '../helpers/after-publishing.js';

let fake: LemmyFake;
let herald: Herald;
let channelId: string;

const community = (subreddit: string, title: string, extra: Record<string, string> = {}) => ({ value: { subreddit, id: subreddit === 'selfhosted' ? '11' : '12', title, ...extra } });
const settings = (...communities: ReturnType<typeof community>[]) => ({ __type: 'lemmy', subreddit: communities });

beforeAll(async () => {
  fake = await startLemmyFake();
  herald = await startHerald({ COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  const connected = await herald.rest('POST', '/integrations/lemmy/connect', { instanceUrl: fake.url, username: 'herald', password: fake.password });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

// Every API request Herald sent matched lemmy-js-client's request types for its API version (test/contracts/lemmy/).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

const pollAt = (minutes: number) => pollCommentsAt(herald, minutes);

async function published(items: string[], value: ReturnType<typeof settings>) {
  const id = await publishedPost(herald, channelId, items, { settings: value, allowDuplicate: true });
  return chainOf(herald, id);
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

const commentsOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}&pageSize=100`)).body.comments as Record<string, any>[];

describe('Lemmy comments', () => {
  let postId: string;
  let onSecond: { id: number; postId: number };

  it('reads the comments of every community post, page by page, once: nesting from the path, deleted and own ones left out', async () => {
    const [root] = await published(['Ask me anything'], settings(community('selfhosted', 'AMA'), community('technology', 'AMA')));
    postId = root.id;
    const [first, second] = [Number(root.releaseId), Number(root.releaseMeta!.others)];
    const question = fake.addComment(first, 'When is the next release?', { secondsAgo: 60 });
    const nested = fake.addComment(first, 'Me too', { parentId: question.id, secondsAgo: 50 });
    onSecond = fake.addComment(second, 'Does it federate?', { secondsAgo: 40 });
    fake.addComment(first, 'Deleted by Bob', { secondsAgo: 30 }).deleted = true;
    fake.addComment(second, 'Yes.', { parentId: onSecond.id, creatorId: 7, secondsAgo: 20 });
    // More than one page (50) on the first post.
    for (let index = 0; index < 55; index++) fake.addComment(first, `Filler ${index}`, { secondsAgo: 100 + index });
    await pollAt(5);
    await pollAt(10);

    const listed = await commentsOf(postId);
    expect(listed).toHaveLength(58);
    const byId = (id: number) => listed.find((comment) => comment.platformId === String(id))!;
    expect(byId(question.id)).toMatchObject({ parentPlatformId: null, text: 'When is the next release?', author: { name: 'Bob', handle: `bob@${fake.host}` }, url: `${fake.url}/comment/${question.id}`, state: 'new' });
    expect(byId(nested.id)).toMatchObject({ parentPlatformId: String(question.id), parentId: byId(question.id).id });
    expect(byId(onSecond.id).state).toBe('answered');
    const pages = fake.server.requestsTo('GET', '/api/v3/comment/list').map((call) => [call.query.get('post_id'), call.query.get('page'), call.query.get('limit')]);
    expect(pages).toContainEqual([String(first), '2', '50']);
  });

  it('publishes a reply under THAT comment, on the community post it was left on, exactly once after a lost answer', async () => {
    const comment = (await commentsOf(postId)).find((item) => item.platformId === String(onSecond.id))!;
    const reply = await herald.rest('POST', `/comments/${comment.id}/reply`, { content: 'It does, through ActivityPub.' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/v3/comment'));
    try {
      expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const made = fake.comments.filter((item) => item.content === 'It does, through ActivityPub.');
    expect(made.map((item) => [item.postId, item.parentId])).toEqual([[onSecond.postId, onSecond.id]]);
    expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(String(made[0].id));
  });

  it('removes a comment only as a moderator of its community, restores it, and never deletes someone\'s comment', async () => {
    const comment = (await commentsOf(postId)).find((item) => item.platformId === String(onSecond.id))!;
    const refused = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('only the moderators of !technology');
    expect(fake.server.requestsTo('POST', '/api/v3/comment/remove')).toHaveLength(0);

    fake.moderators.set(12, [7]);
    try {
      const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
      expect(hidden.status, JSON.stringify(hidden.body)).toBe(200);
      expect(fake.comments.find((item) => item.id === onSecond.id)!.removed).toBe(true);
      expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: false })).status).toBe(200);
      expect(fake.comments.find((item) => item.id === onSecond.id)!.removed).toBe(false);
    } finally {
      fake.moderators.set(12, []);
    }
    expect((await herald.rest('DELETE', `/comments/${comment.id}`)).body.code).toBe('not_supported');
  });
});

describe('changing what went out on Lemmy', () => {
  it('edits the title, link and text of each community post and a comment\'s text', async () => {
    const [root, second] = await published(['Frist text', 'A comment with a typo'], settings(community('selfhosted', 'Old title'), community('technology', 'Old title')));
    const edited = settings(community('selfhosted', 'New title', { url: 'https://herald.example/new' }), community('technology', 'New title'));
    const answer = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'First text', image: [] }, { content: 'A comment, fixed', image: [] }], settings: edited });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(root.id)).at(-1)).toEqual({ kind: 'done' });
    const posts = [root.releaseId, root.releaseMeta!.others].map((id) => fake.posts.find((post) => post.id === Number(id))!);
    expect(posts.map((post) => [post.name, post.url, post.body])).toEqual([
      ['New title', 'https://herald.example/new', 'First text'],
      ['New title', null, 'First text'],
    ]);
    const comments = [second.releaseId, second.releaseMeta!.others].map((id) => fake.comments.find((item) => item.id === Number(id))!.content);
    expect(comments).toEqual(['A comment, fixed', 'A comment, fixed']);
  });

  it('refuses moving a post to another community', async () => {
    const [root] = await published(['Stays here'], settings(community('selfhosted', 'Here')));
    const moved = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'Stays here', image: [] }], settings: settings(community('technology', 'Here')) });
    expect(moved.status).toBe(409);
    expect(JSON.stringify(moved.body)).toMatch(/Lemmy keeps a post in the communities it went to/);
  });

  it('deletes the post and its comment; the repeat after a lost answer, refused by Lemmy, is read back as done', async () => {
    const [root, second] = await published(['Delete me', 'My comment'], settings(community('selfhosted', 'Short-lived')));
    expect((await herald.rest('DELETE', `/posts/${root.id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/api/v3/comment/delete'));
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(root.id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(fake.posts.find((post) => post.id === Number(root.releaseId))!.deleted).toBe(true);
    expect(fake.comments.find((item) => item.id === Number(second.releaseId))!.deleted).toBe(true);
    expect(fake.server.requestsTo('POST', '/api/v3/comment/delete')).toHaveLength(2);
  });

  it('speaks v4 to a Lemmy 1.0 instance: comment/list sort "new", a restore with its reason, DELETE on the post and comment', async () => {
    const endpoints = (herald.services.config.socialEndpoints.lemmy ??= {});
    endpoints.apiVersion = 'v4';
    try {
      const [root, second] = await published(['On v4', 'A v4 comment'], settings(community('selfhosted', 'Version four')));
      const theirs = fake.addComment(Number(root.releaseId), 'Hello v4', { secondsAgo: 5 });
      await pollAt(30);
      expect(fake.server.requestsTo('GET', '/api/v4/comment/list').map((call) => [call.query.get('sort'), call.query.get('type_')])).toContainEqual(['new', 'all']);
      const listed = (await commentsOf(root.id)).find((item) => item.platformId === String(theirs.id))!;
      fake.moderators.set(11, [7]);
      try {
        expect((await herald.rest('POST', `/comments/${listed.id}/hide`, { hidden: true })).status).toBe(200);
        expect((await herald.rest('POST', `/comments/${listed.id}/hide`, { hidden: false })).status).toBe(200);
      } finally {
        fake.moderators.set(11, [21]);
      }
      expect(fake.server.requestsTo('POST', '/api/v4/comment/remove').map((call) => call.json.reason)).toEqual(['Removed from Herald', 'Restored from Herald']);
      expect((await herald.rest('DELETE', `/posts/${root.id}`, { deleteOnPlatform: true })).status).toBe(200);
      expect((await settleChanges(root.id)).at(-1)).toEqual({ kind: 'done' });
      expect(fake.posts.find((post) => post.id === Number(root.releaseId))!.deleted).toBe(true);
      expect(fake.comments.find((item) => item.id === Number(second.releaseId))!.deleted).toBe(true);
      expect([...fake.server.requestsTo('DELETE', '/api/v4/post'), ...fake.server.requestsTo('DELETE', '/api/v4/comment')]).toHaveLength(2);
    } finally {
      endpoints.apiVersion = 'v3';
    }
  });

  it('fails an edit of a post that is not the account\'s with Lemmy\'s reason', async () => {
    const [root] = await published(['Mine'], settings(community('selfhosted', 'Mine')));
    fake.posts.find((post) => post.id === Number(root.releaseId))!.creatorId = 21;
    expect((await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'Not mine any more', image: [] }] })).status).toBe(200);
    expect((await settleChanges(root.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/no_post_edit_allowed/) });
  });
});
