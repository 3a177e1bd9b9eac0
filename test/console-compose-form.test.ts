// The compose page without JavaScript (a multipart form, as a browser sends it): channels grouped by customer, the
// preview of what each platform receives, a thread for two channels with a picture uploaded in the same form, a local
// date in another zone, per-channel text, idempotent sending, "next free slot" per channel, and clear refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { acceptedSamples } from './helpers/media-samples.js';

let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let browser: ConsoleClient;
let blueskyId: string;
let mastodonId: string;

const db = () => herald.services.orm.em.fork().getConnection();
const png = () => acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes;


const base = (extra: [string, string][] = []): [string, string][] => [['channel', blueskyId], ['channel', mastodonId], ['idempotencyKey', `key-${Math.random()}`], ...extra];

beforeAll(async () => {
  [bluesky, mastodon] = await Promise.all([startBlueskyFake(), startMastodonFake()]);
  herald = await startHerald();
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  blueskyId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  mastodonId = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id;
  await browser.submit('/channels', `/channels/${mastodonId}/customer`, { customerId: '', newCustomer: 'Bakery' });
});
afterAll(async () => {
  await herald?.stop();
  await bluesky?.close();
  await mastodon?.close();
});

describe('compose without JavaScript', () => {
  it('groups the channels by customer and shows each platform\'s settings fields', async () => {
    const page = await browser.get('/compose');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<legend>Bakery<\/legend>(?:(?!<\/fieldset>).)*Mastodon/s);
    expect(page.text).toMatch(/<legend>No customer<\/legend>(?:(?!<\/fieldset>).)*Bluesky/s);
    expect(page.text).toContain(`name="override:${mastodonId}:0"`);
    expect(page.text).toContain('<datalist id="time-zones">');
  });

  it('previews what each platform receives: too long for Bluesky (graphemes), fine for Mastodon', async () => {
    const long = 'A'.repeat(400);
    const page = await browser.sendCompose('/compose', base([['items', '1'], ['content-0', long], ['action', 'preview']]));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Not ready: fix what is marked below.');
    expect(page.text).toMatch(/aria-label="Preview for Alice"(?:(?!<\/section>).)*400 \/ 300 graphemes[^<]*— too long/s);
    expect(page.text).toMatch(/aria-label="Preview for [^"]*"(?:(?!<\/section>).)*400 \/ 500 characters<\/span>/s);
    // The script's route answers the same preview as a fragment.
    const csrf = browser.csrf();
    const fragment = await browser.request('POST', '/compose/preview', { _csrf: csrf, channel: [blueskyId, mastodonId], items: '1', 'content-0': long });
    expect(fragment.status).toBe(200);
    expect(fragment.text.startsWith('<p class="flash error preview-verdict">')).toBe(true);
    expect(fragment.text).toContain('— too long');
  });

  it('creates a thread for both channels with a picture uploaded in the same form, at 09:00 New York time after the change; sending it again creates nothing more', async () => {
    const fields = base([
      ['items', '2'],
      ['content-0', 'Spring is here'],
      ['content-1', 'More in the thread'],
      ['delay-1', '5'],
      [`override:${mastodonId}:0`, 'Spring is here, Mastodon friends'],
      ['timing', 'date'],
      ['date', '2027-03-15T09:00'],
      ['timeZone', 'America/New_York'],
      ['action', 'schedule'],
    ]);
    const sent = await browser.sendCompose('/compose', fields, [{ field: 'upload-0', name: 'spring.png', bytes: png() }]);
    expect(sent.status, sent.text.slice(0, 2000)).toBe(303);
    expect(sent.location).toMatch(/^\/posts\/[\w-]+\?notice=created$/);
    const rows = await db().execute('select integration_id, position, content, media, delay, publish_date, state from post order by integration_id, position');
    expect(rows).toHaveLength(4);
    const media = await db().execute(`select id, path from media`);
    expect(media).toHaveLength(1);
    for (const row of rows) {
      // New York is at -4 from 2027-03-14: 09:00 is 13:00Z.
      expect(new Date(row.publish_date).toISOString()).toBe('2027-03-15T13:00:00.000Z');
      expect(row.state).toBe('QUEUE');
    }
    const byChannel = (id: string) => rows.filter((row: any) => row.integration_id === id);
    expect(byChannel(blueskyId).map((row: any) => row.content)).toEqual(['Spring is here', 'More in the thread']);
    expect(byChannel(mastodonId).map((row: any) => row.content)).toEqual(['Spring is here, Mastodon friends', 'More in the thread']);
    expect(byChannel(blueskyId)[0].media).toEqual([{ id: media[0].id, path: media[0].path, type: 'image/png' }]);
    expect(byChannel(mastodonId)[1].delay).toBe(5);

    // The same form again (a double click, a reload): the first answer, nothing created.
    const again = await browser.sendCompose('/compose', fields, [{ field: 'upload-0', name: 'spring.png', bytes: png() }]);
    expect(again.location).toBe(sent.location);
    expect((await db().execute('select count(*)::int as n from post'))[0].n).toBe(4);
    await db().execute('delete from post');
  });

  it('adds an item and keeps what was typed and uploaded; refuses a form without channel or date with the reason', async () => {
    const added = await browser.sendCompose('/compose', base([['items', '1'], ['content-0', 'Keep me'], ['action', 'add-item']]), [{ field: 'upload-0', name: 'keep.png', bytes: png() }]);
    expect(added.status).toBe(200);
    expect(added.text).toContain('name="items" value="2"');
    expect(added.text).toContain('>Keep me</textarea>');
    expect(added.text).toMatch(/name="media-0" value="[\w-]+" checked/);
    expect(added.text).toContain('id="content-1"');

    const noChannel = await browser.sendCompose('/compose', [['items', '1'], ['content-0', 'Hello'], ['date', '2027-03-15T09:00'], ['action', 'schedule']]);
    expect(noChannel.status).toBe(400);
    expect(noChannel.text).toContain('Choose at least one channel to post to.');
    const noDate = await browser.sendCompose('/compose', base([['items', '1'], ['content-0', 'Hello'], ['timing', 'date'], ['action', 'schedule']]));
    expect(noDate.status).toBe(400);
    expect(noDate.text).toContain('Choose a date and time');
    const tooLong = await browser.sendCompose('/compose', base([['items', '1'], ['content-0', 'B'.repeat(400)], ['date', '2027-03-15T09:00'], ['action', 'schedule']]));
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('Alice (bluesky, id ');
    expect((await db().execute('select count(*)::int as n from post'))[0].n).toBe(0);
  });

  it('"next free slot" schedules each channel at its own slot (one request per date, all validated first)', async () => {
    // The next 09:00 of a zone after now, read with Intl alone.
    const nextNine = (zone: string) => {
      const format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' });
      let candidate = Math.ceil((Date.now() + 60_000) / 3_600_000) * 3_600_000;
      while (format.format(new Date(candidate)) !== '09:00') candidate += 3_600_000;
      return new Date(candidate).toISOString();
    };
    try {
      await herald.rest('PUT', `/integrations/${blueskyId}/posting-times`, { postingTimes: [{ time: 540 }], timeZone: 'Europe/Paris' });
      await herald.rest('PUT', `/integrations/${mastodonId}/posting-times`, { postingTimes: [{ time: 540 }], timeZone: 'America/New_York' });
      const sent = await browser.sendCompose('/compose', base([['items', '1'], ['content-0', 'In each slot'], ['timing', 'slot'], ['action', 'schedule']]));
      expect(sent.status, sent.text.slice(0, 1000)).toBe(303);
      const rows = await db().execute('select integration_id, publish_date, group_id from post order by integration_id');
      const dates = Object.fromEntries(rows.map((row: any) => [row.integration_id, new Date(row.publish_date).toISOString()]));
      expect(dates).toEqual({ [blueskyId]: nextNine('Europe/Paris'), [mastodonId]: nextNine('America/New_York') });
      expect(new Set(rows.map((row: any) => row.group_id)).size).toBe(2);
    } finally {
      await db().execute('delete from post');
    }
  });
});
