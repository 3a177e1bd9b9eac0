// Third-party OAuth apps over real HTTP: registration in the console, consent, the token endpoint and every error of it,
// code expiry and reuse, secret rotation, app deletion, revocation on REST and MCP, scopes, PKCE and dynamic registration.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient, textOf } from './helpers/console-client.js';

const PASSWORD = 'correct horse battery';
const REDIRECT = 'https://app.example/callback';
let herald: Herald;
let owner: ConsoleClient;

interface RegisteredApp {
  id: string;
  clientId: string;
  clientSecret: string;
}

async function registerApp(name = 'Acme Scheduler', redirectUrl = REDIRECT): Promise<RegisteredApp> {
  const page = await owner.submitAndFollow('/apps', '/apps', { name, description: 'Plans your week', pictureUrl: '', redirectUrl });
  expect(page.status).toBe(200);
  const clientId = textOf(page, 'client-id');
  const rows = await herald.services.orm.em.fork().getConnection().execute('select id from oauth_app where client_id = ?', [clientId]);
  return { id: rows[0].id, clientId, clientSecret: textOf(page, 'client-secret') };
}

/** Goes through the consent screen as the owner and returns where the browser is sent. */
async function consent(query: Record<string, string>, action: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const path = `/oauth/authorize?${new URLSearchParams(query)}`;
  const page = await owner.get(path);
  expect(page.status, page.text.slice(0, 2000)).toBe(200);
  const hidden = Object.fromEntries([...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1], match[2].replace(/&amp;/g, '&')]));
  const answer = await owner.request('POST', '/oauth/authorize', { ...hidden, action });
  expect(answer.status).toBe(303);
  return new URL(answer.location!);
}

async function codeFor(app: RegisteredApp, extra: Record<string, string> = {}): Promise<string> {
  const back = await consent({ client_id: app.clientId, response_type: 'code', state: 'st4te', ...extra });
  expect(back.origin + back.pathname).toBe(extra.redirect_uri ?? REDIRECT);
  expect(back.searchParams.get('state')).toBe('st4te');
  return back.searchParams.get('code')!;
}

async function token(body: Record<string, string | undefined>, form = false): Promise<{ status: number; body: any; headers: Headers }> {
  const clean = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as Record<string, string>;
  const response = await fetch(`${herald.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? new URLSearchParams(clean).toString() : JSON.stringify(clean),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

const exchange = (app: RegisteredApp, code: string, extra: Record<string, string> = {}) =>
  token({ grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: app.clientSecret, ...extra });

async function mcpClient(accessToken: string, path = '/api/mcp'): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}${path}`), { requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } }));
  return client;
}

const restWith = (credential: string, method = 'GET', path = '/integrations', body?: unknown) => herald.rest(method, path, body, { authorization: credential });

beforeAll(async () => {
  herald = await startHerald();
  owner = new ConsoleClient(herald.url);
  await owner.signUp({ email: 'owner@example.com', password: PASSWORD, invitation: await setupToken(herald) });
});
afterAll(async () => {
  await herald.stop();
});

