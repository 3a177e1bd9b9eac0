// OAuth as today's MCP clients use it (issue 32), over real HTTP: one URL to paste (/api/mcp and /mcp challenge with their
// protected resource metadata), tokens of an hour bound to their resource (RFC 8707) with rotating refresh tokens, `iss` in
// authorization responses (RFC 9207), and clients known by their metadata document (CIMD) served by a fake on 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';

const REDIRECT = 'http://127.0.0.1:53682/oauth/callback';
const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');
const pkce = { code_challenge: challenge, code_challenge_method: 'S256', redirect_uri: REDIRECT };
let herald: Herald;
let owner: ConsoleClient;

/** A client's metadata documents: path → [status, headers, body]; counts the fetches. */
const documents = new Map<string, { status?: number; headers?: Record<string, string>; body: string }>();
const fetched: string[] = [];
let documentServer: http.Server;
let documentOrigin = '';

beforeAll(async () => {
  herald = await startHerald();
  owner = new ConsoleClient(herald.url);
  await owner.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  documentServer = http.createServer((request, response) => {
    fetched.push(request.url!);
    const document = documents.get(request.url!);
    if (!document) return void response.writeHead(404).end();
    response.writeHead(document.status ?? 200, { 'content-type': 'application/json', ...document.headers }).end(document.body);
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  documentOrigin = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  documentServer.close();
  await herald.stop();
});

async function post(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${herald.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } }),
  });
}

/** The consent screen as the owner: where the browser is sent back (the page's text too). */
async function consent(query: Record<string, string>): Promise<{ back: URL; page: string }> {
  const page = await owner.get(`/oauth/authorize?${new URLSearchParams(query)}`);
  expect(page.status, page.text.slice(0, 1500)).toBe(200);
  const hidden = Object.fromEntries([...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1], match[2].replace(/&amp;/g, '&')]));
  const answer = await owner.request('POST', '/oauth/authorize', { ...hidden, action: 'approve' });
  expect(answer.status).toBe(303);
  return { back: new URL(answer.location!), page: page.text };
}

async function token(body: Record<string, string>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${herald.url}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });
  return { status: response.status, body: await response.json() };
}

async function registerPublicClient(): Promise<string> {
  const response = await fetch(`${herald.url}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Desktop client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
  });
  const body = await response.json();
  expect(body.grant_types).toEqual(['authorization_code', 'refresh_token']);
  return body.client_id;
}

async function listTools(accessToken: string, path = '/api/mcp'): Promise<string[]> {
  const client = new Client({ name: 'tokens-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}${path}`), { requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } }));
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  await client.close();
  return names;
}

