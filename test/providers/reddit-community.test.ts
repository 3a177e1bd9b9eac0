// Reddit comments and changes through Herald against the fake (issue 24): the comment trees of every submission of a post
// (nested replies, a `more` stub expanded with /api/morechildren, deleted comments left out) read by the poll; a reply that
// lands under THAT comment exactly once; removing a comment only as the subreddit's moderator; editing a text post's body and
// a comment's text; what a submission keeps (title, link and image posts); deleting on the platform, again after a lost answer;
// and a channel whose token lacks the edit scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommentSchema } from '../../src/db/comment-entities.js';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { startRedditFake, type RedditFake } from '../fakes/reddit.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { chainOf, publishUntilSettled, reopenAsInterrupted, publishedPost } from '../helpers/posts.js';
import { pollCommentsAt, changeUntilSettled } from '../helpers/after-publishing.js';

let fake: RedditFake;
let herald: Herald;
let channelId: string;

const entry = (value: Record<string, unknown>) => ({ value: { type: 'self', is_flair_required: false, flair: null, url: '', ...value } });
const settings = (...entries: Record<string, unknown>[]) => ({ __type: 'reddit', subreddit: entries.map(entry) });

beforeAll(async () => {
  fake = await startRedditFake();
  herald = await startHerald(
    { REDDIT_CLIENT_ID: fake.authority.clientId, REDDIT_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ reddit: fake.endpoints }), COMMENT_POLL_SECONDS: '60' },
    { guard: { allowLoopback: true } },
  );
  const connected = await connectOAuthChannel(herald, 'reddit');
  channelId = connected.integrationId;
  expect(connected.authorizeUrl.searchParams.get('scope')).toBe('read identity submit flair history edit modposts');
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const pollAt = (minutes: number) => pollCommentsAt(herald, minutes);

