// Bulk import (issue 35): a CSV or JSON file of posts, checked row by row with a create's validation in a dry run, then
// created all at once (nothing when a row is bad), retried safely with an idempotency key; over REST and MCP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Herald } from './helpers/harness.js';
import { startWithTwoBlueskyChannels, type TwoChannels } from './helpers/two-bluesky-channels.js';
import { csvRows, parseCsv } from '../tools/internal/bulk-import.js';
import { plainTextContent } from '../src/lib/content.js';

let herald: Herald;
let aliceChannel: string;
let bobChannel: string;
let client: Client;

const year = new Date().getUTCFullYear() + 1;
const rootsOf = async (channel: string) =>
  herald.services.orm.em
    .fork()
    .getConnection()
    .execute<{ id: string; content: string; publish_date: Date; state: string }[]>('select id, content, publish_date, state from post where integration_id = ? and position = 0 and deleted_at is null order by publish_date', [channel]);

let setup: TwoChannels | undefined;

beforeAll(async () => {
  setup = await startWithTwoBlueskyChannels('import-test');
  ({ herald, aliceChannel, bobChannel, client } = setup);
});

afterAll(async () => {
  await setup?.stop();
});

describe('reading the file', () => {
  it('parses RFC 4180 CSV: quoted commas, doubled quotes, line breaks in a field, CRLF and a byte-order mark', () => {
    expect(parseCsv('\uFEFFa,b,c\r\n"x, y","say ""hi""","two\nlines"\r\n\r\n1,,3')).toEqual([
      ['a', 'b', 'c'],
      ['x, y', 'say "hi"', 'two\nlines'],
      ['1', '', '3'],
    ]);
    expect(() => parseCsv('a,b\n"open,2')).toThrow(/opened on line 2 .* never closed/);
  });

  it('matches headers loosely and refuses a column it does not know (a typo would lose data)', () => {
    expect(csvRows('Channel,Time Zone,TEXT\nc1,Europe/Berlin,Hi')).toEqual([{ channel: 'c1', timezone: 'Europe/Berlin', text: 'Hi' }]);
    expect(() => csvRows('channel,txet\nc1,Hi')).toThrow(/columns Herald does not know: "txet"/);
  });

  it('shows plain text as typed: & < > escaped, each line a paragraph', () => {
    expect(plainTextContent('Fish & chips <today>\r\nSecond line')).toBe('<p>Fish &amp; chips &lt;today&gt;</p><p>Second line</p>');
  });
});

