// The calendar loads no more than it shows (issue 25: a month of 1,000 posts renders in under 200 ms): the number of
// database queries of the month and week views does not grow with the number of posts (an N+1 fails here), and what
// the cells show from the shortened read (the start of each post's content, the chain's status) is what the post list
// would give: the excerpt of the whole content, the summary of a chain that stopped half way. Not timed:
// `npm run bench -- console` measures.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { escapeHtml } from '../src/http/web/html.js';
import { excerpt } from '../src/lib/content.js';

let herald: Herald;
let bluesky: BlueskyFake;
let browser: ConsoleClient;
let channelId: string;

const db = () => herald.services.orm.em.fork().getConnection();

/** Root posts (and later items) written straight to the table: hundreds in a moment. */
async function insertPost(id: string, date: string, content: string, state = 'QUEUE', later: { state: string; error?: string }[] = []): Promise<void> {
  const rows = [{ id, position: 0, state, content, error: null as string | null }, ...later.map((item, index) => ({ id: `${id}-${index + 1}`, position: index + 1, state: item.state, content: 'A reply', error: item.error ?? null }))];
  for (const row of rows) {
    await db().execute(
      `insert into post (id, organization_id, integration_id, group_id, root_post_id, position, content, state, error, publish_date, creation_method, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'API', now(), now())`,
      [row.id, herald.organizationId, channelId, `g-${id}`, id, row.position, row.content, row.state, row.error, date],
    );
  }
}

/** Queries sent to Postgres by this process (the server runs in it) while `run` runs. */
async function queriesOf(run: () => Promise<unknown>): Promise<number> {
  const original = pg.Client.prototype.query;
  let count = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    count++;
    return (original as (...values: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = original;
  }
  return count;
}

async function page(path: string): Promise<string> {
  const answer = await browser.get(path);
  expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  return answer.text;
}

// Long contents: the calendar reads the first 1,000 characters. A start that settles the excerpt; one whose text
// begins after a comment running past the cut (the whole content is read, in one more query for all such posts); a long
// text without markup whose only tag comes after the cut (it is HTML as a whole: its entities are decoded).
const LONG_HTML = `<p>${'Long &amp; careful words about the launch, '.repeat(60)}</p>`;
const COMMENT_FIRST = `<!-- ${'x'.repeat(1200)} --><p>Seen after a long comment &lt;3</p>`;
const LATE_TAG = `Plain words &amp; more ${'a'.repeat(1100)} <b>bold</b>`;

beforeAll(async () => {
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  browser.cookies.set('herald_tz', 'Europe%2FParis');
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  // A quiet month: three posts, one of each long kind.
  await insertPost('quiet-1', '2031-05-06T08:00:00Z', LONG_HTML);
  await insertPost('quiet-2', '2031-05-07T08:00:00Z', COMMENT_FIRST);
  await insertPost('quiet-3', '2031-05-08T08:00:00Z', LATE_TAG, 'DRAFT');
  // A busy month: 300 posts, threads among them, the same long kinds, and a chain that stopped half way.
  for (let index = 0; index < 300; index++) {
    const day = String(1 + (index % 28)).padStart(2, '0');
    const content = index % 50 === 0 ? COMMENT_FIRST : index % 7 === 0 ? LONG_HTML : `<p>Busy post ${index}</p>`;
    await insertPost(`busy-${index}`, `2031-07-${day}T${String(index % 24).padStart(2, '0')}:15:00Z`, content, index % 4 === 0 ? 'PUBLISHED' : 'QUEUE', index % 3 === 0 ? [{ state: index % 4 === 0 ? 'PUBLISHED' : 'QUEUE' }] : []);
  }
  await insertPost('partial', '2031-07-10T10:00:00Z', '<p>Half a thread</p>', 'PUBLISHED', [{ state: 'ERROR', error: 'The platform said no' }, { state: 'ERROR' }]);
}, 120_000);
afterAll(async () => {
  await herald?.stop();
  await bluesky?.close();
});

describe('the calendar reads no more than it shows', () => {
  it('a month of 300 posts takes as many queries as a month of 3, and so do their weeks', async () => {
    // Warm: the first request of a view prepares its statements.
    await page('/calendar?month=2031-05');
    await page('/calendar?month=2031-07');
    let busy = '';
    const quiet = await queriesOf(() => page('/calendar?month=2031-05'));
    const many = await queriesOf(async () => (busy = await page('/calendar?month=2031-07')));
    expect(busy.match(/<li class="entry/g)).toHaveLength(301);
    expect(many).toBe(quiet);
    // A handful, whatever the month holds: the session, the zones, the channels, the customers, the posts, the long contents.
    expect(quiet).toBeLessThanOrEqual(15);
    const quietWeek = await queriesOf(() => page('/calendar?view=week&week=2031-W19'));
    const busyWeek = await queriesOf(() => page('/calendar?view=week&week=2031-W28'));
    expect(busyWeek).toBe(quietWeek);
  });

  it('shows the excerpt of the whole content, however long, and the status of the whole chain', async () => {
    const month = await page('/calendar?month=2031-05');
    const shown = [...month.matchAll(/<span class="excerpt">([^<]*)<\/span>/g)].map((match) => match[1]);
    expect(shown).toEqual([LONG_HTML, COMMENT_FIRST, LATE_TAG].map((content) => escapeHtml(excerpt(content, 60))));
    expect(shown[1]).toBe('Seen after a long comment &lt;3');
    expect(shown[2]).toMatch(/^Plain words &amp; more a+…$/);

    const busy = await page('/calendar?month=2031-07');
    expect(busy).toContain('<h2 id="failed-title">1 post failed</h2>');
    expect(busy).toContain('Published in part: 1 of 3 items went out; item 2 failed: The platform said no; 1 later item was not attempted.');
    expect(busy).toMatch(/<li class="entry failed status-partial"/);
    expect(busy.match(/class="entry status-published"/g)).toHaveLength(75);
  });

  it('leaves out a draft saved without a date (it has no day), and shows a dated draft on its day', async () => {
    const created = await herald.rest('POST', '/posts', { type: 'draft', shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: 'Undated idea for later', image: [] }], settings: {} }] });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const [row] = await db().execute('select publish_date = created_at as undated from post where id = ?', [created.body[0].postId]);
    expect(row.undated).toBe(true);
    await insertPost('dated-draft', '2031-05-20T09:00:00Z', 'Dated draft for May', 'DRAFT');
    const now = new Date();
    const month = await page(`/calendar?month=${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`);
    expect(month).not.toContain('Undated idea for later');
    expect(month).toContain('Drafts saved without a date have no day here');
    expect(await page('/calendar?month=2031-05')).toContain('Dated draft for May');
  });
});
