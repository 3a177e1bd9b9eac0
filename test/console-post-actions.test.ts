// Fixing or removing a post from the console (issue 36), as a browser without JavaScript does: a draft saved without a
// date (no posting slot taken), edited in the same composer as a new post (settings as form fields, no JSON), scheduled
// in Berlin time, taken back to drafts, duplicated, published now, and deleted, the page saying first what deleting does
// on the platform. Every action is the API's tool, so the fake platform is what proves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { publishUntilSettled } from './helpers/posts.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { acceptedSamples } from './helpers/media-samples.js';

let herald: Herald;
let mastodon: MastodonFake;
let browser: ConsoleClient;
let channelId: string;
const db = () => herald.services.orm.em.fork().getConnection();
const row = async (id: string) => (await db().execute('select state, content, publish_date, created_at, deleted_at from post where id = ?', [id]))[0];


beforeAll(async () => {
  mastodon = await startMastodonFake();
  herald = await startHerald();
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  channelId = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id;
});
afterAll(async () => {
  await herald?.stop();
  await mastodon?.close();
});

describe('fixing and removing a post from its page', () => {
  let draftId = '';

  it('saves a draft without a date: no posting slot is taken, the page says it has no date', async () => {
    const slotBefore = (await herald.rest('GET', `/find-slot/${channelId}`)).body.date;
    const sent = await browser.sendCompose('/compose', [['channel', channelId], ['items', '1'], ['content-0', 'Bakery news & more'], ['timing', 'date'], ['idempotencyKey', 'draft-1'], ['action', 'draft']]);
    expect(sent.status, sent.text.slice(0, 1500)).toBe(303);
    draftId = /^\/posts\/([^/?]+)/.exec(sent.location!)![1];
    expect((await row(draftId)).state).toBe('DRAFT');
    expect((await herald.rest('GET', `/find-slot/${channelId}`)).body.date).toBe(slotBefore);
    const page = await browser.get(`/posts/${draftId}`);
    expect(page.text).toContain('no date yet: it takes no posting slot until it is scheduled');
    expect(page.text).toContain('Schedule this draft');
    // The zone field offers the IANA zones to choose from.
    expect(page.text).toContain('<datalist id="time-zones">');
    expect(page.text).toContain(`href="/posts/${draftId}/edit"`);
    // The API takes a dateless draft too, and still wants a date for a scheduled post.
    expect((await herald.rest('POST', '/posts', { type: 'draft', shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: 'API draft', image: [] }], settings: {} }] })).status).toBe(200);
    const refused = await herald.rest('POST', '/posts', { type: 'schedule', shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: 'No date', image: [] }], settings: {} }] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('a date is required for scheduled posts');
  });

  it('edits in the same composer as a new post: its text in the textarea, no JSON field, saved with the line breaks typed', async () => {
    const page = await browser.get(`/posts/${draftId}/edit`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Edit post</h1>');
    expect(page.text).toContain('>Bakery news &amp; more</textarea>');
    expect(page.text).toContain(`name="edit" value="${draftId}"`);
    expect(page.text).not.toContain('(JSON)');
    expect(page.text).toContain('id="preview"');
    const saved = await browser.sendCompose(`/posts/${draftId}/edit`, [['edit', draftId], ['channel', channelId], ['items', '1'], ['content-0', 'Bakery news & more\r\nOpen on Sunday'], ['timing', 'date'], ['action', 'save']]);
    expect(saved.status, saved.text.slice(0, 1500)).toBe(303);
    expect(saved.location).toBe(`/posts/${draftId}?notice=saved`);
    expect((await row(draftId)).content).toBe('Bakery news & more\nOpen on Sunday');
    // Still without a date: an edit without one leaves it as it was.
    expect((await browser.get(`/posts/${draftId}`)).text).toContain('no date yet');
  });

  it('schedules the draft at a Berlin time, then takes it back to drafts', async () => {
    const refused = await browser.submit(`/posts/${draftId}`, `/posts/${draftId}/schedule`, { date: '', timeZone: 'Europe/Berlin' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Choose the date and time to publish the draft at.');
    const scheduled = await browser.submit(`/posts/${draftId}`, `/posts/${draftId}/schedule`, { date: '2030-07-01T09:30', timeZone: 'Europe/Berlin' });
    expect(scheduled.location).toBe(`/posts/${draftId}?notice=scheduled`);
    expect(await row(draftId)).toMatchObject({ state: 'QUEUE', publish_date: new Date('2030-07-01T07:30:00.000Z') });
    const back = await browser.submit(`/posts/${draftId}`, `/posts/${draftId}/unschedule`);
    expect(back.location).toBe(`/posts/${draftId}?notice=unscheduled`);
    expect((await row(draftId)).state).toBe('DRAFT');
  });

  it('duplicates a post into a new one: its text and channel, no date, created apart from the original', async () => {
    const page = await browser.get(`/compose?duplicate=${draftId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>New post</h1>');
    expect(page.text).toContain('>Bakery news &amp; more\nOpen on Sunday</textarea>');
    expect(page.text).toMatch(new RegExp(`id="channel-${channelId}" name="channel" value="${channelId}" checked`));
    expect(page.text).toContain('id="date" name="date" type="datetime-local" step="60" value=""');
  });

  let publishedId = '';

  it('publishes a draft now: it goes out to the platform', async () => {
    const sent = await browser.sendCompose('/compose', [['channel', channelId], ['items', '1'], ['content-0', 'Fresh bread at noon'], ['timing', 'date'], ['idempotencyKey', 'draft-2'], ['action', 'draft']]);
    publishedId = /^\/posts\/([^/?]+)/.exec(sent.location!)![1];
    const now = await browser.submit(`/posts/${publishedId}`, `/posts/${publishedId}/publish-now`);
    expect(now.location).toBe(`/posts/${publishedId}?notice=published-now`);
    expect((await row(publishedId)).state).toBe('QUEUE');
    expect((await browser.get(now.location!)).text).toContain('Publishing now: the post is queued for this minute.');
    expect((await publishUntilSettled(herald, publishedId)).outcome.kind).toBe('published');
    expect(mastodon.statuses.at(-1)!.status).toBe('Fresh bread at noon');
    // Reloaded once it went out, the page no longer says it is being published.
    expect((await browser.get(now.location!)).text).not.toContain('Publishing now');
  });

  it('deletes: the page says what happens on the platform, a tick is needed, and the published status is deleted there too (a job)', async () => {
    const page = await browser.get(`/posts/${publishedId}`);
    expect(page.text).toContain('Keep it on Mastodon: Herald forgets it');
    expect(page.text).toContain('Delete it on Mastodon too (1 published item)');
    expect(page.text).not.toContain(`href="/posts/${publishedId}/edit"`);
    const unticked = await browser.submit(`/posts/${publishedId}`, `/posts/${publishedId}/delete`, { onPlatform: 'delete' });
    expect(unticked.status).toBe(400);
    expect(unticked.text).toContain('Tick &quot;I understand: delete it&quot; to delete the post.');
    const deleted = await browser.submit(`/posts/${publishedId}`, `/posts/${publishedId}/delete`, { onPlatform: 'delete', confirm: 'yes' });
    expect(deleted.location).toBe('/posts?notice=deleting-on-platform');
    expect((await browser.get(deleted.location!)).text).toContain('Deleting: what went out is being deleted on the platform');
    // The draft has nothing on the platform: deleted in Herald at once.
    const draftPage = await browser.get(`/posts/${draftId}`);
    expect(draftPage.text).toContain('Nothing of it went out: it will not be published.');
    expect((await browser.submit(`/posts/${draftId}`, `/posts/${draftId}/delete`, { confirm: 'yes' })).location).toBe('/posts?notice=deleted');
    expect((await row(draftId)).deleted_at).not.toBeNull();
  });

  it('finds posts: any range of days, a search, drafts only; a range the API refuses is a clear 400', async () => {
    const create = (type: string, date: string, content: string) =>
      herald.rest('POST', '/posts', { type, date, shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }] });
    expect((await create('schedule', '2031-02-03T10:00:00.000Z', 'Croissant day')).status).toBe(200);
    expect((await create('draft', '2031-02-20T10:00:00.000Z', 'Croissant recipe draft')).status).toBe(200);
    expect((await create('schedule', '2031-02-21T10:00:00.000Z', 'Baguette day')).status).toBe(200);
    const month = await browser.get('/posts?from=2031-02-01&to=2031-02-28');
    expect(month.text).toContain('Posts, 2031-02-01 to 2031-02-28');
    for (const text of ['Croissant day', 'Croissant recipe draft', 'Baguette day']) expect(month.text).toContain(text);
    const searched = await browser.get('/posts?from=2031-02-01&to=2031-02-28&q=croissant');
    expect(searched.text).toContain('Croissant day');
    expect(searched.text).not.toContain('Baguette day');
    const drafts = await browser.get('/posts?from=2031-02-01&to=2031-02-28&state=DRAFT');
    expect(drafts.text).toContain('Drafts, 2031-02-01 to 2031-02-28');
    expect(drafts.text).toContain('Croissant recipe draft');
    expect(drafts.text).not.toContain('Croissant day');
    const tooLong = await browser.get('/posts?from=2031-01-01&to=2031-12-31');
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('The range is longer than 100 days.');
    expect((await browser.get('/posts?from=2031-03-01&to=2031-02-01')).status).toBe(400);
  });

  it('keeps a media library page: upload, list, a delete that needs a tick', async () => {
    const page = await browser.get('/media');
    expect(page.status).toBe(200);
    expect(page.text).toContain('No files yet.');
    const csrf = browser.csrf(page);
    const form = new FormData();
    form.append('_csrf', csrf);
    form.append('file', new Blob([acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'shop <front>.png');
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const uploaded = await fetch(`${herald.url}/media?_csrf=${encodeURIComponent(csrf)}`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form });
    expect(uploaded.headers.get('location'), await uploaded.clone().text()).toBe('/media?notice=uploaded');
    const listed = await browser.get('/media?notice=uploaded');
    expect(listed.text).toContain('alt="shop-front.png"');
    const id = (await db().execute('select id from media where deleted_at is null'))[0].id;
    expect((await browser.submit('/media', `/media/${id}/delete`)).status).toBe(400);
    expect((await browser.submit('/media', `/media/${id}/delete`, { confirm: 'yes' })).location).toBe('/media?notice=deleted');
    expect((await browser.get('/media')).text).toContain('No files yet.');
  });

  it('sends a picture from the library with the alt text typed for it, and shows it again on the edit form', async () => {
    const form = new FormData();
    form.append('file', new Blob([acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'loaf.png');
    const media = await (await fetch(`${herald.restUrl}/upload`, { method: 'POST', headers: { authorization: herald.apiKey }, body: form })).json();
    const alt = 'A "sourdough" loaf <fresh> & warm';
    const sent = await browser.sendCompose('/compose', [
      ['channel', channelId], ['items', '1'], ['content-0', 'Our loaf of the day'], ['media-0', media.id], [`alt-0-${media.id}`, alt], ['timing', 'date'], ['idempotencyKey', 'alt-1'], ['action', 'draft'],
    ]);
    expect(sent.status, sent.text.slice(0, 1500)).toBe(303);
    const id = /^\/posts\/([^/?]+)/.exec(sent.location!)![1];
    const edit = await browser.get(`/posts/${id}/edit`);
    expect(edit.text).toContain(`name="alt-0-${media.id}" type="text" maxlength="1000" value="A &quot;sourdough&quot; loaf &lt;fresh&gt; &amp; warm"`);
    await browser.submit(`/posts/${id}`, `/posts/${id}/publish-now`);
    expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
    expect(mastodon.media.at(-1)!.description).toBe(alt);
  });
});
