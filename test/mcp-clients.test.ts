// Real MCP clients of the README's table against Herald (issue 32). MCP Inspector 2.x (pinned; it needs Node 22, so it
// runs through npx from the registry) connecting to /api/mcp as the assistants people use do: no key, OAuth only, the client known by its Client ID Metadata Document (CIMD,
// served by a fake on 127.0.0.1), approved on the consent screen as a person would, then tools/list over the token it
// got; nothing is registered dynamically: the client id is the document's URL. The Inspector with a key in each protocol
// era, and mcp-remote (the stdio bridge of Claude Desktop) with --protocol auto, seen through a recording proxy.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { freePort } from './helpers/herald-process.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';
let herald: Herald;
let documentServer: http.Server;
let home: string;


beforeAll(async () => {
  herald = await startHerald({}, { guard: { allowLoopback: true } });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-inspector-'));
});
afterAll(async () => {
  documentServer?.close();
  await herald.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

/** A proxy in front of Herald that writes down what a client sends: its methods and protocol versions. */
async function recordingProxy() {
  const seen: { method?: string; version?: string }[] = [];
  const proxy = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks);
      try {
        const parsed = body.length ? JSON.parse(body.toString()) : undefined;
        for (const message of [parsed].flat()) if (message) seen.push({ method: message.method, version: (request.headers['mcp-protocol-version'] as string) ?? message.params?._meta?.['io.modelcontextprotocol/protocolVersion'] ?? message.params?.protocolVersion });
      } catch {
        // not JSON: passed on as it is
      }
      const answer = await fetch(`${herald.url}${request.url}`, { method: request.method, headers: Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)) as [string, string][]), body: body.length ? body : undefined });
      response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name))));
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return { seen, proxy, proxyUrl };
}

const count = async (table: string) => Number((await herald.services.orm.em.fork().getConnection().execute(`select count(*) as n from ${table}`))[0].n);

it(`${INSPECTOR} --client-metadata-url connects to /api/mcp by OAuth without registering, and lists the tools`, async () => {
  const browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  const callbackPort = await freePort();
  const callbackUrl = `http://127.0.0.1:${callbackPort}/oauth/callback`;
  let fetchedDocument = 0;
  documentServer = http.createServer((_request, response) => {
    fetchedDocument++;
    response
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' })
      .end(JSON.stringify({ client_id: clientId, client_name: 'MCP Inspector', redirect_uris: [callbackUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }));
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  const clientId = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}/inspector-client.json`;
  const appsBefore = await count('oauth_app');
  const bin = path.join(home, 'bin');
  const opened = path.join(home, 'opened.txt');
  fs.mkdirSync(bin);
  for (const name of ['xdg-open', 'open', 'sensible-browser', 'x-www-browser']) fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "$1" >> '${opened}'\n`, { mode: 0o755 });

  const run = spawn(
    'npx',
    ['-y', '-p', 'node@22', '-p', INSPECTOR, 'mcp-inspector', '--cli', `${herald.url}/api/mcp`, '--transport', 'http', '--client-metadata-url', clientId, '--callback-url', callbackUrl, '--method', 'tools/list', '--format', 'json'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own state (catalog, OAuth store) in a fresh home. It opens the login page in a browser (MCP_AUTO_OPEN_ENABLED:
      // no TTY here): the "browser" is an xdg-open on PATH that writes the URL down, and this test plays the person.
      env: { ...process.env, HOME: home, PATH: `${bin}${path.delimiter}${process.env.PATH}`, MCP_AUTO_OPEN_ENABLED: 'true', MCP_CATALOG_PATH: path.join(home, 'mcp.json'), MCP_CLIENT_CONFIG_PATH: path.join(home, 'client.json') },
    },
  );
  let stdout = '';
  let output = '';
  const exited = new Promise<number>((resolve) => run.on('close', (code) => resolve(code ?? -1)));
  const authorizationUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = new RegExp(`${herald.url.replace(/[.]/g, '\\.')}/(api/)?oauth/authorize\\?\\S+`).exec(output);
      if (match) resolve(match[0]);
    };
    run.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onData(chunk);
    });
    run.stderr.on('data', onData);
    const watch = setInterval(() => {
      if (fs.existsSync(opened)) onData(Buffer.from(fs.readFileSync(opened, 'utf8')));
    }, 200);
    void exited.then(() => clearInterval(watch));
    void exited.then(() => reject(new Error(`the Inspector exited before asking for a login:\n${output}`)));
  });
  const authorization = new URL(authorizationUrl);
  expect(authorization.searchParams.get('client_id')).toBe(clientId);
  const { page, location } = await browser.approveConsent(authorizationUrl);
  expect(page.status, page.text.slice(0, 1500)).toBe(200);
  // The consent screen names the document's host, not the unverified-app warning of a registered client.
  expect(page.text).toContain('Published by <strong>127.0.0.1');
  expect(location).toContain(callbackUrl);
  expect(new URL(location!).searchParams.get('iss')).toBeTruthy();
  // The browser follows the redirect to the Inspector's callback listener.
  await fetch(location!);
  expect(await exited, output).toBe(0);

  const listed = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { tools?: { name: string }[]; result?: { tools: { name: string }[] } };
  const names = (listed.tools ?? listed.result?.tools ?? []).map((tool) => tool.name);
  expect(names, stdout.slice(0, 2000)).toContain('schedulePostTool');
  expect(names).toContain('integrationList');
  expect(fetchedDocument).toBeGreaterThan(0);
  // No registration: the one new app row is the cached metadata document (its client id the URL, re-fetched when its
  // caching headers say), none registered dynamically.
  const connection = herald.services.orm.em.fork().getConnection();
  expect(await count('oauth_app')).toBe(appsBefore + 1);
  expect(await count('oauth_app where dynamic')).toBe(0);
  const [app] = await connection.execute(`select id, client_id, metadata_expires_at from oauth_app order by created_at desc limit 1`);
  expect(app.client_id).toBe(clientId);
  expect(app.metadata_expires_at).not.toBeNull();
  const [token] = await connection.execute(`select app_id, resource, expires_at from oauth_token order by created_at desc limit 1`);
  expect(token.app_id).toBe(app.id);
  expect(token.resource).toBe(`${herald.url}/api/mcp`);
  expect(token.expires_at).not.toBeNull();
}, 240_000);

