// Every console page in a real browser (Debian chromium, headless) checked with axe-core: no serious or critical
// violations, signed out and signed in, with content on the pages (posts in every state, a failed one, one waiting for
// approval, an OAuth app, a webhook, a device login, a form with an error); and the calendar used with the keyboard
// alone. One browser for the file; a screenshot of each page under test-artifacts/screenshots. The organization is on
// Berlin time and the person's browser on Paris time: no page shows them a time in UTC (issue 36).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, ownerInvitation, SCREENSHOT_DIR, seriousViolations, signUpPage } from './helpers/browser.js';
import { utcTimes } from './helpers/local-time.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { runTool } from '../tools/runner.js';
import { schedulePostTool } from '../tools/schedule-post-tool.js';
import { setApprovalSettings } from '../tools/internal/approval.js';

let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let browser: Browser;
let page: Page;
const ids: Record<string, string> = {};
const db = () => herald.services.orm.em.fork().getConnection();
const soon = (days: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 + days * 86_400_000).toISOString();

/** Pages written for developers, about the API, which speaks UTC. */
const ABOUT_THE_API = new Set(['api-reference']);

async function check(urlPath: string, name: string, status = 200, fullPage = true): Promise<void> {
  const response = await page.goto(urlPath);
  expect(response?.status(), urlPath).toBe(status);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `a11y-${name}.png`), fullPage });
  expect(await seriousViolations(page), urlPath).toEqual([]);
  if (!ABOUT_THE_API.has(name)) expect(await utcTimes(page), `${urlPath} shows a UTC time`).toEqual([]);
  expect(await zoneFieldsWithoutList(), `${urlPath} has a zone field without the zone list`).toEqual([]);
  expect(await unstyledFields(), `${urlPath} has fields the console's style does not reach`).toEqual([]);
}

/** Fields left as the browser draws them (the console's fields have rounded borders): the unstyled key-name input of issue 36. */
const unstyledFields = () =>
  page.locator('main input:not([type="hidden"]):not([type="checkbox"]):not([type="radio"]):not([type="submit"]):not([type="file"]), main select, main textarea').evaluateAll((fields) =>
    fields.filter((field) => getComputedStyle(field).borderTopLeftRadius === '0px').map((field) => `${field.tagName.toLowerCase()}#${field.id || (field as HTMLInputElement).name}`),
  );

/** The page's zone fields that are free text: each must offer the list of zones (zoneField's datalist). */
const zoneFieldsWithoutList = () =>
  page.locator('input[name="timeZone"]:not([type="hidden"]), input[name="zone"]:not([type="hidden"])').evaluateAll((inputs) =>
    inputs.filter((input) => !(input as HTMLInputElement).list?.options.length).map((input) => input.id),
  );

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  [bluesky, mastodon] = await Promise.all([startBlueskyFake(), startMastodonFake()]);
  herald = await startHerald({ WEBHOOKS_ALLOW_PRIVATE: 'true' });
  expect((await herald.rest('PUT', '/time-zone', { timeZone: 'Europe/Berlin' })).status).toBe(200);
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: 'Europe/Paris' })).newPage();
  ids.bluesky = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  ids.mastodon = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id;
  const create = async (text: string, date: string, type = 'schedule') =>
    (
      await herald.rest('POST', '/posts', {
        type, date, shortLink: false, tags: [],
        posts: [{ integration: { id: ids.bluesky }, value: [{ content: text, image: [] }, { content: `${text}, continued`, image: [] }], settings: {} }],
      })
    ).body[0].postId as string;
  ids.scheduled = await create('<p>A <strong>scheduled</strong> thread</p>', soon(1));
  ids.draft = await create('A draft', soon(2), 'draft');
  ids.failed = await create('This one failed', soon(3));
  await db().execute(`update post set state = 'ERROR', error = 'Bluesky said: Record is invalid' where root_post_id = ?`, [ids.failed]);
  await setApprovalSettings(herald.services.orm.em.fork(), herald.organizationId, { agents: true, apps: [] });
  const waiting = await runTool(
    schedulePostTool,
    { socialPost: [{ integrationId: ids.mastodon, isPremium: false, date: soon(4), shortLink: false, type: 'schedule', postsAndComments: [{ content: 'An agent asks', attachments: [] }], settings: [] }] },
    { organizationId: herald.organizationId, credentialId: 'key', credentialKind: 'api_key', scopes: ['mcp:read', 'mcp:write'] },
    herald.services,
    'a11y',
    { via: 'mcp' },
  );
  ids.waiting = (waiting as any).output[0].postId;
  // A channel Herald cannot publish to any more (its health names when), a set, a recurring post, a preview link.
  await db().execute(`update integration set refresh_needed = true where id = ?`, [ids.mastodon]);
  expect((await herald.rest('POST', '/sets', { name: 'Weekly news', channels: [ids.bluesky], content: '<p>This week</p>' })).status).toBe(200);
  const rule = await herald.rest('POST', '/recurring-posts', { channel: ids.bluesky, content: 'Opening hours', every: 'day', time: '09:00', timeZone: 'Europe/Berlin', count: 3 });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  ids.rule = rule.body.id;
  const link = await herald.rest('POST', '/preview-links', { name: 'Acme Bakery', channels: [ids.bluesky], from: soon(0), to: soon(7), expiresAt: soon(3) });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  ids.previewPath = new URL(link.body.url).pathname;
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
  await mastodon?.close();
});

