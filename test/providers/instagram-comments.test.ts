// Instagram comments and changes (issue 24) against the Meta fake: comments and their replies read through Herald's poll, a
// reply published once under THAT comment (POST /{comment}/replies; a reply to a reply goes under its top-level comment, with
// a warning), hiding and deleting comments, an edit or a deletion of a published post refused with the reason (the API
// cannot), and the standalone (Instagram Login) provider reading and hiding with its own token and permissions.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import instagramStandalone from '../../providers/instagram-standalone.js';
import { PostSchema } from '../../src/db/entities.js';
import { startFacebookFake, type FacebookFake } from '../fakes/facebook.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { acceptedSamples, uploaded } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishUntilSettled, reopenAsInterrupted, publishedPost } from '../helpers/posts.js';
import { providerContext } from '../helpers/provider-context.js';
import { pollCommentsAt } from '../helpers/after-publishing.js';

let fake: FacebookFake;
let herald: Herald;
let channel = '';
let igId = '';
const em = () => herald.services.orm.em.fork();

beforeAll(async () => {
  fake = await startFacebookFake();
  herald = await startHerald({ ...fake.environment(), PUBLISH_RECHECK_MAX_SECONDS: '1', COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  igId = fake.pages[0].instagram!.id;
  const { integrationId } = await connectOAuthChannel(herald, 'instagram');
  expect((await herald.rest('POST', `/integrations/${integrationId}/accounts`, { id: igId })).status).toBe(200);
  channel = integrationId;
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

async function published(caption: string) {
  const picture = await uploaded(herald, acceptedSamples().find((entry) => entry.type === 'image/jpeg')!.bytes, 'loaf.jpg', 'image/jpeg');
  return publishedPost(herald, channel, [{ content: `<p>${caption}</p>`, image: [picture] }], { type: 'now', allowDuplicate: true, settings: { __type: 'instagram', post_type: 'post' } });
}

const commentsOf = async (id: string) => (await herald.rest('GET', `/comments?post=${id}`)).body.comments as any[];

describe('Instagram comments', () => {
  it('reads comments and their replies, and replies once under THAT comment', async () => {
    const id = await published('Fresh loaves');
    const [post] = await chainOf(herald, id);
    const question = fake.addComment(post.releaseId!, 'Gluten free?', { authorId: '17841400000000777', authorName: 'bob.reads', createdAt: new Date(Date.now() - 3000) });
    const nested = fake.addComment(question.id, 'Asking too', { authorId: '17841400000000778', authorName: 'carol.eats', createdAt: new Date(Date.now() - 2000) });
    await pollAt(5);
    const listed = await commentsOf(id);
    expect(listed).toHaveLength(2);
    const byId = Object.fromEntries(listed.map((comment) => [comment.platformId, comment]));
    expect(byId[question.id]).toMatchObject({ platform: 'instagram', text: 'Gluten free?', parentId: null, author: { handle: 'bob.reads', id: '17841400000000777' } });
    expect(byId[nested.id]).toMatchObject({ parentPlatformId: question.id, author: { handle: 'carol.eats' } });
    const [read] = fake.server.requestsTo('GET', `/${fake.version}/${post.releaseId}/comments`);
    expect(read.query.get('fields')).toContain('replies{');

    const reply = await herald.rest('POST', `/comments/${byId[question.id].id}/reply`, { content: 'Not yet, soon!' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    // Interrupted after the reply reached Instagram: the recovery finds it among that comment's replies.
    const row = await em().findOneOrFail(PostSchema, { id: reply.body.postId });
    await reopenAsInterrupted(herald, row.id, () => ({ ...row.publishProgress!.steps, comment: { state: 'started' } }));
    expect((await publishUntilSettled(herald, row.id)).outcome.kind).toBe('published');
    const made = fake.comments.filter((comment) => comment.message === 'Not yet, soon!');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ parentId: question.id, authorId: igId });
    expect(fake.server.requestsTo('POST', `/${fake.version}/${question.id}/replies`)).toHaveLength(1);

    const toNested = await herald.rest('POST', `/comments/${byId[nested.id].id}/reply`, { content: 'Soon for you too' });
    expect((await publishUntilSettled(herald, toNested.body.postId)).outcome.kind).toBe('published');
    expect(fake.comments.find((comment) => comment.message === 'Soon for you too')).toMatchObject({ parentId: question.id });
    expect(JSON.stringify(await em().findOneOrFail(PostSchema, { id: toNested.body.postId }))).toMatch(/nests replies two levels deep/);

    await pollAt(10);
    const after = await commentsOf(id);
    expect(after).toHaveLength(2);
    expect(after.map((comment) => comment.state).sort()).toEqual(['answered', 'answered']);
  });

  it('hides, shows again and deletes a comment', async () => {
    const id = await published('Moderated');
    const [post] = await chainOf(herald, id);
    const spam = fake.addComment(post.releaseId!, 'Follow me', { authorId: '17841400000000779', authorName: 'spam.bot' });
    await pollAt(5);
    const [comment] = await commentsOf(id);
    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true })).status).toBe(200);
    expect(spam.hidden).toBe(true);
    expect(fake.server.requestsTo('POST', `/${fake.version}/${spam.id}`).at(-1)!.json).toEqual({ hide: true });
    expect((await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: false })).status).toBe(200);
    expect(spam.hidden).toBe(false);
    expect((await herald.rest('DELETE', `/comments/${comment.id}`)).status).toBe(200);
    expect(fake.comments).not.toContain(spam);
  });

  it('refuses an edit or a deletion of a published post with the reason: the Instagram API cannot', async () => {
    const id = await published('Stays as it is');
    const edit = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Changed caption', image: (await chainOf(herald, id))[0].media }] });
    expect(edit.status).toBe(409);
    expect(JSON.stringify(edit.body)).toMatch(/Instagram API cannot change a published post's caption/);
    const removed = await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.onPlatform.stayed).toEqual([expect.objectContaining({ reason: expect.stringMatching(/Instagram API cannot delete a published post/) })]);
  });
});

describe('Instagram (Instagram Login) comments', () => {
  it('reads and hides with the Instagram token, and is refused without instagram_business_manage_comments', async () => {
    const media = { id: '18000000000000900', owner: fake.solo.userId, containerId: 'none', caption: 'Solo post', mediaType: 'IMAGE' as const, productType: 'FEED' as const, permalink: 'https://www.instagram.com/p/solo/', timestamp: new Date().toISOString() };
    fake.media.push(media);
    const comment = fake.addComment(media.id, 'Nice shot', { authorId: '17841400000000780', authorName: 'dan.sees' });
    const context = providerContext({ endpoints: fake.endpoints['instagram-standalone'], auth: fake.standaloneAuth() });
    const found = await instagramStandalone.comments!(context, { id: media.id }, undefined);
    expect(found).toEqual([expect.objectContaining({ id: comment.id, text: 'Nice shot', author: expect.objectContaining({ handle: 'dan.sees' }), byAccount: false })]);
    await instagramStandalone.hideComment!(context, { id: comment.id }, true, { id: media.id });
    expect(comment.hidden).toBe(true);

    const token = context.auth.accessToken;
    const entry = fake.tokens.get(token)!;
    entry.scopes = entry.scopes.filter((scope) => scope !== 'instagram_business_manage_comments');
    await expect(instagramStandalone.comments!(context, { id: media.id }, undefined)).rejects.toThrow(/lacks a permission.*instagram_business_manage_comments/);
  });
});
