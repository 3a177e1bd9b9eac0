// Notifications as a person reads them (issue 36): the instant a notification names is stored as data (`at`) and shown
// in the reader's zone (here the organization's, Europe/Berlin), never as the UTC text the API keeps; what it is about
// (`target`: a post, a channel, a feed, a recurring post, a preview link) links to that thing's console page. The REST
// answer keeps its fields and adds `at` and `target`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startFeedFake, type FeedFake } from './fakes/feed-server.js';
import { IntegrationSchema } from '../src/db/entities.js';
import { notify } from '../tools/internal/notifications.js';
import { markNeedsReconnection } from '../tools/internal/integrations.js';
import { notifyMissed } from '../tools/internal/recurrence-missed.js';

let herald: Herald;
let bluesky: BlueskyFake;
let blog: FeedFake;
let browser: ConsoleClient;
let channelId: string;

// Friday 5 December 2026, 10:00 UTC: 11:00 in Berlin (CET, UTC+1).
const DATE = '2026-12-05T10:00:00.000Z';
const BERLIN = `<time datetime="${DATE}" title="Europe/Berlin">2026-12-05 11:00 GMT+1</time>`;

type Listed = { id: string; type: string; content: string; link: string | null; createdAt: string; at: string | null; target: { kind: string; id: string } | null };
const listed = async () => (await herald.rest('GET', '/notifications')).body.notifications as Listed[];
/** The console's list item of the newest notification of a type (the page lists them newest first, as the API does). */
async function itemOf(type: string): Promise<string> {
  const all = await listed();
  const page = await browser.get('/notifications');
  expect(page.status).toBe(200);
  const list = /<h1>Notifications<\/h1>[\s\S]*?<ul class="card">([\s\S]*?)<\/ul>/.exec(page.text)?.[1] ?? '';
  const items = [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((match) => match[1]);
  expect(items).toHaveLength(all.length);
  return items[all.findIndex((item) => item.type === type)] ?? '';
}

beforeAll(async () => {
  [bluesky, blog] = await Promise.all([startBlueskyFake(), startFeedFake([])]);
  herald = await startHerald({}, { platformGuard: { allowLoopback: ['127.0.0.1'] } });
  herald.setNow(new Date('2026-12-01T09:00:00Z'));
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  expect((await herald.rest('PUT', '/time-zone', { timeZone: 'Europe/Berlin' })).status).toBe(200);
  channelId = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([bluesky?.close(), blog?.close()]);
});

describe('notifications in local time, linked to what they name', () => {
  it('an approval names the post\'s date: stored as `at`, shown in Berlin time, the post linked; the API keeps its text', async () => {
    expect((await herald.rest('PUT', '/approval-settings', { agents: true })).status).toBe(200);
    const agentKey = (await herald.rest('POST', '/keys', { name: 'Planner agent' })).body.secret as string;
    const created = await herald.rest(
      'POST',
      '/posts',
      { type: 'schedule', date: DATE, shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: 'Advent market opens', image: [] }], settings: {} }] },
      { authorization: agentKey },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const postId = created.body[0].postId as string;

    const waiting = (await listed()).find((item) => item.type === 'post_awaiting_approval')!;
    expect(waiting).toMatchObject({ at: DATE, target: { kind: 'post', id: postId }, link: null });
    expect(waiting.content).toContain(`(post ${postId}, for ${DATE})`);
    let item = await itemOf('post_awaiting_approval');
    expect(item).toContain(`(<a href="/posts/${postId}">post ${postId}</a>, for ${BERLIN})`);

    expect((await herald.rest('POST', `/posts/${postId}/approve`)).status).toBe(200);
    const approved = (await listed()).find((item) => item.type === 'post_approved')!;
    // Backward compatible: the same text as before (UTC, as the API writes instants), with the instant and the post as data.
    expect(approved).toMatchObject({ content: expect.stringContaining(`it will be published at ${DATE}.`), at: DATE, target: { kind: 'post', id: postId } });
    expect(Object.keys(approved).sort()).toEqual(['at', 'content', 'createdAt', 'id', 'link', 'target', 'type']);
    item = await itemOf('post_approved');
    expect(item).toContain(`it will be published at ${BERLIN}.`);
    expect(item).toContain(`<a href="/posts/${postId}">The post&#39;s page</a>`);
    // What a person reads (the text, not the `datetime` attribute) names no UTC time.
    expect(item.replace(/<[^>]+>/g, '')).not.toMatch(/\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z|UTC/);
  });

  it('a preview link\'s comment names the post\'s date in Berlin time and links the link and the post', async () => {
    const postId = (
      await herald.rest('POST', '/posts', { type: 'schedule', date: DATE, shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: 'Mulled wine recipe', image: [] }], settings: {} }] })
    ).body[0].postId as string;
    const made = await herald.rest('POST', '/preview-links', { name: 'Acme Bakery', channels: [channelId], from: '2026-12-01T00:00:00Z', to: '2026-12-10T00:00:00Z', expiresAt: '2026-12-04T00:00:00Z' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const token = made.body.url.slice(made.body.url.lastIndexOf('/') + 1);
    const preview = await fetch(`${herald.url}/preview/${token}`).then((response) => response.text());
    // The page also shows the first test's post (the same day): comment on this one.
    const before = preview.slice(0, preview.indexOf('Mulled wine recipe'));
    const ref = [...before.matchAll(/id="post-([\w-]+)"/g)].at(-1)![1];
    const form = /name="_form" value="([^"]+)"/.exec(preview)![1];
    const answer = await fetch(`${herald.url}/preview/${token}/posts/${ref}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _form: form, act: 'comment', message: 'Lovely' }).toString(),
    });
    expect(answer.status).toBe(303);

    expect((await listed()).find((item) => item.type === 'preview_feedback')).toMatchObject({ at: DATE, target: { kind: 'preview_link', id: made.body.id } });
    const item = await itemOf('preview_feedback');
    expect(item).toContain(`<a href="/posts/${postId}">post ${postId}</a> (for ${BERLIN})`);
    expect(item).toContain(`<a href="/preview-links#link-${made.body.id}">The preview link</a>`);
  });

  it('a token\'s expiry written as a UTC day reads as its day and time in Berlin; channels, feeds and recurring posts are linked', async () => {
    const em = herald.services.orm.em.fork();
    const channel = await em.findOneOrFail(IntegrationSchema, { id: channelId });
    // 23:30 UTC on the 5th is 00:30 on the 6th in Berlin: the UTC day of the text would be the wrong day there.
    const expiresAt = new Date('2026-12-05T23:30:00.000Z');
    notify(em, herald.organizationId, 'channel_token_expiring', `The token of your Bluesky channel "${channel.name}" expires on 2026-12-05 and cannot be refreshed.`, undefined, { integration: channel, expiresAt });
    await em.flush();
    expect((await listed()).find((item) => item.type === 'channel_token_expiring')).toMatchObject({ at: expiresAt.toISOString(), target: { kind: 'channel', id: channelId } });
    let item = await itemOf('channel_token_expiring');
    expect(item).toContain(`expires on <time datetime="2026-12-05T23:30:00.000Z" title="Europe/Berlin">2026-12-06 00:30 GMT+1</time> and`);
    expect(item).toContain(`<a href="/channels#channel-${channelId}">The channel</a>`);

    // The link lands on the channel's row.
    expect((await browser.get('/channels')).text).toContain(`<tr id="channel-${channelId}">`);
    await markNeedsReconnection(herald.services, em, channel);
    expect(await itemOf('channel_reconnect')).toContain(`<a href="/channels#channel-${channelId}">The channel</a>`);

    const feed = await herald.rest('POST', '/feeds', { url: `${blog.url}/rss.xml`, channels: [channelId], mode: 'draft', intervalMinutes: 30 });
    expect(feed.status, JSON.stringify(feed.body)).toBe(201);
    blog.server.failNext('GET', '/rss.xml', { status: 500, body: 'oops' });
    expect((await herald.rest('POST', `/feeds/${feed.body.id}/check`)).body.check).toMatchObject({ ok: false });
    expect((await listed()).find((entry) => entry.type === 'feed_failed')).toMatchObject({ target: { kind: 'feed', id: feed.body.id }, link: `${herald.services.config.publicUrl}/feeds/${feed.body.id}` });
    item = await itemOf('feed_failed');
    // One link to the feed's page (the notification's own link is that page too).
    expect(item).toContain(`<a href="/feeds/${feed.body.id}">The feed&#39;s page</a>`);
    expect(item).not.toContain('>Open</a>');

    const rule = { id: 'recurringnotification01', organizationId: herald.organizationId, integrationId: channelId, texts: ['Weekly opening hours'], timeZone: 'Europe/Berlin' };
    await notifyMissed(herald.services, em, rule, [new Date(DATE)]);
    item = await itemOf('recurrence_missed');
    expect(item).toContain(`<a href="/recurring-posts/${rule.id}">The recurring post</a>`);
    // Its dates are written in the rule's zone (Berlin here), named as such.
    expect(item).toContain('the occurrence of 2026-12-05 11:00 GMT+1 was skipped');
  });
});
