// WordPress against its fake site: application-password connect (WordPress's refusals named), an HTML article whose
// pictures go to the media library (featured image + inline figure), pages and custom post types, categories and tags,
// helpers, retries that upload nothing twice, a lost create answer looked up, and a revoked password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wordpress from '../../providers/wordpress.js';
import { IntegrationSchema, PostSchema } from '../../src/db/entities.js';
import { PlatformHttpError, createPlatformFetch } from '../../src/lib/platform-http.js';
import { publishChain } from '../../tools/internal/publish.js';
import { ARTICLE_HTML, connect, notifications, publishThroughWorker, scheduleWith, uploadPictures, type Pictures } from '../fakes/articles.js';
import { startWordPressFake, type WordPressFake } from '../fakes/wordpress.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from '../helpers/posts.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';

let fake: WordPressFake;
let herald: Herald;
let pictures: Pictures;
let channelId: string;

beforeAll(async () => {
  fake = await startWordPressFake();
  herald = await startHerald({ PUBLISH_RECHECK_MAX_SECONDS: '1' }, { guard: { allowLoopback: true } });
  pictures = await uploadPictures(herald);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const connectContext = () => providerContext({ endpoints: {} });
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'wordpress', title: 'Why we moved to Herald', type: 'post', ...extra });
const figure = (url: string) => `<figure class="wp-block-image"><img src="${url}" alt=""/></figure>`;
const postsCreated = () => fake.server.requestsTo('POST', '/wp-json/wp/v2/*').filter((request) => request.path !== '/wp-json/wp/v2/media');

describe('connecting a WordPress site', () => {
  it("refuses a wrong application password and an unknown user with WordPress's reason, then connects", async () => {
    const wrong = await connect(herald, 'wordpress', { ...fake.fields(), applicationPassword: 'nope nope nope' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'WordPress refused the connection: the application password was refused: create one in Users, Profile, Application Passwords (the login password does not work here) and reconnect the channel (incorrect_password)',
    );
    const stranger = await connect(herald, 'wordpress', { ...fake.fields(), username: 'someone' });
    expect(stranger.body.message).toMatch(/knows no user by that name.*\(invalid_username\)$/);

    const right = await connect(herald, 'wordpress', { ...fake.fields(), siteUrl: `${fake.url}//` });
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    channelId = right.body.id;
    expect(right.body).toMatchObject({ identifier: 'wordpress', name: 'Eddie Editor', profile: 'eddie', picture: `${fake.url}/avatar-96.png` });
    const me = fake.server.requestsTo('GET', '/wp-json/wp/v2/users/me').at(-1)!;
    expect(me.headers.authorization).toBe(basic('editor', fake.password));
    expect(me.query.get('context')).toBe('edit');
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(row.internalId).toBe(`7@${fake.url}`);
  });

  it('refuses a user whose role cannot publish, naming the roles that can', async () => {
    const contributorSite = await startWordPressFake({ role: 'contributor' });
    try {
      const failure = await wordpress.connect!(connectContext(), contributorSite.fields()).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PlatformHttpError);
      expect((failure as Error).message).toBe('the user "eddie" (contributor) cannot publish posts: give the account the Author, Editor or Administrator role, then connect again');
    } finally {
      await contributorSite.close();
    }
  });

  it('says when the server strips the Authorization header, and when the role may not create the post type', async () => {
    const platformFetch = createPlatformFetch({ timeoutMs: 5000, userAgent: 'Herald-test/1.0' });
    // A web server that drops the Authorization header before PHP sees it.
    const stripping: typeof platformFetch = (request) => platformFetch({ ...request, headers: Object.fromEntries(Object.entries(request.headers ?? {}).filter(([name]) => name !== 'authorization')) });
    const stripped = await wordpress.connect!({ fetch: stripping, endpoints: {} }, fake.fields()).catch((error: unknown) => error);
    expect((stripped as PlatformHttpError).message).toBe(
      'WordPress did not receive the credentials: the web server or a security plugin strips the Authorization header; let it through (on Apache, pass HTTP_AUTHORIZATION to PHP), then reconnect (rest_not_logged_in)',
    );
    const authorSite = await startWordPressFake({ role: 'author' });
    try {
      const account = await wordpress.connect!(connectContext(), authorSite.fields());
      const context = providerContext({ auth: { accessToken: account.accessToken, internalId: account.internalId, data: account.data }, settings: settings({ type: 'page' }) });
      const refused = (await wordpress.publish!(context, { postId: 'p', text: '<p>x</p>', media: [] }).catch((error: unknown) => error)) as PlatformHttpError;
      expect([refused.status, refused.retryable]).toEqual([403, false]);
      expect(refused.message).toBe(
        'the WordPress user may not do this: Sorry, you are not allowed to create posts as this user. (HTTP 403), rest_cannot_create. Give the user a role that can publish this post type and upload files (an Author publishes posts; pages need an Editor or Administrator)',
      );
    } finally {
      await authorSite.close();
    }
  });

  it('finds the REST API at ?rest_route= on a site without pretty permalinks, and publishes there', async () => {
    const plain = await startWordPressFake({ prettyPermalinks: false });
    try {
      const account = await wordpress.connect!(connectContext(), plain.fields());
      expect(account.data).toEqual({ siteUrl: plain.url, restRoot: `${plain.url}/?rest_route=`, username: 'editor', userId: '7' });
      const context = providerContext({ auth: { accessToken: account.accessToken, internalId: account.internalId, data: account.data }, settings: settings() });
      const ref = await wordpress.publish!(context, { postId: 'p1', text: '<p>Plain permalinks</p>', media: [mediaFile(tinyPng(), { url: 'https://media.example/dot.png' })] });
      expect(plain.posts[0].body).toEqual({ title: 'Why we moved to Herald', content: '<p>Plain permalinks</p>', status: 'publish', featured_media: plain.media[0].id });
      expect(ref).toEqual({ id: String(plain.posts[0].id), url: plain.posts[0].link });
      expect(plain.server.requests.filter((request) => request.path === '/').map((request) => request.query.get('rest_route'))).toEqual([
        '/wp/v2/users/me',
        '/wp/v2/types',
        '/wp/v2/media',
        '/wp/v2/posts',
      ]);
    } finally {
      await plain.close();
    }
  });
});

