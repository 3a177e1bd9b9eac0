// The duplicate guard: the same or nearly the same text on the same channel within DUPLICATE_WINDOW_DAYS is refused with
// the earlier post's id and date (REST 400 with details, MCP {errors}), unless the request says allowDuplicate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Herald } from './helpers/harness.js';
import { startWithTwoBlueskyChannels, type TwoChannels } from './helpers/two-bluesky-channels.js';
import { publishUntilSettled } from './helpers/posts.js';
import { comparableText, nearlySame, normalizeLink } from '../tools/internal/duplicates.js';
import { Migration20261127400000 } from '../src/db/migrations/Migration20261127400000.js';

let herald: Herald;
let aliceChannel: string;
let bobChannel: string;
let client: Client;

const DAY = 86400_000;
const at = (days: number) => {
  const date = new Date(Date.now() + days * DAY);
  date.setUTCHours(10, 0, 0, 0);
  return date.toISOString();
};

function create(channel: string, content: string, options: { date?: string; type?: string; allowDuplicate?: boolean } = {}) {
  return herald.rest('POST', '/posts', {
    type: options.type ?? 'schedule',
    date: options.date ?? at(2),
    shortLink: false,
    tags: [],
    ...(options.allowDuplicate !== undefined ? { allowDuplicate: options.allowDuplicate } : {}),
    posts: [{ integration: { id: channel }, value: [{ content, image: [] }], settings: {} }],
  });
}

let setup: TwoChannels | undefined;

beforeAll(async () => {
  setup = await startWithTwoBlueskyChannels('duplicates-test');
  ({ herald, aliceChannel, bobChannel, client } = setup);
});

afterAll(async () => {
  await setup?.stop();
});

describe('the duplicate guard under concurrent requests', () => {
  const rootsWith = async (text: string) =>
    (await herald.services.orm.em.fork().getConnection().execute<{ id: string }[]>('select id from post where content = ? and position = 0 and deleted_at is null', [text])).length;
  const viaRest = (text: string) => create(bobChannel, text, { date: at(2) }).then((response) => response.status);
  const viaMcp = async (text: string) => {
    const socialPost = [{ integrationId: bobChannel, isPremium: false, date: at(2), shortLink: false, type: 'schedule', postsAndComments: [{ content: text, attachments: [] }], settings: [] }];
    const answer: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost } });
    return Array.isArray(answer.structuredContent?.output) ? 200 : 400;
  };

  it.each([
    ['ten over REST', 10, 0],
    ['ten over MCP', 0, 10],
    ['five over REST and five over MCP', 5, 5],
  ])('%s, identical and sent at the same moment, make one post; the others are refused as duplicates', async (_case, rest, mcp) => {
    const text = `<p>Sent together ${rest}/${mcp} ${Date.now()}</p>`;
    const statuses = await Promise.all([...Array.from({ length: rest }, () => viaRest(text)), ...Array.from({ length: mcp }, () => viaMcp(text))]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(rest + mcp - 1);
    expect(await rootsWith(text)).toBe(1);
  });

  it('stores a text with quotes, backslashes and $1 exactly as sent (the guarded write sends its values as literals)', async () => {
    const text = `<p>O'Brien \\ said $1 and $$ '); drop table post; -- ${Date.now()}</p>`;
    expect(await viaRest(text)).toBe(200);
    expect(await rootsWith(text)).toBe(1);
  });

  it('two at once make one post, round after round', async () => {
    for (let round = 0; round < 10; round++) {
      const text = `<p>Two at once, round ${round} ${Date.now()}</p>`;
      await Promise.all([viaRest(text), viaRest(text)]);
      expect(await rootsWith(text), `round ${round}`).toBe(1);
    }
  });

  it('different texts sent together are all created (the guard serialises only the same text on the same channel)', async () => {
    const texts = Array.from({ length: 6 }, (_, index) => `<p>Each its own ${index} ${Date.now()}</p>`);
    expect(await Promise.all(texts.map((text) => viaRest(text)))).toEqual(texts.map(() => 200));
  });
});

