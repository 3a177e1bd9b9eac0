// Posting times are wall-clock times of the channel's people (issue 36): a new channel of a Berlin organization starts
// with the default posting times on Berlin's clock (not UTC), find-slot and the console read them the same way before
// and after a daylight-saving change, they follow the organization's and the channel's zone when it changes, and the
// migration re-reads the defaults of existing channels in their zone while keeping times someone chose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { Migration20261202150000 } from '../src/db/migrations/Migration20261202150000.js';

let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let browser: ConsoleClient;
let channelId: string;

const db = () => herald.services.orm.em.fork().getConnection();
const slot = async (id: string, after?: string) => {
  const answer = await herald.rest('GET', `/find-slot/${id}${after ? `?after=${after}` : ''}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { date: string; localDate: string; timeZone: string };
};

beforeAll(async () => {
  [bluesky, mastodon] = await Promise.all([startBlueskyFake(), startMastodonFake()]);
  herald = await startHerald();
  // Saturday 27 March 2027, 12:00 in Berlin (CET, UTC+1); the clocks go forward that night.
  herald.setNow(new Date('2027-03-27T11:00:00Z'));
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  expect((await herald.rest('PUT', '/time-zone', { timeZone: 'Europe/Berlin' })).status).toBe(200);
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([bluesky?.close(), mastodon?.close()]);
});

describe('default posting times on the clock of the channel\'s zone', () => {
  it('a new channel of a Berlin organization starts with the defaults in Berlin time, kept across the spring change', async () => {
    const [row] = await db().execute('select posting_times, posting_times_zone from integration where id = ?', [channelId]);
    expect(row).toEqual({ posting_times: [120, 400, 700], posting_times_zone: 'Europe/Berlin' });
    // The day before the change, 11:40 on Berlin's winter clock is 10:40Z (not 11:40Z, which would be 12:40 there).
    // Asked at 10:00 there: at 12:00 (the clock beforeAll sets) 11:40 has passed, and find-slot answers no past slot.
    herald.setNow(new Date('2027-03-27T09:00:00Z'));
    expect(await slot(channelId, '2027-03-27T07:00')).toMatchObject({ date: '2027-03-27T10:40:00.000Z', localDate: '2027-03-27T11:40:00+01:00', timeZone: 'Europe/Berlin' });
    herald.setNow(new Date('2027-03-27T11:00:00Z'));
    // Now (12:00) that is past: next is 02:00, which does not exist that night (02:00 → 03:00), so the slot lands just
    // after the change, 03:00 summer time.
    expect(await slot(channelId)).toMatchObject({ date: '2027-03-28T01:00:00.000Z', localDate: '2027-03-28T03:00:00+02:00' });
    // On summer time (UTC+2) 06:40 on the clock is 04:40Z. (after is inclusive: from 03:00 the answer is that 03:00 slot.)
    expect(await slot(channelId, '2027-03-28T03:00')).toMatchObject({ date: '2027-03-28T01:00:00.000Z' });
    expect(await slot(channelId, '2027-03-28T04:00')).toMatchObject({ date: '2027-03-28T04:40:00.000Z', localDate: '2027-03-28T06:40:00+02:00' });
  });

  it('the console shows the same times in the same zone, and best times fall back to them on Berlin\'s clock', async () => {
    const page = await browser.get('/channels');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`id="times-${channelId}" name="times" type="text" value="02:00, 06:40, 11:40"`);
    expect(page.text).toMatch(new RegExp(`id="times-zone-${channelId}"[^>]*value="Europe/Berlin"`));
    const best = await herald.rest('GET', `/best-times/${channelId}`);
    expect(best.body).toMatchObject({ timeZone: 'Europe/Berlin', fallback: { postingTimes: ['02:00', '06:40', '11:40'] } });
    expect(best.body.explanation).toContain('(02:00, 06:40, 11:40, Europe/Berlin)');
    expect(best.body.explanation).not.toContain('UTC');
    const console = await browser.get(`/channels/${channelId}/best-times`);
    expect(console.text).toContain("posting times: 02:00, 06:40, 11:40 (Europe/Berlin).</p>");
  });

  it('posting times in the organization\'s or the channel\'s zone follow it when it changes; times set in another zone stay', async () => {
    expect((await herald.rest('PUT', '/time-zone', { timeZone: 'Europe/Lisbon' })).status).toBe(200);
    expect((await slot(channelId, '2027-04-01T00:00')).localDate).toBe('2027-04-01T02:00:00+01:00');
    const form = await browser.submit('/channels', `/channels/${channelId}/time-zone`, { timeZone: 'America/New_York' });
    expect(form.status, form.text.slice(0, 500)).toBe(303);
    expect((await slot(channelId, '2027-04-01T00:00')).localDate).toBe('2027-04-01T02:00:00-04:00');
    // Set in Tokyo time by a person: changing the channel's zone does not move them.
    expect((await herald.rest('PUT', `/integrations/${channelId}/posting-times`, { postingTimes: [{ time: 540 }], timeZone: 'Asia/Tokyo' })).status).toBe(200);
    expect((await browser.submit('/channels', `/channels/${channelId}/time-zone`, { timeZone: '' })).status).toBe(303);
    const [row] = await db().execute('select posting_times_zone from integration where id = ?', [channelId]);
    expect(row.posting_times_zone).toBe('Asia/Tokyo');
  });

  it('the migration re-reads untouched defaults stored as UTC in the channel\'s zone, and keeps times someone chose', async () => {
    const untouched = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id as string;
    // As they were before: the defaults copied in as UTC minutes, and the channel above chosen (audited) in UTC.
    await db().execute(`update integration set posting_times_zone = 'UTC' where id in (?, ?)`, [untouched, channelId]);
    const migration = new Migration20261202150000(herald.services.orm.em.getDriver(), herald.services.orm.config);
    await migration.up();
    for (const query of migration.getQueries()) await db().execute(String(query));
    const rows = await db().execute('select id, posting_times_zone from integration where id in (?, ?)', [untouched, channelId]);
    expect(Object.fromEntries((rows as unknown as { id: string; posting_times_zone: string }[]).map((row) => [row.id, row.posting_times_zone]))).toEqual({ [untouched]: 'Europe/Lisbon', [channelId]: 'UTC' });
  });
});
