// The console's analytics page (issue 24): a channel's recorded history as tables (the page without JavaScript) that a
// real browser hydrates into uPlot charts (screenshots in test-artifacts/screenshots), a CSV download, and an empty page
// that says why (a platform without an analytics API).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { launchBrowser, SCREENSHOT_DIR } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { snapshotDueMetrics } from '../tools/internal/metrics-snapshots.js';
import { isoDay } from '../providers/shared.js';

const DAY = 86_400_000;
let herald: Herald;
let bluesky: BlueskyFake;
let telegram: TelegramFake;
let client: ConsoleClient;
let browser: Browser | undefined;
let blueskyId: string;
let telegramId: string;
const start = Date.now();

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  bluesky = await startBlueskyFake();
  telegram = await startTelegramFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  client = new ConsoleClient(herald.url);
  await client.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  expect((await client.submit('/channels/connect/bluesky', '/channels/connect/bluesky', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).location).toBe('/channels?notice=connected');
  expect((await client.submit('/channels/connect/telegram', '/channels/connect/telegram', { botToken: telegram.token, chatId: String(telegram.chat.id) })).location).toBe('/channels?notice=connected');
  const db = herald.services.orm.em.fork().getConnection();
  blueskyId = (await db.execute(`select id from integration where provider_identifier = 'bluesky'`))[0].id;
  telegramId = (await db.execute(`select id from integration where provider_identifier = 'telegram'`))[0].id;
  // Six days of history: followers 200, 205, … 225.
  for (let day = 0; day <= 5; day++) {
    herald.setNow(new Date(start + day * DAY));
    bluesky.profile.followersCount = 200 + day * 5;
    await snapshotDueMetrics(herald.services);
  }
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
  await telegram?.server.close();
});

describe('console charts', () => {
  it('renders the history as tables without JavaScript, offers the CSV, and says why a channel has none', async () => {
    const page = await client.get(`/channels/${blueskyId}/analytics?days=30`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const followers = /<figure class="metric" id="metric-followers"[^>]*>([\s\S]*?)<\/figure>/.exec(page.text);
    expect(followers).not.toBeNull();
    const cells = [...followers![1].matchAll(/<tr><td>(\d{4}-\d{2}-\d{2})<\/td><td>(\d+)<\/td><\/tr>/g)].map((match) => [match[1], Number(match[2])]);
    expect(cells).toEqual([0, 1, 2, 3, 4, 5].map((day) => [isoDay(new Date(start + day * DAY)), 200 + day * 5]));
    expect(page.text).toContain(`href="/channels/${blueskyId}/analytics.csv?days=30"`);
    expect((await client.get('/channels')).text).toContain(`href="/channels/${blueskyId}/analytics"`);

    const csv = await client.get(`/channels/${blueskyId}/analytics.csv?days=30`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.text.split('\r\n')).toContain(`${isoDay(new Date(start + 5 * DAY))},followers,Followers,225`);

    const empty = await client.get(`/channels/${telegramId}/analytics`);
    expect(empty.status).toBe(200);
    expect(empty.text).toMatch(/id="why-empty">Telegram offers no analytics API/);
    // Another organization's channel is not shown.
    const other = new ConsoleClient(herald.url);
    expect((await other.get(`/channels/${blueskyId}/analytics`)).status).toBe(303);
  });

  it('hydrates the tables into charts in a real browser', async () => {
    browser = await launchBrowser();
    const context = await browser.newContext({ baseURL: herald.url, viewport: { width: 1000, height: 900 } });
    await context.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: herald.url })));
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Every asset of the page loads (the browser's own favicon request aside).
    page.on('response', (response) => void (response.status() >= 400 && !response.url().endsWith('/favicon.ico') && errors.push(`${response.status()} ${response.url()}`)));
    await page.goto(`/channels/${blueskyId}/analytics?days=30`);
    await page.waitForSelector('#metric-followers .uplot canvas');
    expect(await page.locator('figure.charted').count()).toBeGreaterThanOrEqual(3);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-channel-analytics.png'), fullPage: true });
    await page.goto(`/channels/${telegramId}/analytics`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-channel-analytics-empty.png'), fullPage: true });
    expect(errors).toEqual([]);
  }, 300_000);
});
