// The console's workflow pages of issue 35, in a real browser (Debian chromium): the signature fields (the organization's
// default on Settings, a channel's own on Channels) shown by the composer's preview; a set saved from the composer and a
// post started from it; the import page (a file with bad rows shown row by row, then a good file imported once, even when
// its confirmation is sent twice). Every page axe-clean; screenshots in test-artifacts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations, signUpOwner } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';

const ZONE = 'Europe/Berlin';
let herald: Herald;
let bluesky: BlueskyFake;
let browser: Browser;
let page: Page;
let channelId: string;
const year = new Date().getUTCFullYear() + 1;
const db = () => herald.services.orm.em.fork().getConnection();

async function checked(name: string): Promise<void> {
  expect(await seriousViolations(page), name).toEqual([]);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `workflow-${name}.png`), fullPage: true });
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url, timezoneId: ZONE, viewport: { width: 1280, height: 900 } })).newPage();
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  await signUpOwner(page, herald, { name: 'Wanda Workflow', email: 'wanda@example.com' });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
});

describe('signatures in the console', () => {
  it('saves the organization\'s default on Settings and a channel\'s own on Channels', { timeout: 120_000 }, async () => {
    await page.goto('/settings');
    await page.getByLabel('Signature text').fill('<b>Fresh</b> & warm — the bakery');
    await page.getByRole('button', { name: 'Save signature' }).click();
    await page.waitForURL('**/settings?notice=signature');
    expect(await page.getByLabel('Signature text').inputValue()).toBe('<b>Fresh</b> & warm — the bakery');
    await checked('settings-signature');

    await page.goto('/channels');
    await page.locator('details > summary', { hasText: 'Settings' }).first().click();
    const form = page.locator(`form[action="/signatures/${channelId}"]`);
    await form.getByLabel('Signature text').fill('Baked in Berlin');
    await form.getByLabel('At the start (the first item)').check();
    await form.getByRole('button', { name: 'Save signature' }).click();
    await page.waitForURL('**/channels?notice=signature');
    await page.locator('details > summary', { hasText: 'Settings' }).first().click();
    await checked('channel-signature');
    const rows = await db().execute('select integration_id, text, position from signature order by integration_id');
    expect(rows).toEqual([
      { integration_id: '', text: '<b>Fresh</b> & warm — the bakery', position: 'end' },
      { integration_id: channelId, text: 'Baked in Berlin', position: 'start' },
    ]);
  });
});

describe('sets in the composer', () => {
  it('saves a set from the composer, starts a new post from it; the preview shows the channel\'s signature', { timeout: 120_000 }, async () => {
    await page.goto('/compose');
    await page.getByLabel(/^Alice/).check();
    await page.locator('#content-0').fill('Sourdough Saturday: loaves from 8:00');
    await page.getByText('Save as set', { exact: true }).first().click();
    await page.getByLabel('Name of the set').fill('Saturday bread');
    await page.getByRole('button', { name: 'Save as set' }).click();
    await page.waitForURL('**/sets?notice=saved');
    expect(await page.getByRole('cell', { name: 'Saturday bread', exact: true }).count()).toBe(1);
    await checked('sets');

    await page.goto('/compose');
    await page.getByLabel('Start from a set').selectOption({ label: 'Saturday bread' });
    await page.getByRole('button', { name: 'Start from this set' }).click();
    await page.waitForURL('**/compose?set=*');
    expect(await page.locator('#content-0').inputValue()).toBe('Sourdough Saturday: loaves from 8:00');
    expect(await page.locator(`#channel-${channelId}`).isChecked()).toBe(true);
    const preview = page.getByRole('region', { name: 'Preview for Alice' });
    await preview.locator('.preview-text').waitFor();
    expect(await preview.locator('.preview-text').textContent()).toBe('Baked in Berlin\nSourdough Saturday: loaves from 8:00');
    await checked('compose-from-set');
    // One post without it: the composer's own opt-out (settings.signature false), seen in the live preview.
    await page.getByLabel('Without the signature (Settings, Channels) on this post').check();
    await page.getByRole('region', { name: 'Preview for Alice' }).locator('.preview-text', { hasText: /^Sourdough Saturday: loaves from 8:00$/ }).waitFor();
  });

  it('a set whose channel was disconnected says so when a post starts from it', async () => {
    const created = await herald.rest('POST', '/sets', { name: 'Gone channel', channels: [channelId], content: '<p>Hello</p>' });
    await db().execute('update integration set deleted_at = now() where id = ?', [channelId]);
    try {
      await page.goto(`/compose?set=${created.body.id}`);
      expect(await page.locator('.flash.error').textContent()).toMatch(/was disconnected: it is left out/);
      await checked('compose-set-disconnected');
    } finally {
      await db().execute('update integration set deleted_at = null where id = ?', [channelId]);
    }
  });
});