describe('text normalisation', () => {
  it('reduces links to host and path without scheme, www, tracking parameters, fragment or trailing slash', () => {
    expect(normalizeLink('https://www.Example.com/launch/?utm_source=x&utm_medium=y&id=3&fbclid=abc#top')).toBe('example.com/launch?id=3');
    expect(normalizeLink('http://example.com/launch')).toBe('example.com/launch');
    expect(normalizeLink('https://example.com/a?b=2&a=1')).toBe('example.com/a?a=1&b=2');
  });

  it('compares what the platform shows: plain text, no styling, lower case, whitespace collapsed', () => {
    expect(comparableText('<p>Big <strong>NEWS</strong>:   read https://www.example.com/launch/?utm_campaign=z.</p>')).toBe('big news: read example.com/launch.');
    expect(comparableText('<p>Big news:</p><p>read <u>http://example.com/launch</u>.</p>')).toBe('big news: read example.com/launch.');
  });

  it('nearly the same means the same letters and digits once punctuation, symbols and emoji are set aside', () => {
    expect(nearlySame('good morning everyone', 'good morning, everyone!')).toEqual({ same: true, exact: false });
    expect(nearlySame('we shipped! 🎉🎉', 'we shipped.')).toEqual({ same: true, exact: false });
    expect(nearlySame('hello', 'hello')).toEqual({ same: true, exact: true });
    // Any other difference is another post: a word, a number of a series, a corrected typo.
    expect(nearlySame('hello', 'hallo').same).toBe(false);
    expect(nearlySame('our launch is on monday', 'our launch is on friday').same).toBe(false);
    expect(nearlySame('day 1 of the 30-day challenge', 'day 2 of the 30-day challenge').same).toBe(false);
    expect(nearlySame('teh quick brown fox', 'the quick brown fox').same).toBe(false);
    expect(nearlySame('🎉', '🚀').same).toBe(false);
  });
});

