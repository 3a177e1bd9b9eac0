// The console's Recurring posts page in a real browser (Debian chromium, axe-core: no serious or critical violations,
// screenshots under test-artifacts/screenshots): a recurring post made from the composer the page links to (Repeat under
// When), its occurrences listed at its local time in the person's zone (never UTC), the list's schedule in words, pause
// (its waiting posts removed), resume (made again) and delete.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations, signUpOwner } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';

let herald: Herald;
let bluesky: BlueskyFake;
let browser: Browser;
let page: Page;
let channelId: string;

async function check(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `recurring-${name}.png`), fullPage: true });
  expect(await seriousViolations(page), name).toEqual([]);
}

/** The occurrences table's rows (the header row left out). */
const occurrenceRows = () => page.getByRole('table', { name: /Occurrences/ }).locator('tbody tr');

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  [bluesky, herald] = await Promise.all([startBlueskyFake(), startHerald()]);
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'Asia/Tokyo' })).newPage();
  await signUpOwner(page, herald, { name: 'Rita Owner', email: 'rita@example.com' });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
});

describe('the Recurring posts page', () => {
  it('makes a recurring post from the composer, lists its occurrences in local time, pauses, resumes and deletes', { timeout: 240_000 }, async () => {
    await page.goto('/recurring-posts');
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Recurring' }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByText('No recurring post yet.').isVisible()).toBe(true);
    await check('empty');

    // The page sends the person to the composer, where Repeat makes one.
    await page.getByRole('main').getByRole('link', { name: 'New post', exact: true }).click();
    await page.waitForURL('**/compose');
    await page.getByLabel(/^Alice/).check();
    await page.locator('#content-0').fill('Fresh bread on Mondays and Thursdays');
    await page.getByLabel(/^Repeat this post/).check();
    await page.getByLabel('Monday').check();
    await page.getByLabel('Thursday').check();
    await page.getByLabel(/^At \(HH:MM/).fill('09:00');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();

    await page.waitForURL(/\/recurring-posts\/[^/?]+\?notice=created/);
    expect(await page.getByRole('status').textContent()).toContain('Recurring post made');
    expect(await page.getByText('Every week on Monday and Thursday at 09:00 (Asia/Tokyo)').isVisible()).toBe(true);
    // Four occurrences fall within the 14 days made ahead (any 14 days hold two Mondays and two Thursdays), each an
    // ordinary post waiting in the queue, at 09:00 on Tokyo's clock, shown in the person's zone.
    expect(await occurrenceRows().count()).toBe(4);
    for (const row of await occurrenceRows().all()) {
      expect(await row.locator('td').first().textContent()).toMatch(/ 09:00 GMT\+9$/);
      expect(await row.getByRole('link', { name: 'queue' }).isVisible()).toBe(true);
    }
    // The next post is the soonest occurrence waiting (the earliest row), not the next one to make after them.
    const earliest = await occurrenceRows().last().locator('td').first().textContent();
    expect(await page.locator('dt:has-text("Next post") + dd').textContent()).toBe(earliest);
    const rulePath = new URL(page.url()).pathname;
    await check('created');

    await page.goto('/recurring-posts');
    const row = page.getByRole('row', { name: /Fresh bread/ });
    expect(await row.getByRole('cell', { name: 'Every week on Monday and Thursday at 09:00 (Asia/Tokyo)' }).isVisible()).toBe(true);
    expect(await row.getByText('Active').isVisible()).toBe(true);
    expect(await row.getByRole('cell', { name: / 09:00 GMT\+9$/ }).isVisible()).toBe(true);
    await check('list');

    await page.goto(rulePath);
    await page.getByRole('button', { name: /^Pause/ }).click();
    await page.waitForURL(`**${rulePath}?notice=paused`);
    expect(await page.getByRole('status').textContent()).toContain('Paused');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Paused');
    expect(await page.locator('dt:has-text("Next post") + dd').textContent()).toBe('None waiting');
    // Its waiting posts were removed: none is left in the queue.
    expect(await page.getByRole('table', { name: /Occurrences/ }).getByRole('link', { name: 'queue' }).count()).toBe(0);
    await check('paused');

    await page.getByRole('button', { name: /^Resume/ }).click();
    await page.waitForURL(`**${rulePath}?notice=resumed`);
    expect(await page.getByRole('status').textContent()).toContain('Resumed');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Active');
    expect(await page.getByRole('table', { name: /Occurrences/ }).getByRole('link', { name: 'queue' }).count()).toBeGreaterThan(0);
    await check('resumed');

    await page.getByRole('button', { name: /^Delete/ }).click();
    await page.waitForURL('**/recurring-posts?notice=deleted');
    expect(await page.getByRole('status').textContent()).toContain('Recurring post deleted');
    expect(await page.getByText('No recurring post yet.').isVisible()).toBe(true);
  });

  it('an ended rule (every occurrence made) says so, and its delete can keep the posts still waiting', { timeout: 120_000 }, async () => {
    const created = await herald.rest('POST', '/recurring-posts', { channel: channelId, content: 'Twice only', every: 'day', time: '10:00', timeZone: 'Asia/Tokyo', count: 2 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await page.goto(`/recurring-posts/${created.body.id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Ended');
    expect(await page.locator('dt:has-text("Next to make") + dd').textContent()).toBe('None: every occurrence is made');
    expect(await occurrenceRows().count()).toBe(2);
    expect(await page.getByRole('button', { name: /^Pause/ }).count()).toBe(0);
    await check('ended');

    const posts = await page.getByRole('table', { name: /Occurrences/ }).getByRole('link', { name: 'queue' }).evaluateAll((links) => links.map((link) => link.getAttribute('href')!));
    expect(posts).toHaveLength(2);
    await page.getByLabel('keep its waiting posts').check();
    await page.getByRole('button', { name: /^Delete/ }).click();
    await page.waitForURL('**/recurring-posts?notice=deleted');
    expect(await page.getByText('No recurring post yet.').isVisible()).toBe(true);
    // Its waiting posts stay, ordinary posts now.
    for (const post of posts) expect((await page.goto(post))?.status(), post).toBe(200);
  });
});