describe('the import page', () => {
  const upload = async (name: string, text: string) => {
    await page.getByLabel('CSV or JSON file').setInputFiles({ name, mimeType: name.endsWith('.json') ? 'application/json' : 'text/csv', buffer: Buffer.from(text) });
    await page.getByRole('button', { name: 'Check the file (nothing is imported)' }).click();
    await page.getByRole('heading', { name: /2\. / }).waitFor();
  };

  it('shows the dry run row by row with each row\'s problems, nothing imported', { timeout: 120_000 }, async () => {
    await page.goto('/posts');
    await page.getByRole('link', { name: 'Import posts from a file' }).click();
    await page.waitForURL('**/posts/import');
    await checked('import-empty');
    await upload('bad.csv', ['channel,date,text', `${channelId},${year}-03-02 09:00,Good row`, `nope,${year}-03-02 09:00,Unknown channel`, `${channelId},someday,Bad date`, `${channelId},${year}-03-03 09:00,${'x'.repeat(320)}`].join('\n'));
    expect(await page.locator('.flash.error').textContent()).toContain('3 of 4 rows have problems');
    const cells = await page.locator('tbody tr').allTextContents();
    expect(cells[0]).toContain('ready');
    expect(cells[0]).toContain(`${year}-03-02 09:00`); // read in Europe/Berlin, shown in the person's zone
    expect(cells[1]).toMatch(/neither the id nor the name/);
    expect(cells[2]).toMatch(/is not a date/);
    expect(cells[3]).toMatch(/maximum characters is 300/);
    expect(await page.getByRole('button', { name: /^Import/ }).count()).toBe(0);
    await checked('import-dry-run');
    expect((await db().execute("select count(*)::int as count from post where content like '%Good row%'"))[0].count).toBe(0);
  });

  it('imports a good file once, even when its confirmation is sent twice', { timeout: 120_000 }, async () => {
    await page.goto('/posts/import');
    await upload('good.json', JSON.stringify([
      { channel: 'Alice', date: `${year}-04-01 10:00`, text: 'Imported one' },
      { channel: channelId, date: `${year}-04-02 10:00`, text: 'Imported two', timeZone: 'America/New_York' },
    ]));
    expect(await page.locator('.flash.ok').textContent()).toContain('All 2 rows can be imported');
    const form = page.locator('form[action="/posts/import"]').last();
    const fields = Object.fromEntries(await form.locator('input[type="hidden"]').evaluateAll((inputs) => inputs.map((input) => [(input as HTMLInputElement).name, (input as HTMLInputElement).value])));
    await page.getByRole('button', { name: 'Import 2 posts' }).click();
    await page.getByRole('heading', { name: '2. Imported' }).waitFor();
    expect(await page.getByRole('link', { name: 'Open the post' }).count()).toBe(2);
    await checked('import-done');
    // The same confirmation again (a double click, a reload): the first answer, nothing created twice.
    const again = await page.request.post('/posts/import', { form: { ...fields, action: 'import' } });
    expect(again.status()).toBe(200);
    expect(await again.text()).toContain('2 posts imported');
    const rows = await db().execute<{ content: string }[]>("select content from post where content like '%Imported %' and deleted_at is null order by publish_date");
    // Each with the channel's signature, once.
    expect(rows.map((row) => row.content)).toEqual(['<p>Baked in Berlin</p><p>Imported one</p>', '<p>Baked in Berlin</p><p>Imported two</p>']);
  });
});
