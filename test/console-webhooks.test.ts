// The console's Webhooks page: add a webhook (its secret shown once), send a test event, read the deliveries and their
// attempts, replay one, rotate the secret, delete; refusals shown on the form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { startFakeServer, type FakeServer } from './helpers/fake-server.js';
import { ConsoleClient, textOf } from './helpers/console-client.js';

let herald: Herald;
let receiver: FakeServer;
let browser: ConsoleClient;

beforeAll(async () => {
  receiver = await startFakeServer();
  receiver.on('POST', '/hook', () => ({ status: 200, body: 'ok' }));
  herald = await startHerald({ WEBHOOKS_ALLOW_PRIVATE: 'true' });
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
});

afterAll(async () => {
  await herald?.stop();
  await receiver?.close();
});

describe('the Webhooks page', () => {
  it('adds a webhook and shows its secret once, sends a test event, lists the delivery, replays it, rotates and deletes', async () => {
    const empty = await browser.get('/webhooks');
    expect(empty.text).toContain('No webhook yet.');
    expect(empty.text).toContain('aria-current="page">Webhooks');

    const added = await browser.submit('/webhooks', '/webhooks', { url: `${receiver.url}/hook`, description: 'CRM', events: 'post.published' });
    expect(added.status).toBe(303);
    const shown = await browser.follow(added);
    const secret = textOf(shown, 'webhook-secret');
    expect(secret).toMatch(/^whsec_/);
    expect(shown.text).toContain('CRM');
    expect((await browser.get('/webhooks')).text).not.toContain(secret); // shown once

    const [webhook] = (await herald.rest('GET', '/webhooks')).body;
    expect(webhook.events).toEqual(['post.published']);
    const tested = await browser.submit('/webhooks', `/webhooks/${webhook.id}/test`);
    expect(tested.location).toBe(`/webhooks/${webhook.id}`);
    const deliveries = await browser.follow(tested);
    expect(deliveries.text).toContain('webhook.test <span class="badge ok">Delivered</span>');
    expect(deliveries.text).toContain('200');
    expect(receiver.requestsTo('POST', '/hook')).toHaveLength(1);

    const deliveryId = /webhook-id <code>(msg_[^<]+)<\/code>/.exec(deliveries.text)![1];
    const replayed = await browser.submit(`/webhooks/${webhook.id}`, `/webhooks/${webhook.id}/deliveries/${deliveryId}/replay`);
    expect((await browser.follow(replayed)).text).toContain('(replay)');
    expect(receiver.requestsTo('POST', '/hook')).toHaveLength(2);

    const unconfirmed = await browser.submit('/webhooks', `/webhooks/${webhook.id}/rotate`);
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('Tick the box to confirm');
    const rotated = await browser.follow(await browser.submit('/webhooks', `/webhooks/${webhook.id}/rotate`, { confirm: 'yes' }));
    expect(textOf(rotated, 'webhook-secret')).not.toBe(secret);

    const deleted = await browser.submit('/webhooks', `/webhooks/${webhook.id}/delete`, { confirm: 'yes' });
    expect(deleted.location).toBe('/webhooks?notice=deleted');
    expect((await browser.follow(deleted)).text).toContain('Webhook deleted');
    expect((await herald.rest('GET', '/webhooks')).body).toEqual([]);
  });

  it('shows a refused URL on the form with the reason, keeping what was typed', async () => {
    const refused = await browser.submit('/webhooks', '/webhooks', { url: 'not a url', description: 'Typed', events: 'post.failed' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('&quot;not a url&quot; is not an absolute URL.');
    expect(refused.text).toContain('value="Typed"');
    const noEvents = await browser.submit('/webhooks', '/webhooks', { url: `${receiver.url}/hook` });
    expect(noEvents.status).toBe(400);
    expect(noEvents.text).toContain('events');
  });

  it('shows the deliveries\' times in the person\'s zone, to the second, naming the zone', async () => {
    await browser.submit('/webhooks', '/webhooks', { url: `${receiver.url}/hook`, events: 'post.published' });
    const [webhook] = (await herald.rest('GET', '/webhooks')).body;
    await browser.submit('/webhooks', `/webhooks/${webhook.id}/test`);
    browser.cookies.set('herald_tz', encodeURIComponent('Asia/Tokyo'));
    const page = await browser.get(`/webhooks/${webhook.id}`);
    expect(page.text).toContain('Times are in <strong>Asia/Tokyo</strong>');
    const [, instant, shown] = /created <time datetime="([^"]+)" title="Asia\/Tokyo">([^<]+)<\/time>/.exec(page.text)!;
    // Tokyo is UTC+9 all year (no daylight saving): read with Intl alone, not Herald's code.
    const tokyo = new Intl.DateTimeFormat('sv-SE', { timeZone: 'Asia/Tokyo', dateStyle: 'short', timeStyle: 'medium' }).format(new Date(instant));
    expect(shown).toBe(`${tokyo} GMT+9`);
    expect(page.text).not.toMatch(/\d{2}:\d{2}:\d{2} UTC/);
  });
});
