// The MCP conformance suite's `authorization` run (pinned; it needs Node 22, so it runs through npx from the registry)
// against Herald's authorization server: the metadata scenario (client metadata documents advertised: no warning) and the
// authorization-code grant driven end to end with a client known by its metadata document (served by a fake on
// 127.0.0.1), approved on the consent screen as a person would, for the resource /api/mcp.
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

const CONFORMANCE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
let herald: Herald;
let documentServer: http.Server;


beforeAll(async () => {
  herald = await startHerald();
});
afterAll(async () => {
  documentServer?.close();
  await herald.stop();
});

it(`${CONFORMANCE} authorization: every check of both scenarios succeeds, with no warning`, async () => {
  const browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  const callbackPort = await freePort();
  documentServer = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ client_id: clientId, client_name: 'MCP conformance', redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`], token_endpoint_auth_method: 'none' }),
    );
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  const clientId = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}/client.json`;
  const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-conformance-'));

  const run = spawn(
    'npx',
    ['-y', '-p', 'node@22', '-p', CONFORMANCE, 'conformance', 'authorization', '--url', herald.url, '--client-id', clientId, '--resource', `${herald.url}/api/mcp`, '--port', String(callbackPort), '-o', outputDir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const exited = new Promise<number>((resolve) => run.on('close', (code) => resolve(code ?? -1)));
  const authorizationUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = new RegExp(`${herald.url.replace(/[.]/g, '\\.')}/oauth/authorize\\?\\S+`).exec(output);
      if (match) resolve(match[0]);
    };
    run.stdout.on('data', onData);
    run.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    void exited.then(() => reject(new Error(`conformance exited before asking for a login:\n${output}`)));
  });
  const { page, location } = await browser.approveConsent(authorizationUrl);
  expect(page.status, page.text.slice(0, 1500)).toBe(200);
  expect(page.text).toContain('Published by <strong>127.0.0.1');
  expect(location).toBeDefined();
  // The browser follows the redirect to the suite's callback server.
  await fetch(location!);
  const code = await exited;
  expect(code, output).toBe(0);

  const checks = fs
    .readdirSync(outputDir, { recursive: true })
    .filter((file) => String(file).endsWith('checks.json'))
    .flatMap((file) => JSON.parse(fs.readFileSync(path.join(outputDir, String(file)), 'utf8')) as { id: string; status: string; errorMessage?: string }[]);
  fs.rmSync(outputDir, { recursive: true, force: true });
  expect(checks.map((check) => check.id).sort()).toEqual(['authorization-code-grant', 'authorization-server-metadata', 'authorization-server-metadata-cimd']);
  expect(checks.filter((check) => check.status !== 'SUCCESS'), output).toEqual([]);
}, 180_000);
