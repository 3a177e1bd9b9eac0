// Hashnode against its fake GraphQL API (which validates every operation and its variables against Hashnode's published
// schema, test/contracts/hashnode/schema.graphql): token connect with a Bearer token, publishPost with the cover as
// coverImage and tags by slug, the settings' limits and the 100 KB request limit, a Pro-plan refusal reaching ERROR, the
// publications and tagsList helpers, views and reactions as post analytics, and a lost publish looked up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import hashnode from '../../providers/hashnode.js';
import { ARTICLE_HTML, ARTICLE_MARKDOWN, connect, notifications, publishThroughWorker, scheduleWith, uploadPictures, type Pictures } from '../fakes/articles.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { startHashnodeFake, type HashnodeFake } from '../fakes/hashnode.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from '../helpers/posts.js';

let fake: HashnodeFake;
let herald: Herald;
let pictures: Pictures;
let channelId: string;
let rootId: string;

const JAVASCRIPT = '56744721958ef13879b94cad';

beforeAll(async () => {
  fake = await startHashnodeFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ hashnode: { gql: fake.url } }) }, { guard: { allowLoopback: true } });
  pictures = await uploadPictures(herald);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const publication = () => fake.publications[0].id;
const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'hashnode', title: 'Why we moved to Herald', publication: publication(), tags: [{ value: JAVASCRIPT, label: 'JavaScript' }], ...extra });
const schedule = (settingsValue: Record<string, unknown>) => scheduleWith(herald, channelId, settingsValue);
const graphql = (body: unknown, authorization = fake.token) =>
  fetch(fake.url, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => [response.status, await response.json()]);

