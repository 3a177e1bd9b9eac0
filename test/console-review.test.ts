// Checking an agent's work in the console, in a real browser (Debian chromium, headless): the approval gate end to end
// (an agent creates over MCP, the owner approves in the browser with the per-platform preview, the fake platform receives
// the post once, the agent's subscription hears it), a rejection with its reason, editing with the API's validation,
// the month calendar with a failed post standing out, and retry. Screenshots go to test-artifacts/screenshots.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations } from './helpers/browser.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { acceptedSamples } from './helpers/media-samples.js';
import { waitFor } from './helpers/posts.js';
import type { Worker } from '../src/jobs/index.js';

let herald: Herald;
let bluesky: BlueskyFake;
let browser: Browser;
let page: Page;
let agent: Client;
let worker: Worker;
let channelId: string;
const updates: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

async function agentSchedules(content: string, options: { type?: string; date?: string; attachments?: string[] } = {}): Promise<any> {
  const result: any = await agent.callTool({
    name: 'schedulePostTool',
    arguments: {
      socialPost: [
        {
          integrationId: channelId,
          isPremium: false,
          date: options.date ?? new Date(Date.now() + 2 * 86400_000).toISOString(),
          shortLink: false,
          type: options.type ?? 'schedule',
          postsAndComments: [{ content, attachments: options.attachments ?? [] }],
          settings: [],
        },
      ],
    },
  });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent.output[0];
}

