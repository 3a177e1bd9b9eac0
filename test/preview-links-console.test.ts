// Customer preview links in a real browser (Debian chromium, axe-core): an owner makes a link on the console's Preview
// links page (its URL shown once), a customer opens it in a browser without the console's cookies, comments and approves,
// the post's console page shows the customer's comments, the owner revokes the link and the customer's page says so.
// Every page axe-clean, with a screenshot under test-artifacts/screenshots.
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
let owner: Page;
let customer: Page;
let channel: string;
const ids: Record<string, string> = {};
const DAY = 86_400_000;
const at = (days: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 + days * DAY).toISOString();

async function check(page: Page, urlPath: string, name: string, status = 200): Promise<void> {
  const response = await page.goto(urlPath);
  expect(response?.status(), urlPath).toBe(status);
  await screenshotAndAxe(page, name);
}

async function screenshotAndAxe(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `preview-link-${name}.png`), fullPage: true });
  expect(await seriousViolations(page), name).toEqual([]);
}

async function post(text: string, days: number, key = herald.apiKey): Promise<string> {
  const created = await herald.rest(
    'POST',
    '/posts',
    { type: 'schedule', date: at(days), shortLink: false, tags: [], posts: [{ integration: { id: channel }, value: [{ content: text, image: [] }], settings: {} }] },
    { authorization: key },
  );
  expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
  return created.body[0].postId;
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  browser = await launchBrowser();
  owner = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'Europe/Paris' })).newPage();
  customer = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'America/New_York' })).newPage();
  channel = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  await herald.rest('PUT', '/approval-settings', { agents: true });
  const agentKey = (await herald.rest('POST', '/keys', { name: 'Agent' })).body.secret;
  ids.scheduled = await post('<p>Our <strong>winter</strong> menu is here</p>', 2);
  ids.waiting = await post('<p>Sale on Friday: 20% off &lt;everything&gt;</p>', 3, agentKey);
  ids.other = await post('<p>Another waiting post</p>', 4, agentKey);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
});

describe('Customer preview links in the browser', () => {
  it('an owner makes a link, a customer comments and approves without an account, the owner reads it and revokes', { timeout: 240_000 }, async () => {
    await signUpOwner(owner, herald, { name: 'Olivia Owner', email: 'olivia@example.com' });

    await check(owner, '/preview-links', 'console-empty');
    expect(await owner.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Preview links' }).getAttribute('aria-current')).toBe('page');
    await owner.getByLabel('For whom').fill('Acme Bakery');
    await owner.getByRole('checkbox', { name: /Alice|bsky/ }).check();
    await owner.getByLabel('To (a date, included)').fill(at(10).slice(0, 10));
    await owner.getByRole('checkbox', { name: /may approve/ }).check();
    await owner.getByRole('button', { name: 'Make the link' }).click();
    await owner.waitForURL('**/preview-links');
    const url = await owner.locator('#new-link-url').inputValue();
    expect(url).toMatch(/\/preview\/hpl_[A-Za-z0-9_-]{43}$/);
    await screenshotAndAxe(owner, 'console-made');
    // Shown once: the next visit of the page does not show it again.
    await owner.reload();
    expect(await owner.locator('#new-link-url').count()).toBe(0);
    expect(await owner.content()).not.toContain(url);

    // The customer, in a browser that never signed in to the console.
    const customerPath = new URL(url).pathname;
    await check(customer, customerPath, 'public');
    expect(await customer.context().cookies()).toEqual([]);
    await customer.getByRole('heading', { name: 'Posts for Acme Bakery' }).waitFor();
    expect(await customer.locator('article.preview-post').count()).toBe(3);
    expect(await customer.getByText('20% off <everything>').isVisible()).toBe(true);
    const waiting = customer.locator('article.preview-post').filter({ hasText: 'Sale on Friday' });
    await waiting.getByLabel('Your message').fill('Say "Friday only", please');
    await waiting.getByRole('button', { name: 'Comment' }).click();
    await customer.getByText('Thank you: your comment was sent.').waitFor();
    await screenshotAndAxe(customer, 'public-commented');
    await customer.locator('article.preview-post').filter({ hasText: 'Another waiting post' }).getByRole('button', { name: 'Approve' }).click();
    await customer.getByText('Approved: the post will be published at its date.').waitFor();
    expect((await herald.rest('GET', `/posts?startDate=${encodeURIComponent(at(-1))}&endDate=${encodeURIComponent(at(30))}`)).body.posts.find((item: any) => item.id === ids.other).state).toBe('QUEUE');
    expect(await customer.context().cookies()).toEqual([]);

    // The waiting post's console page shows the customer's comment; the links page its activity.
    await check(owner, `/posts/${ids.waiting}`, 'post-customer-comments');
    const comments = owner.getByRole('region', { name: 'Customer comments' });
    expect(await comments.textContent()).toContain('Say "Friday only", please');
    expect(await comments.textContent()).toContain('Acme Bakery');
    await check(owner, '/preview-links', 'console-activity');
    expect(await owner.getByText('Say "Friday only", please').isVisible()).toBe(true);
    expect(await owner.getByText(/last used .*\d{2}:\d{2}/).isVisible()).toBe(true);

    await owner.getByRole('button', { name: 'Revoke the link for Acme Bakery' }).click();
    await owner.waitForURL('**/preview-links');
    expect(await owner.getByText('Revoked', { exact: true }).isVisible()).toBe(true);
    await check(customer, customerPath, 'public-revoked', 410);
    expect(await customer.getByText('This preview link was revoked.').isVisible()).toBe(true);
  });
});
