// Issue 36's "Done when", walked in a real browser (Debian chromium, the console's script on) by a social media manager in
// Berlin: a post created in the composer as a draft without a date, reviewed, corrected in the same composer, scheduled,
// rescheduled, duplicated, published now and deleted (on the platform too), never typing HTML or JSON; every page read
// in Berlin time, none showing a UTC time. The fake Mastodon is what proves what went out and what was deleted there.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, signUpOwner } from './helpers/browser.js';
import { utcTimes } from './helpers/local-time.js';
import { waitFor, waitForPublished } from './helpers/posts.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';

let herald: Herald;
let mastodon: MastodonFake;
let browser: Browser;
let page: Page;
let channelId: string;
const ids: Record<string, string> = {};
const db = () => herald.services.orm.em.fork().getConnection();
const row = async (id: string) => (await db().execute('select state, content, publish_date, deleted_at from post where id = ?', [id]))[0];
const postIdOf = (url: string) => /\/posts\/([^/?#]+)/.exec(url)![1];

/** The page as the person sees it: a screenshot, and no time in UTC. */
async function seen(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `walk-${name}.png`), fullPage: true });
  expect(await utcTimes(page), `${name} shows a UTC time`).toEqual([]);
}

/** Composes a text the way a person types it: Enter for a new line. */
async function type(text: string): Promise<void> {
  const lines = text.split('\n');
  await page.locator('#content-0').fill('');
  for (const [index, line] of lines.entries()) {
    if (index > 0) await page.locator('#content-0').press('Enter');
    await page.locator('#content-0').pressSequentially(line);
  }
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  [mastodon, herald] = await Promise.all([startMastodonFake(), startHerald()]);
  await herald.startWorker();
  expect((await herald.rest('PUT', '/time-zone', { timeZone: 'Europe/Berlin' })).status).toBe(200);
  channelId = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id;
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'Europe/Berlin' })).newPage();
  await signUpOwner(page, herald, { name: 'Mia Manager', email: 'mia@example.com' });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await mastodon?.close();
});