it.each(['modern', 'auto', 'legacy'] as const)(`${INSPECTOR} --protocol-era %s with an agent key in the header lists the tools and calls one`, async (era) => {
  const key = await herald.rest('POST', '/keys', { name: `Inspector ${era}` });
  expect(key.status).toBe(201);
  const { seen, proxy, proxyUrl } = await recordingProxy();
  const inspector = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const run = spawn('npx', ['-y', '-p', 'node@22', '-p', INSPECTOR, 'mcp-inspector', '--cli', `${proxyUrl}/api/mcp`, '--transport', 'http', '--protocol-era', era, '--header', `Authorization: Bearer ${key.body.secret}`, '--format', 'json', '-q', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json'), MCP_CLIENT_CONFIG_PATH: path.join(home, 'client.json') },
      });
      let stdout = '';
      let stderr = '';
      run.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
      run.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      run.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  const listed = await inspector(['--method', 'tools/list']);
  expect(listed.code, listed.stderr.slice(-2000)).toBe(0);
  const answer = JSON.parse(listed.stdout);
  const tools = ((answer.tools ?? answer.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
  expect(tools.length, listed.stdout.slice(0, 600)).toBeGreaterThan(0);
  expect(tools).toContain('schedulePostTool');
  // An agent key sees no key, webhook or approval tools.
  expect(tools).not.toContain('deleteIntegration');
  const called = await inspector(['--method', 'tools/call', '--tool-name', 'timeZoneTool', '--tool-args-json', '{}']);
  expect(called.code, called.stderr.slice(-2000)).toBe(0);
  const result = JSON.parse(called.stdout);
  expect((result.result ?? result).structuredContent?.timeZone, called.stdout.slice(0, 600)).toBe('UTC');
  proxy.close();
  const methods = seen.map((message) => message.method);
  if (era === 'legacy') expect(methods).toContain('initialize');
  else {
    // The 2026-07-28 revision: no initialize, the version on each request (auto finds that Herald speaks it).
    expect(methods, JSON.stringify(seen)).not.toContain('initialize');
    expect(seen.filter((message) => message.method === 'tools/call').map((message) => message.version)).toEqual(['2026-07-28']);
  }
}, 120_000);

it('mcp-remote@0.15.1 --protocol auto bridges a stdio client to /api/mcp on the 2026-07-28 revision', async () => {
  const key = await herald.rest('POST', '/keys', { name: 'mcp-remote' });
  const { seen, proxy, proxyUrl } = await recordingProxy();
  const client = new Client({ name: 'desktop', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: 'npx',
      args: ['-y', 'mcp-remote@0.15.1', `${proxyUrl}/api/mcp`, '--allow-http', '--transport', 'http-only', '--protocol', 'auto', '--header', `Authorization: Bearer ${key.body.secret}`],
      env: { ...(process.env as Record<string, string>), HOME: home, MCP_REMOTE_CONFIG_DIR: path.join(home, 'mcp-remote') },
      stderr: 'pipe',
    }),
  );
  try {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('schedulePostTool');
    const answer = (await client.callTool({ name: 'timeZoneTool', arguments: {} })) as { structuredContent?: { timeZone: string } };
    expect(answer.structuredContent?.timeZone).toBe('UTC');
  } finally {
    await client.close();
    proxy.close();
  }
  expect(seen.map((message) => message.method), JSON.stringify(seen)).not.toContain('initialize');
  expect(seen.filter((message) => message.method === 'tools/call').map((message) => message.version)).toEqual(['2026-07-28']);
}, 120_000);

it(`${INSPECTOR} --strict finds no tool schema an MCP client cannot port, for the key that sees every tool`, async () => {
  const run = spawn('npx', ['-y', '-p', 'node@22', '-p', INSPECTOR, 'mcp-inspector', '--cli', `${herald.url}/api/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${herald.apiKey}`, '--method', 'tools/list', '--strict', '--format', 'json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json'), MCP_CLIENT_CONFIG_PATH: path.join(home, 'client.json') },
  });
  let stderr = '';
  run.stdout.resume();
  run.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const code = await new Promise<number>((resolve) => run.on('close', (exit) => resolve(exit ?? -1)));
  const report = stderr.split('\n').filter((line) => !/EBADENGINE|^npm warn/.test(line) && line.trim() !== '' && !/^\s*(package|required|current|}):?/.test(line.trim()));
  console.log(`Inspector --strict on tools/list: exit ${code}; ${report.length ? report.slice(0, 40).join('\n') : 'nothing reported'}`);
  expect(code, report.join('\n')).toBe(0);
  // Its portability report: a "Warning: tool …" or "Error: tool …" per problem, and a count line when there are any.
  expect(report.filter((line) => /^(Warning|Error): tool|\d+ errors?, \d+ warnings?/.test(line.trim())), report.join('\n')).toEqual([]);
}, 120_000);