describe('publishing on WordPress', () => {
  it('publishes the article through the worker: both pictures uploaded, the first featured, the second after the text', async () => {
    const root = await publishThroughWorker(herald, channelId, ARTICLE_HTML, [pictures.png, pictures.jpeg], settings({
      categories: [{ value: '3', label: 'News' }],
      tags: [{ value: '11', label: 'herald' }, { value: '12', label: 'publishing' }],
    }));
    const [png, jpeg] = fake.media;
    expect([png.filename, png.mimeType, png.bytes.equals(pictures.png.bytes)]).toEqual([pictures.png.path.split('/').pop(), 'image/png', true]);
    expect([jpeg.filename, jpeg.mimeType, jpeg.bytes.equals(pictures.jpeg.bytes)]).toEqual([pictures.jpeg.path.split('/').pop(), 'image/jpeg', true]);
    const [post] = fake.posts;
    expect(post.type).toBe('post');
    expect(post.body).toEqual({
      title: 'Why we moved to Herald',
      content: ARTICLE_HTML + figure(jpeg.source_url),
      status: 'publish',
      featured_media: png.id,
      categories: [3],
      tags: [11, 12],
    });
    expect([root.releaseId, root.releaseUrl]).toEqual([String(post.id), post.link]);
    expect(postsCreated()[0].headers.authorization).toBe(basic('editor', fake.password));
    expect((await notifications(herald, 'post_published'))[0]).toContain(post.link);
  });

  it('publishes a page, a custom post type named by its slug, and one in a plugin\'s REST namespace', async () => {
    const page = await createPost(herald, channelId, [{ content: 'A page\nwith two lines & more' }], { settings: settings({ type: 'page', title: 'About' }) });
    expect((await publishUntilSettled(herald, page)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)).toMatchObject({ type: 'page', body: { title: 'About', content: '<p>A page</p><p>with two lines &amp; more</p>', status: 'publish' } });
    const book = await createPost(herald, channelId, ['<p>Chapter one</p>'], { settings: settings({ type: 'book', title: 'A book', categories: [{ value: '5', label: 'Guides' }] }) });
    expect((await publishUntilSettled(herald, book)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)).toMatchObject({ type: 'book', body: { title: 'A book', categories: [5] } });
    expect(fake.server.requestsTo('POST', '/wp-json/wp/v2/books')).toHaveLength(1);
    const event = await createPost(herald, channelId, ['<p>Launch party</p>'], { settings: settings({ type: 'event', title: 'Launch party' }) });
    expect((await publishUntilSettled(herald, event)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('POST', '/wp-json/acme/v1/events')).toHaveLength(1);
    expect(fake.posts.at(-1)).toMatchObject({ type: 'event', body: { title: 'Launch party', content: '<p>Launch party</p>' } });
  });

  it('refuses tags on a post type without them, and an unknown type, with a notification and nothing created', async () => {
    const created = postsCreated().length;
    const tagged = await createPost(herald, channelId, ['<p>x</p>'], { settings: settings({ type: 'page', tags: [{ value: '11', label: 'herald' }] }) });
    expect((await publishUntilSettled(herald, tagged)).outcome).toEqual({ kind: 'failed', error: 'WordPress refused the post: the post type "page" has no tags: remove them from the settings' });
    const unknown = await createPost(herald, channelId, ['<p>x</p>'], { settings: settings({ type: 'recipe' }) });
    const { outcome } = await publishUntilSettled(herald, unknown);
    expect(outcome).toEqual({ kind: 'failed', error: 'WordPress refused the post: the site has no post type "recipe": choose one from postTypes (post, page, book, event)' });
    expect((await notifications(herald, 'post_failed'))[0]).toContain('no post type "recipe"');
    expect(postsCreated()).toHaveLength(created);
  });

  it('refuses a post without a title, or with a video, when it is created', async () => {
    const untitled = await scheduleWith(herald, channelId, { __type: 'wordpress', type: 'post' });
    expect(untitled.status).toBe(400);
    expect(untitled.body.message).toMatch(/settings\.title/);
    expect(wordpress.validate!([{ text: 'x', media: [{ kind: 'video', url: 'https://media.example/v.mp4' }] }], {})).toBe(
      'The post has a video, but WordPress takes pictures only: remove it.',
    );
  });

  it('retries a throttled create after Retry-After without uploading the pictures again', async () => {
    fake.server.failNext('POST', '/wp-json/wp/v2/posts', { status: 429, headers: { 'retry-after': '120' }, json: { code: 'too_many_requests', message: 'Slow down.' } });
    const uploads = fake.media.length;
    const rootId = await createPost(herald, channelId, [{ content: '<p>Throttled</p>', image: [pictures.png, pictures.jpeg] }], { settings: settings({ title: 'Throttled' }) });
    const before = Date.now();
    const first = await publishChain(herald.services, rootId);
    expect(first.kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(119_000);
    expect(waiting.lastError).toBe('WordPress: Slow down. (HTTP 429), too_many_requests');
    expect(fake.media.length).toBe(uploads + 2);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.media.length).toBe(uploads + 2);
    expect(fake.posts.at(-1)!.body).toMatchObject({ title: 'Throttled', featured_media: fake.media[uploads].id });
  });

  it('looks up a post whose create answer was lost instead of creating it twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Lost answer</p>'], { settings: settings({ title: 'Lost answer' }) });
    // The attempt that created the post died before recording its answer.
    fake.posts.push({ id: 999, type: 'post', body: { title: 'Lost answer', content: '<p>Lost answer</p>', status: 'publish' }, link: `${fake.url}/lost-answer/`, author: 7 });
    const em = herald.services.orm.em.fork();
    const [root] = await chainOf(herald, rootId);
    await em.nativeUpdate(PostSchema, { id: root.id }, { publishProgress: { steps: { post: { state: 'started' } } }, attemptStartedAt: new Date() });
    const created = postsCreated().length;
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(postsCreated()).toHaveLength(created);
    const [published] = await chainOf(herald, rootId);
    expect([published.releaseId, published.releaseUrl]).toEqual(['999', `${fake.url}/lost-answer/`]);
    const lookup = fake.server.requestsTo('GET', '/wp-json/wp/v2/posts').at(-1)!;
    expect(Object.fromEntries(lookup.query)).toEqual({ author: '7', search: 'Lost answer', context: 'edit', per_page: '10', orderby: 'date', order: 'desc' });
  });
});

