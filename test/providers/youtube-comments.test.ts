// YouTube comments and changes (issue 24) through Herald against the fake: comments and all their replies read (beyond the
// few a thread carries), a reply landing in THAT comment's thread once (also after a crash mid-insert), hiding as
// heldForReview and showing again, removing someone's comment by rejecting it (only the author may delete), the video's
// title and description edited with videos.update (its category and other fields sent back), the video deleted once, and
// the quota: an exhausted project is said, not retried in a loop.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { youtubeUpload } from '../../providers/youtube/upload.js';
import { QUANTUM, startYouTubeFake, type YouTubeFake } from '../fakes/youtube.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { mediumMp4, upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted } from '../helpers/posts.js';
import { CommentPollSchema } from '../../src/db/comment-entities.js';
import { runPlatformChanges } from '../../tools/internal/platform-change-run.js';
import { pollCommentsAt } from '../helpers/after-publishing.js';

let fake: YouTubeFake;
let herald: Herald;
let channelId: string;
let video: { id: string; path: string };
const saved = { ...youtubeUpload };
const settings = { __type: 'youtube', title: 'Launch day', type: 'public', tags: [{ value: 'launch', label: 'launch' }] };
const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

beforeAll(async () => {
  fake = await startYouTubeFake();
  herald = await startHerald(
    { YOUTUBE_CLIENT_ID: fake.authority.clientId, YOUTUBE_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ youtube: fake.endpoints }), COMMENT_POLL_SECONDS: '60' },
    { guard: { allowLoopback: true } },
  );
  Object.assign(youtubeUpload, { chunkBytes: 2 * QUANTUM, bytesPerRun: 4 * QUANTUM });
  const uploaded = await upload(herald.restUrl, herald.apiKey, mediumMp4(), 'launch.mp4');
  video = { id: uploaded.body.id, path: uploaded.body.path };
  const connected = await connectOAuthChannel(herald, 'youtube');
  channelId = connected.integrationId;
  expect((await herald.rest('POST', `/integrations/${channelId}/accounts`, { id: fake.channels[1].id })).status).toBe(200);
  fake.actAs(fake.channels[1].id);
});

afterEach(() => {
  // Every request Herald sent matched YouTube's Discovery documents (test/contracts/youtube/); a mismatch is a bug of Herald's.
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  Object.assign(youtubeUpload, saved);
  await herald?.stop();
  await fake?.close();
});

const pollAt = (date: Date) => pollCommentsAt(herald, date);

async function publishedVideo(description: string) {
  const id = await createPost(herald, channelId, [{ content: description, image: [video] }], { settings });
  expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
  return (await chainOf(herald, id))[0];
}

async function changeUntilDone(id: string) {
  let outcome = await runPlatformChanges(herald.services, id);
  for (let run = 0; run < 5 && outcome.kind === 'waiting'; run++) outcome = await runPlatformChanges(herald.services, id);
  return outcome;
}

const commentsOf = async (postId: string) => (await herald.rest('GET', `/comments?post=${postId}`)).body;

