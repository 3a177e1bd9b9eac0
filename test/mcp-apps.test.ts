// MCP Apps (src/mcp/apps.ts): the post preview and week views, read and called through real MCP clients over HTTP, and
// drawn in a real browser (Debian chromium) inside the ext-apps reference host: the package's AppBridge and
// PostMessageTransport on a test page served on 127.0.0.1, the view in a sandboxed iframe under the CSP its metadata
// declares, its tool calls forwarded to Herald by the test's MCP client. The preview renders the post, axe clean; a
// Schedule click reaches schedulePostTool; Edit re-validates; an owner approves an agent's post from the week view.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import type { Browser, Frame, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations } from './helpers/browser.js';
import { findProvider } from '../providers/index.js';
import { saveConnectedAccount } from '../tools/internal/integrations.js';
import { PostSchema } from '../src/db/entities.js';

const UI = 'io.modelcontextprotocol/ui';
let herald: Herald;
let owner: Client;
let agent: Client;
let textOnly: Client;
let browser: Browser;
let hostServer: http.Server;
let hostUrl: string;
let telegramId: string;
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function mcpClient(secret: string, rendersApps: boolean): Promise<Client> {
  const capabilities = rendersApps ? { extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } } } : {};
  const client = new Client({ name: rendersApps ? 'apps-host' : 'text-only', version: '1.0.0' }, { capabilities: capabilities as never });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  return client;
}

const post = (content: string, date = inDays(3)) => ({
  socialPost: [{ integrationId: telegramId, type: 'schedule', date, postsAndComments: [{ content }] }],
});
const countPosts = () => herald.services.orm.em.fork().count(PostSchema, { organizationId: herald.organizationId, deletedAt: null });

// The reference host: the package's AppBridge in a page, one view per iframe, its calls forwarded to Node.
const HOST_ENTRY = "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'; window.extApps = { AppBridge, PostMessageTransport };";
const HOST_PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ext-apps reference host</title><script src="/host.js"></script></head><body><main><h1>Host</h1></main></body></html>';

/** The view's CSP as a host applies it from the resource's metadata: only what the view declares (nothing external). */
function withCsp(document: string, csp: { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[] }): string {
  const list = (domains: string[] | undefined, base: string) => [base, ...(domains ?? [])].join(' ');
  const policy = `default-src 'none'; script-src ${list(csp.resourceDomains, "'unsafe-inline'")}; style-src ${list(csp.resourceDomains, "'unsafe-inline'")}; img-src ${list(csp.resourceDomains, 'data:')}; connect-src ${csp.connectDomains?.length ? csp.connectDomains.join(' ') : "'none'"}; frame-src ${csp.frameDomains?.length ? csp.frameDomains.join(' ') : "'none'"}; base-uri 'none'; form-action 'none'`;
  return document.replace('<head>', `<head><meta http-equiv="Content-Security-Policy" content="${policy}">`);
}

interface Hosted {
  page: Page;
  view: Frame;
  calls: { name: string; arguments: Record<string, unknown> }[];
  problems: string[];
}

/** Opens a page of the reference host and mounts the view of `uri` for a tool call made by `client`. */
async function host(client: Client, uri: string, call: { name: string; arguments: Record<string, unknown> }): Promise<Hosted> {
  const resource = await client.readResource({ uri });
  const content = resource.contents[0] as unknown as { text: string; _meta: { ui: { csp: object } } };
  const result = await client.callTool(call);
  const page = await (await browser.newContext({ viewport: { width: 900, height: 1000 }, timezoneId: 'Europe/Berlin' })).newPage();
  const calls: Hosted['calls'] = [];
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.exposeFunction('forwardToolCall', async (params: { name: string; arguments: Record<string, unknown> }) => {
    calls.push(params);
    return client.callTool(params);
  });
  await page.goto(hostUrl);
  await page.evaluate(
    async ({ document, args, result }) => {
      const { AppBridge, PostMessageTransport } = (window as any).extApps;
      const iframe = window.document.createElement('iframe');
      iframe.title = 'Herald view';
      iframe.setAttribute('sandbox', 'allow-scripts');
      iframe.style.width = '860px';
      iframe.style.height = '900px';
      window.document.querySelector('main')!.append(iframe);
      const bridge = new AppBridge(null, { name: 'ext-apps reference host (test)', version: '1.0.0' }, { serverTools: {}, logging: {} });
      bridge.oncalltool = (params: unknown) => (window as any).forwardToolCall(params);
      bridge.oninitialized = async () => {
        await bridge.sendToolInput({ arguments: args });
        await bridge.sendToolResult(result);
      };
      await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
      iframe.srcdoc = document;
    },
    { document: withCsp(content.text, content._meta.ui.csp), args: call.arguments, result },
  );
  await page.waitForFunction(() => window.frames.length === 1);
  const view = page.frames().find((frame) => frame !== page.mainFrame())!;
  return { page, view, calls, problems };
}

