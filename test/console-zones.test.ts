// The console in local time, over HTTP as a browser without JavaScript uses it: the person's zone (chosen, else the
// browser's cookie, else the organization's), times shown with their zone on the post, posts and calendar pages, the
// calendar's filters and week view, moving a post with the plain form (and the script's JSON answer) with the duplicate
// guard, and channel zones and posting times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { runTool } from '../tools/runner.js';
import { schedulePostTool } from '../tools/schedule-post-tool.js';

let herald: Herald;
let bluesky: BlueskyFake;
let browser: ConsoleClient;
let channelId: string;

const db = () => herald.services.orm.em.fork().getConnection();
const createPost = async (date: string, content: string, type = 'schedule') => {
  const created = await herald.rest('POST', '/posts', { type, date, shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }] });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body[0].postId as string;
};
const publishDate = async (id: string) => new Date((await db().execute('select publish_date from post where id = ?', [id]))[0].publish_date).toISOString();

beforeAll(async () => {
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
});
afterAll(async () => {
  await herald?.stop();
  await bluesky?.close();
});

describe('the person\'s zone', () => {
  it('follows the browser\'s zone until the person chooses one; a wrong zone is refused on the form', async () => {
    const id = await createPost('2027-03-29T07:00:00.000Z', 'Monday morning in Paris');
    // No cookie yet and no zone of their own: the organization's (UTC).
    let page = await browser.get(`/posts/${id}`);
    expect(page.text).toContain('2027-03-29 07:00 UTC');
    expect(page.text).toContain('(the organization&#39;s zone)');
    // The console's script reports the browser's zone in a cookie.
    browser.cookies.set('herald_tz', 'America%2FNew_York');
    page = await browser.get(`/posts/${id}`);
    expect(page.text).toContain('2027-03-29 03:00 EDT');
    expect(page.text).toContain('(your browser&#39;s zone)');
    expect(page.text).toContain('data-zone="America/New_York" data-zone-source="browser"');

    const wrong = await browser.submit('/settings', '/settings/time-zone', { timeZone: 'Paris' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('timeZone: &quot;Paris&quot; is not an IANA time zone');
    expect((await browser.submit('/settings', '/settings/time-zone', { timeZone: 'europe/paris' })).location).toBe('/settings?notice=mine');
    page = await browser.get(`/posts/${id}`);
    expect(page.text).toContain('2027-03-29 09:00 GMT+2');
    expect(page.text).toContain('Times are in <strong>Europe/Paris</strong> (your zone)');
    // The edit form (the composer) shows and reads the date in that zone.
    page = await browser.get(`/posts/${id}/edit`);
    expect(page.text).toContain('value="2027-03-29T09:00"');
    expect(page.text).toMatch(/id="compose-zone"[^>]*value="Europe\/Paris"/);
    const csrf = browser.csrf(page);
    const form = new FormData();
    for (const [name, value] of Object.entries({ _csrf: csrf, edit: id, channel: channelId, items: '1', 'content-0': 'Monday morning in Paris', timing: 'date', date: '2027-03-26T09:00', timeZone: 'Europe/Paris', action: 'save' })) form.append(name, value);
    const saved = await fetch(`${herald.url}/compose?_csrf=${encodeURIComponent(csrf)}`, { method: 'POST', redirect: 'manual', headers: { cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ') }, body: form });
    expect(saved.headers.get('location'), await saved.clone().text()).toBe(`/posts/${id}?notice=saved`);
    // Friday before the change: Paris is at +1.
    expect(await publishDate(id)).toBe('2027-03-26T08:00:00.000Z');
    // The week's posts in the person's zone.
    expect((await browser.get('/posts?week=2027-W12')).text).toContain('2027-03-26 09:00 GMT+1');
    await db().execute('delete from post');
  });

  it('owners set the organization\'s default; channels and posting times take their own zone', async () => {
    expect((await browser.submit('/settings', '/settings/organization-time-zone', { timeZone: 'Asia/Tokyo' })).location).toBe('/settings?notice=organization');
    expect((await herald.rest('GET', '/integrations')).body[0].timeZone).toBe('Asia/Tokyo');
    const bad = await browser.submit('/channels', `/channels/${channelId}/time-zone`, { timeZone: 'GMT+2' });
    expect(bad.status).toBe(400);
    expect((await browser.submit('/channels', `/channels/${channelId}/time-zone`, { timeZone: 'America/Los_Angeles' })).location).toBe('/channels?notice=zone');
    expect((await herald.rest('GET', '/integrations')).body[0].timeZone).toBe('America/Los_Angeles');
    expect((await browser.submit('/channels', `/channels/${channelId}/posting-times`, { times: '09:00, 17:30', timeZone: 'America/Los_Angeles' })).location).toBe('/channels?notice=times');
    expect(await db().execute('select posting_times, posting_times_zone from integration')).toEqual([{ posting_times: [540, 1050], posting_times_zone: 'America/Los_Angeles' }]);
    const channels = await browser.get('/channels');
    expect(channels.text).toContain('value="America/Los_Angeles"');
    expect(channels.text).toContain('<datalist id="time-zones">');
    await browser.submit('/settings', '/settings/organization-time-zone', { timeZone: 'UTC' });
  });
});

describe('the calendar', () => {
  let apiPost = '';
  let agentPost = '';
  let published = '';

  beforeAll(async () => {
    // Late Sunday evening UTC is already Monday in Paris (the person's zone).
    apiPost = await createPost('2027-03-28T22:30:00.000Z', 'From a script');
    const agent = await runTool(
      schedulePostTool,
      { socialPost: [{ integrationId: channelId, isPremium: false, date: '2027-03-30T08:15:00.000Z', shortLink: false, type: 'draft', postsAndComments: [{ content: 'From an agent', attachments: [] }], settings: [] }] },
      { organizationId: herald.organizationId, credentialId: 'key', credentialKind: 'api_key', scopes: ['mcp:read', 'mcp:write'] },
      herald.services,
      'test',
      { via: 'mcp' },
    );
    agentPost = (agent as any).output[0].postId;
    published = await createPost('2027-03-31T10:00:00.000Z', 'Already out');
    await db().execute(`update post set state = 'PUBLISHED', release_url = 'https://bsky.app/x' where id = ?`, [published]);
  });

  it('places posts on the local day and hour, and filters by state, author, channel and customer', async () => {
    const month = await browser.get('/calendar?month=2027-03');
    expect(month.text).toContain('Times are in <strong>Europe/Paris</strong> (yours)');
    const cell = (text: string, date: string) => new RegExp(`data-date="${date}"[^>]*>(?:(?!</td>).)*${text}`, 's').test(text === '' ? '' : month.text);
    expect(cell('From a script', '2027-03-29')).toBe(true);
    expect(cell('From a script', '2027-03-28')).toBe(false);
    expect(month.text).toContain('>00:30 Alice</a>');
    // What went out cannot be moved; the others have a Move link and can be dragged.
    expect(month.text).toContain(`href="/posts/${apiPost}/move?back=`);
    expect(month.text).not.toContain(`href="/posts/${published}/move`);
    expect(month.text).toContain(`draggable="true" data-post="${agentPost}" data-time="10:15:00"`);

    const only = async (query: string) => {
      const page = await browser.get(`/calendar?month=2027-03&${query}`);
      return ['From a script', 'From an agent', 'Already out'].filter((text) => page.text.includes(text));
    };
    expect(await only('state=draft')).toEqual(['From an agent']);
    expect(await only('state=published')).toEqual(['Already out']);
    expect(await only('author=mcp')).toEqual(['From an agent']);
    expect(await only('author=api')).toEqual(['From a script', 'Already out']);
    expect(await only(`channel=${channelId}`)).toHaveLength(3);
    expect(await only('channel=other')).toEqual([]);
    expect(await only('customer=nobody')).toEqual([]);
    // Another zone for the page (a client's): the script's post is back on Sunday.
    const tokyo = await browser.get('/calendar?month=2027-03&zone=Asia/Tokyo');
    expect(tokyo.text).toContain('>07:30 Alice</a>');

    const week = await browser.get('/calendar?view=week&week=2027-W13');
    expect(week.text).toMatch(new RegExp(`data-date="2027-03-29" data-hour="0">(?:(?!</td>).)*From a script`, 's'));
    expect(week.text).toMatch(new RegExp(`data-date="2027-03-30" data-hour="10">(?:(?!</td>).)*From an agent`, 's'));
  });

  it('moves a post with the plain form to a local date, across the change; the script gets JSON; what went out stays', async () => {
    const form = await browser.get(`/posts/${apiPost}/move?back=${encodeURIComponent('/calendar?month=2027-03')}`);
    expect(form.text).toContain('Now at <strong>2027-03-29 00:30 GMT+2</strong>');
    expect(form.text).toContain('value="2027-03-29"');
    expect(form.text).toContain('value="00:30"');
    // To Friday 09:00 in Paris, before the change: 08:00Z.
    const moved = await browser.request('POST', `/posts/${apiPost}/move`, { _csrf: browser.csrf(form), date: '2027-03-26', time: '09:00', timeZone: 'Europe/Paris', back: '/calendar?month=2027-03' });
    expect(moved.location).toBe('/calendar?month=2027-03&notice=moved');
    expect(await publishDate(apiPost)).toBe('2027-03-26T08:00:00.000Z');
    expect((await browser.follow(moved)).text).toContain('Moved: the post is at its new date.');

    const json = await browser.request('POST', `/posts/${agentPost}/move`, { _csrf: browser.csrf(form), date: '2027-04-02', time: '18:45', timeZone: 'America/New_York' }, { accept: 'application/json' });
    expect(JSON.parse(json.text)).toEqual({ moved: true, id: agentPost, date: '2027-04-02T22:45:00.000Z', local: '2027-04-02 18:45 EDT', state: 'DRAFT' });

    const refused = await browser.request('POST', `/posts/${published}/move`, { _csrf: browser.csrf(form), date: '2027-04-02', time: '10:00', timeZone: 'Europe/Paris' }, { accept: 'application/json' });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.text)).toMatchObject({ moved: false, code: 'conflict' });
    const impossible = await browser.request('POST', `/posts/${agentPost}/move`, { _csrf: browser.csrf(form), date: '2027-02-30', time: '10:00', timeZone: 'Europe/Paris' });
    expect(impossible.status).toBe(400);
    expect(impossible.text).toContain('Give the new date as YYYY-MM-DD and the time as HH:MM (Europe/Paris).');
  });

  it('a move next to a post with the same text is refused by the duplicate guard until the person says it is meant', async () => {
    const far = await createPost('2027-05-20T09:00:00.000Z', 'Spring sale starts today');
    const near = await createPost('2027-03-29T09:00:00.000Z', 'Spring sale starts today');
    const form = await browser.get(`/posts/${far}/move`);
    const refused = await browser.request('POST', `/posts/${far}/move`, { _csrf: browser.csrf(form), date: '2027-03-30', time: '11:00', timeZone: 'Europe/Paris', back: '/calendar' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('allowDuplicate');
    expect(refused.text).toContain('name="allowDuplicate" value="yes"');
    expect(await publishDate(far)).toBe('2027-05-20T09:00:00.000Z');
    const allowed = await browser.request('POST', `/posts/${far}/move`, { _csrf: browser.csrf(refused), date: '2027-03-30', time: '11:00', timeZone: 'Europe/Paris', back: '/calendar', allowDuplicate: 'yes' });
    expect(allowed.location).toBe('/calendar?notice=moved');
    expect(await publishDate(far)).toBe('2027-03-30T09:00:00.000Z');
    expect(near).toBeTruthy();
  });

  it('shows no UTC time to a person: notifications in their zone with the posts they name linked, a key\'s last use (issue 36)', async () => {
    const postId = await createPost('2027-06-01T08:00:00.000Z', 'Summer opening hours');
    await db().execute('insert into notification (id, organization_id, type, content, link, integration_id, created_at) values (?, ?, ?, ?, null, null, now())', [
      'notificationzones0001',
      herald.organizationId,
      'post_awaiting_approval',
      `A post by an agent waits for your approval (post ${postId}, for 2027-06-01T08:00:00.000Z). Approve or reject it <b>now</b>.`,
    ]);
    const page = await browser.get('/notifications');
    // Europe/Paris is the person's zone (chosen above): 08:00 UTC is 10:00 there.
    expect(page.text).toContain(`(<a href="/posts/${postId}">post ${postId}</a>, for <time datetime="2027-06-01T08:00:00.000Z" title="Europe/Paris">2027-06-01 10:00 GMT+2</time>)`);
    expect(page.text).toContain('Approve or reject it &lt;b&gt;now&lt;/b&gt;.');
    expect(page.text).not.toContain('2027-06-01T08:00:00.000Z)');

    const key = (await herald.rest('POST', '/keys', { name: 'Zone agent' })).body.secret;
    expect((await fetch(`${herald.restUrl}/is-connected`, { headers: { authorization: key } })).status).toBe(200);
    const developer = await browser.get('/developer');
    expect(developer.text).toMatch(/<td><time datetime="[^"]+" title="Europe\/Paris">\d{4}-\d{2}-\d{2} \d{2}:\d{2} GMT\+\d<\/time>/);
    expect(developer.text).not.toMatch(/\d{2}:\d{2} UTC/);
    expect(developer.text).toContain('id="key-name" name="name" type="text"');
  });
});
