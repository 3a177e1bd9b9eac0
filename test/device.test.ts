// The device authorization grant (RFC 8628): the postiz CLI's form and the standard one, the console's verification page,
// the token and its revocation, and the errors a polling client meets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient, textOf } from './helpers/console-client.js';

let herald: Herald;
let browser: ConsoleClient;

beforeAll(async () => {
  herald = await startHerald({ DEVICE_POLL_INTERVAL_SECONDS: '2' });
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'a long enough password', invitation: await setupToken(herald) });
});

afterAll(async () => {
  await herald?.stop();
});

async function post(path: string, body?: Record<string, string>, form = false) {
  const response = await fetch(`${herald.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', 'user-agent': 'postiz-cli-test/2.1.0' },
    body: body === undefined ? undefined : form ? new URLSearchParams(body).toString() : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any>, headers: response.headers };
}

/** Moves Herald's clock past the polling interval, so the next poll is not "too soon". */
function pollLater(seconds = 3) {
  herald.setNow(new Date(Date.now() + (pollClock += seconds) * 1000));
}
let pollClock = 0;

describe('the postiz CLI form', () => {
  it('device code → pending → the person approves on /device → a pos_ token that works on REST, listed and revocable', async () => {
    const started = await post('/device/code');
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ verification_uri: `${herald.url}/device`, expires_in: 900, interval: 2 });
    expect(started.body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.headers.get('cache-control')).toBe('no-store');

    pollLater();
    const pending = await post('/device/token', { device_code: started.body.device_code });
    expect(pending.status).toBe(400);
    expect(pending.body.error).toBe('authorization_pending');
    // Polling again at once is too soon.
    const tooSoon = await post('/device/token', { device_code: started.body.device_code });
    expect(tooSoon.body.error).toBe('slow_down');

    // The person opens the link the CLI prints (with the code), sees who asks, grants read access only.
    const verification = await browser.get(`/device?code=${encodeURIComponent(started.body.user_code.toLowerCase())}`);
    expect(verification.text).toContain(`value="${started.body.user_code}"`);
    const confirmation = await browser.submit(`/device?code=${started.body.user_code}`, '/device', { code: started.body.user_code });
    expect(confirmation.status).toBe(200);
    expect(confirmation.text).toContain('Command-line login');
    expect(confirmation.text).toContain('postiz-cli-test/2.1.0');
    const decided = await browser.request('POST', '/device/decide', { _csrf: browser.csrf(confirmation), code: started.body.user_code, action: 'approve', scope: ['mcp:read'], organizationId: herald.organizationId });
    expect(decided.text).toContain('go back to your terminal');

    pollLater();
    const granted = await post('/device/token', { device_code: started.body.device_code });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body).toMatchObject({ token_type: 'bearer', scope: 'mcp:read', organization_id: herald.organizationId, api_url: `${herald.url}/api` });
    expect(granted.body.access_token).toMatch(/^pos_/);
    // The CLI appends /public/v1/... to api_url.
    const connected = await fetch(`${granted.body.api_url}/public/v1/is-connected`, { headers: { authorization: granted.body.access_token } });
    expect(await connected.json()).toEqual({ connected: true });
    // Read only: creating is refused.
    const write = await herald.rest('POST', '/posts', { type: 'draft', date: new Date().toISOString(), shortLink: false, tags: [], posts: [] }, { authorization: granted.body.access_token });
    expect(write.status).toBe(403);

    // Single use: the code cannot be exchanged or entered again.
    pollLater();
    expect((await post('/device/token', { device_code: started.body.device_code })).body.error).toBe('invalid_grant');
    const again = await browser.submit('/device', '/device', { code: started.body.user_code });
    expect(again.text).toContain('That code is not valid');

    // Listed under approved apps, and revocable there.
    const approved = await browser.get('/approved');
    expect(approved.text).toContain('Command-line login');
    const appId = /action="\/approved\/([^/]+)\/revoke"/.exec(approved.text)![1];
    await browser.submit('/approved', `/approved/${appId}/revoke`);
    const revoked = await fetch(`${herald.url}/api/public/v1/is-connected`, { headers: { authorization: granted.body.access_token } });
    expect(revoked.status).toBe(401);
    herald.setNow(undefined);
  });

  it('a denied request answers access_denied; an expired one expired_token', async () => {
    const denied = await post('/device/code');
    const page = await browser.submit('/device', '/device', { code: denied.body.user_code });
    await browser.request('POST', '/device/decide', { _csrf: browser.csrf(page), code: denied.body.user_code, action: 'deny', organizationId: herald.organizationId });
    pollLater();
    expect((await post('/device/token', { device_code: denied.body.device_code })).body.error).toBe('access_denied');

    const expired = await post('/device/code');
    herald.setNow(new Date(Date.now() + 16 * 60 * 1000));
    expect((await post('/device/token', { device_code: expired.body.device_code })).body.error).toBe('expired_token');
    const late = await browser.submit('/device', '/device', { code: expired.body.user_code });
    expect(late.text).toContain('That code is not valid');
    herald.setNow(undefined);
  });
});

describe('the standard RFC 8628 form', () => {
  it('announces the device endpoint, takes a registered client, and answers at the token endpoint with the device_code grant', async () => {
    const metadata = (await (await fetch(`${herald.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
    expect(metadata.device_authorization_endpoint).toBe(`${herald.url}/api/oauth/device_authorization`);
    expect(metadata.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:device_code');
    const registered = await fetch(`${herald.url}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Agent on a headless box', redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }),
    });
    const client = (await registered.json()) as { client_id: string };
    const started = await post('/api/oauth/device_authorization', { client_id: client.client_id, scope: 'mcp:read mcp:write' }, true);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const confirmation = await browser.submit('/device', '/device', { code: started.body.user_code });
    expect(confirmation.text).toContain('Agent on a headless box');
    await browser.request('POST', '/device/decide', { _csrf: browser.csrf(confirmation), code: started.body.user_code, action: 'approve', scope: ['mcp:read', 'mcp:write'], organizationId: herald.organizationId });
    pollLater();
    const token = await post('/api/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code, client_id: client.client_id }, true);
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'bearer', scope: 'mcp:read mcp:write' });
    // Another client cannot redeem it.
    const unknown = await post('/api/oauth/device_authorization', { client_id: 'pca_nobody' }, true);
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_client');
    herald.setNow(undefined);
  });
});

describe('the client of a device login', () => {
  const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
  const register = async (metadata: Record<string, unknown>) => {
    const response = await fetch(`${herald.url}/api/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
  async function postWith(path: string, body: Record<string, string>, headers: Record<string, string> = {}) {
    const response = await fetch(`${herald.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body).toString() });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  it('registers for the device grant alone (no redirect URI, as the metadata announces it), and names itself at both standard endpoints', async () => {
    const metadata = (await (await fetch(`${herald.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
    const registered = await register({ client_name: 'Headless agent', grant_types: [DEVICE], token_endpoint_auth_method: 'none' });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body).toMatchObject({ grant_types: [DEVICE], redirect_uris: [], response_types: [] });
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(registered.body.grant_types));
    const clientId = registered.body.client_id as string;

    // client_id is required at the device authorization endpoint as at the token endpoint (RFC 8628 §3.1, §3.4).
    const anonymous = await post('/api/oauth/device_authorization', { scope: 'mcp:read' }, true);
    expect(anonymous.status).toBe(400);
    expect(anonymous.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('client_id is required') });
    const started = await post('/api/oauth/device_authorization', { client_id: clientId, scope: 'mcp:read' }, true);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    pollLater();
    const nameless = await post('/api/oauth/token', { grant_type: DEVICE, device_code: started.body.device_code }, true);
    expect(nameless.status).toBe(400);
    expect(nameless.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('client_id is required') });
    // Polled in another form (the CLI's, without client_id), it is not this client's.
    pollLater();
    expect((await post('/device/token', { device_code: started.body.device_code })).body.error).toBe('invalid_grant');

    const confirmation = await browser.submit('/device', '/device', { code: started.body.user_code });
    expect(confirmation.text).toContain('Headless agent');
    await browser.request('POST', '/device/decide', { _csrf: browser.csrf(confirmation), code: started.body.user_code, action: 'approve', scope: ['mcp:read'], organizationId: herald.organizationId });
    pollLater();
    const token = await post('/api/oauth/token', { grant_type: DEVICE, device_code: started.body.device_code, client_id: clientId }, true);
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'bearer', scope: 'mcp:read' });
    // With no redirect URI it has no place on the consent screen.
    const consent = await browser.get(`/oauth/authorize?client_id=${clientId}&response_type=code`);
    expect(consent.status).toBe(400);
    expect(consent.text).toContain('registered no Redirect URL');
    herald.setNow(undefined);
  });

  it('a login started in the CLI form is polled in it: the token endpoint wants a client_id', async () => {
    const started = await post('/device/code');
    pollLater();
    const standard = await post('/api/oauth/token', { grant_type: DEVICE, device_code: started.body.device_code }, true);
    expect(standard.body.error).toBe('invalid_request');
    pollLater();
    expect((await post('/device/token', { device_code: started.body.device_code })).body.error).toBe('authorization_pending');
    herald.setNow(undefined);
  });

  it('a confidential client authenticates at both endpoints', async () => {
    const registered = await register({ client_name: 'Confidential box', redirect_uris: ['https://box.example/cb'], grant_types: ['authorization_code', DEVICE, 'refresh_token'], token_endpoint_auth_method: 'client_secret_basic' });
    // The grants asked for, each one this server has (refresh tokens rotate since issue 32).
    expect(registered.body).toMatchObject({ grant_types: ['authorization_code', 'refresh_token', DEVICE], response_types: ['code'] });
    const { client_id: clientId, client_secret: secret } = registered.body as { client_id: string; client_secret: string };
    expect(secret).toMatch(/^pcs_/);
    const unauthenticated = await postWith('/api/oauth/device_authorization', { client_id: clientId });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body.error).toBe('invalid_client');
    expect((await postWith('/api/oauth/device_authorization', { client_id: clientId }, basic(clientId, 'pcs_wrong'))).status).toBe(401);
    const started = await postWith('/api/oauth/device_authorization', { scope: 'mcp:read' }, basic(clientId, secret));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    pollLater();
    const noSecret = await postWith('/api/oauth/token', { grant_type: DEVICE, device_code: started.body.device_code, client_id: clientId });
    expect(noSecret.status).toBe(401);
    expect(noSecret.body.error).toBe('invalid_client');
    pollLater();
    expect((await postWith('/api/oauth/token', { grant_type: DEVICE, device_code: started.body.device_code }, basic(clientId, secret))).body.error).toBe('authorization_pending');
    herald.setNow(undefined);
  });
});

