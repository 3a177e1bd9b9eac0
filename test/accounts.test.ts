// Accounts and sessions of the web console over real HTTP: first owner, invitations, open sign-up, log-in limits,
// cookies, CSRF and organization switching.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ConsoleClient, textOf } from './helpers/console-client.js';

const PASSWORD = 'correct horse battery';
let herald: Herald;

beforeAll(async () => {
  herald = await startHerald();
});
afterAll(async () => {
  await herald.stop();
});

describe('accounts', () => {
  it('makes the first sign-up owner of the organization created at the first start, stores only a scrypt hash, and refuses uninvited sign-ups after', async () => {
    const owner = new ConsoleClient(herald.url);
    const form = await owner.get('/signup');
    expect(form.status).toBe(200);
    expect(form.text).toContain('Create the owner account');
    const created = await owner.signUp({ email: 'Owner@Example.com', password: PASSWORD, name: 'Olivia' });
    expect(created.status).toBe(303);
    expect(created.location).toBe('/channels');
    const channels = await owner.get('/channels');
    expect(channels.status).toBe(200);
    expect(channels.text).toContain('Test organization');
    expect(channels.text).toContain('owner@example.com');

    const rows = await herald.services.orm.em.fork().getConnection().execute('select email, password_hash from app_user');
    expect(rows).toHaveLength(1);
    expect(rows[0].password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(rows[0].password_hash).not.toContain(PASSWORD);
    const memberships = await herald.services.orm.em.fork().getConnection().execute('select organization_id, role from membership');
    expect(memberships).toEqual([{ organization_id: herald.organizationId, role: 'owner' }]);

    const stranger = new ConsoleClient(herald.url);
    const page = await stranger.get('/signup');
    expect(page.status).toBe(403);
    expect(page.text).toContain('Sign-up is by invitation');
    const attempt = await stranger.request('POST', '/signup', { _csrf: stranger.csrf(await stranger.get('/login')), email: 'x@example.com', password: PASSWORD });
    expect(attempt.status).toBe(403);
    expect(await herald.services.orm.em.fork().getConnection().execute('select count(*)::int as n from app_user')).toEqual([{ n: 1 }]);
  });

  it('lets a person join by an invitation link once, as the role the owner chose', async () => {
    const owner = new ConsoleClient(herald.url);
    await owner.logIn('owner@example.com', PASSWORD);
    const invited = await owner.submitAndFollow('/members', '/members/invite', { role: 'member' });
    expect(invited.status).toBe(200);
    const link = textOf(invited, 'invitation-link');
    const token = link.split('/invite/')[1];

    const newcomer = new ConsoleClient(herald.url);
    expect((await newcomer.get(`/invite/${token}`)).location).toBe(`/signup?invitation=${token}`);
    const page = await newcomer.get(`/signup?invitation=${token}`);
    expect(page.text).toContain('You were invited to join');
    expect((await newcomer.signUp({ email: 'member@example.com', password: PASSWORD, invitation: token })).status).toBe(303);
    const members = await newcomer.get('/members');
    expect(members.text).toContain('member@example.com');
    expect(members.text).not.toContain('Create invitation link');
    // A member cannot create invitations or regenerate the API key.
    expect((await newcomer.submit('/developer', '/developer/api-key', { confirm: 'yes' })).status).toBe(403);

    const again = new ConsoleClient(herald.url);
    const stale = await again.get(`/signup?invitation=${token}`);
    expect(stale.status).toBe(400);
    expect(stale.text).toContain('not valid any more');
    const reused = await again.request('POST', '/signup', { _csrf: again.csrf(await again.get('/login')), email: 'third@example.com', password: PASSWORD, invitation: token });
    expect(reused.status).toBe(400);
    expect(reused.text).toContain('not valid any more');
  });

  it('answers a wrong password and an unknown email the same way, and limits attempts per email', async () => {
    const browser = new ConsoleClient(herald.url);
    const wrong = await browser.logIn('owner@example.com', 'not the password');
    const unknown = await browser.logIn('nobody@example.com', 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (page: { text: string }) => /role="alert">([^<]*)</.exec(page.text)?.[1];
    expect(message(wrong)).toBe('Email or password is incorrect.');
    expect(message(unknown)).toBe(message(wrong));

    for (let attempt = 0; attempt < 10; attempt++) expect((await browser.logIn('target@example.com', 'guess')).status).toBe(401);
    const last = await browser.logIn('target@example.com', 'guess');
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(message(last)).toMatch(/Too many log-in attempts/);
  });

  it('sets an HttpOnly SameSite=Lax session cookie, Secure behind HTTPS, and logging out ends the session', async () => {
    const browser = new ConsoleClient(herald.url);
    const page = await browser.get('/login');
    const plain = await browser.request('POST', '/login', { _csrf: browser.csrf(page), email: 'owner@example.com', password: PASSWORD });
    const cookie = plain.headers.getSetCookie().find((line) => line.startsWith('herald_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const token = browser.cookies.get('herald_session');

    const proxied = new ConsoleClient(herald.url);
    const login = await proxied.get('/login');
    const secure = await proxied.request('POST', '/login', { _csrf: proxied.csrf(login), email: 'owner@example.com', password: PASSWORD }, { 'x-forwarded-proto': 'https' });
    expect(secure.headers.getSetCookie().find((line) => line.startsWith('herald_session='))).toMatch(/; Secure/);

    expect((await browser.get('/channels')).status).toBe(200);
    expect((await browser.submit('/channels', '/logout')).location).toBe('/login');
    const stolen = new ConsoleClient(herald.url);
    stolen.cookies.set('herald_session', token!);
    const after = await stolen.get('/channels');
    expect(after.status).toBe(303);
    expect(after.location).toBe('/login?next=%2Fchannels');
  });

  it('refuses form posts without the CSRF token, with another browser\'s token, or from another origin', async () => {
    const browser = new ConsoleClient(herald.url);
    await browser.logIn('owner@example.com', PASSWORD);
    const before = await herald.services.orm.em.fork().getConnection().execute('select count(*)::int as n from invitation');
    expect((await browser.request('POST', '/members/invite', { role: 'member' })).status).toBe(403);
    const other = new ConsoleClient(herald.url);
    await other.logIn('owner@example.com', PASSWORD);
    await other.get('/members');
    expect((await browser.request('POST', '/members/invite', { _csrf: other.csrf(), role: 'member' })).status).toBe(403);
    expect((await browser.submit('/members', '/members/invite', { role: 'member' }, { origin: 'https://evil.example' })).status).toBe(403);
    expect(await herald.services.orm.em.fork().getConnection().execute('select count(*)::int as n from invitation')).toEqual(before);
    expect((await browser.submit('/members', '/members/invite', { role: 'member' })).location).toBe('/members');
  });

  it('with ALLOW_SIGNUP anyone signs up as owner of a new organization, and a member of two organizations switches between them', async () => {
    const open = await startHerald({ ALLOW_SIGNUP: 'true' });
    try {
      const first = new ConsoleClient(open.url);
      await first.signUp({ email: 'first@example.com', password: PASSWORD });
      const second = new ConsoleClient(open.url);
      expect((await second.signUp({ email: 'second@example.com', password: PASSWORD, organizationName: 'Second shop' })).status).toBe(303);
      expect((await second.get('/members')).text).toContain('Members of Second shop');
      // The same email cannot sign up twice; the answer does not say more than a log-in would.
      const duplicate = await new ConsoleClient(open.url).signUp({ email: 'SECOND@example.com', password: PASSWORD });
      expect(duplicate.status).toBe(409);

      const invitation = textOf(await second.submitAndFollow('/members', '/members/invite', { role: 'owner' }), 'invitation-link');
      await first.get(invitation.replace(open.url, ''));
      expect((await first.submit(invitation.replace(open.url, ''), invitation.replace(open.url, ''))).location).toBe('/channels');
      const members = await first.get('/members');
      expect(members.text).toContain('Members of Second shop');
      const switchTo = /<option value="([^"]+)"[^>]*>Test organization<\/option>/.exec(members.text)![1];
      expect((await first.submit('/members', '/organization', { organizationId: switchTo })).status).toBe(303);
      expect((await first.get('/members')).text).toContain('Members of Test organization');
      expect((await first.submit('/members', '/organization', { organizationId: 'not-mine' })).status).toBe(400);
    } finally {
      await open.stop();
    }
  });
});
