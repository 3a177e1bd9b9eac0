// Console pages over HTTP (the browser test covers the main journeys): channel actions, the OAuth connect redirect and
// the platform callback, the page picker, posts of a week with failures, notifications, and HTML error pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { notify } from '../tools/internal/notifications.js';

let herald: Herald;
let telegram: TelegramFake;
let browser: ConsoleClient;
let channelId: string;

const db = () => herald.services.orm.em.fork().getConnection();

beforeAll(async () => {
  telegram = await startTelegramFake();
  herald = await startHerald({
    X_CLIENT_ID: 'x-client',
    X_CLIENT_SECRET: 'x-secret',
    // X's API on a port fetch refuses to use: the callback's code exchange fails at once, without reaching the internet.
    SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url }, x: { web: 'https://x.example', api: 'http://127.0.0.1:9' } }),
  });
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  const connected = await browser.submit('/channels/connect/telegram', '/channels/connect/telegram', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  expect(connected.location).toBe('/channels?notice=connected');
  channelId = (await db().execute('select id from integration'))[0].id;
});
afterAll(async () => {
  await herald.stop();
  await telegram.server.close();
});

describe('channels', () => {
  it('lists the channel as active and disables, enables, assigns a customer and refuses bad posting times with the reason', async () => {
    const list = await browser.get('/channels');
    expect(list.text).toContain('Active');
    expect((await browser.submit('/channels', `/channels/${channelId}/disable`)).location).toBe('/channels?notice=disabled');
    expect((await browser.get('/channels')).text).toContain('badge warn">Disabled');
    expect((await herald.rest('GET', '/integrations')).body[0].disabled).toBe(true);
    await browser.submit('/channels', `/channels/${channelId}/enable`);
    expect((await herald.rest('GET', '/integrations')).body[0].disabled).toBe(false);

    expect((await browser.submit('/channels', `/channels/${channelId}/customer`, { customerId: '', newCustomer: 'Bakery' })).location).toBe('/channels?notice=customer');
    expect((await herald.rest('GET', '/integrations')).body[0].customer).toEqual({ id: expect.any(String), name: 'Bakery' });

    const bad = await browser.submit('/channels', `/channels/${channelId}/posting-times`, { times: '9am' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('&quot;9am&quot; is not a time');
    expect((await browser.submit('/channels', `/channels/${channelId}/posting-times`, { times: '09:00 18:30' })).location).toBe('/channels?notice=times');
    expect((await db().execute('select posting_times from integration'))[0].posting_times).toEqual([540, 1110]);
  });

  it('shows a credential platform\'s refusal on the form, keeps the typed values, and never echoes the secret', async () => {
    const page = await browser.submit('/channels/connect/telegram', '/channels/connect/telegram', { botToken: 'wrong-token-123', chatId: '@nowhere' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('Telegram refused the connection');
    expect(page.text).toContain('value="@nowhere"');
    expect(page.text).not.toContain('wrong-token-123');
  });

  it('sends OAuth platforms to their authorization page with a sealed state; the callback checks it, and a code the platform cannot trade creates nothing', async () => {
    const redirect = await browser.get('/channels/connect/x');
    expect(redirect.status).toBe(303);
    const url = new URL(redirect.location!);
    expect(url.origin + url.pathname).toBe('https://x.example/i/oauth2/authorize');
    expect(url.searchParams.get('client_id')).toBe('x-client');
    expect(url.searchParams.get('redirect_uri')).toBe(`${herald.url}/api/integrations/social/x/callback`);
    const state = url.searchParams.get('state')!;

    const forged = await browser.get(`/api/integrations/social/x/callback?code=abc&state=forged`);
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('This connection link is not valid.');
    const wrongPlatform = await browser.get(`/api/integrations/social/linkedin/callback?code=abc&state=${encodeURIComponent(state)}`);
    expect(wrongPlatform.text).toContain('belongs to another platform');
    const denied = await browser.get(`/api/integrations/social/x/callback?error=access_denied&state=${encodeURIComponent(state)}`);
    expect(denied.text).toContain('X did not authorize the connection');
    const real = await browser.get(`/api/integrations/social/x/callback?code=abc&state=${encodeURIComponent(state)}`);
    expect(real.status).toBe(400);
    expect(real.text).toContain('X refused the connection: Could not reach the platform');
    expect((await db().execute('select count(*)::int as n from integration'))[0].n).toBe(1);
  });

  it('shows the page picker as not supported for a platform that has no pages to choose, and lists unconfigured OAuth platforms with how to enable them', async () => {
    await db().execute(`update integration set in_between_steps = true where id = ?`, [channelId]);
    const list = await browser.get('/channels');
    expect(list.text).toContain('Waiting for a page/account choice');
    const picker = await browser.get(`/channels/${channelId}/choose`);
    expect(picker.status).toBe(400);
    expect(picker.text).toContain('have no page or account to choose');
    await db().execute(`update integration set in_between_steps = false where id = ?`, [channelId]);
    expect(list.text).toContain('Not configured on this Herald:');
    expect(list.text).toMatch(/href="\/channels\/connect\/x"/);
    expect(list.text).not.toMatch(/href="\/channels\/connect\/linkedin"/);
  });

  it('disconnects only after confirmation', async () => {
    expect((await browser.submit('/channels', `/channels/${channelId}/delete`)).status).toBe(400);
    expect((await db().execute('select count(*)::int as n from integration where deleted_at is null'))[0].n).toBe(1);
  });
});

describe('posts, notifications and errors', () => {
  it('shows the posts of the chosen week per channel, with the error text of failed ones and a link to published ones', async () => {
    const date = '2026-12-02T10:00:00.000Z';
    for (const content of ['<p>Went out fine</p>', '<p>This one failed</p>']) {
      const created = await herald.rest('POST', '/posts', {
        type: 'draft', date, shortLink: false, tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: { __type: 'telegram' } }],
      });
      expect(created.status).toBe(200);
    }
    await db().execute(`update post set state = 'PUBLISHED', release_url = 'https://t.me/c/1/2' where content like '%fine%'`);
    await db().execute(`update post set state = 'ERROR', error = 'Telegram said: chat not found' where content like '%failed%'`);
    const week = await browser.get('/posts?week=2026-W49');
    expect(week.text).toContain('Posts, week of 2026-11-30');
    expect(week.text).toContain('Went out fine');
    expect(week.text).toContain('href="https://t.me/c/1/2"');
    expect(week.text).toContain('Telegram said: chat not found');
    expect(week.text).toContain('2026-12-02 10:00 UTC');
    expect((await browser.get('/posts?week=2026-W48')).text).toContain('No posts this week.');
    expect((await browser.get(`/posts?week=2026-W49&channel=other`)).text).toContain('No posts this week.');
  });

  it('lists notifications newest first', async () => {
    const em = herald.services.orm.em.fork();
    notify(em, herald.organizationId, 'post_failed', 'Older failure');
    await em.flush();
    await new Promise((resolve) => setTimeout(resolve, 5));
    notify(em, herald.organizationId, 'post_published', 'Newer success', 'https://t.me/c/1/3');
    await em.flush();
    const page = await browser.get('/notifications');
    expect(page.text.indexOf('Newer success')).toBeLessThan(page.text.indexOf('Older failure'));
    expect(page.text).toContain('href="https://t.me/c/1/3"');
  });

  it('answers unknown console things with an HTML page and API paths with the JSON error body', async () => {
    const page = await browser.get('/channels/connect/myspace');
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('Unknown platform');
    const api = await fetch(`${herald.url}/api/nothing-here`);
    expect(api.status).toBe(404);
    expect((await api.json()).code).toBe('not_found');
  });
});

describe('the Developer page makes agent keys', () => {
  it('creates a named key with the agent scopes, shows it once and puts it in the snippets; the key cannot approve; revoking ends it', async () => {
    const page = await browser.get('/developer');
    expect(page.text).toContain('Agent keys');
    expect(page.text).toContain('<code>organization:manage</code>');
    expect(page.text).toContain('&lt;agent key&gt;');

    const refused = await browser.submit('/developer', '/developer/keys', { name: 'No scopes' });
    expect(refused.status).toBe(400);
    const created = await browser.follow(await browser.submit('/developer', '/developer/keys', { name: 'Claude Desktop', scopes: ['read', 'posts:write'] }));
    const secret = /id="new-agent-key">([^<]+)</.exec(created.text)?.[1];
    expect(secret, created.text.slice(0, 400)).toBeTruthy();
    expect(created.text).toContain(`Bearer ${secret}`); // the snippets carry the agent key, not the organization key
    expect((await browser.get('/developer')).text).not.toContain(secret!); // shown once

    const keys = await herald.rest('GET', '/keys');
    const record = keys.body.keys.find((key: { name: string }) => key.name === 'Claude Desktop');
    expect(record.scopes).toEqual(['read', 'posts:write']);
    expect((await herald.rest('PUT', '/approval-settings', { agents: true }, { authorization: secret! })).status).toBe(403);
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: secret! })).status).toBe(200);

    // Rotating shows the new secret once; the old one stops working, the new one works.
    expect((await browser.submit('/developer', `/developer/keys/${record.id}/rotate`)).status).toBe(400); // unconfirmed
    const rotated = await browser.follow(await browser.submit('/developer', `/developer/keys/${record.id}/rotate`, { confirm: 'yes' }));
    const fresh = /id="new-agent-key">([^<]+)</.exec(rotated.text)?.[1];
    expect(fresh, rotated.text.slice(0, 400)).toBeTruthy();
    expect(fresh).not.toBe(secret);
    expect(rotated.text).toContain('The old secret has stopped working.');
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: secret! })).status).toBe(401);
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: fresh! })).status).toBe(200);
    // The Activity page shows who rotated it, from the console.
    const activity = await browser.get('/activity?action=key');
    expect(activity.status).toBe(200);
    expect(activity.text).toContain('rotated the API key &quot;Claude Desktop&quot;');
    expect(activity.text).toContain('key.rotated');

    expect((await browser.submit('/developer', `/developer/keys/${record.id}/revoke`)).location).toBe('/developer');
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: fresh! })).status).toBe(401);
    expect((await herald.rest('GET', '/integrations', undefined, { authorization: secret! })).status).toBe(401);
  });
});
