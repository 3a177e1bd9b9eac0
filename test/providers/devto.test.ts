// DEV against its fake Forem API: API-key connect, a Markdown article with its cover and inline picture from Herald's
// public URLs, tags and organization honoured or refused, DEV's refusals reaching ERROR, helpers, views and reactions as
// post analytics, and a lost create answer looked up instead of repeated.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import devto from '../../providers/devto.js';
import { ARTICLE_HTML, ARTICLE_MARKDOWN, connect, notifications, publishThroughWorker, scheduleWith, uploadPictures, type Pictures } from '../fakes/articles.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { startDevtoFake, type DevtoFake } from '../fakes/devto.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from '../helpers/posts.js';

let fake: DevtoFake;
let herald: Herald;
let pictures: Pictures;
let channelId: string;
let rootId: string;

beforeAll(async () => {
  fake = await startDevtoFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ devto: { api: fake.url } }) }, { guard: { allowLoopback: true } });
  pictures = await uploadPictures(herald);
});

// Every request Herald sent fits Forem's published contract (test/contracts/devto/openapi.json).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'devto', title: 'Why we moved to Herald', ...extra });
const schedule = (settingsValue: Record<string, unknown>) => scheduleWith(herald, channelId, settingsValue);

describe('connecting DEV', () => {
  it("refuses a wrong API key with DEV's reason, then connects with the right one", async () => {
    const wrong = await connect(herald, 'devto', { apiKey: 'not-the-key' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'DEV refused the connection: the API key was refused (unauthorized (HTTP 401)): create a key in DEV Settings, Extensions, DEV Community API Keys, and reconnect',
    );
    const right = await connect(herald, 'devto', { apiKey: fake.apiKey });
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    channelId = right.body.id;
    expect(right.body).toMatchObject({ identifier: 'devto', name: 'Herald Writer', profile: 'heraldwriter', picture: fake.user.profile_image });
    const me = fake.server.requestsTo('GET', '/api/users/me').at(-1)!;
    expect([me.headers['api-key'], me.headers.accept]).toEqual([fake.apiKey, 'application/vnd.forem.api-v1+json']);
  });
});

describe('publishing on DEV', () => {
  it('publishes the article through the worker: Markdown body, the first picture as cover, the second inline, tags, organization and AI disclosure', async () => {
    const root = await publishThroughWorker(herald, channelId, ARTICLE_HTML, [pictures.png, pictures.jpeg], settings({
      tags: [{ value: 'herald', label: 'herald' }, { value: 'webdev', label: 'webdev' }],
      organization: '42',
      aiDisclosure: 'fully_autonomous',
    }));
    rootId = root.id;
    const [request] = fake.server.requestsTo('POST', '/api/articles');
    expect(request.json).toEqual({
      article: {
        title: 'Why we moved to Herald',
        body_markdown: `${ARTICLE_MARKDOWN}\n\n![](${pictures.jpeg.path})`,
        published: true,
        main_image: pictures.png.path,
        tags: ['herald', 'webdev'],
        organization_id: 42,
        ai_disclosure_level: 'fully_autonomous',
      },
    });
    expect([request.headers['api-key'], request.headers.accept]).toEqual([fake.apiKey, 'application/vnd.forem.api-v1+json']);
    const [article] = fake.articles;
    expect([root.releaseId, root.releaseUrl]).toEqual([String(article.id), article.url]);
    expect(article.url).toMatch(/\/heraldlabs\//);
  });

  it('refuses more than 4 tags, a tag DEV cannot take and a title over 128 characters when the post is created', async () => {
    const five = await schedule(settings({ tags: ['a', 'b', 'c', 'd', 'e'].map((value) => ({ value, label: value })) }));
    expect(five.status).toBe(400);
    expect(five.body.message).toContain('DEV takes at most 4 tags: remove some');
    const plus = await schedule(settings({ tags: [{ value: 'c++', label: 'C++' }] }));
    expect(plus.body.message).toContain('The tag "c++" cannot be used on DEV');
    const long = await schedule(settings({ title: 'x'.repeat(129) }));
    expect(long.body.message).toContain('DEV titles are at most 128 characters');
    const disclosure = await schedule(settings({ aiDisclosure: 'none' }));
    expect([disclosure.status, disclosure.body.message]).toEqual([400, expect.stringContaining('aiDisclosure is no_ai, some_ai or fully_autonomous')]);
    const untitled = await schedule({ __type: 'devto' });
    expect(untitled.body.message).toMatch(/settings\.title/);
    expect(devto.validate!([{ text: 'x', media: [{ kind: 'video', url: 'https://media.example/v.mp4' }] }], {})).toMatch(/video/);
  });

  it('is refused by the fake as by DEV: a wrong key, no title, five tags', async () => {
    const post = (key: string, article: unknown) =>
      fetch(`${fake.url}/api/articles`, { method: 'POST', headers: { 'api-key': key, accept: 'application/vnd.forem.api-v1+json', 'content-type': 'application/json' }, body: JSON.stringify({ article }) }).then(async (response) => [response.status, await response.json()]);
    expect(await post('wrong', { title: 'T' })).toEqual([401, { error: 'unauthorized', status: 401 }]);
    expect(await post(fake.apiKey, { body_markdown: 'x' })).toEqual([422, { error: "Title can't be blank", status: 422 }]);
    expect(await post(fake.apiKey, { title: 'T', tags: ['a', 'b', 'c', 'd', 'e'] })).toEqual([422, { error: 'Tag list exceed the maximum of 4 tags', status: 422 }]);
  });

  it("refuses what Forem's published contract refuses: tags as one string, a field the API drops, no v1 Accept header", async () => {
    const send = (headers: Record<string, string>, body: unknown) =>
      fetch(`${fake.url}/api/articles`, { method: 'POST', headers: { 'api-key': fake.apiKey, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((response) => response.status);
    const v1 = { accept: 'application/vnd.forem.api-v1+json' };
    expect(await send(v1, { article: { title: 'T', body_markdown: 'x', tags: 'herald, webdev' } })).toBe(422);
    expect(await send(v1, { article: { title: 'T', body_markdown: 'x', cover_image: 'https://example.com/c.png' } })).toBe(422);
    expect(await send({}, { article: { title: 'T', body_markdown: 'x' } })).toBe(422);
    expect(await send(v1, { article: { title: 'T', body_markdown: 'x', ai_disclosure_level: 'none' } })).toBe(422);
    expect(fake.contractViolations).toEqual([
      'POST /api/articles: body/article/tags must be array',
      'POST /api/articles: body/article must NOT have additional properties',
      'POST /api/articles: the Accept header is "*/*", not application/vnd.forem.api-v1+json: Forem would answer with its deprecated v0 API',
      'POST /api/articles: body/article/ai_disclosure_level must be equal to one of the allowed values',
    ]);
    expect(fake.articles.filter((article) => article.article.title === 'T')).toEqual([]);
    fake.contractViolations.length = 0;
  });

  it("puts a post DEV refuses in ERROR with DEV's words and a notification", async () => {
    // The same title and body twice: Forem refuses the second article.
    const twice = await createPost(herald, channelId, ['<p>Once only</p>'], { settings: settings({ title: 'Once only' }) });
    expect((await publishUntilSettled(herald, twice)).outcome.kind).toBe('published');
    const again = await createPost(herald, channelId, ['<p>Once only</p>'], { settings: settings({ title: 'Once only' }), allowDuplicate: true });
    expect((await publishUntilSettled(herald, again)).outcome).toEqual({ kind: 'failed', error: 'DEV refused the post: Body markdown has already been taken (HTTP 422)' });
    expect((await notifications(herald, 'post_failed'))[0]).toContain('Body markdown has already been taken');
  });

  it('links the article whose create answer was lost instead of creating it twice', async () => {
    const lost = await createPost(herald, channelId, ['<p>Lost answer</p>'], { settings: settings({ title: 'Lost answer' }) });
    const creates = fake.server.requestsTo('POST', '/api/articles').length;
    const restore = loseAnswerOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/articles'));
    try {
      expect((await publishUntilSettled(herald, lost)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(fake.server.requestsTo('POST', '/api/articles')).toHaveLength(creates + 1);
    expect((await chainOf(herald, lost))[0].releaseId).toBe(String(fake.articles.at(-1)!.id));
  });

  it('never takes an older article of the same title and text for the new one: a create lost before it arrived is sent again (issue 21)', async () => {
    // Last week's "Weekly digest" has this title; this week's text differs, and its create dies before DEV receives it.
    fake.articles.push({ id: 778, article: { title: 'Weekly digest', body_markdown: 'This week', published: true }, url: `${fake.url}/heraldwriter/weekly-digest-old`, page_views_count: 0, public_reactions_count: 0, comments_count: 0, published_at: new Date(Date.now() - 7 * 86_400_000).toISOString() });
    const creates = fake.server.requestsTo('POST', '/api/articles').length;
    const digest = await createPost(herald, channelId, ['<p>This week</p>'], { settings: settings({ title: 'Weekly digest' }), allowDuplicate: true });
    const restore = loseRequestOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/articles'));
    let outcome;
    try {
      outcome = (await publishUntilSettled(herald, digest)).outcome;
    } finally {
      restore();
    }
    // The older article is not taken for it: the create is sent again, and DEV's own rule (the same title and body twice)
    // is what answers, as it would for any repeat.
    expect(outcome).toEqual({ kind: 'failed', error: 'DEV refused the post: Body markdown has already been taken (HTTP 422)' });
    expect(fake.server.requestsTo('POST', '/api/articles')).toHaveLength(creates + 1);
    expect((await chainOf(herald, digest))[0].releaseId).toBeNull();
    // With this week's own text the lost create is made again, once.
    const fresh = await createPost(herald, channelId, ['<p>This week, again</p>'], { settings: settings({ title: 'Weekly digest' }), allowDuplicate: true });
    const restoreAgain = loseRequestOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/articles'));
    try {
      expect((await publishUntilSettled(herald, fresh)).outcome.kind).toBe('published');
    } finally {
      restoreAgain();
    }
    expect(fake.articles.filter((article) => article.article.title === 'Weekly digest')).toHaveLength(2);
    expect((await chainOf(herald, fresh))[0].releaseId).toBe(String(fake.articles.at(-1)!.id));
  });
});

describe('DEV helpers and analytics', () => {
  it('lists tags and the organizations of the account through POST /integration-trigger', async () => {
    const tags = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'tags' });
    expect(tags.body).toEqual({ output: [{ id: 'javascript', name: 'javascript' }, { id: 'webdev', name: 'webdev' }, { id: 'herald', name: 'herald' }] });
    const organizations = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'organizations' });
    expect(organizations.body).toEqual({ output: [{ id: '42', name: 'Herald Labs', username: 'heraldlabs' }] });
  });

  it("reports the article's views, reactions and comments", async () => {
    Object.assign(fake.articles[0], { page_views_count: 321, public_reactions_count: 17, comments_count: 4 });
    const response = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(response.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(response.body).toEqual([
      { label: 'Views', data: [{ total: '321', date: today }], percentageChange: 0 },
      { label: 'Reactions', data: [{ total: '17', date: today }], percentageChange: 0 },
      { label: 'Comments', data: [{ total: '4', date: today }], percentageChange: 0 },
    ]);
    const request = fake.server.requestsTo('GET', '/api/articles/me/published').at(-1)!;
    expect(Object.fromEntries(request.query)).toEqual({ page: '1', per_page: '1000' });
  });

  it('answers 401 on a helper once the key is revoked, and flags the channel', async () => {
    fake.apiKey = 'rotated';
    const trigger = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'tags' });
    expect(trigger.status).toBe(200); // the tag list is public on DEV: a dead key does not show there
    const organizations = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'organizations' });
    expect(organizations.status).toBe(401);
    expect((await notifications(herald, 'channel_reconnect'))[0]).toContain('DEV');
  });
});