async function resource(id: string): Promise<any> {
  const read: any = await agent.readResource({ uri: `herald://posts/${id}` });
  return JSON.parse(read.contents[0].text);
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  bluesky = await startBlueskyFake();
  herald = await startHerald();
  browser = await launchBrowser();
  page = await (await browser.newContext({ baseURL: herald.url })).newPage();
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
  channelId = connected.body.id;
  // The agent is set up as the README says: an agent key, not the organization (owner) key.
  const agentKey = (await herald.rest('POST', '/keys', { name: 'Review agent' })).body.secret;
  agent = new Client({ name: 'review-agent', version: '1.0.0' });
  await agent.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${agentKey}` } } }));
  agent.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updates.push(notification.params.uri));
  worker = await herald.startWorker();
}, 600_000);

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await browser?.close();
  await herald?.stop();
  await bluesky?.close();
});

describe('the console where people check an agent\'s work', () => {
  it('the owner signs up and turns the approval gate on', async () => {
    await page.goto(`/invite/${await setupToken(herald)}`);
    await page.getByLabel('Your name').fill('Olivia Owner');
    await page.getByLabel('Email').fill('olivia@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/channels');
    await page.getByRole('link', { name: 'Approvals' }).click();
    expect(await page.getByText('Nothing waits for approval.').isVisible()).toBe(true);
    await page.getByLabel('Posts created by agents wait for an owner\'s approval').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL('**/approvals?notice=settings');
    expect(await page.getByLabel('Posts created by agents wait for an owner\'s approval').isChecked()).toBe(true);
    await shot('approvals-settings');
  });

  let approvedId = '';

  it('an agent\'s post waits; the owner approves it from the preview; the platform receives it once and the agent hears of it', async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes)], { type: 'image/png' }), 'launch.png');
    const media = await (await fetch(`${herald.restUrl}/upload`, { method: 'POST', headers: { authorization: herald.apiKey }, body: form })).json();
    const created = await agentSchedules('<p>Launch day: <strong>Herald 2</strong> is out https://example.com/launch</p>', { type: 'now', attachments: [media.path] });
    approvedId = created.postId;
    expect(created.approval.status).toBe('pending');
    await agent.subscribeResource({ uri: `herald://posts/${approvedId}` });
    // The worker is running, and nothing goes out while the post waits.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(bluesky.records).toHaveLength(0);

    await page.goto('/approvals');
    const card = page.getByRole('article', { name: 'Post on Alice' });
    expect(await card.getByText('Waiting for an owner\'s approval.').isVisible()).toBe(true);
    expect(await card.getByText(/Requested by Review agent \(API key\) over MCP/).isVisible()).toBe(true);
    // The text exactly as Bluesky receives it (bold as Unicode), its length against the limit, and the picture.
    expect(await card.locator('pre.preview-text').textContent()).toBe('Launch day: 𝗛𝗲𝗿𝗮𝗹𝗱 𝟮 is out https://example.com/launch');
    expect(await card.locator('.length').textContent()).toMatch(/^54 \/ 300/);
    expect(await card.locator('.media-list img').getAttribute('src')).toBe(media.path);
    await shot('approvals-queue');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL('**/approvals?notice=approved');
    expect(await page.getByText('Nothing waits for approval.').isVisible()).toBe(true);

    await waitFor(async () => (bluesky.records.length > 0 && updates.includes(`herald://posts/${approvedId}`) ? true : undefined), 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(bluesky.records).toHaveLength(1);
    expect(bluesky.records[0].record.text).toBe('Launch day: 𝗛𝗲𝗿𝗮𝗹𝗱 𝟮 is out https://example.com/launch');
    expect(bluesky.records[0].record.embed.images).toHaveLength(1);
    const read = await resource(approvedId);
    expect(read).toMatchObject({ state: 'PUBLISHED', approval: { status: 'approved', decidedByName: 'Olivia Owner' } });

    await page.goto(`/posts/${approvedId}`);
    expect(await page.getByRole('link', { name: 'View on Bluesky' }).getAttribute('href')).toBe(read.releaseURL);
    expect(await page.getByText(/Approved by Olivia Owner on/).isVisible()).toBe(true);
    expect(await page.getByText('Published posts cannot be edited').isVisible()).toBe(true);
    await shot('post-published');
    await page.getByRole('link', { name: 'Notifications' }).click();
    expect(await page.getByText(/Olivia Owner approved the post on Alice \(bluesky\) after its date .* had passed: it is being published now\./).isVisible()).toBe(true);
  });

  let rejectedId = '';

  it('the owner rejects a post with a reason: it becomes a draft and the agent reads why', async () => {
    rejectedId = (await agentSchedules('<p>Buy now!!! Limited offer</p>')).postId;
    await page.goto(`/posts/${rejectedId}`);
    await page.getByLabel('Reason for rejecting').fill('Too pushy: announce the release notes instead.');
    await shot('post-awaiting');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.waitForURL(`**/posts/${rejectedId}?notice=rejected`);
    expect(await page.getByText('Rejected by Olivia Owner on').isVisible()).toBe(true);
    expect(await page.locator('q').textContent()).toBe('Too pushy: announce the release notes instead.');
    expect(await resource(rejectedId)).toMatchObject({ state: 'DRAFT', approval: { status: 'rejected', reason: 'Too pushy: announce the release notes instead.' } });
  });

  it('editing happens in the composer with the API\'s validation: too long is refused on the form, a valid edit is saved with its new date and item', async () => {
    await page.goto(`/posts/${rejectedId}`);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.waitForURL(`**/posts/${rejectedId}/edit`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Edit post');
    expect(await page.getByText('(JSON)').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator('#content-0').fill(`<p>${'a'.repeat(301)}</p>`);
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByRole('alert').first().textContent()).toContain('The maximum characters is 300, we got 301; shorten the text');
    // What was typed is still there.
    expect(await page.locator('#content-0').inputValue()).toBe(`<p>${'a'.repeat(301)}</p>`);
    await shot('post-edit-refused');
    await page.locator('#content-0').fill('<p>Herald 2 release notes: what changed</p>');
    await page.getByRole('button', { name: 'Add a thread item or comment' }).click();
    await page.locator('#content-1').fill('<p>Thanks to everyone who tested it.</p>');
    await page.locator('#timing-date').check();
    await page.locator('#date').fill('2030-01-15T09:30');
    await page.locator('#compose-zone').fill('UTC');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(`**/posts/${rejectedId}?notice=saved`);
    expect(await page.locator('pre.preview-text').allTextContents()).toEqual(['Herald 2 release notes: what changed', 'Thanks to everyone who tested it.']);
    await shot('post-edited');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await resource(rejectedId)).toMatchObject({ state: 'DRAFT', date: '2030-01-15T09:30:00.000Z', items: [{ position: 0 }, { position: 1 }] });
  });

  it('the month calendar shows posts across channels with their state; a failed one stands out; retry publishes it', async () => {
    bluesky.server.failNext('POST', '/xrpc/com.atproto.repo.createRecord', { status: 400, json: { error: 'InvalidRequest', message: 'Record is invalid' } });
    const failing = await herald.rest('POST', '/posts', {
      type: 'now',
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: channelId }, value: [{ content: '<p>This one fails first</p>', image: [] }], settings: {} }],
    });
    const failedId = failing.body[0].postId;
    await waitFor(async () => ((await resource(failedId)).state === 'ERROR' ? true : undefined), 20_000);
    await page.goto('/calendar');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(new Date().toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }));
    const failedEntry = page.locator('.calendar li.entry.failed');
    expect(await failedEntry.count()).toBe(1);
    expect(await failedEntry.textContent()).toContain('This one fails first');
    expect(await page.getByRole('heading', { name: '1 post failed' }).isVisible()).toBe(true);
    expect(await page.locator('.calendar li.entry.status-published').count()).toBe(1);
    await shot('calendar');
    await failedEntry.getByRole('link').first().click();
    await page.waitForURL(`**/posts/${failedId}`);
    expect(await page.getByRole('alert').first().textContent()).toContain('Record is invalid');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForURL(`**/posts/${failedId}?notice=retried`);
    await waitFor(async () => ((await resource(failedId)).state === 'PUBLISHED' ? true : undefined), 20_000);
    expect(bluesky.records.filter((record) => record.record.text === 'This one fails first')).toHaveLength(1);
    // The rejected-then-edited draft sits in January 2030.
    await page.goto('/calendar?month=2030-01');
    expect(await page.locator('.calendar li.entry.status-draft').textContent()).toContain('Herald 2 release notes');
    await worker.stop();
  });
});
