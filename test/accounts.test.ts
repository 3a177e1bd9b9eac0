// Accounts and sessions of the web console over real HTTP: the first owner only through the operator's setup link,
// invitations, open sign-up (a new organization, never an existing one), log-in and sign-up limits, cookies, CSRF, the
// `next` redirect (same-site paths only) and organization switching.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ConsoleClient, textOf } from './helpers/console-client.js';
import { setupToken } from './helpers/setup-link.js';
import { acceptInvitation } from '../tools/internal/accounts.js';

const PASSWORD = 'correct horse battery';
let herald: Herald;

async function signedInOwner(): Promise<ConsoleClient> {
  const browser = new ConsoleClient(herald.url);
  await browser.logIn('owner@example.com', PASSWORD);
  return browser;
}

const count = async (table: string) => Number((await herald.services.orm.em.fork().getConnection().execute(`select count(*)::int as n from ${table}`))[0].n);

beforeAll(async () => {
  herald = await startHerald();
});
afterAll(async () => {
  await herald.stop();
});

describe('accounts', () => {
  it('on a fresh instance, a visitor without the setup link becomes owner of nothing: not the first-start organization, not one made with the CLI', async () => {
    const cliMade = await herald.newOrganization('Made with the CLI');
    const visitor = new ConsoleClient(herald.url);
    const page = await visitor.get('/signup');
    expect(page.status).toBe(403);
    expect(page.text).toContain('Sign-up is by invitation');
    expect(page.text).toContain('npm run herald -- setup-link');
    expect(page.text).not.toContain('name="password"');
    const csrf = visitor.csrf(await visitor.get('/login'));
    const attempt = await visitor.request('POST', '/signup', { _csrf: csrf, email: 'first@example.com', password: PASSWORD, name: '', organizationName: '' });
    expect(attempt.status).toBe(403);
    const forged = await visitor.request('POST', '/signup', { _csrf: csrf, email: 'first@example.com', password: PASSWORD, invitation: 'x'.repeat(32) });
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('not valid any more');
    expect(await count('app_user')).toBe(0);
    expect(await count('membership')).toBe(0);
    expect(cliMade.organizationId).not.toBe(herald.organizationId);
  });

  it('the setup link makes its first user owner of its organization, once; a new link replaces the unused one; the password is stored as a scrypt hash', async () => {
    const replaced = await setupToken(herald);
    const token = await setupToken(herald);
    const owner = new ConsoleClient(herald.url);
    expect((await owner.get(`/invite/${token}`)).location).toBe(`/signup?invitation=${token}`);
    const form = await owner.get(`/signup?invitation=${token}`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('Create the owner account');
    expect(form.text).toContain('This setup link makes you an owner of <strong>Test organization</strong>');
    const stale = await new ConsoleClient(herald.url).get(`/signup?invitation=${replaced}`);
    expect(stale.status).toBe(400);
    expect(stale.text).toContain('setup-link');

    const created = await owner.signUp({ email: 'Owner@Example.com', password: PASSWORD, name: 'Olivia', invitation: token });
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
    // Only its own organization: the one made with the CLI stays without an owner.
    const memberships = await herald.services.orm.em.fork().getConnection().execute('select organization_id, role from membership');
    expect(memberships).toEqual([{ organization_id: herald.organizationId, role: 'owner' }]);

    const second = new ConsoleClient(herald.url);
    const used = await second.get(`/signup?invitation=${token}`);
    expect(used.status).toBe(400);
    expect(used.text).not.toContain('name="password"');
    const reused = await second.request('POST', '/signup', { _csrf: second.csrf(await second.get('/login')), email: 'second@example.com', password: PASSWORD, invitation: token });
    expect(reused.status).toBe(400);
    expect(reused.text).toContain('not valid any more');
    expect(await count('app_user')).toBe(1);
  });

  it('a setup link works for 24 hours; the token is stored only as its hash', async () => {
    const token = await setupToken(herald);
    const stored = await herald.services.orm.em.fork().getConnection().execute('select token_hash, created_by from invitation where used_at is null and expires_at > now()');
    expect(stored).toEqual([{ token_hash: expect.not.stringContaining(token), created_by: null }]);
    herald.setNow(new Date(Date.now() + 24 * 3600_000 + 60_000));
    try {
      const late = await new ConsoleClient(herald.url).get(`/signup?invitation=${token}`);
      expect(late.status).toBe(400);
      expect(late.text).toContain('Setup links work once and for 24 hours');
    } finally {
      herald.setNow(undefined);
    }
  });

  it('of people opening one link at the same time, one joins', async () => {
    const owner = new ConsoleClient(herald.url);
    await owner.logIn('owner@example.com', PASSWORD);
    const people: ConsoleClient[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      // Each has an account of their own (a member of the organization), then opens the one setup link.
      const invitation = textOf(await owner.submitAndFollow('/members', '/members/invite', { role: 'member' }), 'invitation-link').split('/invite/')[1];
      const browser = new ConsoleClient(herald.url);
      expect((await browser.signUp({ email: `racer-${name}@example.com`, password: PASSWORD, invitation })).status).toBe(303);
      people.push(browser);
    }
    const token = await setupToken(herald);
    for (const browser of people) expect((await browser.get(`/invite/${token}`)).text).toContain('You were invited as owner');
    // The accepts themselves start together (over HTTP, one may finish before the next begins).
    const racers = await herald.services.orm.em.fork().getConnection().execute<{ id: string }[]>("select id from app_user where email like 'racer-%'");
    const outcomes = await Promise.allSettled(racers.map((row) => acceptInvitation(herald.services.orm.em.fork(), token, row.id, new Date())));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const owners = await herald.services.orm.em.fork().getConnection().execute("select u.email from membership m join app_user u on u.id = m.user_id where m.role = 'owner' and u.email like 'racer-%'");
    expect(owners).toHaveLength(1);
    // And over HTTP the link is spent.
    const late = await people[0].request('POST', `/invite/${token}`, { _csrf: people[0].csrf() });
    expect(late.status).toBe(400);
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

  it('after logging in or signing up, goes only to a path of this site, however another site is spelled in next', async () => {
    const origin = new URL(herald.url).origin;
    /** Refused, so the browser goes to the default page; and wherever it goes, the WHATWG URL parser (the browsers') keeps it here. */
    const landsHome = (location: string | undefined) => {
      expect(location).toBe('/channels');
      expect(new URL(location!, herald.url).origin).toBe(origin);
    };
    const corpus = [
      '//evil.com', '/\\evil.com', '\\\\evil.com', 'https://evil.com', 'http:evil.com', 'https:/evil.com', 'javascript:alert(1)', '/%2F%2Fevil.com',
      '/%5C%5Cevil.com', '%2F%2Fevil.com', '/\t/evil.com', '/\n/evil.com', '/%09/evil.com', ' //evil.com', '////evil.com', '/.//evil.com', '/x/..//evil.com',
    ];
    const invitation = textOf(await (await signedInOwner()).submitAndFollow('/members', '/members/invite', { role: 'member' }), 'invitation-link').split('/invite/')[1];
    const person = new ConsoleClient(herald.url);
    const sentHome = await person.request('POST', '/signup', { _csrf: person.csrf(await person.get(`/signup?invitation=${invitation}&next=${encodeURIComponent('//evil.com')}`)), email: 'redirected@example.com', password: PASSWORD, invitation, next: '//evil.com' });
    expect(sentHome.location).toBe('/channels');
    // Signed in, /login sends the browser straight on: the whole corpus, and a real path with its query kept.
    for (const next of corpus) landsHome((await person.get(`/login?next=${encodeURIComponent(next)}`)).location);
    expect((await person.get(`/login?next=${encodeURIComponent('/oauth/authorize?client_id=pca_x&scope=mcp%3Aread%20mcp%3Awrite')}`)).location).toBe('/oauth/authorize?client_id=pca_x&scope=mcp%3Aread%20mcp%3Awrite');
    const stranger = new ConsoleClient(herald.url);
    expect((await stranger.get(`/login?next=${encodeURIComponent('//evil.com')}`)).text).not.toContain('evil.com');
    for (const next of ['//evil.com', '/\\evil.com', 'https://evil.com', '/%2F%2Fevil.com', '/\t/evil.com', '/.//evil.com']) {
      const browser = new ConsoleClient(herald.url);
      landsHome((await browser.request('POST', '/login', { _csrf: browser.csrf(await browser.get('/login')), email: 'redirected@example.com', password: PASSWORD, next })).location);
    }
    const browser = new ConsoleClient(herald.url);
    const back = await browser.request('POST', '/login', { _csrf: browser.csrf(await browser.get('/login')), email: 'redirected@example.com', password: PASSWORD, next: '/device?code=BCDF-GHJK' });
    expect(back.location).toBe('/device?code=BCDF-GHJK');
  });

  it('limits sign-up attempts per address', async () => {
    herald.setNow(new Date(Date.now() + 3 * 3600_000));
    try {
      const visitor = new ConsoleClient(herald.url);
      const csrf = visitor.csrf(await visitor.get('/login'));
      for (let attempt = 0; attempt < 20; attempt++) expect((await visitor.request('POST', '/signup', { _csrf: csrf, email: 'x@example.com', password: PASSWORD })).status).toBe(403);
      const refused = await visitor.request('POST', '/signup', { _csrf: csrf, email: 'x@example.com', password: PASSWORD });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.text).toContain('Too many sign-ups from your address.');
    } finally {
      herald.setNow(undefined);
    }
  });

  it('with ALLOW_SIGNUP anyone signs up as owner of a new, empty organization, never of an existing one (not even on a fresh instance), and a member of two organizations switches between them', async () => {
    const open = await startHerald({ ALLOW_SIGNUP: 'true' });
    const sql = (query: string) => open.services.orm.em.fork().getConnection().execute(query);
    try {
      const first = new ConsoleClient(open.url);
      expect((await first.get('/signup')).text).toContain('Create an account and a new organization of your own.');
      expect((await first.signUp({ email: 'first@example.com', password: PASSWORD, organizationName: 'First shop' })).status).toBe(303);
      // The organization of the first start (its API key printed, its setup link unused) stays without an owner.
      const memberships = await sql('select m.role, o.id, o.name from membership m join organization o on o.id = m.organization_id');
      expect(memberships).toEqual([{ role: 'owner', id: expect.not.stringMatching(open.organizationId), name: 'First shop' }]);
      const second = new ConsoleClient(open.url);
      expect((await second.signUp({ email: 'second@example.com', password: PASSWORD, organizationName: 'Second shop' })).status).toBe(303);
      expect((await second.get('/members')).text).toContain('Members of Second shop');
      expect(await sql("select count(*)::int as n from membership m join organization o on o.id = m.organization_id where o.name in ('Test organization', 'First shop') and m.role = 'owner'")).toEqual([{ n: 1 }]);
      // The same email cannot sign up twice; the answer does not say more than a log-in would.
      const duplicate = await new ConsoleClient(open.url).signUp({ email: 'SECOND@example.com', password: PASSWORD });
      expect(duplicate.status).toBe(409);

      const invitation = textOf(await second.submitAndFollow('/members', '/members/invite', { role: 'owner' }), 'invitation-link');
      await first.get(invitation.replace(open.url, ''));
      expect((await first.submit(invitation.replace(open.url, ''), invitation.replace(open.url, ''))).location).toBe('/channels');
      const members = await first.get('/members');
      expect(members.text).toContain('Members of Second shop');
      const switchTo = /<option value="([^"]+)"[^>]*>First shop<\/option>/.exec(members.text)![1];
      expect((await first.submit('/members', '/organization', { organizationId: switchTo })).status).toBe(303);
      expect((await first.get('/members')).text).toContain('Members of First shop');
      expect((await first.submit('/members', '/organization', { organizationId: 'not-mine' })).status).toBe(400);
    } finally {
      await open.stop();
    }
  });
});