describe('YouTube comments', () => {
  it('reads every comment and reply (beyond those a thread carries) and replies in THAT thread once', async () => {
    const post = await publishedVideo('Watch the launch');
    const question = fake.addComment(post.releaseId!, 'When is part two?', { publishedAt: new Date(Date.now() - 5000) });
    const replies = ['Soon?', 'Me too', 'Please!'].map((text) => fake.addComment(post.releaseId!, text, { parentId: question.commentId, author: fake.viewers[1] }));

    await pollAt(minutesLater(5));
    const listed = await commentsOf(post.id);
    expect(listed.total).toBe(4);
    const top = listed.comments.find((comment: { platformId: string }) => comment.platformId === question.commentId);
    expect(top).toMatchObject({ platform: 'youtube', text: 'When is part two?', author: { name: 'Bob Viewer' }, parentId: null });
    expect(listed.comments.filter((comment: { parentPlatformId: string }) => comment.parentPlatformId === question.commentId).map((comment: { platformId: string }) => comment.platformId).sort()).toEqual(replies.map((reply) => reply.commentId).sort());
    // The thread carried two replies; the third came from comments.list?parentId=.
    expect(fake.server.requestsTo('GET', '/youtube/v3/comments')[0].query.get('parentId')).toBe(question.commentId);

    const reply = await herald.rest('POST', `/comments/${top.id}/reply`, { content: 'Next month!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    await reopenAsInterrupted(herald, reply.body.postId, 'comment');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    const made = fake.comments.filter((comment) => comment.text === 'Next month!');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ parentId: question.commentId, channelId: fake.channels[1].id });
    expect((await chainOf(herald, reply.body.postId))[0].releaseId).toBe(made[0].commentId);

    await pollAt(minutesLater(10));
    expect((await commentsOf(post.id)).comments.find((comment: { platformId: string }) => comment.platformId === question.commentId).state).toBe('answered');
  });

  it("hides a comment (heldForReview), shows it again, and removes someone's comment by rejecting it", async () => {
    const post = await publishedVideo('Moderation');
    const spam = fake.addComment(post.releaseId!, 'Buy followers');
    await pollAt(minutesLater(5));
    const comment = (await commentsOf(post.id)).comments[0];

    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true })).status).toBe(200);
    expect(spam.moderationStatus).toBe('heldForReview');
    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: false })).status).toBe(200);
    expect(spam.moderationStatus).toBe('published');

    const removed = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    // Only the author may comments.delete: the video's owner rejects it instead.
    expect(spam.moderationStatus).toBe('rejected');
    expect(fake.server.requestsTo('DELETE', '/youtube/v3/comments')).toHaveLength(0);
    expect(fake.server.requestsTo('POST', '/youtube/v3/comments/setModerationStatus').at(-1)!.query.get('moderationStatus')).toBe('rejected');
  });

  it('says the quota is used up instead of reading on', async () => {
    const post = await publishedVideo('Quota');
    fake.addComment(post.releaseId!, 'Hello');
    const limit = fake.quota.limit;
    fake.quota.limit = fake.quota.used;
    try {
      await pollAt(minutesLater(5));
    } finally {
      fake.quota.limit = limit;
    }
    const poll = await herald.services.orm.em.fork().findOneOrFail(CommentPollSchema, { postId: post.id });
    expect(poll.lastError).toMatch(/quota/);
    expect((await commentsOf(post.id)).total).toBe(0);
  });
});

describe('changing a YouTube video', () => {
  it("edits the title, description and privacy with videos.update, sending back the category YouTube requires", async () => {
    const post = await publishedVideo('Frist description');
    const answer = await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'First description', image: [video] }], settings: { ...settings, title: 'Launch day (fixed)', type: 'unlisted' } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await changeUntilDone(post.id)).toEqual({ kind: 'done' });
    const edited = fake.videos.find((item) => item.id === post.releaseId)!;
    expect(edited.snippet).toMatchObject({ title: 'Launch day (fixed)', description: 'First description', categoryId: '22', tags: ['launch'] });
    expect(edited.status.privacyStatus).toBe('unlisted');
    const [update] = fake.server.requestsTo('PUT', '/youtube/v3/videos');
    expect(update.query.get('part')).toBe('snippet,status');
  });

  it('refuses moving a published video to another playlist', async () => {
    const post = await publishedVideo('Playlist');
    const refused = await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'Playlist', image: [video] }], settings: { ...settings, playlist: 'PLlaunches' } });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/playlist in YouTube Studio/);
  });

  it('deletes the video and its comment once; what is already gone counts as deleted', async () => {
    const id = await createPost(herald, channelId, [{ content: 'To delete', image: [video] }, 'A comment of ours'], { settings });
    expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
    const [root, item] = await chainOf(herald, id);
    fake.videos.splice(fake.videos.findIndex((entry) => entry.id === root.releaseId), 1); // deleted in YouTube Studio already
    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    expect(await changeUntilDone(id)).toEqual({ kind: 'done' });
    expect(fake.comments.some((comment) => comment.id === item.releaseId)).toBe(false);
    expect(fake.server.requestsTo('DELETE', '/youtube/v3/videos').map((request) => request.query.get('id'))).toEqual([root.releaseId]);
  });
});
