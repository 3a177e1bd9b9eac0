// DEV comments and changes through Herald against the fake Forem API (issue 24): an article's comment threads read by the
// poll (nested, deleted ones and the account's own left out), a reply refused (the API cannot write comments), hiding and
// deleting refused; an edit of the title, tags and text through PUT /api/articles/{id}, once; an edit of an article that is
// not the account's failing with DEV's words; deletion refused with the reason before anything is asked of DEV.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../fakes/articles.js';
import { startDevtoFake, type DevtoFake } from '../fakes/devto.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, publishedPost } from '../helpers/posts.js';
import { changeUntilSettled, pollCommentsAt } from '../helpers/after-publishing.js';

let fake: DevtoFake;
let herald: Herald;
let channelId: string;

const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'devto', title: 'Comments on DEV', ...extra });

beforeAll(async () => {
  fake = await startDevtoFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ devto: { api: fake.url } }), COMMENT_POLL_SECONDS: '60' }, { guard: { allowLoopback: true } });
  const connected = await connect(herald, 'devto', { apiKey: fake.apiKey });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

// Every request Herald sent fits Forem's published contract (test/contracts/devto/openapi.json).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
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

describe('DEV comments', () => {
  it('reads the comment threads once; a reply, hiding and deleting are refused with the reason', async () => {
    const post = await published('Tell me what you think', settings());
    const articleId = Number(post.releaseId);
    const first = fake.addComment(articleId, 'Great <em>read</em> &amp; more', { secondsAgo: 30 });
    const nested = fake.addComment(articleId, 'Agreed', { parent: first.id_code, user: { user_id: 78, username: 'ben', name: 'Ben' }, secondsAgo: 20 });
    fake.addComment(articleId, 'Gone', { secondsAgo: 10 }).deleted = true;
    fake.addComment(articleId, 'Thanks!', { parent: first.id_code, user: { user_id: fake.user.id, username: fake.user.username, name: fake.user.name } });
    for (const minutes of [5, 10]) await pollCommentsAt(herald, minutes);
    const listed = (await herald.rest('GET', `/comments?post=${post.id}`)).body.comments as Record<string, any>[];
    expect(listed.map((comment) => [comment.platformId, comment.text, comment.parentPlatformId, comment.state])).toEqual([
      [nested.id_code, 'Agreed', first.id_code, 'new'],
      [first.id_code, 'Great read & more', null, 'answered'],
    ]);
    expect(listed[1]).toMatchObject({ author: { name: 'Ann', handle: 'ann', url: `${fake.url}/ann` }, url: `${fake.url}/ann/comment/${first.id_code}` });

    const reply = await herald.rest('POST', `/comments/${listed[0].id}/reply`, { content: 'Thank you' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'not_supported' });
    expect(reply.body.message).toContain('DEV does not let Herald publish comments or replies');
    expect((await herald.rest('POST', `/comments/${listed[0].id}/hide`, { hidden: true })).body.code).toBe('not_supported');
    expect((await herald.rest('DELETE', `/comments/${listed[0].id}`)).body.code).toBe('not_supported');
  });
});

describe('changing what went out on DEV', () => {
  it('edits the title, tags and text of the article in place, once', async () => {
    const post = await published('Frist draft of the text', settings({ title: 'Old title', tags: [{ value: 'webdev', label: 'webdev' }] }));
    const answer = await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'First draft of the text', image: [] }], settings: settings({ title: 'New title', tags: [{ value: 'herald', label: 'herald' }] }) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(post.id)).at(-1)).toEqual({ kind: 'done' });
    const article = fake.articles.find((entry) => String(entry.id) === post.releaseId)!;
    expect(article.article).toMatchObject({ title: 'New title', body_markdown: 'First draft of the text', tags: ['herald'], published: true });
    const [put] = fake.server.requestsTo('PUT', `/api/articles/${post.releaseId}`);
    expect(put.headers['api-key']).toBe(fake.apiKey);
    expect(put.json).toEqual({ article: { title: 'New title', body_markdown: 'First draft of the text', tags: ['herald'] } });
  });

  it("fails the edit of an article that is not the account's with DEV's words", async () => {
    const post = await published('Mine until now', settings({ title: 'Taken over' }));
    fake.articles.find((entry) => String(entry.id) === post.releaseId)!.foreign = true;
    expect((await herald.rest('PUT', `/posts/${post.id}`, { value: [{ content: 'Edited', image: [] }] })).status).toBe(200);
    expect((await settleChanges(post.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/not one this account may change \(unauthorized\)/) });
    // The key still works: the channel stays connected (Forem's 401 here is not a dead key).
    expect((await herald.rest('GET', '/integrations')).body.find((item: { id: string }) => item.id === channelId)).toMatchObject({ health: { state: 'active' } });
  });

  it('refuses deleting on DEV with the reason, and asks nothing of DEV', async () => {
    const post = await published('Stays on DEV', settings({ title: 'Stays' }));
    const answer = await herald.rest('DELETE', `/posts/${post.id}`, { deleteOnPlatform: true });
    expect(JSON.stringify(answer.body)).toMatch(/DEV's API cannot delete an article/);
    expect(fake.server.requests.filter((request) => request.method === 'PUT' && request.path === `/api/articles/${post.releaseId}`)).toHaveLength(0);
  });
});