describe('one URL to paste', () => {
  it('/api/mcp and /mcp answer a request without a credential with 401 pointing at their own protected resource metadata', async () => {
    for (const path of ['/api/mcp', '/mcp', '/api/mcp-oauth', '/mcp-oauth']) {
      const response = await post(path);
      expect(response.status, path).toBe(401);
      const metadataUrl = `${herald.url}/.well-known/oauth-protected-resource${path}`;
      expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp:read mcp:write"`);
      const metadata = await (await fetch(metadataUrl)).json();
      expect(metadata).toMatchObject({ resource: `${herald.url}${path}`, authorization_servers: [herald.url], scopes_supported: ['mcp:read', 'mcp:write'] });
    }
    expect((await post('/api/mcp', { authorization: 'Bearer pos_not-a-token' })).headers.get('www-authenticate')).toContain('error="invalid_token"');
    // API keys keep working there.
    expect(await listTools(herald.apiKey)).toContain('schedulePostTool');
  });

  it('the authorization server advertises client metadata documents, iss in responses and the refresh grant', async () => {
    const server = await (await fetch(`${herald.url}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({ client_id_metadata_document_supported: true, authorization_response_iss_parameter_supported: true });
    expect(server.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
  });
});

describe('tokens of an hour, bound to their resource, renewed by rotating refresh tokens', () => {
  it('a code for /api/mcp gives an hour-long MCP token and a refresh token, with iss in the redirect; the token is not a REST key', async () => {
    const clientId = await registerPublicClient();
    const { back } = await consent({ client_id: clientId, response_type: 'code', state: 's', resource: `${herald.url}/api/mcp`, ...pkce });
    expect(back.searchParams.get('iss')).toBe(herald.url);
    const answer = await token({ grant_type: 'authorization_code', client_id: clientId, code: back.searchParams.get('code')!, code_verifier: verifier, redirect_uri: REDIRECT, resource: `${herald.url}/api/mcp` });
    expect(answer.status).toBe(200);
    // Only standard fields (RFC 6749 §5.1): no id, no cus.
    expect(answer.body).toEqual({ access_token: expect.stringMatching(/^pos_/), token_type: 'bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'mcp:read mcp:write' });
    expect(await listTools(answer.body.access_token, '/api/mcp')).toContain('schedulePostTool');
    expect(await listTools(answer.body.access_token, '/mcp-oauth')).toContain('schedulePostTool');
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: answer.body.access_token })).status).toBe(401);
    // An hour later it no longer works; its refresh token gives a new one.
    herald.setNow(new Date(Date.now() + 3601_000));
    try {
      expect((await post('/api/mcp', { authorization: `Bearer ${answer.body.access_token}` })).status).toBe(401);
      const renewed = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: answer.body.refresh_token });
      expect(renewed.status).toBe(200);
      expect(renewed.body).toEqual({ access_token: expect.stringMatching(/^pos_/), token_type: 'bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'mcp:read mcp:write' });
      expect(renewed.body.refresh_token).not.toBe(answer.body.refresh_token);
      expect(await listTools(renewed.body.access_token)).toContain('integrationList');
      // The used refresh token presented again: the whole grant is revoked, the fresh tokens too.
      const replayed = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: answer.body.refresh_token });
      expect([replayed.status, replayed.body.error]).toEqual([400, 'invalid_grant']);
      expect(replayed.body.error_description).toContain('already used');
      expect((await post('/api/mcp', { authorization: `Bearer ${renewed.body.access_token}` })).status).toBe(401);
      expect((await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: renewed.body.refresh_token })).body.error).toBe('invalid_grant');
    } finally {
      herald.setNow(undefined);
    }
  });

  it('refuses a resource that is not one of Herald\'s with invalid_target, at the token endpoint and on the consent screen', async () => {
    const clientId = await registerPublicClient();
    const { back } = await consent({ client_id: clientId, response_type: 'code', state: 's', ...pkce });
    const code = back.searchParams.get('code')!;
    const foreign = await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: 'https://other.example/mcp' });
    expect([foreign.status, foreign.body.error]).toEqual([400, 'invalid_target']);
    expect(foreign.body.error_description).toContain(`${herald.url}/api/mcp`);
    // The code is still good for Herald's own resource.
    const rest = await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: `${herald.url}/api/public/v1` });
    expect(rest.status).toBe(200);
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: rest.body.access_token })).status).toBe(200);
    expect((await post('/api/mcp', { authorization: `Bearer ${rest.body.access_token}` })).status).toBe(401);
    const page = await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', resource: 'https://other.example/mcp', ...pkce })}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain('is not one of this server');
  });
});

describe('clients known by their metadata document (CIMD)', () => {
  const doc = (path: string, extra: Record<string, unknown> = {}) => JSON.stringify({ client_id: `${documentOrigin}${path}`, client_name: 'Remote Assistant', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...extra });

  it('fetches the document, names its domain on the consent screen, and the public client gets a token with PKCE, no registration', async () => {
    documents.set('/assistant.json', { body: doc('/assistant.json'), headers: { 'cache-control': 'max-age=600' } });
    const clientId = `${documentOrigin}/assistant.json`;
    const { back, page } = await consent({ client_id: clientId, response_type: 'code', state: 's', ...pkce });
    expect(page).toContain('Remote Assistant wants to access');
    expect(page).toContain(`Published by <strong>127.0.0.1:${new URL(documentOrigin).port}</strong>`);
    expect(page).not.toContain('registered itself');
    expect(page).toContain('returns to a program on this computer');
    const answer = await token({ grant_type: 'authorization_code', client_id: clientId, code: back.searchParams.get('code')!, code_verifier: verifier, redirect_uri: REDIRECT });
    expect(answer.status).toBe(200);
    expect(answer.body.expires_in).toBe(3600);
    expect(await listTools(answer.body.access_token)).toContain('schedulePostTool');
    // Cached for its max-age: a second authorization reads no document.
    const before = fetched.length;
    await consent({ client_id: clientId, response_type: 'code', state: 's', ...pkce });
    expect(fetched.length).toBe(before);
    // PKCE is required of it.
    const noPkce = await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT })}`);
    expect(noPkce.text).toContain('must use PKCE');
  });

  it('refuses a document whose client_id is not its URL, a redirect URI it does not list, a redirect, an oversized document, and plain http off loopback; failures are remembered', async () => {
    const cases: [string, { status?: number; headers?: Record<string, string>; body: string }, string][] = [
      ['/impostor.json', { body: doc('/someone-else.json') }, 'is not the URL it is served at'],
      ['/moved.json', { status: 302, headers: { location: '/assistant.json' }, body: '' }, 'answered a redirect'],
      ['/huge.json', { body: doc('/huge.json', { padding: 'x'.repeat(6000) }) }, 'larger than 5 KB'],
      ['/secret.json', { body: doc('/secret.json', { token_endpoint_auth_method: 'client_secret_post' }) }, 'not supported here'],
      ['/missing.json', { status: 404, body: '' }, 'answered HTTP 404'],
    ];
    for (const [path, document, message] of cases) {
      if (document.status !== 404) documents.set(path, document);
      const page = await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: `${documentOrigin}${path}`, response_type: 'code', ...pkce })}`);
      expect(page.status, path).toBe(400);
      expect(page.text, path).toContain(message);
      expect(page.location).toBeUndefined();
    }
    // The failure is remembered: asking again reads nothing.
    const before = fetched.length;
    expect((await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: `${documentOrigin}/impostor.json`, response_type: 'code', ...pkce })}`)).status).toBe(400);
    expect(fetched.length).toBe(before);
    documents.set('/listed.json', { body: doc('/listed.json') });
    const unlisted = await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: `${documentOrigin}/listed.json`, response_type: 'code', ...pkce, redirect_uri: 'http://127.0.0.1:9/elsewhere' })}`);
    expect(unlisted.text).toContain('redirect_uri does not match');
    const plain = await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: 'http://app.example/client.json', response_type: 'code', ...pkce })}`);
    expect(plain.text).toContain('must be an https URL');
  });

  it('a document served with no-store is read again at each authorization', async () => {
    documents.set('/fresh.json', { body: doc('/fresh.json'), headers: { 'cache-control': 'no-store' } });
    const clientId = `${documentOrigin}/fresh.json`;
    await consent({ client_id: clientId, response_type: 'code', state: 's', ...pkce });
    const before = fetched.filter((path) => path === '/fresh.json').length;
    await owner.get(`/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', ...pkce })}`);
    expect(fetched.filter((path) => path === '/fresh.json').length).toBe(before + 1);
  });
});

describe('in production the guard keeps loopback out', () => {
  it('a client_id on a loopback address is refused by the SSRF guard', async () => {
    const production = await startHerald({}, { platformGuard: {} });
    try {
      const browser = new ConsoleClient(production.url);
      await browser.signUp({ email: 'prod@example.com', password: 'correct horse battery', invitation: await setupToken(production) });
      documents.set('/prod.json', { body: JSON.stringify({ client_id: `${documentOrigin}/prod.json`, client_name: 'Local', redirect_uris: [REDIRECT] }) });
      const page = await browser.get(`/oauth/authorize?${new URLSearchParams({ client_id: `${documentOrigin}/prod.json`, response_type: 'code', ...pkce })}`);
      expect(page.status).toBe(400);
      expect(page.text).toContain('blocked address (loopback)');
      expect(fetched).not.toContain('/prod.json');
    } finally {
      await production.stop();
    }
  });
});