describe('accessibility of every console page (axe-core: no serious or critical violations)', () => {
  it('signed out: log in and sign up, with and without an error', async () => {
    await check('/login', 'login');
    const invitation = await ownerInvitation(herald);
    await check(signUpPage(invitation), 'signup');
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(signUpPage(invitation));
    await page.getByLabel('Your name').fill('Olivia Owner');
    await page.getByLabel('Email').fill('olivia@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/channels');
  });

  it('the pages of the console', { timeout: 240_000 }, async () => {
    // Home: the day's work first (issue 36): what waits for approval, what failed, today and this week.
    await check('/', 'home');
    expect(await page.getByRole('heading', { name: 'Waiting for approval (1)' }).isVisible()).toBe(true);
    expect(await page.getByRole('heading', { name: 'Today', exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('list', { name: 'Developer tools' }).getByRole('link', { name: 'Webhooks' }).isVisible()).toBe(true);
    const icon = await fetch(`${herald.url}/favicon.ico`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml; charset=utf-8']);
    await check('/channels', 'channels');
    await check('/channels/connect/bluesky', 'connect-bluesky');
    await check('/compose', 'compose');
    // The compose page with the live preview filled in, a too-long text and an added item.
    await page.getByLabel(/^Alice/).check();
    await page.locator('#content-0').fill('x'.repeat(320));
    await page.locator('#preview').getByText('too long').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Add a thread item or comment' }).click();
    await page.locator('#content-1').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await check('/posts', 'posts');
    await check('/calendar', 'calendar-month');
    await check('/calendar?view=week', 'calendar-week');
    await check(`/posts/${ids.scheduled}`, 'post');
    await check(`/posts/${ids.failed}`, 'post-failed');
    await check(`/posts/${ids.scheduled}/move`, 'move');
    await check('/approvals', 'approvals');
    await check('/developer', 'developer');
    // The whole reference is many screens long: a full-page picture of it takes longer than the check itself.
    await check('/api-reference', 'api-reference', 200, false);
    await check('/webhooks', 'webhooks');
    await check('/apps', 'apps');
    await check('/approved', 'approved');
    await check('/notifications', 'notifications');
    await check('/activity', 'activity');
    await check(`/activity?action=post&from=2020-01-01&to=2099-12-31`, 'activity-filtered');
    await check('/members', 'members');
    await check('/media', 'media');
    await check(`/posts/${ids.draft}`, 'post-draft');
    await check(`/posts/${ids.draft}/edit`, 'post-edit');
    await check('/settings', 'settings');
    await check('/comments', 'comments');
    await check('/analytics', 'analytics-overview');
    await check(`/channels/${ids.bluesky}/analytics`, 'channel-analytics');
    await check(`/channels/${ids.bluesky}/best-times`, 'best-times');
    await check('/device', 'device');
    await check('/sets', 'sets');
    await check('/posts/import', 'import');
    await check('/feeds', 'feeds');
    await check('/recurring-posts', 'recurring-posts');
    await check(`/recurring-posts/${ids.rule}`, 'recurring-post');
    await check('/preview-links', 'preview-links');
    await check(`/posts/${ids.waiting}`, 'post-waiting');
    await check('/channels/connect/myspace', 'error-page', 404);
    // The check itself finds what it should: a picture without a text alternative is a critical violation.
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<img src="/nothing.png">'));
    expect((await seriousViolations(page)).join()).toContain('image-alt (critical)');
    // And the UTC check finds a time named UTC.
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<p>Goes out at 10:40:00 UTC.</p>'));
    expect(await utcTimes(page)).toEqual(['Goes out at 10:40:00 UTC.']);
    // And the zone-field check finds a zone typed as free text.
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<input id="bare-zone" name="timeZone">'));
    expect(await zoneFieldsWithoutList()).toEqual(['bare-zone']);
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<input id="bare-color" type="color">'));
    expect(await unstyledFields()).toEqual(['input#bare-zone', 'input#bare-color']);
  });

  it('pages with forms sent back with a problem, an app\'s consent screen and a webhook', { timeout: 120_000 }, async () => {
    await page.goto('/settings');
    await page.getByLabel('Time zone (IANA name)', { exact: true }).fill('Paris');
    await page.getByRole('button', { name: 'Save my time zone' }).click();
    await page.getByRole('alert').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`/posts/${ids.scheduled}/move`);
    await page.getByLabel('Time zone of the date and time').fill('Nowhere/Special');
    await page.getByRole('button', { name: 'Move' }).click();
    await page.getByRole('alert').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.goto('/apps');
    await page.getByLabel('App Name').fill('Acme Planner');
    await page.getByLabel('Redirect URL').fill('https://app.example/callback');
    await page.getByRole('button', { name: 'Register app' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await check('/apps', 'apps-registered');
    expect(await page.getByText(/^Registered \d{4}-\d{2}-\d{2} \d{2}:\d{2} GMT\+1$/).isVisible()).toBe(true);
    const clientId = (await db().execute('select client_id from oauth_app'))[0].client_id;
    await check(`/oauth/authorize?client_id=${clientId}&response_type=code&state=a11y`, 'consent');
    const hook = await herald.rest('POST', '/webhooks', { url: 'http://127.0.0.1:9/herald', events: ['post.published'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    await check(`/webhooks/${hook.body.id}`, 'webhook');
    // A command-line login asking: the page says when it asked, in the person's time.
    const device = (await (await fetch(`${herald.url}/device/code`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { user_code: string };
    await page.goto('/device');
    await page.getByLabel('Code').fill(device.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: /wants to access your Herald account/ }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'a11y-device-confirm.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    expect(await utcTimes(page)).toEqual([]);
    expect(await page.getByText(/^Asked at \d{4}-\d{2}-\d{2} \d{2}:\d{2} GMT\+1$/).isVisible()).toBe(true);
    // What a customer sees through a preview link, signed in or not.
    await check(ids.previewPath, 'preview-link-public');
  });
});

describe('the keyboard alone', () => {
  it('skips to the content, reaches a post on the calendar and moves it a day later with Alt+Right', { timeout: 120_000 }, async () => {
    const before = new Date((await db().execute('select publish_date from post where id = ?', [ids.scheduled]))[0].publish_date);
    await page.goto('/calendar');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    const link = page.locator(`li[data-post="${ids.scheduled}"] a`).first();
    // Tab from the skip link until the post's link has the focus.
    for (let presses = 0; presses < 200 && !(await link.evaluate((element) => element === document.activeElement)); presses++) await page.keyboard.press('Tab');
    expect(await link.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Alt+ArrowRight');
    await page.waitForURL(/notice=moved/);
    const after = new Date((await db().execute('select publish_date from post where id = ?', [ids.scheduled]))[0].publish_date);
    expect(after.getTime() - before.getTime()).toBe(86_400_000);
    // Back on the calendar, the moved post has the focus again.
    expect(await page.locator(`li[data-post="${ids.scheduled}"] a`).first().evaluate((element) => element === document.activeElement)).toBe(true);
    expect(await page.getByRole('status').first().textContent()).toContain('Moved');
  });
});
