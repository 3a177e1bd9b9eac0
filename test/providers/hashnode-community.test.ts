// Hashnode comments and changes through Herald against the fake GraphQL API (issue 24): a post's comments and their replies
// read by the poll page by page (the account's own left out), a reply, hiding and deleting refused (the API has no comment
// mutation); updatePost with the new title, subtitle, text and tags, once; another member's post refused with Hashnode's
// words; a deletion on Hashnode refused with the reason (its API has no mutation that deletes a post), the post kept there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../fakes/articles.js';
import { startHashnodeFake, type HashnodeFake } from '../fakes/hashnode.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, publishedPost } from '../helpers/posts.js';
import { changeUntilSettled, pollCommentsAt } from '../helpers/after-publishing.js';

let fake: HashnodeFake;
let herald: Herald;
let channelId: string;

const JAVASCRIPT = '56744721958ef13879b94cad';
const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'hashnode', title: 'Comments on Hashnode', publication: fake.publications[0].id, tags: [{ value: JAVASCRIPT, label: 'JavaScript' }], ...extra });

beforeAll(async () => {
  fake = await startHashnodeFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ hashnode: { gql: fake.url } }), COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  const connected = await connect(herald, 'hashnode', { accessToken: fake.token });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

async function published(text: string, value: Record<string, unknown>) {
  const id = await publishedPost(herald, channelId, [text], { settings: value, allowDuplicate: true });
  return (await chainOf(herald, id))[0];
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

describe('Hashnode comments', () => {
  it('reads the comments and their replies page by page, once; a reply, hiding and deleting are refused', async () => {
    const post = await published('Tell me what you think', settings());
    for (let index = 0; index < 52; index++) fake.addComment(post.releaseId!, `Comment ${index}`, { secondsAgo: 200 - index });
    const first = fake.comments.find((comment) => comment.text === 'Comment 0')!;
    const reply = fake.addComment(post.releaseId!, 'A reply', { parentId: first.id, author: { id: '64b000000000000000000b22', username: 'ben', name: 'Ben' }, secondsAgo: 10 });
    fake.addComment(post.releaseId!, 'Thanks!', { parentId: first.id, author: { id: fake.user.id, username: fake.user.username, name: fake.user.name } });
    for (const minutes of [5, 10]) await pollCommentsAt(herald, minutes);
    const listed = (await herald.rest('GET', `/comments?post=${post.id}&pageSize=100`)).body.comments as Record<string, any>[];
    expect(listed).toHaveLength(53);
    expect(listed.find((comment) => comment.platformId === first.id)).toMatchObject({ text: 'Comment 0', parentPlatformId: null, state: 'answered', author: { name: 'Ann', handle: 'ann' } });
    expect(listed.find((comment) => comment.platformId === reply.id)).toMatchObject({ text: 'A reply', parentPlatformId: first.id, state: 'new' });
    const calls = fake.server.requestsTo('POST', '/').filter((call) => String((call.json as { query: string }).query).startsWith('query Comments'));
    expect(calls.map((call) => (call.json as { variables: { after?: string } }).variables.after ?? null).slice(0, 2)).toEqual([null, '50']);

    const refused = await herald.rest('POST', `/comments/${listed[0].id}/reply`, { content: 'Thank you' });
    expect(refused.body).toMatchObject({ code: 'not_supported' });
    expect((await herald.rest('POST', `/comments/${listed[0].id}/hide`, { hidden: true })).body.code).toBe('not_supported');
    expect((await herald.rest('DELETE', `/comments/${listed[0].id}`)).body.code).toBe('not_supported');
  });
});

describe('changing what went out on Hashnode', () => {
  it('edits the title, subtitle, text and tags with updatePost, once', async () => {
    const post = await published('Frist draft', settings({ title: 'Old title' }));
    const answer = await herald.rest('PUT', `/posts/${post.id}`, {
      value: [{ content: 'First draft', image: [] }],
      settings: settings({ title: 'New title', subtitle: 'Now with a subtitle', tags: [{ value: 'herald-news', label: 'Herald News' }] }),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(post.id)).at(-1)).toEqual({ kind: 'done' });
    const made = fake.posts.find((entry) => entry.id === post.releaseId)!;
    expect(made.updates).toEqual([{ id: post.releaseId, title: 'New title', subtitle: 'Now with a subtitle', contentMarkdown: 'First draft', tags: [{ slug: 'herald-news', name: 'Herald News' }] }]);
    expect(made.title).toBe('New title');
  });

  it('keeps the post on Hashnode when asked to delete it there, saying why: the API has no mutation that deletes a post', async () => {
    const post = await published('Short-lived', settings({ title: 'Short-lived' }));
    const before = fake.server.requestsTo('POST', '/').length;
    const answer = await herald.rest('DELETE', `/posts/${post.id}`, { deleteOnPlatform: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.onPlatform.stayed).toEqual([expect.objectContaining({ platform: 'hashnode', reason: expect.stringMatching(/Hashnode's API has no way to delete a post.*Hashnode dashboard/) })]);
    expect(fake.server.requestsTo('POST', '/')).toHaveLength(before);
    expect(fake.posts.some((entry) => entry.id === post.releaseId)).toBe(true);
  });

  it("fails the edit of another member's post with Hashnode's words", async () => {
    const post = await published('Not mine', settings({ title: 'Not mine' }));
    fake.posts.find((entry) => entry.id === post.releaseId)!.foreign = true;
    const answer = await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'Mine now', image: [] }], settings: settings({ title: 'Not mine' }) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(post.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/Only the author of the post or a publication admin.*FORBIDDEN/) });
    expect(fake.posts.find((entry) => entry.id === post.releaseId)!.updates).toBeUndefined();
  });
});
