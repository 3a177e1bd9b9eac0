// Recurring posts (issue 35) over real HTTP and MCP against fake Bluesky PDSes: 09:00 in Berlin stays 09:00 across both
// daylight-saving changes, count and end date, variations that rotate, occurrences as ordinary posts (edited or deleted
// alone, the rule goes on; a change reaches only the untouched ones), pause and resume, deleting the rule with or without
// its occurrences, clear 400s, the duplicate guard letting occurrences through, and after an outage no backlog: missed
// occurrences are skipped with a notification, or only the latest goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { waitFor } from './helpers/posts.js';
import { occurrencesAfter } from '../tools/internal/recurrence-schedule.js';
import { extendDueRules } from '../tools/internal/recurrence.js';
import { publishChain } from '../tools/internal/publish.js';

let herald: Herald;
let alice: BlueskyFake;
let bob: BlueskyFake;
let aliceChannel: string;
let bobChannel: string;
let client: Client;
const DAY = 86_400_000;
const db = () => herald.services.orm.em.fork().getConnection();

beforeAll(async () => {
  herald = await startHerald();
  alice = await startBlueskyFake();
  bob = await startBlueskyFake({ handle: 'bob.bsky.social' });
  const connect = async (fake: BlueskyFake) => (await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password })).body.id as string;
  aliceChannel = await connect(alice);
  bobChannel = await connect(bob);
  client = new Client({ name: 'recurring-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await alice?.close();
  await bob?.close();
});