const shot = (hosted: Hosted, name: string) => hosted.page.screenshot({ path: path.join(SCREENSHOT_DIR, `mcp-apps-${name}.png`), fullPage: true });

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  herald = await startHerald();
  const integration = await saveConnectedAccount(herald.services.orm.em.fork(), herald.services, herald.organizationId, findProvider('telegram')!, {
    internalId: 'telegram-apps', name: 'Bakery news', profile: 'bakery', accessToken: 'token', refreshToken: 'refresh', data: { botToken: '1:abc', chatId: '@bakery' },
  });
  telegramId = integration.id;
  const key = await herald.rest('POST', '/keys', { name: 'the agent' });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  owner = await mcpClient(herald.apiKey, true);
  agent = await mcpClient(key.body.secret, true);
  textOnly = await mcpClient(key.body.secret, false);
  await owner.callTool({ name: 'timeZoneTool', arguments: { timeZone: 'Europe/Berlin' } });
  const bundle = await build({ stdin: { contents: HOST_ENTRY, resolveDir: process.cwd(), loader: 'js' }, bundle: true, format: 'iife', platform: 'browser', write: false, logLevel: 'silent' });
  const script = bundle.outputFiles[0].text;
  hostServer = http.createServer((request, response) => {
    if (request.url === '/host.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else response.writeHead(200, { 'content-type': 'text/html' }).end(HOST_PAGE);
  });
  await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}/`;
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([owner, agent, textOnly].map((client) => client?.close().catch(() => undefined)));
  hostServer?.close();
  await herald?.stop();
});

describe('MCP Apps over MCP', () => {
  it('tools/list links the preview from validatePostTool and schedulePostTool and the week from postsListTool; approvePost is an app-only tool for an approver whose client renders apps', async () => {
    const listed = new Map((await owner.listTools()).tools.map((tool) => [tool.name, tool]));
    for (const name of ['validatePostTool', 'schedulePostTool']) expect(listed.get(name)!._meta).toEqual({ ui: { resourceUri: 'ui://herald/post' } });
    expect(listed.get('postsListTool')!._meta).toMatchObject({ ui: { resourceUri: 'ui://herald/week' } });
    expect(listed.get('approvePost')!._meta).toMatchObject({ ui: { resourceUri: 'ui://herald/post', visibility: ['app'] } });
    // An agent key has no approve scope; a text-only client is offered no app-only tool.
    expect((await agent.listTools()).tools.some((tool) => tool.name === 'approvePost')).toBe(false);
    expect((await textOnly.listTools()).tools.some((tool) => tool.name === 'approvePost')).toBe(false);
  });

  it('the views are ui:// resources of the MCP Apps type, declaring a CSP with no origin at all, one inline script and nothing loaded', async () => {
    const { resources } = await owner.listResources();
    expect(resources.filter((resource) => resource.uri.startsWith('ui://')).map((resource) => [resource.uri, resource.mimeType])).toEqual([
      ['ui://herald/post', 'text/html;profile=mcp-app'],
      ['ui://herald/week', 'text/html;profile=mcp-app'],
    ]);
    for (const uri of ['ui://herald/post', 'ui://herald/week']) {
      const [content] = (await owner.readResource({ uri })).contents as { uri: string; mimeType: string; text: string; _meta: any }[];
      expect(content.mimeType).toBe('text/html;profile=mcp-app');
      expect(content._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [] });
      expect(content.text.match(/<script/g)).toHaveLength(1);
      expect(content.text).not.toMatch(/\s(?:src|href)=/);
    }
  });

  it('a client that does not render apps gets Herald unchanged: no links, no views, no drawn answer; an apps client gets the same text and structured answer with the view in _meta', async () => {
    const listed = (await textOnly.listTools()).tools;
    expect(listed.filter((tool) => tool._meta !== undefined)).toEqual([]);
    expect((await textOnly.listResources()).resources.some((resource) => resource.uri.startsWith('ui://'))).toBe(false);
    const args = post('<p><strong>Release day.</strong></p>');
    const plain = (await textOnly.callTool({ name: 'validatePostTool', arguments: args })) as any;
    expect(plain._meta).toBeUndefined();
    expect(plain.content).toHaveLength(1);
    expect(JSON.parse(plain.content[0].text)).toEqual(plain.structuredContent);
    expect(plain.structuredContent.entries[0].items[0].text).toBe('<strong>Release day.</strong>');
    const drawn = (await agent.callTool({ name: 'validatePostTool', arguments: args })) as any;
    expect(drawn.content).toEqual(plain.content);
    expect(drawn.structuredContent).toEqual(plain.structuredContent);
    expect(drawn._meta['herald/view'].html).toContain('pp-telegram');
  });
});

describe('the views in the ext-apps reference host, in a browser', () => {
  it('the preview renders the post as Telegram shows it, axe clean; a Schedule click reaches schedulePostTool and creates the post once', { timeout: 120_000 }, async () => {
    const before = await countPosts();
    const hosted = await host(owner, 'ui://herald/post', { name: 'validatePostTool', arguments: post('<p><strong>Release day.</strong> Fish &amp; chips</p>') });
    const drawn = hosted.view.locator('.pp-telegram');
    await drawn.locator('.pp-text strong', { hasText: 'Release day.' }).waitFor();
    expect(await drawn.locator('.pp-text').textContent()).toBe('Release day. Fish & chips');
    expect(await hosted.view.locator('.hv-verdict').textContent()).toContain('Ready');
    expect(await seriousViolations(hosted.view as unknown as Page)).toEqual([]);
    await shot(hosted, 'preview');

    await hosted.view.getByRole('button', { name: 'Schedule' }).click();
    await hosted.view.getByText('Scheduled.').waitFor();
    expect(hosted.calls.map((call) => call.name)).toEqual(['schedulePostTool']);
    expect(hosted.calls[0].arguments.idempotencyKey).toMatch(/^herald-app-/);
    expect(await countPosts()).toBe(before + 1);
    expect(await hosted.view.locator('.hv-state').textContent()).toMatch(/^Scheduled for \d{4}-\d{2}-\d{2} \d{2}:\d{2} GMT\+1$/);
    expect(await seriousViolations(hosted.view as unknown as Page)).toEqual([]);
    expect(hosted.problems).toEqual([]);
    await shot(hosted, 'scheduled');
  });

  it('Edit changes the text and re-validates through validatePostTool; the new preview says what is too long', { timeout: 120_000 }, async () => {
    const hosted = await host(owner, 'ui://herald/post', { name: 'validatePostTool', arguments: post('<p>Short</p>') });
    await hosted.view.getByRole('button', { name: 'Edit' }).click();
    await hosted.view.getByRole('textbox', { name: 'Bakery news' }).fill(`<p>${'x'.repeat(4100)}</p>`);
    await hosted.view.getByRole('button', { name: 'Preview the changes' }).click();
    await hosted.view.getByText('— too long').waitFor();
    expect(hosted.calls.map((call) => call.name)).toEqual(['validatePostTool']);
    expect(await hosted.view.getByRole('button', { name: 'Schedule' }).isDisabled()).toBe(true);
    expect(await seriousViolations(hosted.view as unknown as Page)).toEqual([]);
    await shot(hosted, 'edited');
  });

  it('the week view shows an agent\'s post waiting for approval on its Berlin day; the owner approves it from there', { timeout: 120_000 }, async () => {
    expect((await herald.rest('PUT', '/approval-settings', { agents: true, apps: [] })).status).toBe(200);
    const date = inDays(2);
    const scheduled = (await agent.callTool({ name: 'schedulePostTool', arguments: { ...post('<p>Weekend opening hours</p>', date), idempotencyKey: 'apps-week-1' } })) as any;
    const postId = scheduled.structuredContent.output[0].postId;
    expect(scheduled.structuredContent.output[0].approval.status).toBe('pending');
    const start = new Date(Date.now() - 86_400_000).toISOString();
    const end = new Date(Date.now() + 6 * 86_400_000).toISOString();
    const hosted = await host(owner, 'ui://herald/week', { name: 'postsListTool', arguments: { startDate: start, endDate: end } });
    const day = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'long', day: 'numeric', month: 'long' }).format(new Date(date));
    const section = hosted.view.getByRole('region', { name: day });
    await section.getByText('Weekend opening hours').waitFor();
    expect(await section.locator('time').first().textContent()).toBe(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(date)) + ' GMT+1');
    expect(await seriousViolations(hosted.view as unknown as Page)).toEqual([]);
    await shot(hosted, 'week');
    await section.getByRole('button', { name: 'Approve the post on Bakery news' }).click();
    await hosted.view.getByText('Approved.').waitFor();
    expect(hosted.calls).toEqual([{ name: 'approvePost', arguments: { id: postId } }]);
    expect((await herald.services.orm.em.fork().findOne(PostSchema, { id: postId }))!.state).toBe('QUEUE');
    expect(hosted.problems).toEqual([]);
  });
});