async function published(items: string[], value: ReturnType<typeof settings>) {
  const id = await publishedPost(herald, channelId, items, { settings: value, allowDuplicate: true });
  return chainOf(herald, id);
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

const commentsOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}&pageSize=50`)).body.comments as Record<string, any>[];

describe('Reddit comments', () => {
  let postId: string;
  let question: { id: string };

  it('reads the comment trees of every submission once: nested replies, a `more` stub expanded, deleted ones and its own left out', async () => {
    const [root] = await published(['Ask me anything about Herald'], settings({ subreddit: 'typescript', title: 'AMA: Herald' }, { subreddit: 'selfhosted', title: 'AMA: Herald', is_flair_required: true, flair: { id: 'flair-question', name: 'Question' } }));
    postId = root.id;
    const other = root.releaseMeta!.others;
    question = fake.addComment(`t3_${root.releaseId}`, 'When is the next release?', 'bob', 30);
    const nested = fake.addComment(`t1_${question.id}`, 'Also curious', 'carol', 20);
    const elsewhere = fake.addComment(`t3_${other}`, 'Does it run on a Pi?', 'dave', 10);
    const gone = fake.addComment(`t3_${root.releaseId}`, 'Removed by its author', 'erin', 5);
    gone.deleted = true;
    fake.comments.push({ id: 'own1', parentId: `t1_${elsewhere.id}`, linkId: `t3_${other}`, body: 'Yes, it does.', author: fake.username, createdUtc: Date.now() / 1000 });
    // Past the first top-level comment, the tree answers a `more` stub: its children come from /api/morechildren.
    fake.setTreeLimit(1);
    const late = fake.addComment(`t3_${root.releaseId}`, 'A late one', 'frank', 1);
    try {
      await pollAt(5);
      await pollAt(10); // a second read stores nothing twice
    } finally {
      fake.setTreeLimit(Infinity);
    }
    expect(fake.server.requestsTo('GET', '/api/morechildren').at(-1)!.query.get('link_id')).toBe(`t3_${root.releaseId}`);

    const listed = await commentsOf(postId);
    expect(listed.map((comment) => [comment.platformId, comment.text, comment.state]).sort()).toEqual(
      [
        [question.id, 'When is the next release?', 'new'],
        [nested.id, 'Also curious', 'new'],
        [elsewhere.id, 'Does it run on a Pi?', 'answered'],
        [late.id, 'A late one', 'new'],
      ].sort(),
    );
    const reply = listed.find((comment) => comment.platformId === nested.id)!;
    expect(reply).toMatchObject({ parentPlatformId: question.id, author: { name: 'carol', handle: 'carol', url: `${fake.url}/user/carol` }, url: `${fake.url}/r/typescript/comments/${root.releaseId}/_/${nested.id}/` });
    expect(listed.find((comment) => comment.platformId === question.id)).toMatchObject({ parentPlatformId: null });
  });

  it('publishes a reply under THAT comment exactly once, also after a crash mid-create', async () => {
    const comment = (await commentsOf(postId)).find((item) => item.platformId === question.id)!;
    const reply = await herald.rest('POST', `/comments/${comment.id}/reply`, { content: 'Next week!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    await reopenAsInterrupted(herald, reply.body.postId, 'comment:0');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');

    const made = fake.comments.filter((item) => item.body === 'Next week!');
    expect(made.map((item) => item.parentId)).toEqual([`t1_${question.id}`]);
    expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(made[0].id);
    expect((await herald.services.orm.em.fork().findOneOrFail(CommentSchema, { id: comment.id })).state).toBe('answered');
  });

  it('removes a comment only as the subreddit\'s moderator, approves it back, and never deletes someone\'s comment', async () => {
    const comment = (await commentsOf(postId)).find((item) => item.platformId === question.id)!;
    const refused = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('not_supported');
    expect(refused.body.message).toContain('only the moderators of r/typescript');
    expect(fake.server.requestsTo('POST', '/api/remove')).toHaveLength(0);

    fake.subreddits.find((sub) => sub.name === 'typescript')!.moderator = true;
    try {
      const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
      expect(hidden.status, JSON.stringify(hidden.body)).toBe(200);
      expect(hidden.body.comment.state).toBe('hidden');
      expect(fake.comments.find((item) => item.id === question.id)!.removed).toBe(true);
      expect(Object.fromEntries(fake.server.requestsTo('POST', '/api/remove')[0].form!)).toEqual({ id: `t1_${question.id}`, spam: 'false' });
      const shown = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: false });
      expect(shown.status, JSON.stringify(shown.body)).toBe(200);
      expect(shown.body.comment.state).toBe('answered');
      expect(fake.comments.find((item) => item.id === question.id)!.removed).toBe(false);
    } finally {
      fake.subreddits.find((sub) => sub.name === 'typescript')!.moderator = false;
    }
    const deleted = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(deleted.status).toBe(400);
    expect(deleted.body.code).toBe('not_supported');
  });
});

describe('changing what went out on Reddit', () => {
  it('edits the body of a text post in every subreddit and a comment\'s text, each once', async () => {
    const value = settings({ subreddit: 'typescript', title: 'Edit me' }, { subreddit: 'selfhosted', title: 'Edit me', is_flair_required: true, flair: { id: 'flair-release', name: 'Release' } });
    const [root, second] = await published(['Frist version', 'A comment with a typo'], value);
    const answer = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'First version', image: [] }, { content: 'A comment, fixed', image: [] }] });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(root.id)).at(-1)).toEqual({ kind: 'done' });
    const posts = [root.releaseId, root.releaseMeta!.others].map((id) => fake.submissions.find((post) => post.id === id)!);
    expect(posts.map((post) => post.text)).toEqual(['First version', 'First version']);
    const comments = [second.releaseId, second.releaseMeta!.others].map((id) => fake.comments.find((item) => item.id === id)!);
    expect(comments.map((item) => item.body)).toEqual(['A comment, fixed', 'A comment, fixed']);
    const calls = fake.server.requestsTo('POST', '/api/editusertext').slice(-4).map((call) => call.form!.get('thing_id'));
    expect(calls).toEqual([`t3_${root.releaseId}`, `t3_${root.releaseMeta!.others}`, `t1_${second.releaseId}`, `t1_${second.releaseMeta!.others}`]);
  });

  it('refuses a new title at once, and fails the edit of a link post\'s text with the reason', async () => {
    const [root] = await published(['Title stays'], settings({ subreddit: 'typescript', title: 'Fixed title' }));
    const retitled = await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'Title stays', image: [] }], settings: settings({ subreddit: 'typescript', title: 'Another title' }) });
    expect(retitled.status).toBe(409);
    expect(JSON.stringify(retitled.body)).toMatch(/Reddit keeps a submission's subreddit, title/);

    const [link] = await published(['Worth a read'], settings({ subreddit: 'typescript', title: 'A link', type: 'link', url: 'https://herald.example/a' }));
    const calls = fake.server.requestsTo('POST', '/api/editusertext').length;
    expect((await herald.rest('PUT', `/posts/${link.id}`, { value: [{ content: 'Worth two reads', image: [] }] })).status).toBe(200);
    expect((await settleChanges(link.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/Reddit cannot change the text of a link post/) });
    expect(fake.server.requestsTo('POST', '/api/editusertext')).toHaveLength(calls);
  });

  it('deletes the post and its comments on Reddit, once, and a repeat after a lost answer is done', async () => {
    const [root, second] = await published(['Delete me', 'And my comment'], settings({ subreddit: 'typescript', title: 'Short-lived' }));
    expect((await herald.rest('DELETE', `/posts/${root.id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/api/del'));
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(root.id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(fake.submissions.find((post) => post.id === root.releaseId)!.deleted).toBe(true);
    expect(fake.comments.find((item) => item.id === second.releaseId)!.deleted).toBe(true);
    const ids = fake.server.requestsTo('POST', '/api/del').map((call) => call.form!.get('id'));
    expect(ids.filter((id) => id === `t3_${root.releaseId}` || id === `t1_${second.releaseId}`).sort()).toEqual([`t1_${second.releaseId}`, `t1_${second.releaseId}`, `t3_${root.releaseId}`].sort());
  });

  it('says to reconnect when the channel\'s token lacks the edit scope (connected before Herald asked for it)', async () => {
    const [root] = await published(['Old grant'], settings({ subreddit: 'typescript', title: 'Old grant' }));
    const restore = loseScope();
    try {
      expect((await herald.rest('PUT', `/posts/${root.id}`, { value: [{ content: 'New text', image: [] }] })).status).toBe(200);
      expect((await settleChanges(root.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/insufficient_scope.*reconnect the channel/) });
    } finally {
      restore();
    }
    expect(fake.submissions.find((post) => post.id === root.releaseId)!.text).toBe('Old grant');
  });
});

/** Answers the next editusertext as Reddit does for a token granted without `edit`. */
function loseScope() {
  fake.server.failNext('POST', '/api/editusertext', { status: 403, headers: { 'www-authenticate': 'Bearer realm="reddit", error="insufficient_scope"' }, json: { message: 'Forbidden', error: 403 } });
  return () => undefined;
}
