// A person writes a post in the console, in a real browser (Debian chromium, headless) whose zone is New York: a thread
// for two channels (Bluesky and Mastodon fakes) with a picture dropped on the first item, the live preview refusing a
// text too long for Bluesky, scheduled at 09:00 New York time on the day after the next daylight-saving change, dragged
// to another day on the calendar (and moved with the keyboard across the change), then moved a few seconds ahead with
// the plain form and watched: the platform receives it at that instant, not before. Screenshots in test-artifacts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations, signUpOwner } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { acceptedSamples } from './helpers/media-samples.js';
import { waitFor } from './helpers/posts.js';

const ZONE = 'America/New_York';
let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let browser: Browser;
let page: Page;
let blueskyId: string;
let mastodonId: string;
const db = () => herald.services.orm.em.fork().getConnection();

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `compose-${name}.png`), fullPage: true });
}

/** Read with Intl alone (not Herald's code): the wall-clock date and time of an instant in New York, and its offset. */
function newYork(instant: Date): { date: string; time: string; offset: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: ZONE, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'longOffset' })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}:${parts.second}`, offset: parts.timeZoneName };
}

/** The first New York day on the other side of the next daylight-saving change (its noon is past it), as YYYY-MM-DD, and the offsets before and after. */
function dayAfterNextChange(): { day: string; before: string; after: string } {
  const noon = (days: number) => new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 17 * 3_600_000 + days * 86_400_000);
  const today = newYork(noon(1)).offset;
  for (let days = 2; days < 400; days++) {
    const reading = newYork(noon(days));
    if (reading.offset !== today) return { day: reading.date, before: today, after: reading.offset };
  }
  throw new Error('no daylight-saving change in New York within a year');
}

const storedDates = async () =>
  Object.fromEntries(
    (await db().execute('select integration_id, publish_date from post where position = 0 and deleted_at is null')).map((row: any) => [row.integration_id, new Date(row.publish_date)]),
  );

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  [bluesky, mastodon] = await Promise.all([startBlueskyFake(), startMastodonFake()]);
  herald = await startHerald();
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: ZONE, viewport: { width: 1280, height: 900 } })).newPage();
  blueskyId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  mastodonId = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id;
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
  await mastodon?.close();
});

describe('composing, scheduling and moving a post in the console', () => {
  const change = dayAfterNextChange();

  it('signs up; the console takes the browser\'s zone', async () => {
    await signUpOwner(page, herald, { name: 'Nora Founder', email: 'nora@example.com' });
    await page.getByRole('link', { name: 'New post' }).first().click();
    await page.waitForURL('**/compose');
    expect(await page.locator('.zone-note').textContent()).toContain(`Times are in ${ZONE} (your browser's zone)`);
  });

  it('writes a thread for two channels; the live preview refuses a text too long for Bluesky and accepts it for Mastodon', { timeout: 120_000 }, async () => {
    await page.getByLabel(/^Alice/).check();
    await page.getByLabel(/^Herald Test/).check();
    const long = `${'Spring is coming to the bakery. '.repeat(11)}`.trim();
    await page.locator('#content-0').fill(long);
    const bluesky = page.getByRole('region', { name: 'Preview for Alice' });
    await bluesky.getByText('too long').waitFor();
    expect(await bluesky.locator('.length').textContent()).toMatch(/^\d+ \/ 300 graphemes/);
    expect(await page.getByRole('region', { name: 'Preview for Herald Test' }).locator('.length.over').count()).toBe(0);
    expect(await page.locator('.preview-verdict').textContent()).toContain('Not ready');
    await shot('too-long');

    await page.locator('#content-0').fill('Spring is here: fresh bread from 9:00 every morning 🥖');
    await page.locator('.preview-verdict', { hasText: 'Ready: every channel accepts this post.' }).waitFor();
    await page.getByRole('button', { name: 'Add a thread item or comment' }).click();
    await page.locator('#content-1').waitFor();
    expect(await page.locator('#content-0').inputValue()).toContain('Spring is here');
    await page.locator('#content-1').fill('Pre-order online, pick up in the shop.');
    // Mastodon's own words for item 1.
    await page.getByText('Herald Test (Mastodon): its own text and settings').click();
    await page.getByLabel('Text for Herald Test only').or(page.getByLabel('Item 1 for Herald Test only')).fill('Spring is here, fediverse friends: fresh bread from 9:00 🥖');
  });

  it('drops a picture on the first item: uploaded to the library, accepted by both platforms', { timeout: 120_000 }, async () => {
    const bytes = Buffer.from(acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes).toString('base64');
    const transfer = await page.evaluateHandle((data) => {
      const transfer = new DataTransfer();
      const binary = Uint8Array.from(atob(data), (character) => character.charCodeAt(0));
      transfer.items.add(new File([binary], 'bread.png', { type: 'image/png' }));
      return transfer;
    }, bytes);
    const dropzone = page.locator('.dropzone[data-item="0"]');
    await dropzone.dispatchEvent('dragover', { dataTransfer: transfer });
    await dropzone.dispatchEvent('drop', { dataTransfer: transfer });
    await dropzone.locator('input[name="media-0"]:checked').waitFor();
    expect(await dropzone.locator('.media-choice').textContent()).toContain('bread.png (picture)');
    await page.getByRole('region', { name: 'Preview for Alice' }).locator('.preview-media li.accepted').waitFor();
    expect(await page.getByRole('region', { name: 'Preview for Herald Test' }).locator('.preview-media li.accepted').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await shot('ready');
  });

  it('schedules it at 09:00 New York time on the day after the daylight-saving change', async () => {
    await page.getByLabel('Date and time', { exact: true }).fill(`${change.day}T09:00`);
    expect(await page.getByLabel('Time zone of the date').inputValue()).toBe(ZONE);
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.waitForURL(/\/posts\/[\w-]+\?notice=created/);
    expect(await page.getByRole('status').first().textContent()).toContain('Created.');
    const dates = await storedDates();
    for (const id of [blueskyId, mastodonId]) {
      expect(newYork(dates[id])).toEqual({ date: change.day, time: '09:00:00', offset: change.after });
    }
    expect(await page.locator('main').textContent()).toContain(`${change.day} 09:00`);
    const chain = await db().execute('select integration_id, position, content, media from post order by integration_id, position');
    expect(chain).toHaveLength(4);
    expect(chain.filter((row: any) => row.integration_id === mastodonId)[0].content).toContain('fediverse friends');
    expect(chain.filter((row: any) => row.position === 0).every((row: any) => row.media.length === 1)).toBe(true);
    await shot('created');
  });

  it('drags the Bluesky post to the next day on the calendar, and moves Mastodon\'s with Alt+Left back across the change', { timeout: 120_000 }, async () => {
    // Tall enough for the whole month: a drag ends on a cell in view, as a person's does.
    await page.setViewportSize({ width: 1280, height: 1600 });
    await page.goto(`/calendar?month=${change.day.slice(0, 7)}`);
    const entry = page.locator(`li[data-post]`, { hasText: 'Alice' });
    const next = new Date(Date.parse(`${change.day}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    await shot('calendar-before');
    // A drag with several moves, as a hand makes it: the drop target sees dragover before the drop.
    await entry.dragTo(page.locator(`td[data-date="${next}"]`), { steps: 12 });
    await page.waitForURL(/notice=moved/);
    expect(newYork((await storedDates())[blueskyId])).toEqual({ date: next, time: '09:00:00', offset: change.after });
    expect(await page.locator(`td[data-date="${next}"]`).textContent()).toContain('Alice');

    // Two days earlier: before the change, still 09:00 on the New York clock (the UTC hour moves).
    const link = page.locator('li[data-post]', { hasText: 'Herald Test' }).locator('a').first();
    await link.focus();
    await page.keyboard.press('Alt+ArrowLeft');
    await page.waitForURL(/focus=/);
    await page.locator('li[data-post]', { hasText: 'Herald Test' }).locator('a').first().focus();
    await page.keyboard.press('Alt+ArrowLeft');
    await waitFor(async () => {
      const reading = newYork((await storedDates())[mastodonId]);
      return reading.date !== change.day && reading.offset === change.before ? reading : undefined;
    });
    expect(newYork((await storedDates())[mastodonId])).toMatchObject({ time: '09:00:00', offset: change.before });
    await page.waitForLoadState();
    await shot('calendar-after');
  });

  it('moves the Bluesky post a few seconds ahead with the plain form; the platform receives the thread at that instant, not before', { timeout: 120_000 }, async () => {
    const worker = await herald.startWorker();
    try {
      const target = new Date(Math.ceil((Date.now() + 20_000) / 1000) * 1000);
      const local = newYork(target);
      await page.goto(`/calendar?month=${change.day.slice(0, 7)}`);
      await page.locator('li[data-post]', { hasText: 'Alice' }).getByRole('link', { name: /^Move/ }).click();
      await page.getByLabel('New date').fill(local.date);
      await page.getByLabel('Time', { exact: true }).fill(local.time);
      await page.getByRole('button', { name: 'Move' }).click();
      await page.waitForURL(/notice=moved/);
      expect((await storedDates())[blueskyId].toISOString()).toBe(target.toISOString());
      // Nothing goes out before its time...
      while (Date.now() < target.getTime() - 1500) {
        expect(bluesky.records).toHaveLength(0);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      // ...and the thread goes out at it: the post, then the reply, with the picture.
      await waitFor(async () => (bluesky.records.length >= 2 ? true : undefined), 30_000);
      const [root, reply] = bluesky.records;
      const arrived = Date.parse(root.indexedAt);
      expect(arrived).toBeGreaterThanOrEqual(target.getTime());
      expect(arrived - target.getTime()).toBeLessThan(10_000);
      expect(root.record.text).toBe('Spring is here: fresh bread from 9:00 every morning 🥖');
      expect(root.record.embed.images).toHaveLength(1);
      expect(reply.record.text).toBe('Pre-order online, pick up in the shop.');
      expect(reply.record.reply.parent.uri).toBe(root.uri);
      // Mastodon's post keeps its own date.
      expect(mastodon.statuses).toHaveLength(0);
      await page.goto(`/posts/${(await db().execute('select id from post where integration_id = ? and position = 0', [blueskyId]))[0].id}`);
      await page.getByText('Published', { exact: true }).first().waitFor();
      await shot('published');
    } finally {
      await worker.stop();
    }
  });
});