async function createRule(body: Record<string, unknown>) {
  const created = await herald.rest('POST', '/recurring-posts', { channel: aliceChannel, every: 'week', time: '09:00', timeZone: 'Europe/Berlin', ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** The rule's posts (not deleted), earliest first. */
const postsOf = async (ruleId: string) =>
  db().execute<{ id: string; content: string; publish_date: Date; state: string; error: string | null }[]>(
    `select p.id, p.content, p.publish_date, p.state, p.error from recurring_occurrence o join post p on p.id = o.post_id and p.deleted_at is null
      where o.rule_id = ? order by p.publish_date`,
    [ruleId],
  );
const utc = (rows: { publish_date: Date }[]) => rows.map((row) => new Date(row.publish_date).toISOString());

describe('the schedule', () => {
  it('keeps 09:00 on the clock in Berlin across both daylight-saving changes, on the very Sundays of the change', () => {
    const sundays = { unit: 'week' as const, interval: 1, weekdays: [6], minuteOfDay: 9 * 60, timeZone: 'Europe/Berlin', endDate: null };
    expect(occurrencesAfter({ ...sundays, startDate: '2027-03-14' }, new Date('2027-03-13T00:00:00Z'), 3).map((date) => date.toISOString())).toEqual([
      '2027-03-14T08:00:00.000Z',
      '2027-03-21T08:00:00.000Z',
      '2027-03-28T07:00:00.000Z', // the last Sunday of March: CEST from 02:00
    ]);
    expect(occurrencesAfter({ ...sundays, startDate: '2027-10-17' }, new Date('2027-10-16T00:00:00Z'), 3).map((date) => date.toISOString())).toEqual([
      '2027-10-17T07:00:00.000Z',
      '2027-10-24T07:00:00.000Z',
      '2027-10-31T08:00:00.000Z', // the last Sunday of October: CET again from 03:00
    ]);
  });

  it('every 2 weeks on Monday and Thursday keeps both days of every other week; every 3 days on weekdays only skips weekends', () => {
    const twoWeeks = { unit: 'week' as const, interval: 2, weekdays: [0, 3], minuteOfDay: 12 * 60, timeZone: 'UTC', startDate: '2027-01-06', endDate: null };
    expect(occurrencesAfter(twoWeeks, new Date('2027-01-01T00:00:00Z'), 4).map((date) => date.toISOString().slice(0, 10))).toEqual(['2027-01-07', '2027-01-18', '2027-01-21', '2027-02-01']);
    const days = { unit: 'day' as const, interval: 3, weekdays: [0, 1, 2, 3, 4], minuteOfDay: 8 * 60, timeZone: 'UTC', startDate: '2027-01-04', endDate: '2027-01-20' };
    // Jan 4 (Mon), 7 (Thu), [10 Sun], 13 (Wed), [16 Sat], 19 (Tue): then the end date.
    expect(occurrencesAfter(days, new Date('2027-01-01T00:00:00Z'), 10).map((date) => date.toISOString().slice(0, 10))).toEqual(['2027-01-04', '2027-01-07', '2027-01-13', '2027-01-19']);
  });
});

describe('recurring posts over REST', () => {
  it('a weekly rule at 09:00 in Berlin makes its occurrences 14 days ahead, and the job extends them across the change to summer time', async () => {
    herald.setNow(new Date('2027-03-15T12:00:00Z'));
    try {
      const rule = await createRule({ content: 'Weekly tip, Monday edition', weekdays: ['mon'], startDate: '2027-03-15' });
      expect(rule).toMatchObject({ every: 'week', interval: 1, weekdays: ['mon'], time: '09:00', timeZone: 'Europe/Berlin', status: 'active', made: 2 });
      expect(rule.occurrences.map((item: any) => item.localDate).reverse()).toEqual(['2027-03-22T09:00:00+01:00', '2027-03-29T09:00:00+02:00']);
      expect(rule.nextLocal).toBe('2027-04-05T09:00:00+02:00');
      herald.setNow(new Date('2027-04-01T12:00:00Z'));
      await extendDueRules(herald.services);
      const posts = await postsOf(rule.id);
      expect(utc(posts)).toEqual(['2027-03-22T08:00:00.000Z', '2027-03-29T07:00:00.000Z', '2027-04-05T07:00:00.000Z', '2027-04-12T07:00:00.000Z']);
      expect(posts.every((post) => post.state === 'QUEUE')).toBe(true);
      // Ordinary posts: the post list (the calendar's source) has them.
      const listed = await herald.rest('GET', `/posts?startDate=2027-03-20T00:00:00Z&endDate=2027-04-13T00:00:00Z`);
      expect(listed.status).toBe(200);
      expect(listed.body.posts.filter((post: any) => posts.some((made) => made.id === post.id))).toHaveLength(4);
    } finally {
      herald.setNow(undefined);
    }
  });

  it('ends after its count, or on its end date', async () => {
    herald.setNow(new Date('2027-05-03T06:00:00Z'));
    try {
      const counted = await createRule({ content: 'Three times only', every: 'day', time: '10:00', count: 3, startDate: '2027-05-03' });
      expect(counted).toMatchObject({ status: 'ended', made: 3, nextAt: null });
      const ending = await createRule({ content: 'Until Wednesday', every: 'day', time: '10:00', startDate: '2027-05-03', endDate: '2027-05-05' });
      expect(ending).toMatchObject({ status: 'ended', made: 3 });
      expect((await postsOf(ending.id)).map((post) => new Date(post.publish_date).toISOString())).toEqual(['2027-05-03T08:00:00.000Z', '2027-05-04T08:00:00.000Z', '2027-05-05T08:00:00.000Z']);
      herald.setNow(new Date('2027-05-20T06:00:00Z'));
      await extendDueRules(herald.services);
      expect(await postsOf(counted.id)).toHaveLength(3);
    } finally {
      herald.setNow(undefined);
    }
  });

  it('rotates through the variations of its text', async () => {
    herald.setNow(new Date('2027-06-01T06:00:00Z'));
    try {
      const rule = await createRule({ content: 'Rotation A', variations: ['Rotation B', 'Rotation C'], every: 'day', time: '12:00', count: 5, timeZone: 'UTC' });
      expect(rule.variations).toEqual(['Rotation B', 'Rotation C']);
      expect((await postsOf(rule.id)).map((post) => /Rotation ./.exec(post.content)?.[0])).toEqual(['Rotation A', 'Rotation B', 'Rotation C', 'Rotation A', 'Rotation B']);
    } finally {
      herald.setNow(undefined);
    }
  });

  it('lets its occurrences through the duplicate guard (the same text every day), while a one-off post repeating them is still refused', async () => {
    herald.setNow(new Date('2027-07-01T06:00:00Z'));
    try {
      const rule = await createRule({ content: 'Good morning from the same text', every: 'day', time: '08:00', timeZone: 'UTC' });
      expect(rule.made).toBe(10); // at most 10 ahead, within 14 days
      const posts = await postsOf(rule.id);
      expect(posts).toHaveLength(10);
      const oneOff = await herald.rest('POST', '/posts', { type: 'schedule', date: '2027-07-03T12:00:00Z', shortLink: false, tags: [], posts: [{ integration: { id: aliceChannel }, value: [{ content: 'Good morning from the same text', image: [] }], settings: {} }] });
      expect(oneOff.status).toBe(400);
      expect(oneOff.body.message).toContain('this text is the same as post');
      // A second rule repeating a recent post is refused like a create, unless it says so.
      const again = await herald.rest('POST', '/recurring-posts', { channel: aliceChannel, content: 'Good morning from the same text', every: 'week', time: '09:00' });
      expect(again.status).toBe(400);
      expect(again.body.message).toContain('allowDuplicate');
    } finally {
      herald.setNow(undefined);
    }
  });

  it('an occurrence is edited or deleted alone; a change of the rule reaches only the untouched waiting ones', async () => {
    herald.setNow(new Date('2027-08-02T06:00:00Z'));
    try {
      const rule = await createRule({ content: 'Original weekly text', every: 'day', interval: 2, time: '09:00', timeZone: 'UTC', count: 5 });
      const [first, second, third] = await postsOf(rule.id);
      const edited = await herald.rest('PUT', `/posts/${second.id}`, { value: [{ content: '<p>Edited by a person</p>', image: [] }] });
      expect(edited.status, JSON.stringify(edited.body)).toBe(200);
      expect((await herald.rest('DELETE', `/posts/${third.id}`)).status).toBe(200);
      const shown = (await herald.rest('GET', `/recurring-posts/${rule.id}`)).body;
      expect(shown.status).toBe('ended');
      expect(shown.occurrences.find((item: any) => item.postId === third.id)).toMatchObject({ outcome: 'created', state: null });

      const changed = await herald.rest('PUT', `/recurring-posts/${rule.id}`, { content: 'Changed weekly text', count: 6 });
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      const after = await postsOf(rule.id);
      expect(after.find((post) => post.id === second.id)?.content).toContain('Edited by a person');
      expect(after.some((post) => post.id === first.id)).toBe(false); // untouched: made again from the changed rule
      expect(after.filter((post) => post.content.includes('Changed weekly text'))).toHaveLength(after.length - 1);
      expect(after.some((post) => post.id === third.id)).toBe(false); // deleted alone, never made again
      expect(changed.body.made).toBe(6);
    } finally {
      herald.setNow(undefined);
    }
  });

  it('pauses (its waiting occurrences go) and resumes from then on', async () => {
    herald.setNow(new Date('2027-09-01T06:00:00Z'));
    try {
      const rule = await createRule({ content: 'Paused and resumed', every: 'week', weekdays: ['wed', 'Friday'], time: '18:30' });
      expect(await postsOf(rule.id)).toHaveLength(4);
      const paused = await herald.rest('PUT', `/recurring-posts/${rule.id}`, { paused: true });
      expect(paused.body.status).toBe('paused');
      expect(await postsOf(rule.id)).toHaveLength(0);
      herald.setNow(new Date('2027-09-20T06:00:00Z'));
      await extendDueRules(herald.services);
      expect(await postsOf(rule.id)).toHaveLength(0);
      const resumed = await herald.rest('PUT', `/recurring-posts/${rule.id}`, { paused: false });
      expect(resumed.body.status).toBe('active');
      // From Sep 20: Wed 22, Fri 24, Wed 29, Fri Oct 1 at 18:30 in Berlin (CEST).
      expect(utc(await postsOf(rule.id))).toEqual(['2027-09-22T16:30:00.000Z', '2027-09-24T16:30:00.000Z', '2027-09-29T16:30:00.000Z', '2027-10-01T16:30:00.000Z']);
    } finally {
      herald.setNow(undefined);
    }
  });

  it('deleting the rule deletes its waiting occurrences, or keeps them as posts when asked', async () => {
    herald.setNow(new Date('2027-11-01T06:00:00Z'));
    try {
      const gone = await createRule({ content: 'Deleted with its posts', every: 'day', time: '09:00', count: 3 });
      const kept = await createRule({ content: 'Deleted, posts kept', every: 'day', time: '10:00', count: 3 });
      const goneIds = (await postsOf(gone.id)).map((post) => post.id);
      const keptIds = (await postsOf(kept.id)).map((post) => post.id);
      const deleted = await herald.rest('DELETE', `/recurring-posts/${gone.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toMatchObject({ deleted: true, removedOccurrences: 3 });
      expect((await herald.rest('DELETE', `/recurring-posts/${kept.id}?keepOccurrences=true`)).body.removedOccurrences).toBe(0);
      const alive = await db().execute<{ id: string }[]>('select id from post where id in (select jsonb_array_elements_text(?::jsonb)) and deleted_at is null', [JSON.stringify([...goneIds, ...keptIds])]);
      expect(alive.map((row) => row.id).sort()).toEqual([...keptIds].sort());
      expect((await herald.rest('GET', `/recurring-posts/${gone.id}`)).status).toBe(404);
    } finally {
      herald.setNow(undefined);
    }
  });

  it.each([
    ['a weekday that is none', { weekdays: ['mon', 'funday'] }, 'weekdays: "funday" is not a weekday'],
    ['an interval of 0', { interval: 0 }, 'interval: must be 1 or more'],
    ['an end before the start', { startDate: '2027-12-10', endDate: '2027-12-01' }, 'endDate: 2027-12-01 is before startDate 2027-12-10'],
    ['an unknown zone', { timeZone: 'Mars/Olympus_Mons' }, 'timeZone: "Mars/Olympus_Mons" is not an IANA time zone'],
    ['a time that is none', { time: '25:00' }, 'time: "25:00" is not a time of day'],
    ['a start date that is none', { startDate: '2027-02-30' }, 'startDate: "2027-02-30" is not a date'],
    ['an unknown channel', { channel: 'no-such-channel' }, 'no-such-channel'],
  ])('refuses %s with a clear 400 (404 for a channel) and makes nothing', async (_case, body, message) => {
    const before = Number((await db().execute('select count(*)::int as n from recurring_post'))[0].n);
    const answer = await herald.rest('POST', '/recurring-posts', { channel: aliceChannel, content: `Bad input ${Date.now()}`, every: 'week', time: '09:00', ...body });
    expect([400, 404]).toContain(answer.status);
    expect(answer.body.message).toContain(message);
    expect(answer.body.hint).toBeTruthy();
    expect(Number((await db().execute('select count(*)::int as n from recurring_post'))[0].n)).toBe(before);
  });

  it('is not reachable from another organization', async () => {
    const rule = await createRule({ content: `Ours only ${Date.now()}`, time: '09:00' });
    const other = await herald.newOrganization('Other');
    const call = (method: string, path: string, body?: unknown) => fetch(`${herald.restUrl}${path}`, { method, headers: { authorization: other.apiKey, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    expect((await call('GET', `/recurring-posts/${rule.id}`)).status).toBe(404);
    expect((await call('PUT', `/recurring-posts/${rule.id}`, { paused: true })).status).toBe(404);
    expect((await call('DELETE', `/recurring-posts/${rule.id}`)).status).toBe(404);
    expect(await (await call('GET', '/recurring-posts')).json()).toEqual([]);
  });
});

describe('recurring posts over MCP', () => {
  const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'recurringPostTool', arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text: string }[] };

  it('one tool creates, lists, shows, changes and deletes (after confirmation)', async () => {
    const created = await call({ action: 'create', rule: { channel: bobChannel, content: `From an agent ${Date.now()}`, every: 'week', weekdays: ['tue'], time: '11:00' } });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const id = created.structuredContent.rule.id as string;
    expect(created.structuredContent.rule.occurrences.length).toBeGreaterThan(0);
    expect((await call({ action: 'list' })).structuredContent.rules.some((rule: any) => rule.id === id)).toBe(true);
    expect((await call({ action: 'change', id, rule: { time: '11:30' } })).structuredContent.rule.time).toBe('11:30');
    const bad = await call({ action: 'create', rule: { channel: bobChannel, content: 'x', every: 'week', time: '09:00', interval: 0 } });
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toContain('interval: must be 1 or more');
    const first = await call({ action: 'delete', id });
    expect(first.structuredContent.message).toContain('Nothing was deleted yet');
    expect((await call({ action: 'delete', id, confirm: true })).structuredContent.message).toMatch(/^Deleted, with \d+ waiting occurrence/);
    expect((await call({ action: 'show', id })).isError).toBe(true);
  });
});

describe('after an outage', () => {
  it('longer than the horizon: none of the missed occurrences is published, one notification tells which, and with "latest" only the latest goes', async () => {
    const start = new Date('2028-01-03T06:00:00Z');
    herald.setNow(start);
    try {
      const skip = await createRule({ content: 'Long outage, skipped', every: 'day', time: '09:00', timeZone: 'UTC' });
      const latest = await createRule({ channel: bobChannel, content: 'Long outage, latest', every: 'day', time: '09:00', timeZone: 'UTC', missed: 'latest' });
      const made = [...(await postsOf(skip.id)), ...(await postsOf(latest.id))];
      expect(made).toHaveLength(20);
      const before = { alice: alice.records.length, bob: bob.records.length };
      // Herald comes back 30 days later: the workers run the publish jobs that fell due, and the recurrence job.
      herald.setNow(new Date(start.getTime() + 30 * DAY));
      for (const post of made) expect((await publishChain(herald.services, post.id)).kind).toBe('skipped');
      await extendDueRules(herald.services);
      const late = (await postsOf(latest.id)).filter((post) => post.state === 'QUEUE' && new Date(post.publish_date).getTime() <= Date.parse('2028-02-02T06:00:00Z'));
      expect(late).toHaveLength(1);
      expect((await publishChain(herald.services, late[0].id)).kind).toBe('published');
      expect(alice.records.length).toBe(before.alice);
      expect(bob.records.length).toBe(before.bob + 1);
      const shown = (await herald.rest('GET', `/recurring-posts/${skip.id}`)).body;
      expect(shown.occurrences.filter((item: any) => item.outcome === 'missed').length).toBeGreaterThanOrEqual(29);
      const notes = (await herald.rest('GET', '/notifications')).body.notifications.filter((item: any) => item.type === 'recurrence_missed' && item.content.includes('Long outage, skipped'));
      expect(notes.some((item: any) => /20 occurrences \(2028-01-13 09:00 UTC to 2028-02-01 09:00 UTC\) were skipped/.test(item.content))).toBe(true);
      // Future occurrences follow the rule again.
      expect((await postsOf(skip.id)).filter((post) => post.state === 'QUEUE').length).toBeGreaterThan(0);
    } finally {
      herald.setNow(undefined);
    }
  });

  it('Herald stopped while occurrences fell due, then started: the worker publishes none of them and notifies; with "latest" only the latest goes', async () => {
    const now = Date.now();
    // Three days ago, Herald made the occurrences due 2 and 1 days ago (and one 3 days ago), then stopped.
    const madeAt = new Date(now - 3 * DAY);
    const time = new Date(madeAt.getTime() + 60 * 60_000).toISOString().slice(11, 16);
    herald.setNow(madeAt);
    const startDate = madeAt.toISOString().slice(0, 10);
    const skip = await createRule({ content: `Restart, skipped ${now}`, every: 'day', time, timeZone: 'UTC', startDate });
    const latest = await createRule({ channel: bobChannel, content: `Restart, latest ${now}`, every: 'day', time, timeZone: 'UTC', startDate, missed: 'latest' });
    herald.setNow(undefined);
    const due = async (id: string) => (await postsOf(id)).filter((post) => new Date(post.publish_date).getTime() < now);
    expect((await due(skip.id)).map((post) => post.state)).toEqual(['QUEUE', 'QUEUE', 'QUEUE']);
    const before = { alice: alice.records.length, bob: bob.records.length };
    await herald.startWorker();
    await waitFor(async () => ((await due(skip.id)).every((post) => post.state === 'ERROR') && (await due(latest.id)).every((post) => post.state !== 'QUEUE') ? true : undefined), 30_000);
    const skipped = await due(skip.id);
    expect(skipped[0].error).toContain('passed while Herald was not running');
    const latestStates = (await due(latest.id)).map((post) => post.state);
    expect(latestStates).toEqual(['ERROR', 'ERROR', 'PUBLISHED']);
    expect(alice.records.length).toBe(before.alice);
    expect(bob.records.length).toBe(before.bob + 1);
    const notes = (await herald.rest('GET', '/notifications')).body.notifications.filter((item: any) => item.type === 'recurrence_missed');
    expect(notes.filter((item: any) => item.content.includes(`Restart, skipped ${now}`))).toHaveLength(3);
    expect(notes.filter((item: any) => item.content.includes(`Restart, latest ${now}`))).toHaveLength(2);
    // The occurrences still ahead wait for their time.
    expect((await postsOf(skip.id)).filter((post) => post.state === 'QUEUE').length).toBeGreaterThan(0);
  });
});