describe('a person who follows the link without an account', () => {
  it('signs up from the log-in page (pasting an invitation link) and lands back on /device with the code filled in', async () => {
    const started = await post('/device/code');
    const code = started.body.user_code as string;
    const person = new ConsoleClient(herald.url);
    const sent = await person.get(`/device?code=${code}`);
    expect(sent.location).toBe(`/login?next=${encodeURIComponent(`/device?code=${code}`)}`);
    const login = await person.get(sent.location!);
    const signUpLink = /href="(\/signup\?next=[^"]+)">Sign up</.exec(login.text)![1].replace(/&amp;/g, '&');
    expect(signUpLink).toBe(`/signup?next=${encodeURIComponent(`/device?code=${code}`)}`);
    // Sign-up is by invitation here: the page takes the link the person was sent, and keeps where they were going.
    const closed = await person.get(signUpLink);
    expect(closed.status).toBe(403);
    expect(closed.text).toContain(`<input type="hidden" name="next" value="/device?code=${code}">`);
    const invitation = textOf(await browser.submitAndFollow('/members', '/members/invite', { role: 'member' }), 'invitation-link');
    const form = await person.get(`/signup?next=${encodeURIComponent(`/device?code=${code}`)}&invitation=${encodeURIComponent(invitation)}`);
    expect(form.status).toBe(200);
    const signedUp = await person.request('POST', '/signup', {
      _csrf: person.csrf(form),
      email: 'newcomer@example.com',
      password: 'a long enough password',
      name: '',
      invitation: /name="invitation" value="([^"]+)"/.exec(form.text)![1],
      next: /name="next" value="([^"]+)"/.exec(form.text)![1],
    });
    expect(signedUp.status).toBe(303);
    expect(signedUp.location).toBe(`/device?code=${code}`);
    const device = await person.get(signedUp.location!);
    expect(device.status).toBe(200);
    expect(device.text).toContain(`value="${code}"`);
  });
});

describe('guessing codes', () => {
  it('a person who enters too many codes is told to wait', async () => {
    const guesser = new ConsoleClient(herald.url);
    await guesser.logIn('owner@example.com', 'a long enough password');
    let last = '';
    for (let index = 0; index < 21; index++) last = (await guesser.submit('/device', '/device', { code: 'BBBB-BBBB' })).text;
    expect(last).toContain('Too many codes entered');
  });
});