describe('the authorization-code flow', () => {
  it('shows the consent screen, redirects with code and state, and the code buys a pos_ token that works on REST and /api/mcp but not /api/mcp/<key>', async () => {
    const app = await registerApp();
    expect(app.clientId).toMatch(/^pca_[\w-]{32}$/);
    expect(app.clientSecret).toMatch(/^pcs_[\w-]{48}$/);
    const page = await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code&state=abc`);
    expect(page.text).toContain('Acme Scheduler');
    expect(page.text).toContain('Plans your week');
    expect(page.text).toContain('Create, schedule, change and delete posts');
    expect(page.headers.get('x-frame-options')).toBe('DENY');

    const code = await codeFor(app);
    expect(code).toMatch(/^[\w-]{32}$/);
    const answer = await exchange(app, code);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({ id: herald.organizationId, cus: '', access_token: expect.stringMatching(/^pos_[\w-]{40}$/), token_type: 'bearer', scope: 'mcp:read mcp:write' });
    const accessToken = answer.body.access_token as string;

    expect((await restWith(accessToken)).status).toBe(200);
    expect((await restWith(`Bearer ${accessToken}`, 'GET', '/is-connected')).body).toEqual({ connected: true });
    const client = await mcpClient(accessToken);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('schedulePostTool');
    await client.close();
    const byPath = await fetch(`${herald.url}/api/mcp/${accessToken}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(byPath.status).toBe(401);

    // Tokens are stored hashed.
    const rows = await herald.services.orm.em.fork().getConnection().execute('select token_hash from oauth_token');
    expect(JSON.stringify(rows)).not.toContain(accessToken);
  });

  it('Deny sends the user back with error=access_denied and the state, and no code', async () => {
    const app = await registerApp('Denied app');
    const back = await consent({ client_id: app.clientId, response_type: 'code', state: 'keep-me' }, 'deny');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('keep-me');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('shows an error page and never redirects for an unknown client_id, a wrong response_type or an unregistered redirect_uri', async () => {
    const app = await registerApp('Careful app');
    for (const query of [
      `client_id=pca_unknown&response_type=code&state=x`,
      `client_id=${app.clientId}&response_type=token&state=x`,
      `client_id=${app.clientId}&state=x`,
      `client_id=${app.clientId}&response_type=code&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    ]) {
      const page = await owner.get(`/oauth/authorize?${query}`);
      expect(page.status, query).toBe(400);
      expect(page.location).toBeUndefined();
      expect(page.text).toContain('cannot be completed');
    }
  });

  it('sends a logged-out user to log in first, then back to the consent screen', async () => {
    const app = await registerApp('Login first');
    const browser = new ConsoleClient(herald.url);
    const path = `/oauth/authorize?client_id=${app.clientId}&response_type=code&state=s`;
    const first = await browser.get(path);
    expect(first.status).toBe(303);
    expect(first.location).toBe(`/login?next=${encodeURIComponent(path)}`);
    const login = await browser.get(first.location!);
    const loggedIn = await browser.request('POST', '/login', { _csrf: browser.csrf(login), email: 'owner@example.com', password: PASSWORD, next: path });
    expect(loggedIn.location).toBe(path);
    expect((await browser.get(path)).text).toContain('Login first wants to access');
  });
});

describe('the token endpoint', () => {
  it('answers every error with an RFC 6749 body and the right status', async () => {
    const app = await registerApp('Errors app');
    const other = await registerApp('Other app');
    const code = await codeFor(app);
    const cases: [Record<string, string | undefined>, number, string][] = [
      [{ grant_type: 'client_credentials', code, client_id: app.clientId, client_secret: app.clientSecret }, 400, 'unsupported_grant_type'],
      [{ code, client_id: app.clientId, client_secret: app.clientSecret }, 400, 'invalid_request'],
      [{ grant_type: 'authorization_code', client_id: app.clientId, client_secret: app.clientSecret }, 400, 'invalid_request'],
      [{ grant_type: 'authorization_code', code, client_id: 'pca_nobody', client_secret: app.clientSecret }, 401, 'invalid_client'],
      [{ grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: 'pcs_wrong' }, 401, 'invalid_client'],
      [{ grant_type: 'authorization_code', code, client_id: app.clientId }, 401, 'invalid_client'],
      [{ grant_type: 'authorization_code', code: 'not-a-code', client_id: app.clientId, client_secret: app.clientSecret }, 400, 'invalid_grant'],
      [{ grant_type: 'authorization_code', code, client_id: other.clientId, client_secret: other.clientSecret }, 400, 'invalid_grant'],
    ];
    for (const [body, status, error] of cases) {
      const answer = await token(body);
      expect([answer.status, answer.body.error], JSON.stringify(body)).toEqual([status, error]);
      expect(typeof answer.body.error_description).toBe('string');
      expect(JSON.stringify(answer.body)).not.toContain(app.clientSecret);
    }
    expect((await exchange(app, code)).status).toBe(200);
    const garbage = await fetch(`${herald.url}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(garbage.status).toBe(400);
    expect((await garbage.json()).error).toBe('invalid_request');
  });

  it('accepts a form-encoded body and client_secret_basic', async () => {
    const app = await registerApp('Form app');
    const form = await token({ grant_type: 'authorization_code', code: await codeFor(app), client_id: app.clientId, client_secret: app.clientSecret }, true);
    expect(form.status).toBe(200);
    const basic = await fetch(`${herald.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: await codeFor(app) }).toString(),
    });
    expect(basic.status).toBe(200);
    expect((await basic.json()).access_token).toMatch(/^pos_/);
  });

  it('expires codes after 10 minutes on the injected clock', async () => {
    const app = await registerApp('Clock app');
    const start = new Date('2026-11-21T10:00:00Z');
    herald.setNow(start);
    try {
      const late = await codeFor(app);
      const inTime = await codeFor(app);
      herald.setNow(new Date(start.getTime() + 9 * 60_000 + 59_000));
      expect((await exchange(app, inTime)).status).toBe(200);
      herald.setNow(new Date(start.getTime() + 10 * 60_000));
      expect((await exchange(app, late)).body).toEqual({ error: 'invalid_grant', error_description: 'Code has expired' });
    } finally {
      herald.setNow(undefined);
    }
  });

  it('takes a code once; using it again fails and revokes the token it gave', async () => {
    const app = await registerApp('Reuse app');
    const code = await codeFor(app);
    const first = await exchange(app, code);
    expect(first.status).toBe(200);
    expect((await restWith(first.body.access_token)).status).toBe(200);
    const second = await exchange(app, code);
    expect([second.status, second.body.error]).toEqual([400, 'invalid_grant']);
    expect((await restWith(first.body.access_token)).status).toBe(401);
  });

  it('rotating the secret stops the old one at once for new exchanges and keeps issued tokens valid', async () => {
    const app = await registerApp('Rotating app');
    const issued = (await exchange(app, await codeFor(app))).body.access_token as string;
    const pending = await codeFor(app);
    const page = await owner.submitAndFollow('/apps', `/apps/${app.id}/rotate-secret`, { confirm: 'yes' });
    expect(page.text).toContain('Secret rotated');
    expect((await owner.get('/apps')).text).not.toContain(textOf(page, 'client-secret'));
    const newSecret = textOf(page, 'client-secret');
    expect(newSecret).not.toBe(app.clientSecret);
    expect((await exchange(app, pending)).body.error).toBe('invalid_client');
    expect((await exchange({ ...app, clientSecret: newSecret }, pending)).status).toBe(200);
    expect((await restWith(issued)).status).toBe(200);
    // Without the confirmation box nothing changes.
    expect((await owner.submit('/apps', `/apps/${app.id}/rotate-secret`, {})).status).toBe(400);
  });
});

describe('revocation', () => {
  it('deleting an app revokes its tokens at once on REST and on an open MCP session, removes it from approved apps, and its client_id stops working', async () => {
    const app = await registerApp('Doomed app');
    const accessToken = (await exchange(app, await codeFor(app))).body.access_token as string;
    const client = await mcpClient(accessToken);
    await client.listTools();
    expect((await owner.get('/approved')).text).toContain('Doomed app');

    expect((await owner.submit('/apps', `/apps/${app.id}/delete`, {})).status).toBe(400);
    expect((await owner.submit('/apps', `/apps/${app.id}/delete`, { confirm: 'yes' })).location).toBe('/apps?notice=deleted');
    expect((await restWith(accessToken)).status).toBe(401);
    await expect(client.listTools()).rejects.toThrow();
    expect((await owner.get('/approved')).text).not.toContain('Doomed app');
    expect((await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code`)).status).toBe(400);
    expect((await exchange(app, 'whatever')).body.error).toBe('invalid_client');
  });

  it('revoking an approved app ends its tokens on REST and MCP; other apps keep working', async () => {
    const app = await registerApp('Revoked app');
    const keeper = await registerApp('Keeper app');
    const revokedToken = (await exchange(app, await codeFor(app))).body.access_token as string;
    const keptToken = (await exchange(keeper, await codeFor(keeper))).body.access_token as string;
    const client = await mcpClient(revokedToken);
    await client.listTools();
    const approved = await owner.get('/approved');
    expect(approved.text).toContain('Revoked app');
    expect((await owner.submit('/approved', `/approved/${app.id}/revoke`)).location).toBe('/approved?notice=revoked');
    expect((await restWith(revokedToken)).status).toBe(401);
    await expect(client.listTools()).rejects.toThrow();
    const fresh = await fetch(`${herald.url}/api/mcp`, { method: 'POST', headers: { authorization: `Bearer ${revokedToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(fresh.status).toBe(401);
    expect((await restWith(keptToken)).status).toBe(200);
    expect((await owner.get('/approved')).text).not.toContain('Revoked app');
  });
});

describe('scopes', () => {
  it('a token with only mcp:read lists and calls only read-only tools, on MCP and REST alike, and the consent screen says so', async () => {
    const app = await registerApp('Reader app');
    const page = await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code&scope=mcp:read`);
    expect(page.text).toContain('It will not be able to create, change or delete anything.');
    expect(page.text).not.toContain('(mcp:write)');
    const answer = await exchange(app, await codeFor(app, { scope: 'mcp:read' }));
    expect(answer.body.scope).toBe('mcp:read');
    const client = await mcpClient(answer.body.access_token);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('integrationList');
    expect(names).not.toContain('schedulePostTool');
    expect((await client.callTool({ name: 'integrationList', arguments: {} })).isError).toBeFalsy();
    // A write tool called anyway is a 403 step-up challenge naming the scope to ask for (RFC 6750 §3.1), not a lost tool.
    await expect(client.callTool({ name: 'schedulePostTool', arguments: { socialPost: [] } })).rejects.toThrow(/403.*lacks the mcp:write scope/);
    await client.close();
    const challenged = await fetch(`${herald.url}/api/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${answer.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'schedulePostTool', arguments: {} } }),
    });
    expect(challenged.status).toBe(403);
    expect(challenged.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="${herald.url}/.well-known/oauth-protected-resource/api/mcp"`,
    );
    const rest = await restWith(answer.body.access_token, 'DELETE', '/posts/some-post');
    expect(rest.status).toBe(403);
    expect(rest.body.code).toBe('forbidden');
    expect((await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code&scope=admin`)).status).toBe(400);
  });
});

describe('PKCE and dynamic registration', () => {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');

  async function register(metadata: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${herald.url}/api/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
    return { status: response.status, body: await response.json() };
  }

  it('registers a public client without a secret; it must use PKCE S256 and repeat the redirect_uri', async () => {
    const loopback = 'http://127.0.0.1:33418/callback';
    const registered = await register({ redirect_uris: [loopback], client_name: 'Inspector', token_endpoint_auth_method: 'none' });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ client_id: expect.stringMatching(/^pca_/), token_endpoint_auth_method: 'none', redirect_uris: [loopback], grant_types: ['authorization_code'], client_secret_expires_at: 0 });
    expect(registered.body.client_secret).toBeUndefined();
    const app = { id: '', clientId: registered.body.client_id as string, clientSecret: '' };

    const noPkce = await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code&redirect_uri=${encodeURIComponent(loopback)}`);
    expect(noPkce.status).toBe(400);
    expect(noPkce.text).toContain('must use PKCE');
    const plain = await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code&redirect_uri=${encodeURIComponent(loopback)}&code_challenge=${challenge}&code_challenge_method=plain`);
    expect(plain.text).toContain('Only the S256');
    const page = await owner.get(`/oauth/authorize?client_id=${app.clientId}&response_type=code&redirect_uri=${encodeURIComponent(loopback)}&code_challenge=${challenge}&code_challenge_method=S256`);
    expect(page.text).toContain('registered itself');

    const pkce = { redirect_uri: loopback, code_challenge: challenge, code_challenge_method: 'S256' };
    const base = (code: string) => ({ grant_type: 'authorization_code', code, client_id: app.clientId });
    let code = await codeFor(app, pkce);
    expect((await token({ ...base(code), redirect_uri: loopback })).body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier is required' });
    code = await codeFor(app, pkce);
    expect((await token({ ...base(code), redirect_uri: loopback, code_verifier: 'x'.repeat(43) })).body.error_description).toBe('Invalid code_verifier');
    code = await codeFor(app, pkce);
    expect((await token({ ...base(code), code_verifier: verifier, redirect_uri: 'http://127.0.0.1:1/other' })).body.error_description).toBe('redirect_uri does not match the authorization request');
    code = await codeFor(app, pkce);
    const ok = await token({ ...base(code), code_verifier: verifier, redirect_uri: loopback, resource: `${herald.url}/api/mcp-oauth` }, true);
    expect(ok.status).toBe(200);
    expect((await mcpClient(ok.body.access_token, '/api/mcp-oauth')).getServerVersion()?.name).toBe('Herald');
  });

  it('refuses redirect URIs that are not https or loopback http, and bad metadata, with RFC 7591 errors', async () => {
    expect((await register({ redirect_uris: ['http://app.example/cb'] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: ['javascript:alert(1)'] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: ['https://app.example/cb#frag'] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({})).status).toBe(400);
    expect((await register({ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'private_key_jwt' })).body.error).toBe('invalid_client_metadata');
    // Grants: only this server's (authorization_code, the device grant); redirect URIs stay required for authorization_code.
    const foreign = await register({ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] });
    expect(foreign.body).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringContaining('urn:ietf:params:oauth:grant-type:device_code') });
    expect((await register({ redirect_uris: ['https://app.example/cb'], grant_types: 'authorization_code' })).body.error).toBe('invalid_client_metadata');
    expect((await register({ grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'] })).body.error).toBe('invalid_redirect_uri');
    const confidential = await register({ redirect_uris: ['https://app.example/cb', 'cursor://anysphere.cursor-retrieval/oauth/callback'] });
    expect(confidential.status).toBe(201);
    expect(confidential.body.client_secret).toMatch(/^pcs_/);
  });

  it('console apps refuse a plain-http Redirect URL outside loopback', async () => {
    const page = await owner.submit('/apps', '/apps', { name: 'Insecure', redirectUrl: 'http://app.example/cb' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('must use https');
  });
});

describe('/api/mcp-oauth discovery', () => {
  it('answers 401 with the resource metadata URL, and serves RFC 9728 and RFC 8414 documents', async () => {
    const unauthenticated = await fetch(`${herald.url}/api/mcp-oauth`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(unauthenticated.status).toBe(401);
    const metadataUrl = `${herald.url}/.well-known/oauth-protected-resource/api/mcp-oauth`;
    expect(unauthenticated.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp:read mcp:write"`);
    const wrong = await fetch(`${herald.url}/api/mcp-oauth`, { method: 'POST', headers: { authorization: 'Bearer pos_nope', 'content-type': 'application/json' }, body: '{}' });
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const preflight = await fetch(metadataUrl, { method: 'OPTIONS', headers: { origin: 'http://localhost:6274', 'access-control-request-headers': 'mcp-protocol-version' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('MCP-Protocol-Version');
    const resource = await (await fetch(metadataUrl)).json();
    expect(resource).toMatchObject({ resource: `${herald.url}/api/mcp-oauth`, authorization_servers: [herald.url], scopes_supported: ['mcp:read', 'mcp:write'] });
    const server = await (await fetch(`${herald.url}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: herald.url,
      authorization_endpoint: `${herald.url}/oauth/authorize`,
      token_endpoint: `${herald.url}/api/oauth/token`,
      registration_endpoint: `${herald.url}/api/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    expect((await fetch(`${herald.url}/.well-known/oauth-protected-resource`)).status).toBe(404);
  });
});

describe('clean-up', () => {
  it('prunes expired sessions and codes and dynamic clients that never got a token, and keeps the rest', async () => {
    const { pruneExpiredAccess } = await import('../tools/internal/oauth-apps.js');
    const db = () => herald.services.orm.em.fork().getConnection();
    const unused = await (await fetch(`${herald.url}/api/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://unused.example/cb'] }) })).json();
    const used = await (await fetch(`${herald.url}/api/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT] }) })).json();
    const usedApp = { id: '', clientId: used.client_id, clientSecret: used.client_secret };
    const accessToken = (await exchange(usedApp, await codeFor(usedApp))).body.access_token;
    const later = new Date(Date.now() + 31 * 24 * 60 * 60 * 1000);
    await pruneExpiredAccess(herald.services.orm.em.fork(), later);
    const clients = (await db().execute('select client_id from oauth_app where dynamic')).map((row) => String(row.client_id));
    expect(clients).toContain(used.client_id);
    expect(clients).not.toContain(unused.client_id);
    expect(await db().execute('select count(*)::int as n from web_session')).toEqual([{ n: 0 }]);
    expect(await db().execute('select count(*)::int as n from oauth_code')).toEqual([{ n: 0 }]);
    expect((await restWith(accessToken)).status).toBe(200);
  });
});