describe('connecting Hashnode', () => {
  it("refuses a wrong token with Hashnode's reason, then connects with the right one", async () => {
    const wrong = await connect(herald, 'hashnode', { accessToken: 'not-a-token' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'Hashnode refused the connection: the personal access token was refused (You must be logged in to perform this action. (UNAUTHENTICATED)): create one in Hashnode Settings, Developer, and reconnect',
    );
    const right = await connect(herald, 'hashnode', { accessToken: fake.token });
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    channelId = right.body.id;
    expect(right.body).toMatchObject({ identifier: 'hashnode', name: 'Herald Writer', profile: 'heraldwriter', picture: fake.user.profilePicture });
    const request = fake.server.requestsTo('POST', '/').at(-1)!;
    expect(request.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(request.json).toEqual({ query: 'query Me { me { id username name profilePicture } }', variables: {} });
  });
});

describe('publishing on Hashnode', () => {
  it('publishes the article through the worker: the cover, the second picture inline, tags by slug (an old tag id matched by its label), new ones made', async () => {
    const root = await publishThroughWorker(herald, channelId, ARTICLE_HTML, [pictures.png, pictures.jpeg], settings({
      subtitle: 'Notes from the switch',
      tags: [{ value: JAVASCRIPT, label: 'JavaScript' }, { value: 'web-development', label: 'Web Development' }, { value: 'Herald-News', label: 'Herald News' }],
    }));
    rootId = root.id;
    const [post] = fake.posts;
    expect(post.input).toEqual({
      title: 'Why we moved to Herald',
      subtitle: 'Notes from the switch',
      publicationId: publication(),
      contentMarkdown: `${ARTICLE_MARKDOWN}\n\n![](${pictures.jpeg.path})`,
      tags: [{ slug: 'javascript' }, { slug: 'web-development', name: 'Web Development' }, { slug: 'herald-news', name: 'Herald News' }],
      coverImage: pictures.png.path,
    });
    const operations = fake.server.requestsTo('POST', '/').slice(-2).map((request) => request.json);
    expect(operations).toEqual([
      { query: 'query Tag($slug: String!) { tag(slug: $slug) { id name slug } }', variables: { slug: 'javascript' } },
      { query: 'mutation PublishPost($input: PublishPostInput!) { publishPost(input: $input) { post { id slug url } } }', variables: { input: post.input } },
    ]);
    expect(fake.tags.map((tag) => tag.slug)).toContain('herald-news');
    expect([root.releaseId, root.releaseUrl]).toEqual([post.id, 'https://blog.herald.example/why-we-moved-to-herald']);
  });

  it('refuses, naming it, a tag id that matches no tag by its label, and an article over the 100 KB a request may carry', async () => {
    const published = fake.posts.length;
    const stale = await createPost(herald, channelId, ['<p>Stale tag</p>'], { settings: settings({ title: 'Stale tag', tags: [{ value: 'aaaaaaaaaaaaaaaaaaaaaaaa', label: 'Gone' }] }) });
    expect((await publishUntilSettled(herald, stale)).outcome).toEqual({
      kind: 'failed',
      error: 'Hashnode refused the post: Hashnode takes tags by slug now, and the tag id aaaaaaaaaaaaaaaaaaaaaaaa ("Gone") could not be matched to one: choose the tag again (tagsList answers slugs)',
    });
    // 40,000 characters (within the 90,000 Herald lets through) that are 120 KB as UTF-8.
    const heavy = await createPost(herald, channelId, [`<p>${'€'.repeat(40_000)}</p>`], { settings: settings({ title: 'Heavy' }) });
    expect((await publishUntilSettled(herald, heavy)).outcome).toEqual({ kind: 'failed', error: expect.stringMatching(/the article is 12\d KB as sent and Hashnode takes at most 100 KB a request: shorten it/) });
    expect(fake.posts).toHaveLength(published);
  });

  it('refuses a post without tags, with 16 tags, without a publication or a title when it is created', async () => {
    expect((await schedule(settings({ tags: [] }))).body.message).toContain('Hashnode needs at least one tag');
    const sixteen = Array.from({ length: 16 }, (_, index) => ({ value: `tag${index}`, label: `Tag ${index}` }));
    expect((await schedule(settings({ tags: sixteen }))).body.message).toContain('Hashnode takes at most 15 tags');
    expect((await schedule({ __type: 'hashnode', title: 'T', tags: [{ value: JAVASCRIPT, label: 'JS' }] })).body.message).toMatch(/settings\.publication/);
    expect((await schedule({ __type: 'hashnode', publication: publication(), tags: [{ value: JAVASCRIPT, label: 'JS' }] })).body.message).toMatch(/settings\.title/);
    expect(hashnode.validate!([{ text: 'x', media: [{ kind: 'video', url: 'https://media.example/v.mp4' }] }], {})).toMatch(/video/);
  });

  it("is refused by the fake as by Hashnode: what is not in Hashnode's schema, a missing title, the old cover and tag inputs, no token", async () => {
    const refused = async (body: unknown, authorization?: string) => {
      const [status, answer] = await graphql(body, authorization);
      return [status, answer.errors.map((error: { extensions: { code: string } }) => error.extensions.code)[0], answer.errors.map((error: { message: string }) => error.message).join(' ')];
    };
    expect(await refused({ query: '{ me { id nickname } }' })).toEqual([400, 'GRAPHQL_VALIDATION_FAILED', 'Cannot query field "nickname" on type "MyUser". Did you mean "name" or "username"?']);
    expect(await refused({ query: '{ me { publications { edges { node { id } } } } }' })).toEqual([400, 'GRAPHQL_VALIDATION_FAILED', 'Field "publications" argument "first" of type "Int!" is required, but it was not provided.']);
    expect(await refused({ query: 'mutation { removePost(input: {id: "1"}) { post { id } } }' })).toEqual([400, 'GRAPHQL_VALIDATION_FAILED', expect.stringContaining('Cannot query field "removePost" on type "Mutation".')]);
    const mutation = 'mutation PublishPost($input: PublishPostInput!) { publishPost(input: $input) { post { id } } }';
    const base = { publicationId: publication(), contentMarkdown: 'x', tags: [{ slug: 'javascript' }] };
    expect(await refused({ query: mutation, variables: { input: base } })).toEqual([400, 'BAD_USER_INPUT', expect.stringMatching(/^Variable "\$input" got invalid value .*; Field "title" of required type "String!" was not provided\.$/)]);
    expect(await refused({ query: mutation, variables: { input: { ...base, title: 'T', coverImageOptions: { coverImageURL: 'https://x.example/c.png' } } } })).toEqual([
      400,
      'BAD_USER_INPUT',
      expect.stringMatching(/Field "coverImageOptions" is not defined by type "PublishPostInput"/),
    ]);
    expect(await refused({ query: mutation, variables: { input: { ...base, title: 'T', tags: [{ id: JAVASCRIPT }] } } })).toEqual([400, 'BAD_USER_INPUT', expect.stringMatching(/Field "id" is not defined by type "PublishPostTagInput"/)]);
    expect(await refused({ query: mutation, variables: { input: { ...base, title: 'T', publicationId: 'blog' } } })).toEqual([400, 'BAD_USER_INPUT', expect.stringMatching(/Invalid ObjectId/)]);
    const [status, anonymous] = await graphql({ query: mutation, variables: { input: { ...base, title: 'T' } } }, '');
    expect([status, anonymous.data, anonymous.errors[0].message, anonymous.errors[0].extensions.code]).toEqual([200, null, 'You must be logged in to perform this action.', 'UNAUTHENTICATED']);
  });

  it("puts a post Hashnode refuses (no Pro plan) in ERROR with Hashnode's words and the fix", async () => {
    fake.server.failNext('POST', '/', {
      json: { errors: [{ message: 'Publication does not have an active Pro plan. Upgrade in your dashboard to access this via the API.', extensions: { code: 'FORBIDDEN' } }], data: null },
    });
    const refused = await createPost(herald, channelId, ['<p>Pro only</p>'], { settings: settings({ title: 'Pro only' }) });
    const { outcome } = await publishUntilSettled(herald, refused);
    expect(outcome).toEqual({
      kind: 'failed',
      error:
        'Hashnode refused the post: Publication does not have an active Pro plan. Upgrade in your dashboard to access this via the API. (FORBIDDEN): upgrade the publication to Pro in the Hashnode dashboard to publish through the API',
    });
    expect((await notifications(herald, 'post_failed'))[0]).toContain('active Pro plan');
  });

  it('links the post whose publish answer was lost instead of publishing it twice', async () => {
    const lost = await createPost(herald, channelId, ['<p>Lost answer</p>'], { settings: settings({ title: 'Lost answer' }) });
    const published = fake.posts.length;
    const restore = loseAnswerOf(herald, (request) => JSON.stringify(request.json ?? '').includes('mutation PublishPost'));
    try {
      expect((await publishUntilSettled(herald, lost)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(fake.posts).toHaveLength(published + 1);
    expect((await chainOf(herald, lost))[0]).toMatchObject({ releaseId: fake.posts.at(-1)!.id, releaseUrl: fake.posts.at(-1)!.url });
  });

  it('never takes an older post of the same title for the new one: a publish lost before it arrived is made again, once (issue 21)', async () => {
    fake.posts.push({ id: 'abc123abc123abc123abc123', slug: 'weekly-digest', url: 'https://blog.herald.example/weekly-digest', title: 'Weekly digest', publicationId: publication(), input: {}, views: 0, reactionCount: 0, responseCount: 0, publishedAt: new Date(Date.now() - 7 * 86_400_000).toISOString() });
    const digest = await createPost(herald, channelId, ['<p>This week</p>'], { settings: settings({ title: 'Weekly digest' }) });
    const published = fake.posts.length;
    const restore = loseRequestOf(herald, (request) => JSON.stringify(request.json ?? '').includes('mutation PublishPost'));
    try {
      const { outcome, runs } = await publishUntilSettled(herald, digest);
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'published']);
      expect(outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(fake.posts).toHaveLength(published + 1);
    const [item] = await chainOf(herald, digest);
    expect(item.releaseId).toBe(fake.posts.at(-1)!.id);
    expect(item.releaseId).not.toBe('abc123abc123abc123abc123');
  });
});

describe('a lost publish beside a post of the same title published 35 s before (issue 31)', () => {
  // "Weekly" went out 35 seconds ago, inside the two minutes the lookup reaches back for clock skew: only the content tells
  // the new one from it. The request that never arrived comes first, so then the older "Weekly" is the only one of its title.
  const weekly = (content: string) => ({ id: `00000000000000000000${String(fake.posts.length).padStart(4, '0')}`, slug: 'weekly', url: 'https://blog.herald.example/weekly', title: 'Weekly', publicationId: publication(), input: { contentMarkdown: content }, views: 0, reactionCount: 0, responseCount: 0, publishedAt: new Date(Date.now() - 35_000).toISOString() });

  it('stops with "could not confirm" when the publish never reached Hashnode, never taking the older post', async () => {
    const older = weekly('Last issue');
    fake.posts.push(older);
    const rootId = await createPost(herald, channelId, ['<p>This issue</p>'], { settings: settings({ title: 'Weekly' }) });
    const published = fake.posts.length;
    const restore = loseRequestOf(herald, (request) => JSON.stringify(request.json ?? '').includes('mutation PublishPost'));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    } finally {
      restore();
    }
    expect(fake.posts).toHaveLength(published);
    const [item] = await chainOf(herald, rootId);
    expect(item.releaseId ?? null).not.toBe(older.id);
    expect(item.error).toMatch(/^Could not confirm whether Hashnode published this item: posts titled "Weekly" matching it only in part/);
  });

  it('takes the new post by its Markdown when only the answer was lost', async () => {
    const older = weekly('Last issue, again');
    fake.posts.push(older);
    const rootId = await createPost(herald, channelId, ['<p>Next issue</p>'], { settings: settings({ title: 'Weekly' }) });
    const published = fake.posts.length;
    const restore = loseAnswerOf(herald, (request) => JSON.stringify(request.json ?? '').includes('mutation PublishPost'));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(fake.posts).toHaveLength(published + 1);
    const made = fake.posts.at(-1)!;
    expect(made.input.contentMarkdown).toBe('Next issue');
    expect((await chainOf(herald, rootId))[0]).toMatchObject({ releaseId: made.id, releaseUrl: made.url });
  });
});

describe('Hashnode helpers and analytics', () => {
  it('lists publications and looks tags up by slug through POST /integration-trigger', async () => {
    const publications = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'publications' });
    expect(publications.body).toEqual({ output: [{ id: publication(), name: 'Herald Blog', url: 'https://blog.herald.example' }] });
    const found = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'tagsList', data: { slug: 'JavaScript, web-development, no-such-tag' } });
    expect(found.body).toEqual({
      output: [
        { id: 'javascript', name: 'JavaScript', slug: 'javascript' },
        { id: 'web-development', name: 'Web Development', slug: 'web-development' },
      ],
    });
    const empty = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'tagsList' });
    expect([empty.status, empty.body.code]).toEqual([400, 'invalid_input']);
  });

  it("reports the article's views, reactions and responses", async () => {
    Object.assign(fake.posts[0], { views: 250, reactionCount: 12, responseCount: 3 });
    const response = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(response.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Views', '250'],
      ['Reactions', '12'],
      ['Responses', '3'],
    ]);
    expect(fake.server.requestsTo('POST', '/').at(-1)!.json).toEqual({ query: 'query PostStats($id: ID!) { post(id: $id) { id views reactionCount responseCount } }', variables: { id: fake.posts[0].id } });
    // Post.views is nullable in Hashnode's schema (a publication may hide its view counts): then there is no Views figure.
    Object.assign(fake.posts[0], { views: null });
    const hidden = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(hidden.body.map((metric: { label: string }) => metric.label)).toEqual(['Reactions', 'Responses']);
  });
});
