// The web console in a real browser (Debian chromium, headless): sign-up of the owner (with the setup link), API key
// regeneration, a credential channel connected against a fake platform, an OAuth app registered, the consent flow approved
// and denied, revocation.
// A screenshot of each console page is saved under test-artifacts/screenshots.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { launchBrowser, SCREENSHOT_DIR } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';

const APP_REDIRECT = 'https://app.example/callback';
let herald: Herald;
let bluesky: BlueskyFake;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Where the app's redirect URL was reached (the browser never leaves 127.0.0.1: the route is answered here). */
const appHits: URL[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: herald.url });
  await context.route('https://app.example/**', async (route) => {
    appHits.push(new URL(route.request().url()));
    await route.fulfill({ status: 200, contentType: 'text/html', body: '<p>Back in the app</p>' });
  });
  page = await context.newPage();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.server.close();
});

const rest = (credential: string, urlPath: string) => fetch(`${herald.restUrl}${urlPath}`, { headers: { authorization: credential } });

describe('the console in a browser', () => {
  it('signs up the owner of a fresh instance with the setup link, and only with it', async () => {
    await page.goto('/');
    expect(new URL(page.url()).pathname).toBe('/login');
    await shot('login');
    await page.getByRole('link', { name: 'Sign up' }).first().click();
    await expect(page.getByRole('heading', { name: 'Sign-up is by invitation' }).isVisible()).resolves.toBe(true);
    expect(await page.getByLabel('Password').count()).toBe(0);
    await shot('signup-closed');
    await page.goto(`/invite/${await setupToken(herald)}`);
    await expect(page.getByRole('heading', { name: 'Create the owner account' }).isVisible()).resolves.toBe(true);
    expect(await page.getByText('This setup link makes you an owner of Test organization').isVisible()).toBe(true);
    await page.getByLabel('Your name').fill('Olivia Owner');
    await page.getByLabel('Email').fill('olivia@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await shot('signup');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/channels');
    expect(await page.getByRole('heading', { name: 'Channels' }).isVisible()).toBe(true);
    expect(await page.locator('.who').textContent()).toContain('olivia@example.com');
  });

  it('regenerates the API key after a confirmation; the new key works and the old one fails', async () => {
    await page.getByRole('link', { name: 'Developer' }).click();
    expect(await page.locator('body').textContent()).toContain(`${herald.url}/api/mcp-oauth`);
    await shot('developer');
    await page.getByRole('button', { name: 'Regenerate API key' }).click();
    // The required confirmation box stops the form until it is ticked.
    expect(new URL(page.url()).pathname).toBe('/developer');
    expect(await page.locator('#new-api-key').count()).toBe(0);
    await page.getByLabel('I understand that clients using the current key stop working').check();
    await page.getByRole('button', { name: 'Regenerate API key' }).click();
    const key = (await page.locator('#new-api-key').textContent())!.trim();
    expect(key).toMatch(/^hrld_/);
    currentKey = key;
    // The snippets are for agents: they carry an agent key (made below on the page), never the organization key.
    expect(await page.locator('pre').first().textContent()).not.toContain(key);
    expect(await page.locator('pre').first().textContent()).toContain('<agent key>');
    await shot('developer-new-key');
    expect((await rest(key, '/is-connected')).status).toBe(200);
    expect((await rest(herald.apiKey, '/is-connected')).status).toBe(401);
  });

  it('connects a Bluesky channel with its credential form, against the fake platform', async () => {
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('link', { name: 'Bluesky' }).click();
    await page.getByLabel('Service (PDS) URL').fill(bluesky.url);
    await page.getByLabel('Handle or email').fill(bluesky.handle);
    await page.getByLabel('App password').fill('wrong-password');
    await page.getByRole('button', { name: 'Connect' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Bluesky refused the connection');
    await page.getByLabel('App password').fill(bluesky.password);
    await shot('connect-bluesky');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL('**/channels?notice=connected');
    const row = page.getByRole('row', { name: new RegExp(bluesky.handle) });
    expect(await row.getByText('Active').isVisible()).toBe(true);
    await row.getByText('Settings').click();
    await row.getByLabel('Posting times (HH:MM)').fill('08:30, 17:00');
    // The times' zone field starts at the zone they are stored in (UTC for a new channel).
    expect(await row.getByLabel('Posting times are in time zone').inputValue()).toBe('UTC');
    await row.getByRole('button', { name: 'Save times' }).click();
    await page.waitForURL('**/channels?notice=times');
    await shot('channels');
    const channels = await (await rest(await newKey(), '/integrations')).json();
    expect(channels).toEqual([expect.objectContaining({ identifier: 'bluesky', profile: bluesky.handle, disabled: false })]);
    const stored = await herald.services.orm.em.fork().getConnection().execute('select posting_times from integration');
    expect(stored[0].posting_times).toEqual([510, 1020]);
  });

  let clientId = '';
  let clientSecret = '';

  it('registers an OAuth app and shows its secret once', async () => {
    await page.getByRole('link', { name: 'OAuth apps' }).click();
    await page.getByLabel('App Name').fill('Acme Planner');
    await page.getByLabel('Description (optional)').fill('Plans posts for your week.');
    await page.getByLabel('Redirect URL').fill(APP_REDIRECT);
    await page.getByRole('button', { name: 'Register app' }).click();
    clientId = (await page.locator('#client-id').textContent())!;
    clientSecret = (await page.locator('#client-secret').textContent())!;
    expect(clientId).toMatch(/^pca_/);
    expect(clientSecret).toMatch(/^pcs_/);
    await shot('apps');
    await page.reload();
    expect(await page.locator('#client-secret').count()).toBe(0);
  });

  it('approves the app on the consent screen; the code buys a token that works on REST', async () => {
    await page.goto(`/oauth/authorize?client_id=${clientId}&response_type=code&state=approve-1`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Acme Planner wants to access your Herald account');
    expect(await page.locator('.consent').textContent()).toContain('Plans posts for your week.');
    await shot('consent');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL('https://app.example/**');
    const back = appHits.at(-1)!;
    expect(back.searchParams.get('state')).toBe('approve-1');
    const exchange = await fetch(`${herald.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: back.searchParams.get('code'), client_id: clientId, client_secret: clientSecret }),
    });
    const body = await exchange.json();
    expect(body).toMatchObject({ id: herald.organizationId, token_type: 'bearer' });
    accessToken = body.access_token;
    expect((await rest(accessToken, '/integrations')).status).toBe(200);
  });

  it('denies the app: back at the app with access_denied and no code', async () => {
    await page.goto(`/oauth/authorize?client_id=${clientId}&response_type=code&state=deny-1`);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL('https://app.example/**');
    const back = appHits.at(-1)!;
    // RFC 9207: the authorization server's issuer comes with every authorization response, a denial included.
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', state: 'deny-1', iss: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$|^http/) });
  });

  it('lists the approved app and revokes it; its token fails at once', async () => {
    await page.goto('/approved');
    const card = page.getByRole('region', { name: 'Acme Planner' });
    expect(await card.isVisible()).toBe(true);
    await shot('approved-apps');
    await card.getByRole('button', { name: 'Revoke access' }).click();
    await page.waitForURL('**/approved?notice=revoked');
    expect(await page.getByRole('region', { name: 'Acme Planner' }).count()).toBe(0);
    expect((await rest(accessToken, '/integrations')).status).toBe(401);
  });

  it('shows posts, notifications and members pages', async () => {
    const key = await newKey();
    const channels = await (await rest(key, '/integrations')).json();
    const created = await fetch(`${herald.restUrl}/posts`, {
      method: 'POST',
      headers: { authorization: key, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'draft',
        date: new Date(Date.now() + 3600_000).toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channels[0].id }, value: [{ content: '<p>Hello from the <strong>browser</strong> test</p>', image: [] }], settings: { __type: 'bluesky' } }],
      }),
    });
    expect(created.status).toBe(200);
    await page.getByRole('link', { name: 'Posts' }).click();
    expect(await page.getByRole('cell', { name: /Hello from the/ }).isVisible()).toBe(true);
    expect(await page.getByRole('cell').getByText('Draft', { exact: true }).isVisible()).toBe(true);
    await shot('posts');
    await page.getByRole('link', { name: 'Notifications' }).click();
    await shot('notifications');
    await page.getByRole('link', { name: 'Members' }).click();
    expect(await page.getByRole('cell', { name: 'olivia@example.com', exact: true }).isVisible()).toBe(true);
    await shot('members');
  });

  it('deletes the app after confirmation', async () => {
    await page.getByRole('link', { name: 'OAuth apps' }).click();
    const card = page.getByRole('region', { name: 'Acme Planner' });
    await card.getByLabel('revoke all its tokens; this cannot be undone').check();
    await card.getByRole('button', { name: 'Delete app' }).click();
    await page.waitForURL('**/apps?notice=deleted');
    expect(await page.getByRole('region', { name: 'Acme Planner' }).count()).toBe(0);
  });
});

let accessToken = '';
let currentKey = '';
/** A fresh API key for the REST calls of the test (minted in the console, like a person would). */
async function newKey(): Promise<string> {
  if (currentKey) return currentKey;
  const side = await context.newPage();
  await side.goto('/developer');
  await side.getByLabel('I understand that clients using the current key stop working').check();
  await side.getByRole('button', { name: 'Regenerate API key' }).click();
  currentKey = (await side.locator('#new-api-key').textContent())!.trim();
  await side.close();
  return currentKey;
}
