// The console's Feeds page in a real browser (Debian chromium, axe-core: no serious or critical violations, screenshots
// under test-artifacts/screenshots): add a feed with its channels, template and mode, see its entries and the posts made
// from a new one, the reason a failing feed gives (in the person's zone, never UTC), pause, resume and delete; a refused
// URL shown on the form with what was typed kept.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations, signUpOwner } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startFeedFake, type FeedFake } from './fakes/feed-server.js';

let herald: Herald;
let blog: FeedFake;
let bluesky: BlueskyFake;
let browser: Browser;
let page: Page;

async function check(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `feeds-${name}.png`), fullPage: true });
  expect(await seriousViolations(page), name).toEqual([]);
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const day = 86_400_000;
  [blog, bluesky] = await Promise.all([
    startFeedFake([
      { guid: 'b', title: 'Second <post>', link: '/posts/2', html: '<p>Two</p>', published: new Date(Date.now() - day) },
      { guid: 'a', title: 'First post', link: '/posts/1', html: '<p>One</p>', published: new Date(Date.now() - 2 * day) },
    ]),
    startBlueskyFake(),
  ]);
  herald = await startHerald();
  await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'Asia/Tokyo' })).newPage();
  await signUpOwner(page, herald, { name: 'Olivia Owner', email: 'olivia@example.com' });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await Promise.all([blog?.close(), bluesky?.close()]);
});

describe('the Feeds page', () => {
  it('adds a feed, shows its entries and posts, its failure in local time, pauses, resumes and deletes', { timeout: 240_000 }, async () => {
    await page.goto('/feeds');
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Feeds' }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByText('No feed yet.').isVisible()).toBe(true);
    await check('empty');

    // A web page instead of a feed: refused on the form, what was typed kept.
    blog.server.on('GET', '/', () => ({ headers: { 'content-type': 'text/html' }, body: '<!doctype html><html><body>Blog</body></html>' }));
    await page.getByLabel('Feed URL').fill(`${blog.url}/`);
    await page.getByLabel(/^Alice/).check();
    await page.getByRole('button', { name: 'Add feed' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('not an RSS or Atom feed');
    expect(await page.getByLabel('Feed URL').inputValue()).toBe(`${blog.url}/`);
    expect(await page.getByLabel(/^Alice/).isChecked()).toBe(true);
    await check('refused');

    await page.getByLabel('Feed URL').fill(`${blog.url}/rss.xml`);
    await page.getByLabel('Template').fill('New: {title}\n{link}');
    await page.getByLabel(/posts scheduled into/).check();
    await page.getByRole('button', { name: 'Add feed' }).click();
    await page.waitForURL(/\/feeds\/[^/?]+\?notice=added/);
    expect(await page.getByRole('status').textContent()).toContain('Feed added');
    expect(await page.getByRole('cell', { name: 'Second <post>' }).isVisible()).toBe(true);
    expect(await page.getByText('Already there when added').count()).toBe(2);
    const feedUrl = new URL(page.url()).pathname;

    blog.items.unshift({ guid: 'c', title: 'Third & last', link: '/posts/3', published: new Date() });
    await page.getByRole('button', { name: 'Check now' }).click();
    await page.waitForURL(`**${feedUrl}`);
    expect(await page.getByRole('cell', { name: 'Third & last' }).isVisible()).toBe(true);
    // The new entry's post, linked from its row (the page's navigation also has links naming posts).
    expect(await page.getByRole('table', { name: 'Latest entries' }).getByRole('link', { name: 'post', exact: true }).count()).toBe(1);
    await check('feed');

    blog.server.failNext('GET', '/rss.xml', { status: 500, body: '' });
    await page.getByRole('button', { name: 'Check now' }).click();
    await page.waitForURL(`**${feedUrl}`);
    expect(await page.getByRole('heading', { name: 'Why it fails' }).isVisible()).toBe(true);
    expect(await page.getByText(/answered HTTP 500/).first().isVisible()).toBe(true);
    // Times in the person's (browser's) zone: Tokyo's, never UTC.
    const failingSince = await page.locator('#feed-error ~ p time').first().textContent();
    expect(failingSince).toMatch(/GMT\+9$/);
    await check('failing');
    await page.goto('/feeds');
    expect(await page.getByRole('cell', { name: /Failing/ }).isVisible()).toBe(true);
    await check('list');

    await page.goto(feedUrl);
    await page.getByRole('button', { name: 'Pause' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Feed paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Feed resumed');
    await page.getByLabel(/stop this feed/).check();
    await page.getByRole('button', { name: 'Delete feed' }).click();
    await page.waitForURL('**/feeds?notice=deleted');
    expect(await page.getByText('No feed yet.').isVisible()).toBe(true);
  });
});
