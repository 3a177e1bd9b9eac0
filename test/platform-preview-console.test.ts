// The console's composer preview and a post's page draw each post as its platform shows it (platform-preview.ts), in a
// real browser (Debian chromium): a bold Telegram post shows bold, not its tags; LinkedIn names the bold it cannot show;
// both pages axe clean. Screenshots in test-artifacts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations, signUpOwner } from './helpers/browser.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { findProvider } from '../providers/index.js';
import { saveConnectedAccount } from '../tools/internal/integrations.js';

let herald: Herald;
let telegram: TelegramFake;
let browser: Browser;
let page: Page;

const shot = (name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, `platform-preview-${name}.png`), fullPage: true });

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  telegram = await startTelegramFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const connected = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  await saveConnectedAccount(herald.services.orm.em.fork(), herald.services, herald.organizationId, findProvider('linkedin')!, {
    internalId: 'linkedin-1', name: 'Bakery on LinkedIn', profile: 'bakery', accessToken: 'token', refreshToken: 'refresh',
  });
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 } })).newPage();
  await signUpOwner(page, herald, { name: 'Nora Founder', email: 'nora@example.com' });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await telegram?.close();
});

describe('the console draws each platform\'s post', () => {
  it('the composer\'s live preview shows a bold Telegram post bold, not its tags, and names LinkedIn\'s missing bold', { timeout: 120_000 }, async () => {
    await page.goto('/compose');
    for (const box of await page.locator('input[type="checkbox"][name="channel"]').all()) await box.check();
    await page.locator('#content-0').fill('<p><strong>Release day.</strong> Fish & chips</p>');
    const drawn = page.locator('.pp-telegram');
    await drawn.locator('strong', { hasText: 'Release day.' }).waitFor();
    const text = await drawn.locator('.pp-text').textContent();
    expect(text).toBe('Release day. Fish & chips');
    expect(await drawn.locator('.pp-text').innerHTML()).toContain('<strong>Release day.</strong>');
    expect(await drawn.getByText('<strong>').count()).toBe(0);
    // Bold is drawn with the weight Telegram gives it.
    expect(Number(await drawn.locator('.pp-text strong').evaluate((element) => getComputedStyle(element).fontWeight))).toBeGreaterThanOrEqual(600);
    await page.locator('.pp-linkedin').getByText('LinkedIn shows no bold: sent as Unicode bold letters').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await shot('compose');
  });

  it('a post\'s page draws the stored post the same way', { timeout: 120_000 }, async () => {
    const channels = (await herald.rest('GET', '/integrations')).body as { id: string; identifier: string }[];
    const telegramId = channels.find((channel) => channel.identifier === 'telegram')!.id;
    const created = await herald.rest('POST', '/posts', {
      type: 'schedule', date: new Date(Date.now() + 3 * 86_400_000).toISOString(), shortLink: false, tags: [],
      posts: [{ integration: { id: telegramId }, value: [{ content: '<p><strong>Stored bold</strong> &amp; more</p>', image: [] }], settings: {} }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const postId = (created.body as { postId: string }[])[0].postId;
    await page.goto(`/posts/${postId}`);
    const drawn = page.locator('.pp-telegram');
    expect(await drawn.locator('.pp-text strong').textContent()).toBe('Stored bold');
    expect(await drawn.locator('.pp-text').textContent()).toBe('Stored bold & more');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('post-page');
  });
});
