// Connecting a Facebook Page in the console, in a real browser (Debian chromium): the channels page, Facebook Login on the
// fake Meta platform (which approves at once and redirects back), Herald's page picker, and the channel listed as active.
// Screenshots are saved under test-artifacts/screenshots.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { IntegrationSchema } from '../src/db/entities.js';
import { channelAuth } from '../tools/internal/integrations.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { launchBrowser, SCREENSHOT_DIR } from './helpers/browser.js';
import { startFacebookFake, type FacebookFake } from './fakes/facebook.js';

let herald: Herald;
let fake: FacebookFake;
let browser: Browser;
let page: Page;

const shot = (name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  fake = await startFacebookFake();
  herald = await startHerald(fake.environment(), { guard: { allowLoopback: true } });
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url })).newPage();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await fake?.close();
});

describe('connecting a Facebook Page in the console', () => {
  it('goes from the channels page through Facebook Login and the picker to an active channel', async () => {
    await page.goto(`/invite/${await setupToken(herald)}`);
    await page.getByLabel('Your name').fill('Paula Pages');
    await page.getByLabel('Email').fill('paula@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/channels');

    await page.getByRole('link', { name: 'Facebook Page' }).click();
    // Herald → the fake Facebook dialog (approves at once) → Herald's callback → the picker.
    await page.waitForURL('**/channels/*/choose');
    expect(fake.server.requestsTo('GET', `/${fake.version}/dialog/oauth`)).toHaveLength(1);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose the page or account to publish as');
    const choices = page.getByRole('radio');
    expect(await choices.count()).toBe(2);
    await shot('facebook-picker');

    await page.getByLabel('Herald Side Project').check();
    await page.getByRole('button', { name: 'Use this one' }).click();
    await page.waitForURL('**/channels?notice=connected');
    const row = page.getByRole('row', { name: /Herald Side Project/ });
    expect(await row.getByText('Active').isVisible()).toBe(true);
    expect(await row.getByText('Facebook Page').isVisible()).toBe(true);
    await shot('facebook-connected');

    const [channel] = await herald.services.orm.em.fork().find(IntegrationSchema, { providerIdentifier: 'facebook' });
    expect(channel).toMatchObject({ internalId: '102', name: 'Herald Side Project', inBetweenSteps: false });
    expect(channelAuth(herald.services, channel).accessToken).toBe(fake.pageToken('102'));
  });
});