describe('WordPress helpers', () => {
  it('lists post types (not media, patterns or menus), categories and tags through POST /integration-trigger', async () => {
    const schema = await herald.rest('GET', `/integration-settings/${channelId}`);
    expect(schema.body.output.tools.map((tool: { methodName: string }) => tool.methodName)).toEqual(['postTypes', 'categoriesList', 'tagsList']);
    const types = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'postTypes' });
    expect(types.body).toEqual({ output: [{ id: 'post', name: 'Posts' }, { id: 'page', name: 'Pages' }, { id: 'book', name: 'Books' }, { id: 'event', name: 'Events' }] });
    const categories = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'categoriesList' });
    expect(categories.body).toEqual({ output: [{ id: '3', name: 'News' }, { id: '5', name: 'Guides' }] });
    const tags = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'tagsList', data: { search: 'pub' } });
    expect(tags.body).toEqual({ output: [{ id: '12', name: 'publishing' }] });
    expect(Object.fromEntries(fake.server.requestsTo('GET', '/wp-json/wp/v2/tags').at(-1)!.query)).toEqual({ per_page: '100', search: 'pub', orderby: 'count', order: 'desc' });
  });
});

describe('a revoked application password', () => {
  it('fails the post, flags the channel for reconnection, and the helpers answer 401', async () => {
    fake.setPassword('a new one entirely');
    const rootId = await createPost(herald, channelId, ['<p>After revocation</p>'], { settings: settings({ title: 'After revocation' }) });
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/disconnected because its token expired or was revoked/);
    expect((await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId })).refreshNeeded).toBe(true);
    expect((await notifications(herald, 'channel_reconnect'))[0]).toContain('WordPress');
    const trigger = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'postTypes' });
    expect(trigger.status).toBe(401);
  });
});