describe('the duplicate guard', () => {
  let first: string;
  const original = '<p>Big news! Version 2 is out: https://example.com/launch?utm_source=newsletter</p>';

  it('accepts a first post', async () => {
    const response = await create(aliceChannel, original);
    expect(response.status).toBe(200);
    first = response.body[0].postId;
  });

  it.each([
    ['the same text', original, 'the same as'],
    ['other whitespace, case and link form', '<p>big   news!  Version 2 is out:   http://www.example.com/launch/</p>', 'the same as'],
    ['a near-duplicate (punctuation and an emoji)', '<p>Big news 🎉 Version 2 is out! https://example.com/launch</p>', 'nearly the same as'],
  ])('refuses %s on the same channel within the window, naming the earlier post and its date', async (_case, content, how) => {
    const response = await create(aliceChannel, content, { date: at(5) });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_input');
    expect(response.body.message).toBe(
      `Alice (bluesky, id ${aliceChannel}): this text is ${how} post ${first}, scheduled for ${at(2)} on this channel (less than 7 days apart); change the text, or send allowDuplicate: true if posting it again is intended`,
    );
    expect(response.body.details[0].duplicateOf).toEqual({ postId: first, date: at(2), state: 'QUEUE' });
  });

  it('a title setting is part of the text: the same words under another title are another article', async () => {
    const text = `<p>Read the whole story ${Date.now()}</p>`;
    const create = (title: string) =>
      herald.rest('POST', '/posts', { type: 'schedule', date: at(2), shortLink: false, tags: [], posts: [{ integration: { id: bobChannel }, value: [{ content: text, image: [] }], settings: { title } }] });
    expect((await create('Part one')).status).toBe(200);
    expect((await create('Part two')).status).toBe(200);
    expect((await create('Part  one')).status).toBe(400);
  });

  it('accepts a different text, another channel, a date outside the window, and a draft', async () => {
    expect((await create(aliceChannel, '<p>Version 2 is out and it is faster: https://example.com/launch</p>', { date: at(3) })).status).toBe(200);
    expect((await create(bobChannel, original)).status).toBe(200);
    expect((await create(aliceChannel, original, { date: at(10) })).status).toBe(200);
    expect((await create(aliceChannel, original, { type: 'draft' })).status).toBe(200);
  });

  it('lets an intended repetition through with allowDuplicate', async () => {
    expect((await create(aliceChannel, original, { date: at(4), allowDuplicate: true })).status).toBe(200);
  });

  it('refuses over MCP with {errors} naming the earlier post, and accepts with allowDuplicate', async () => {
    const socialPost = [{ integrationId: aliceChannel, isPremium: false, date: at(3), shortLink: false, type: 'schedule', postsAndComments: [{ content: original, attachments: [] }], settings: [] }];
    const refused: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost } });
    expect(refused.structuredContent.output.errors).toMatch(new RegExp(`^Alice \\(bluesky, id ${aliceChannel}\\): this text is the same as post [\\w-]+, scheduled for .* allowDuplicate: true`));
    const allowed: any = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost, allowDuplicate: true } });
    expect(allowed.structuredContent.output).toEqual([{ postId: expect.any(String), integration: aliceChannel }]);
  });

  it('the preview says so as the create would (validatePostTool, POST /posts/validate), and is valid with allowDuplicate', async () => {
    const socialPost = [{ integrationId: aliceChannel, date: at(3), type: 'schedule', postsAndComments: [{ content: original }] }];
    const preview: any = (await client.callTool({ name: 'validatePostTool', arguments: { socialPost } })).structuredContent;
    expect(preview.valid).toBe(false);
    expect(preview.errors).toMatch(/this text is the same as post [\w-]+, scheduled for .* allowDuplicate: true/);
    expect(preview.entries[0]).toMatchObject({ valid: false, problem: expect.stringMatching(/^this text is the same as post/) });
    expect(((await client.callTool({ name: 'validatePostTool', arguments: { socialPost, allowDuplicate: true } })).structuredContent as any).valid).toBe(true);
    const body = { type: 'schedule', date: at(3), shortLink: false, tags: [], posts: [{ integration: { id: aliceChannel }, value: [{ content: original, image: [] }], settings: {} }] };
    const rest = await herald.rest('POST', '/posts/validate', body);
    expect(rest.status).toBe(200);
    expect(rest.body.valid).toBe(false);
    expect((await herald.rest('POST', '/posts/validate', { ...body, allowDuplicate: true })).body.valid).toBe(true);
  });

  it('refuses two entries of one request that repeat each other on the same channel', async () => {
    const text = `<p>Twice in one go ${Date.now()}</p>`;
    const response = await herald.rest('POST', '/posts', {
      type: 'schedule',
      date: at(6),
      shortLink: false,
      tags: [],
      posts: [
        { integration: { id: bobChannel }, value: [{ content: text, image: [] }], settings: {} },
        { integration: { id: bobChannel }, value: [{ content: text, image: [] }], settings: {} },
      ],
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe(`Alice (bluesky, id ${bobChannel}): entry 2 repeats entry 1 of this request on the same channel; change the text, or send allowDuplicate: true if posting it twice is intended`); // both fakes' accounts are named Alice
  });

  it('counts a published post, by the date it went out', async () => {
    const text = `<p>Published already ${Date.now()}</p>`;
    const created = await create(bobChannel, text, { type: 'now' });
    await publishUntilSettled(herald, created.body[0].postId);
    const again = await create(bobChannel, text, { date: at(1) });
    expect(again.status).toBe(400);
    expect(again.body.details[0].duplicateOf).toMatchObject({ postId: created.body[0].postId, state: 'PUBLISHED' });
    expect(again.body.details[0].message).toMatch(/, published on \d{4}-/);
  });

  it('refuses an edit that makes a post repeat another, unless allowDuplicate', async () => {
    const other = await create(aliceChannel, `<p>Something else entirely ${Date.now()}</p>`, { date: at(2) });
    const id = other.body[0].postId;
    const edit = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: original, image: [] }] });
    expect(edit.status).toBe(400);
    expect(edit.body.details[0].duplicateOf.postId).not.toBe(id);
    expect(edit.body.details[0].duplicateOf.state).toBe('QUEUE');
    // A new date is checked too: the first post moved next to intended repetitions of it is refused unless allowDuplicate.
    const later = new Date(Date.parse(at(2)) + 3600_000).toISOString();
    const moved = await herald.rest('PUT', `/posts/${first}`, { date: later });
    expect(moved.status).toBe(400);
    expect(moved.body.details[0].duplicateOf.postId).not.toBe(first);
    expect((await herald.rest('PUT', `/posts/${first}`, { date: later, allowDuplicate: true })).status).toBe(200);
    expect((await herald.rest('PUT', `/posts/${id}`, { value: [{ content: original, image: [] }], allowDuplicate: true })).status).toBe(200);
  });

  it('compares later posts with an edited text, not the text before the edit', async () => {
    const before = `<p>First wording ${Date.now()}</p>`;
    const after = `<p>Second wording ${Date.now()}</p>`;
    const created = await create(bobChannel, before, { date: at(3) });
    const id = created.body[0].postId;
    expect((await herald.rest('PUT', `/posts/${id}`, { value: [{ content: after, image: [] }] })).status).toBe(200);
    expect((await create(bobChannel, before, { date: at(3) })).status).toBe(200);
    const repeat = await create(bobChannel, `${after} `, { date: at(4) });
    expect(repeat.status).toBe(400);
    expect(repeat.body.details[0].duplicateOf.postId).toBe(id);
  });

  it.each([
    ['a zero-width space inside a word', 'Weekly rou\u200Bndup'],
    ['a soft hyphen inside a word', 'Weekly rou\u00ADndup'],
    ['a zero-width joiner inside a word', 'Weekly rou\u200Dndup'],
    ['a word joiner inside a word', 'Weekly rou\u2060ndup'],
    ['a left-to-right mark inside a word', 'Weekly rou\u200Endup'],
    ['a character entity the platform decodes', 'Weekly r&#111;undup'],
    ['a double-encoded entity', 'Weekly r&amp;#111;undup'],
    ['a Cyrillic letter for a Latin one', 'Weekly r\u043Eundup'],
    ['mathematical letters', 'Weekly \u{1D42B}oundup'],
  ])('sees through %s', async (_case, disguise) => {
    const tail = ` number ${Date.now()}${Math.random()}`;
    expect((await create(bobChannel, `Weekly roundup${tail}`, { date: at(20) })).status).toBe(200);
    const repeat = await create(bobChannel, `${disguise}${tail}`, { date: at(21) });
    expect(repeat.status, JSON.stringify(repeat.body)).toBe(400);
    expect(repeat.body.code).toBe('invalid_input');
  });

  it('checks a draft when it is scheduled, and a post when its date moves next to a repetition', async () => {
    const text = `<p>Scheduled later ${Date.now()}</p>`;
    expect((await create(aliceChannel, text, { date: at(30) })).status).toBe(200);
    const draft = await create(aliceChannel, text, { type: 'draft', date: at(31) });
    expect(draft.status).toBe(200);
    const scheduled = await herald.rest('PUT', `/posts/${draft.body[0].postId}/status`, { status: 'schedule' });
    expect(scheduled.status).toBe(400);
    expect(scheduled.body.message).toContain('this text is the same as post');
    expect((await herald.rest('PUT', `/posts/${draft.body[0].postId}/status`, { status: 'schedule', allowDuplicate: true })).status).toBe(200);

    const far = await create(aliceChannel, text, { date: at(50) });
    expect(far.status).toBe(200);
    const moved = await herald.rest('PUT', `/posts/${far.body[0].postId}`, { date: at(32) });
    expect(moved.status).toBe(400);
    expect(moved.body.message).toContain('this text is the same as post');
  });

  it('checks a post waiting for approval again when it is approved', async () => {
    const text = `<p>Waiting for approval ${Date.now()}</p>`;
    const waiting = await create(bobChannel, text, { date: at(40) });
    const id = waiting.body[0].postId;
    const em = herald.services.orm.em.fork();
    // As an agent's post would be: created by the credential that asked for approval (no credential approves its own).
    await em.getConnection().execute(`update post set state = 'AWAITING_APPROVAL', created_by = 'oauth_token:test', approval = ? where root_post_id = ?`, [JSON.stringify({ requestedAt: new Date().toISOString(), via: 'mcp', credentialKind: 'oauth_token', credentialId: 'test' }), id]);
    // Another post with the same text, made due on purpose while the first one waited.
    expect((await create(bobChannel, text, { date: at(41), allowDuplicate: true })).status).toBe(200);
    const approved = await herald.rest('POST', `/posts/${id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(400);
    expect(approved.body.message).toContain('this text is the same as post');
  });

  it('finds a post stored before posts had a duplicate key, once the upgrade keyed it (Migration20261127400000)', async () => {
    const text = `<p>Stored by an older Herald ${Date.now()}</p>`;
    const created = await create(bobChannel, text, { date: at(3) });
    const id = created.body[0].postId;
    const { orm } = herald.services;
    await orm.em.fork().getConnection().execute('update post set duplicate_key = null where id = ?', [id]);
    await new Migration20261127400000(orm.em.getDriver(), orm.config).up();
    const [keyed] = await orm.em.fork().getConnection().execute<{ duplicate_key: string | null }[]>('select duplicate_key from post where id = ?', [id]);
    expect(keyed.duplicate_key).toBeTruthy();
    const repeat = await create(bobChannel, `<p>Stored by an older Herald, ${text.slice(29)}`, { date: at(4) });
    expect(repeat.status).toBe(400);
    expect(repeat.body.details[0].duplicateOf.postId).toBe(id);
    expect(repeat.body.message).toContain('nearly the same as');
  });
});