describe('POST /posts/import', () => {
  it('dry run: every row checked as a create would be, each with all its problems; nothing is created', async () => {
    await herald.rest('POST', '/posts', {
      type: 'schedule',
      date: new Date(Date.UTC(year, 5, 1, 9)).toISOString(),
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: bobChannel }, value: [{ content: '<p>Already scheduled</p>' }], settings: {} }],
    });
    const before = (await rootsOf(aliceChannel)).length;
    const csv = [
      'channel,date,timeZone,text,settings',
      `${aliceChannel},${year}-06-02 09:00,Europe/Berlin,Good row,`,
      `nope,${year}-06-02 09:00,,Unknown channel,`,
      `${aliceChannel},next tuesday,,Bad date,`,
      `${aliceChannel},2001-01-01 09:00,,In the past,`,
      `${aliceChannel},${year}-06-03 09:00,Mars/Olympus,Bad zone,`,
      `${aliceChannel},${year}-06-04 09:00,,${'x'.repeat(301)},`,
      `${aliceChannel},${year}-06-05 09:00,,Bad settings,"{not json"`,
      `${bobChannel},${year}-06-02 10:00,,Already scheduled,`,
      `${aliceChannel},${year}-06-02 11:00,Europe/Berlin,Good row,`,
      `${aliceChannel},,,,`,
    ].join('\n');
    const response = await herald.rest('POST', '/posts/import', { csv });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const { rows, valid, invalid, dryRun } = response.body;
    expect({ dryRun, valid, invalid }).toEqual({ dryRun: true, valid: 1, invalid: 9 });
    expect(rows[0]).toMatchObject({ row: 1, channel: { id: aliceChannel, platform: 'bluesky' }, date: `${year}-06-02T07:00:00.000Z`, localDate: `${year}-06-02T09:00:00+02:00`, problems: [] });
    const problems = (row: number) => rows[row - 1].problems.join(' | ');
    expect(problems(2)).toMatch(/channel "nope" is neither the id nor the name/);
    expect(problems(3)).toMatch(/date "next tuesday" is not a date/);
    expect(problems(4)).toMatch(/has passed/);
    expect(problems(5)).toMatch(/timeZone "Mars\/Olympus" is not an IANA time zone/);
    expect(problems(6)).toMatch(/The maximum characters is 300, we got 301/);
    expect(problems(7)).toMatch(/settings is not a JSON object/);
    expect(problems(8)).toMatch(/this text is the same as post .* scheduled for/);
    expect(problems(9)).toMatch(/row 9 repeats row 1 of this file/);
    expect(problems(10)).toMatch(/date is missing.*text is missing/);
    expect((await rootsOf(aliceChannel)).length).toBe(before);
  });

  it('imports nothing when a row is bad, naming every bad row; then the fixed file all at once, once per idempotency key', async () => {
    const good = `${aliceChannel},${year}-07-01 09:00,Fish & chips <today>`;
    const bad = `${aliceChannel},${year}-07-02 09:00,${'y'.repeat(301)}`;
    const refused = await herald.rest('POST', '/posts/import', { csv: `channel,date,text\n${good}\n${bad}`, timeZone: 'Europe/Berlin', dryRun: false });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^1 of 2 rows have problems; nothing was imported\. Row 2: /);
    expect(refused.body.details.rows).toEqual([expect.objectContaining({ row: 2 })]);
    const before = (await rootsOf(aliceChannel)).length;

    const fixed = { csv: `channel,date,text,type\n${good}\n${aliceChannel},${year}-07-02 09:00,Second,\n${aliceChannel},,An idea for later,draft`, timeZone: 'Europe/Berlin', dryRun: false };
    const imported = await herald.rest('POST', '/posts/import', fixed, { 'Idempotency-Key': 'import-july' });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body).toMatchObject({ dryRun: false, valid: 3, invalid: 0 });
    const again = await herald.rest('POST', '/posts/import', fixed, { 'Idempotency-Key': 'import-july' });
    expect(again.body).toEqual(imported.body);
    const roots = await rootsOf(aliceChannel);
    expect(roots.length).toBe(before + 3);
    const made = roots.filter((root) => imported.body.rows.some((row: { postId: string }) => row.postId === root.id));
    expect(made.map((root) => [root.content, root.state])).toEqual(
      expect.arrayContaining([
        ['<p>Fish &amp; chips &lt;today&gt;</p>', 'QUEUE'],
        ['<p>Second</p>', 'QUEUE'],
        ['<p>An idea for later</p>', 'DRAFT'],
      ]),
    );
    // Without the key, the same file again: the duplicate guard refuses the repeated rows, nothing is created twice.
    const repeated = await herald.rest('POST', '/posts/import', fixed);
    expect(repeated.status).toBe(400);
    expect(repeated.body.message).toMatch(/this text is the same as post/);
    expect((await rootsOf(aliceChannel)).length).toBe(before + 3);
  });

  it('reads wall-clock dates in the zone on each side of a daylight-saving change, and takes an instant with its offset as it is', async () => {
    const response = await herald.rest('POST', '/posts/import', {
      rows: [
        { channel: aliceChannel, date: `${year}-10-15 09:00`, text: 'Before the change' },
        { channel: aliceChannel, date: `${year}-11-15 09:00`, text: 'After the change' },
        { channel: aliceChannel, date: `${year}-11-03T09:00:00-05:00`, text: 'An instant', timeZone: 'UTC' },
      ],
      timeZone: 'America/New_York',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const dates = response.body.rows.map((row: { date: string }) => row.date.slice(11, 16));
    // 09:00 EDT is 13:00 UTC, 09:00 EST 14:00 UTC (daylight-saving time ends on the first Sunday of November).
    expect(dates).toEqual(['13:00', '14:00', '14:00']);
  });

  it('finds a channel by its name only when no other channel has it', async () => {
    await herald.services.orm.em.fork().getConnection().execute('update integration set name = ? where id in (?, ?)', ['Same name', aliceChannel, bobChannel]);
    const response = await herald.rest('POST', '/posts/import', { rows: [{ channel: 'same NAME', date: `${year}-08-01 09:00`, text: 'Which one?' }] });
    expect(response.body.rows[0].problems[0]).toMatch(/2 channels have this name .*use the id/);
    await herald.services.orm.em.fork().getConnection().execute('update integration set name = ? where id = ?', ['Only Bob', bobChannel]);
    const named = await herald.rest('POST', '/posts/import', { rows: [{ channel: 'only bob', date: `${year}-08-01 09:00`, text: 'This one' }] });
    expect(named.body.rows[0]).toMatchObject({ channel: { id: bobChannel }, problems: [] });
  });

  it('refuses a request with neither csv nor rows, or both, and an empty file, with what to send', async () => {
    const neither = await herald.rest('POST', '/posts/import', {});
    expect(neither.status).toBe(400);
    expect(neither.body.message).toMatch(/either as csv .* or as rows/);
    const empty = await herald.rest('POST', '/posts/import', { csv: 'channel,date,text\n' });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/no rows/);
  });
});

describe('importPostsTool (MCP)', () => {
  it('answers the dry run as structured content', async () => {
    const answer: any = await client.callTool({ name: 'importPostsTool', arguments: { rows: [{ channel: aliceChannel, date: `${year}-09-01 09:00`, text: 'From an agent' }], timeZone: 'Europe/Berlin' } });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toMatchObject({ dryRun: true, valid: 1, invalid: 0, rows: [{ row: 1, localDate: `${year}-09-01T09:00:00+02:00`, problems: [] }] });
  });
});
