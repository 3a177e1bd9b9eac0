// Medium against its fake API: integration-token connect, a Markdown story with the title and subtitle as its first headings
// and the pictures side-loaded from Herald's public URLs, posting into a publication as editor (public) or writer (draft),
// the tag and title limits of the create call, the publications helper, and a create of unknown outcome not repeated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import medium from '../../providers/medium.js';
import { PostSchema } from '../../src/db/entities.js';
import { ARTICLE_HTML, ARTICLE_MARKDOWN, connect, notifications, publishThroughWorker, scheduleWith, uploadPictures, type Pictures } from '../fakes/articles.js';
import { startMediumFake, type MediumFake } from '../fakes/medium.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from '../helpers/posts.js';

let fake: MediumFake;
let herald: Herald;
let pictures: Pictures;
let channelId: string;

beforeAll(async () => {
  fake = await startMediumFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ medium: { api: fake.url } }) }, { guard: { allowLoopback: true } });
  pictures = await uploadPictures(herald);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'medium', title: 'Why we moved to Herald', ...extra });
const tags = (...names: string[]) => names.map((value) => ({ value, label: value }));
const schedule = (settingsValue: Record<string, unknown>) => scheduleWith(herald, channelId, settingsValue);

describe('connecting Medium', () => {
  it("refuses a wrong integration token with Medium's reason, then connects with the right one", async () => {
    const wrong = await connect(herald, 'medium', { integrationToken: 'revoked-token' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'Medium refused the connection: the integration token was refused (Token was invalid. (HTTP 401)): it was revoked; Medium issues no new tokens, so only an existing one can reconnect the channel',
    );
    const right = await connect(herald, 'medium', { integrationToken: fake.token });
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    channelId = right.body.id;
    expect(right.body).toMatchObject({ identifier: 'medium', name: 'Herald Writer', profile: 'heraldwriter', picture: fake.user.imageUrl });
    expect(fake.server.requestsTo('GET', '/v1/me').at(-1)!.headers.authorization).toBe(`Bearer ${fake.token}`);
  });
});

describe('publishing on Medium', () => {
  it('publishes the story through the worker: title and subtitle as headings, the pictures side-loaded from their public URL', async () => {
    const root = await publishThroughWorker(herald, channelId, ARTICLE_HTML, [pictures.png, pictures.jpeg], settings({ subtitle: 'Notes from the *switch*', tags: tags('publishing', 'tools') }));
    const [post] = fake.posts;
    expect(fake.server.requestsTo('POST', '/v1/users/*/posts')[0].path).toBe(`/v1/users/${fake.user.id}/posts`);
    expect(post.body).toEqual({
      title: 'Why we moved to Herald',
      contentFormat: 'markdown',
      content: `# Why we moved to Herald\n\n## Notes from the \\*switch\\*\n\n![](${pictures.png.path})\n\n${ARTICLE_MARKDOWN}\n\n![](${pictures.jpeg.path})`,
      tags: ['publishing', 'tools'],
      publishStatus: 'public',
    });
    expect(fake.downloads.map((download) => [download.url, download.status])).toEqual([[pictures.png.path, 200], [pictures.jpeg.path, 200]]);
    expect(fake.downloads[1].bytes.equals(pictures.jpeg.bytes)).toBe(true);
    expect([root.releaseId, root.releaseUrl]).toEqual([post.id, post.url]);
  });

  it('publishes into a publication it edits, submits a draft to one it writes for, and refuses one it only follows', async () => {
    const edited = await createPost(herald, channelId, ['<p>Edited</p>'], { settings: settings({ title: 'Edited', publication: 'b969ac62a46b' }) });
    expect((await publishUntilSettled(herald, edited)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)).toMatchObject({ publicationId: 'b969ac62a46b', body: { title: 'Edited', publishStatus: 'public', content: '# Edited\n\nEdited' } });
    const written = await createPost(herald, channelId, ['<p>Written</p>'], { settings: settings({ title: 'Written', publication: 'b45573563f5a' }) });
    expect((await publishUntilSettled(herald, written)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)).toMatchObject({ publicationId: 'b45573563f5a', body: { publishStatus: 'draft' } });
    const followed = await createPost(herald, channelId, ['<p>Followed</p>'], { settings: settings({ title: 'Followed', publication: 'c0ffee000001' }) });
    expect((await publishUntilSettled(herald, followed)).outcome).toEqual({
      kind: 'failed',
      error: 'Medium refused the post: the account is neither a writer nor an editor of that publication: choose one from publications where it writes',
    });
    expect(fake.server.requestsTo('POST', '/v1/publications/c0ffee000001/posts')).toHaveLength(0);
    expect((await notifications(herald, 'post_failed'))[0]).toContain('neither a writer nor an editor');
  });

  it('refuses more than 3 tags, a tag over 25 characters and a title over 100 when the post is created', async () => {
    expect((await schedule(settings({ tags: tags('a', 'b', 'c', 'd') }))).body.message).toContain('Medium uses only 3 tags: remove the others');
    expect((await schedule(settings({ tags: tags('x'.repeat(26)) }))).body.message).toContain('is longer than 25 characters');
    expect((await schedule(settings({ title: 'x'.repeat(101) }))).body.message).toContain('Medium ignores titles over 100 characters');
    expect((await schedule({ __type: 'medium' })).body.message).toMatch(/settings\.title/);
  });

  it('is refused by the fake as by Medium: a wrong token, no title, a fourth tag', async () => {
    const post = (token: string, body: unknown) =>
      fetch(`${fake.url}/v1/users/${fake.user.id}/posts`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((response) => response.status);
    expect(await post('nope', { title: 'T', contentFormat: 'markdown', content: 'x' })).toBe(401);
    expect(await post(fake.token, { contentFormat: 'markdown', content: 'x' })).toBe(400);
    expect(await post(fake.token, { title: 'T', contentFormat: 'markdown', content: 'x', tags: ['a', 'b', 'c', 'd'] })).toBe(400);
  });

  it('stops with "could not confirm" when a create was interrupted: Medium cannot list stories to look it up', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Interrupted</p>'], { settings: settings({ title: 'Interrupted' }) });
    await herald.services.orm.em.fork().nativeUpdate(PostSchema, { id: rootId }, { publishProgress: { steps: { post: { state: 'started' } } }, attemptStartedAt: new Date() });
    const creates = fake.server.requestsTo('POST', '/v1/users/*/posts').length;
    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/^Could not confirm whether Medium published this item: the "post" step was interrupted/);
    expect(fake.server.requestsTo('POST', '/v1/users/*/posts')).toHaveLength(creates);
  });
});

describe('Medium helpers', () => {
  it('lists the publications of the account through POST /integration-trigger; a story has no analytics', async () => {
    const response = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'publications' });
    expect(response.body).toEqual({
      output: fake.publications.map((publication) => ({ id: publication.id, name: publication.name, url: publication.url })),
    });
    expect(medium.postAnalytics).toBeUndefined();
    expect(medium.validate!([{ text: 'x', media: [{ kind: 'video', url: 'https://media.example/v.mp4' }] }], {})).toMatch(/video/);
  });
});
