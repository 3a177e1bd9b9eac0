// Zones on the API (which stays UTC): posting times as wall-clock times of a zone, so find-slot keeps 09:00 Paris time
// across the spring change; find-slot's timeZone and after; each channel's zone in GET /integrations and the MCP channel
// resources; and the migration keeping the posting times stored before zones as UTC times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { readResource } from '../src/mcp/resources.js';
import { Migration20261126200000 } from '../src/db/migrations/Migration20261126200000.js';
import { setChannelZone, setOrganizationZone } from '../tools/internal/time-zones.js';

let herald: Herald;
let bluesky: BlueskyFake;
let channelId: string;

const db = () => herald.services.orm.em.fork().getConnection();
const post = (date: string, text: string) =>
  herald.rest('POST', '/posts', { type: 'schedule', date, shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: text, image: [] }], settings: {} }] });

beforeAll(async () => {
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
});
afterAll(async () => {
  await herald?.stop();
  await bluesky?.close();
});

describe('posting times in a zone', () => {
  it('09:00 Paris time stays 09:00 across the spring change: find-slot answers 08:00Z before it and 07:00Z after', async () => {
    herald.setNow(new Date('2027-03-25T12:00:00Z'));
    try {
      const times = await herald.rest('PUT', `/integrations/${channelId}/posting-times`, { postingTimes: [{ time: 540 }], timeZone: 'europe/paris' });
      expect(times.body).toEqual({ id: channelId, postingTimes: [{ time: 540 }], timeZone: 'Europe/Paris' });
      const slots: string[] = [];
      for (let index = 0; index < 3; index++) {
        const slot = await herald.rest('GET', `/find-slot/${channelId}`);
        expect(slot.status).toBe(200);
        slots.push(slot.body.date);
        expect((await post(slot.body.date, `Slot ${index}`)).status).toBe(200);
      }
      expect(slots).toEqual(['2027-03-26T08:00:00.000Z', '2027-03-27T08:00:00.000Z', '2027-03-28T07:00:00.000Z']);

      // The same slot read in a zone: the UTC date, and the wall-clock time of that zone with its offset.
      const local = await herald.rest('GET', `/find-slot/${channelId}?timeZone=America/New_York`);
      expect(local.body).toEqual({ date: '2027-03-29T07:00:00.000Z', timeZone: 'America/New_York', localDate: '2027-03-29T03:00:00-04:00' });
      // "From Thursday 1 April in New York": the first Paris 09:00 after New York's midnight.
      const after = await herald.rest('GET', `/find-slot/${channelId}?timeZone=America/New_York&after=2027-04-01`);
      expect(after.body.date).toBe('2027-04-01T07:00:00.000Z');
      // Without a zone, `after` is read in the channel's zone (the organization's UTC here).
      expect((await herald.rest('GET', `/find-slot/${channelId}?after=2027-04-01T08:00`)).body).toMatchObject({ date: '2027-04-02T07:00:00.000Z', timeZone: 'UTC' });
    } finally {
      herald.setNow(undefined);
      await db().execute(`delete from post`);
    }
  });

  it('refuses a zone that is not an IANA name, and an after that is not a date, with 400 and the fix', async () => {
    const offset = await herald.rest('PUT', `/integrations/${channelId}/posting-times`, { postingTimes: [{ time: 540 }], timeZone: '+02:00' });
    expect(offset.status).toBe(400);
    expect(offset.body.code).toBe('invalid_input');
    expect(offset.body.message).toContain('"+02:00" is not an IANA time zone');
    expect(offset.body.hint).toContain('Europe/Paris');
    const unknown = await herald.rest('GET', `/find-slot/${channelId}?timeZone=Mars/Base`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('timeZone');
    const notDate = await herald.rest('GET', `/find-slot/${channelId}?after=next%20tuesday`);
    expect(notDate.status).toBe(400);
    expect(notDate.body.hint).toContain('2026-12-01');
  });

  it('without a zone, posting times stay minutes after midnight UTC, as the spec says', async () => {
    const times = await herald.rest('PUT', `/integrations/${channelId}/posting-times`, { postingTimes: [{ time: 600 }] });
    expect(times.body.timeZone).toBe('UTC');
    expect((await herald.rest('GET', `/find-slot/${channelId}`)).body.date.slice(11, 16)).toBe('10:00');
  });
});

describe('the zone of each channel', () => {
  it('GET /integrations and the MCP channel resources give the channel\'s zone: its own, else the organization\'s', async () => {
    const caller = { organizationId: herald.organizationId, credentialId: 'test', credentialKind: 'api_key' as const, scopes: ['mcp:read', 'mcp:write'] };
    expect((await herald.rest('GET', '/integrations')).body[0].timeZone).toBe('UTC');
    await setOrganizationZone(herald.services.orm.em.fork(), herald.organizationId, 'Europe/Berlin');
    expect((await herald.rest('GET', '/integrations')).body[0].timeZone).toBe('Europe/Berlin');
    await setChannelZone(herald.services.orm.em.fork(), herald.organizationId, channelId, 'America/New_York');
    expect((await herald.rest('GET', '/integrations')).body[0].timeZone).toBe('America/New_York');
    await herald.rest('PUT', `/integrations/${channelId}/posting-times`, { postingTimes: [{ time: 540 }, { time: 1050 }], timeZone: 'America/New_York' });

    const one: any = await readResource(herald.services, caller, `herald://integrations/${channelId}`);
    expect(one.timeZone).toBe('America/New_York');
    expect(one.postingTimes).toEqual({ timeZone: 'America/New_York', times: ['09:00', '17:30'] });
    const all: any = await readResource(herald.services, caller, 'herald://integrations');
    expect(all.channels[0]).toMatchObject({ timeZone: 'America/New_York', postingTimes: { timeZone: 'America/New_York' } });

    await setChannelZone(herald.services.orm.em.fork(), herald.organizationId, channelId, '');
    expect(((await readResource(herald.services, caller, `herald://integrations/${channelId}`)) as any).timeZone).toBe('Europe/Berlin');
    await setOrganizationZone(herald.services.orm.em.fork(), herald.organizationId, 'UTC');
  });
});

describe('the migration', () => {
  it('keeps posting times stored before zones as UTC wall-clock times', async () => {
    // The table as it was before the migration, holding 09:00 UTC as minutes.
    const connection = db();
    await connection.execute(`update integration set posting_times = '[540]'`);
    await connection.execute('alter table integration drop column posting_times_zone, drop column time_zone');
    await connection.execute('alter table organization drop column time_zone');
    await connection.execute('alter table app_user drop column time_zone');
    const migration = new Migration20261126200000(herald.services.orm.em.getDriver() as never, herald.services.orm.config as never);
    await migration.up();
    for (const query of migration.getQueries()) await connection.execute(String(query));
    expect(await connection.execute('select posting_times, posting_times_zone, time_zone from integration')).toEqual([{ posting_times: [540], posting_times_zone: 'UTC', time_zone: null }]);
    herald.setNow(new Date('2027-06-01T08:00:00Z'));
    try {
      expect((await herald.rest('GET', `/find-slot/${channelId}`)).body).toMatchObject({ date: '2027-06-01T09:00:00.000Z' });
      expect((await herald.rest('GET', '/integrations')).body[0].timeZone).toBe('UTC');
    } finally {
      herald.setNow(undefined);
    }
  });
});
