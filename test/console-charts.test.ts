// The console's analytics pages (issue 24): a channel's recorded history as tables (the page without JavaScript) that a
// real browser hydrates into uPlot charts (screenshots in test-artifacts/screenshots), a CSV download, and an empty page
// that says why (a platform without an analytics API); a post's metrics since publication from its snapshots, the
// overview comparing channels (one line each, the others listed with the reason), and best times with their evidence
// and the "not enough data" fallback.
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
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { snapshotDueMetrics } from '../tools/internal/metrics-snapshots.js';
import { isoDay } from '../providers/shared.js';
import { chainOf, createPost, publishUntilSettled } from './helpers/posts.js';
import { recordPostSnapshot } from '../tools/internal/metrics-history.js';
import { PostSchema } from '../src/db/entities.js';

const DAY = 86_400_000;
let herald: Herald;
let bluesky: BlueskyFake;
let telegram: TelegramFake;
let mastodon: MastodonFake;
let client: ConsoleClient;
let browser: Browser | undefined;
let blueskyId: string;
let telegramId: string;
let postId: string;
const start = Date.now();

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  bluesky = await startBlueskyFake();
  telegram = await startTelegramFake();
  mastodon = await startMastodonFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  client = new ConsoleClient(herald.url);
  await client.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  expect((await client.submit('/channels/connect/bluesky', '/channels/connect/bluesky', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).location).toBe('/channels?notice=connected');
  expect((await client.submit('/channels/connect/telegram', '/channels/connect/telegram', { botToken: telegram.token, chatId: String(telegram.chat.id) })).location).toBe('/channels?notice=connected');
  expect((await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).status).toBe(200);
  const db = herald.services.orm.em.fork().getConnection();
  blueskyId = (await db.execute(`select id from integration where provider_identifier = 'bluesky'`))[0].id;
  telegramId = (await db.execute(`select id from integration where provider_identifier = 'telegram'`))[0].id;
  // A post published at the start, read 1 day, 2, 3 and 5 days after (the decaying schedule), with 10 more likes a day.
  herald.setNow(new Date(start));
  postId = await createPost(herald, blueskyId, ['A post to chart']);
  expect((await publishUntilSettled(herald, postId)).outcome.kind).toBe('published');
  const uri = (await chainOf(herald, postId))[0].releaseId!;
  // Six days of history: followers 200, 205, … 225.
  for (let day = 0; day <= 5; day++) {
    herald.setNow(new Date(start + day * DAY));
    bluesky.profile.followersCount = 200 + day * 5;
    mastodon.account.followers_count = 40 + day;
    bluesky.setEngagement(uri, { likeCount: day * 10 });
    await snapshotDueMetrics(herald.services);
  }
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
  await telegram?.server.close();
  await mastodon?.close();
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

  it('charts a post since publication, and says why a post has no chart', async () => {
    const page = await client.get(`/posts/${postId}`);
    expect(page.status).toBe(200);
    const likes = /<figure class="metric" id="post-metric-likes"[^>]*>([\s\S]*?)<\/figure>/.exec(page.text);
    expect(likes).not.toBeNull();
    const cells = [...likes![1].matchAll(/<tr><td>(\d{4}-\d{2}-\d{2})<\/td><td>(\d+)<\/td><\/tr>/g)].map((match) => [match[1], Number(match[2])]);
    // One point a day Herald read the post (the last reading of the day), each its likes then.
    const readings = await herald.services.orm.em.fork().getConnection().execute(`select taken_at, value from post_metric_snapshot where post_id = ? and metric = 'likes' order by taken_at`, [postId]);
    expect(readings.length).toBeGreaterThanOrEqual(3);
    expect(cells).toEqual([...new Map(readings.map((row: any) => [isoDay(new Date(row.taken_at)), Number(row.value)]))]);
    expect(cells.every(([day, likes]) => likes === 10 * Math.round((Date.parse(`${day}T00:00:00Z`) - Date.parse(`${isoDay(new Date(start))}T00:00:00Z`)) / DAY))).toBe(true);
    // A post not published yet says so instead of a chart.
    const draft = await createPost(herald, blueskyId, ['Later'], { type: 'draft', date: new Date(start + 9 * DAY) });
    expect((await client.get(`/posts/${draft}`)).text).toMatch(/id="post-metrics-empty">Not published yet/);
  });

  it('compares the channels on one metric, listing those without it with the reason', async () => {
    const page = await client.get('/analytics?metric=followers&days=30');
    expect(page.status).toBe(200);
    // One line per channel with followers (Bluesky and Mastodon), a column each in the table.
    const figure = /<figure class="metric" id="overview-followers" data-labels="([^"]*)"[^>]*>([\s\S]*?)<\/figure>/.exec(page.text);
    expect(figure).not.toBeNull();
    expect(JSON.parse(figure![1].replace(/&quot;/g, '"'))).toEqual(['Alice', 'Herald Test']);
    expect(figure![2]).toContain(`<tr><td>${isoDay(new Date(start + 5 * DAY))}</td><td>225</td><td>45</td></tr>`);
    expect(page.text).toMatch(/<li><strong>[^<]+<\/strong> \(Telegram\): Telegram offers no analytics API/);
    // An unknown metric or period falls back to followers over 30 days.
    expect((await client.get('/analytics?metric=nope&days=7')).text).toContain('id="overview-followers"');
  });

  it('lists the metrics the channels report to choose from, also when none was recorded in the period shown (issue 36)', async () => {
    const options = (text: string) => [...text.matchAll(/<select id="metric" name="metric">([\s\S]*?)<\/select>/g)].flatMap((select) => [...select[1].matchAll(/<option value="([^"]+)"/g)].map((option) => option[1]));
    const listed = options((await client.get('/analytics?days=30')).text);
    expect(listed).toContain('followers');
    expect(listed.length).toBeGreaterThan(1);
    // A metric read only before the period shown (here 200 days ago) is offered too; choosing it says why its chart is empty.
    const db = herald.services.orm.em.fork().getConnection();
    const [{ organization_id: organizationId }] = await db.execute('select organization_id from integration where id = ?', [blueskyId]);
    await db.execute(
      `insert into channel_metric_day (integration_id, organization_id, metric, day, label, value, kind, recorded_at) values (?, ?, 'saves', ?::date, 'Saves', 3, 'total', now())`,
      [blueskyId, organizationId, isoDay(new Date(start - 200 * DAY))],
    );
    try {
      expect(new Set(options((await client.get('/analytics?days=30')).text))).toEqual(new Set([...listed, 'saves']));
      expect((await client.get('/analytics?days=30&metric=saves')).text).toContain('id="why-empty">No metric was recorded for any channel in this period.');
    } finally {
      await db.execute(`delete from channel_metric_day where metric = 'saves'`);
    }
    // With nothing recorded, the page says why there is nothing to choose instead of an empty list.
    await db.execute(`update channel_metric_day set organization_id = 'elsewhere' where organization_id = ?`, [organizationId]);
    try {
      const none = await client.get('/analytics');
      expect(options(none.text)).toEqual([]);
      expect(none.text).toMatch(/id="no-metrics">No metric is recorded yet, so there is nothing to compare: Herald reads each channel/);
    } finally {
      // A background read may have recorded some again meanwhile: those are kept, the moved ones put back.
      await db.execute(`delete from channel_metric_day where organization_id = 'elsewhere' and (integration_id, metric, day) in (select integration_id, metric, day from channel_metric_day where organization_id = ?)`, [organizationId]);
      await db.execute(`update channel_metric_day set organization_id = ? where organization_id = 'elsewhere'`, [organizationId]);
    }
  });

  it('shows best times: the fallback while data is thin, then the suggested slots with their evidence', async () => {
    const thin = await client.get(`/channels/${blueskyId}/best-times`);
    expect(thin.status).toBe(200);
    expect(thin.text).toMatch(/id="best-times-verdict">Not enough data: 1 posts with metrics/);
    // In the channel's zone only: no UTC repetition for a person (issue 36).
    expect(thin.text).toMatch(/id="fallback">Until there is enough data, Herald schedules at the channel's posting times: \d\d:\d\d(, \d\d:\d\d)* \([A-Za-z_/]+\)\.<\/p>/);
    // Twelve more posts, four in each of three weekday-hour slots, read two days after publication.
    const em = herald.services.orm.em.fork();
    const now = herald.services.now().getTime();
    for (const [slot, likes] of [[0, 30], [2, 10], [4, 1]]) {
      for (let week = 1; week <= 4; week++) {
        const at = new Date(now - week * 7 * DAY - slot * 3_600_000);
        const id = await createPost(herald, blueskyId, [`Seeded ${slot}/${week}`], { type: 'draft', date: new Date(now + DAY) });
        await em.nativeUpdate(PostSchema, { id }, { state: 'PUBLISHED', publishedAt: at, publishDate: at, releaseId: `at://seed/${id}` });
        await recordPostSnapshot(em, { id, organizationId: herald.organizationId, integrationId: blueskyId }, [{ label: 'Likes', data: [{ total: String(likes), date: isoDay(at) }], percentageChange: 0 }], new Date(at.getTime() + 2 * DAY));
      }
    }
    const rest = (await herald.rest('GET', `/best-times/${blueskyId}`)).body;
    expect(rest.enoughData).toBe(true);
    const page = await client.get(`/channels/${blueskyId}/best-times`);
    const suggestions = /<table id="suggestions">([\s\S]*?)<\/table>/.exec(page.text)![1];
    const rows = [...suggestions.matchAll(/<tr><td>(\w+)<\/td><td>(\d\d:00)<\/td><td>(\d+)<\/td><td>([\d.]+)<\/td><\/tr>/g)].map((match) => ({ weekday: match[1], hour: match[2], posts: Number(match[3]), medianEngagement: Number(match[4]) }));
    expect(rows).toEqual(rest.suggestions);
    expect(rows[0]).toMatchObject({ posts: 4, medianEngagement: 30 });
    expect(page.text).toContain('<table id="evidence">');
    expect(page.text).not.toContain('id="fallback"');
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
    await page.goto(`/posts/${postId}`);
    await page.waitForSelector('#post-metric-likes .uplot canvas');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-post-analytics.png'), fullPage: true });
    await page.goto('/analytics?metric=followers&days=30');
    await page.waitForSelector('#overview-followers .uplot canvas');
    // Two lines need a legend: uPlot's, next to the chart (the table of numbers stays for screen readers, off screen).
    expect((await page.locator('#overview-followers .u-legend').boundingBox())!.x).toBeGreaterThan(0);
    expect(await page.locator('#overview-followers .u-legend').textContent()).toContain('Herald Test');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-analytics-overview.png'), fullPage: true });
    await page.goto(`/channels/${blueskyId}/best-times`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-best-times.png'), fullPage: true });
    expect(errors).toEqual([]);
  }, 300_000);
});