describe('a person reviews and fixes a post in the console, in Berlin time', () => {
  it('creates a draft without a date in the composer: it takes no posting slot', { timeout: 120_000 }, async () => {
    const slotBefore = (await herald.rest('GET', `/find-slot/${channelId}`)).body.date;
    await page.goto('/compose');
    await page.locator(`#channel-${channelId}`).check();
    await type('Bakery news & more <3');
    await page.locator('#preview').getByText('Bakery news & more <3').first().waitFor();
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await page.waitForURL(/\/posts\/[^/]+\?notice=created$/);
    ids.draft = postIdOf(page.url());
    expect(await row(ids.draft)).toMatchObject({ state: 'DRAFT' });
    expect((await herald.rest('GET', `/find-slot/${channelId}`)).body.date).toBe(slotBefore);
    expect(await page.getByText('no date yet: it takes no posting slot until it is scheduled').isVisible()).toBe(true);
    // What was typed, as typed: not `&amp;`, and `<3` is text.
    expect(await page.locator('main').innerText()).toContain('Bakery news & more <3');
    expect(await page.locator('main').innerText()).not.toContain('&amp;');
    await seen('draft');
  });

  it('corrects it in the same composer, with no HTML or JSON to type; the line break typed is the one stored', { timeout: 120_000 }, async () => {
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.waitForURL(`**/posts/${ids.draft}/edit`);
    expect(await page.locator('#content-0').inputValue()).toBe('Bakery news & more <3');
    expect(await page.locator('textarea.code, [name*="json" i], [name="settings"]').count()).toBe(0);
    await type('Bakery news & more\nOpen on Sunday');
    await page.locator('#preview').getByText('Open on Sunday').first().waitFor();
    await seen('edit');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(`**/posts/${ids.draft}?notice=saved`);
    expect((await row(ids.draft)).content).toBe('Bakery news & more\nOpen on Sunday');
    expect(await page.getByText('no date yet').isVisible()).toBe(true);
  });

  it('schedules the draft at 09:30 Berlin time, then reschedules it to the next day at 10:15', { timeout: 120_000 }, async () => {
    const form = page.locator('form.schedule-draft');
    await form.getByLabel('Date and time').fill('2030-07-01T09:30');
    expect(await form.getByLabel('Time zone of the date').inputValue()).toBe('Europe/Berlin');
    await form.getByRole('button', { name: 'Schedule' }).click();
    await page.waitForURL(`**/posts/${ids.draft}?notice=scheduled`);
    expect(await row(ids.draft)).toMatchObject({ state: 'QUEUE', publish_date: new Date('2030-07-01T07:30:00.000Z') });
    expect(await page.locator('main time').first().textContent()).toBe('2030-07-01 09:30 GMT+2');
    await seen('scheduled');

    await page.getByRole('link', { name: 'Move to another date' }).click();
    await page.getByLabel('New date').fill('2030-07-02');
    await page.getByLabel('Time', { exact: true }).fill('10:15');
    await seen('move');
    await page.getByRole('button', { name: 'Move' }).click();
    await page.waitForURL(`**/posts/${ids.draft}?notice=moved`);
    expect((await row(ids.draft)).publish_date).toEqual(new Date('2030-07-02T08:15:00.000Z'));
    expect(await page.locator('main time').first().textContent()).toBe('2030-07-02 10:15 GMT+2');
  });

  it('the same text again next to it is refused, naming the other post\'s time in Berlin time', { timeout: 120_000 }, async () => {
    await page.goto('/compose');
    await page.locator(`#channel-${channelId}`).check();
    await type('Bakery news & more\nOpen on Sunday');
    await page.locator('#date').fill('2030-07-02T11:00');
    // The preview says when it is to go out (it said "Published" of a date to come).
    await page.locator('#preview').getByText('To be published 2030-07-02 11:00 GMT+2').waitFor();
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    const refusal = page.getByRole('alert').filter({ hasText: `post ${ids.draft}` });
    await refusal.waitFor();
    expect(await refusal.innerText()).toContain('2030-07-02 10:15 GMT+2');
    // In the form's words: the box to tick, not the API's field.
    expect(await refusal.innerText()).toContain('tick "Posting this text again on purpose" if posting it again is intended. Nothing was created: fix what is named and send the form again.');
    await seen('duplicate-refused');
    await page.getByLabel('Posting this text again on purpose (allows a near-duplicate)').check();
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await page.waitForURL(/\/posts\/[^/]+\?notice=created$/);
    const again = postIdOf(page.url());
    expect(again).not.toBe(ids.draft);
    expect((await herald.rest('DELETE', `/posts/${again}`)).status).toBe(200);
  });

  it('duplicates it from the Posts list into a new draft, and publishes that one now from the drafts list: it goes out to Mastodon', { timeout: 120_000 }, async () => {
    await page.goto('/posts?from=2030-07-01&to=2030-07-03');
    const listed = page.getByRole('row').filter({ hasText: 'Bakery news & more Open on Sunday' });
    expect(await listed.count()).toBe(1);
    await seen('posts-range');
    await listed.getByRole('link', { name: 'Duplicate' }).click();
    await page.waitForURL(`**/compose?duplicate=${ids.draft}`);
    expect(await page.locator('#content-0').inputValue()).toBe('Bakery news & more\nOpen on Sunday');
    expect(await page.locator(`#channel-${channelId}`).isChecked()).toBe(true);
    await type('Bakery news & more\nOpen on Sunday, and Monday too');
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await page.waitForURL(/\/posts\/[^/]+\?notice=created$/);
    ids.copy = postIdOf(page.url());
    expect(ids.copy).not.toBe(ids.draft);
    expect((await row(ids.draft)).state).toBe('QUEUE');

    // 100 local days that cross the autumn change are 100 days and an hour: the list still shows them (it was refused).
    expect((await page.goto('/posts?from=2026-10-01&to=2027-01-08'))?.status()).toBe(200);
    expect(await page.getByRole('heading', { name: 'Posts, 2026-10-01 to 2027-01-08' }).isVisible()).toBe(true);
    await page.goto('/posts');
    await page.getByRole('link', { name: 'Drafts', exact: true }).click();
    await page.getByRole('heading', { name: /^Drafts, / }).waitFor();
    await seen('drafts');
    const copyRow = page.getByRole('row').filter({ hasText: 'and Monday too' });
    // Saved without a date: listed on the day it was saved, and saying it has none.
    expect(await copyRow.getByRole('cell').first().innerText()).toMatch(/^No date \(saved \d{4}-\d{2}-\d{2} \d{2}:\d{2} GMT\+1\)$/);
    await copyRow.getByRole('button', { name: 'Publish now' }).click();
    await page.waitForURL(`**/posts/${ids.copy}?notice=published-now`);
    await waitForPublished(herald, ids.copy);
    expect(mastodon.statuses.at(-1)!.status).toBe('Bakery news & more\nOpen on Sunday, and Monday too');
    await page.reload();
    await page.getByRole('link', { name: 'View on Mastodon' }).first().waitFor();
    await seen('published');
  });

  it('deletes the published post on Mastodon too, after saying what that does; then the scheduled one', { timeout: 120_000 }, async () => {
    const form = page.locator('form.delete-post');
    expect(await form.getByText('Keep it on Mastodon: Herald forgets it').isVisible()).toBe(true);
    await form.getByLabel('Delete it on Mastodon too (1 published item)').check();
    await form.getByLabel('I understand: delete it').check();
    await form.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL('**/posts?notice=deleting-on-platform');
    await seen('deleting');
    const deleted = await waitFor(async () => mastodon.deleted.at(-1));
    expect(deleted.status).toBe('Bakery news & more\nOpen on Sunday, and Monday too');

    await page.goto(`/posts/${ids.draft}`);
    expect(await page.getByText('Nothing of it went out: it will not be published.').isVisible()).toBe(true);
    await page.locator('form.delete-post').getByLabel('I understand: delete it').check();
    await page.locator('form.delete-post').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL('**/posts?notice=deleted');
    expect((await row(ids.draft)).deleted_at).not.toBeNull();
    await seen('deleted');
  });
});
