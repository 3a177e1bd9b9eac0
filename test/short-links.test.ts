// shortLink: true: links shortened at publish time (Herald's own PUBLIC_URL/l/<code>, or Dub), the redirect counting clicks
// per day and nothing else, and `clicks` in post analytics on a platform that has no post analytics of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { startDubFake, type DubFake } from './fakes/dub.js';
import { chainOf, publishUntilSettled } from './helpers/posts.js';
import { PostSchema } from '../src/db/entities.js';
import { ShortLinkSchema } from '../src/db/agent-entities.js';
import { shortenContent } from '../tools/internal/short-links.js';
import { publishChain } from '../tools/internal/publish.js';
import type { Config } from '../src/config.js';

let herald: Herald;
let telegram: TelegramFake;
let dub: DubFake;
let channelId: string;

const today = () => new Date().toISOString().slice(0, 10);

async function publishWithShortLinks(content: string): Promise<string> {
  const created = await herald.rest('POST', '/posts', {
    type: 'now',
    shortLink: true,
    tags: [],
    posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: {} }],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const rootId = created.body[0].postId as string;
  expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  return rootId;
}

const follow = (url: string, headers: Record<string, string> = {}, method = 'GET') => fetch(url, { method, redirect: 'manual', headers });

beforeAll(async () => {
  [telegram, dub] = await Promise.all([startTelegramFake(), startDubFake()]);
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  channelId = (await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) })).body.id;
});

afterAll(async () => {
  await herald?.stop();
  await Promise.all([telegram?.close(), dub?.close()]);
});

describe("Herald's own short links", () => {
  it('shortens each link at publish time, keeps the punctuation and the link text, and redirects to the target', async () => {
    const target = 'https://example.com/article?utm=1&x=2';
    const rootId = await publishWithShortLinks(`<p>Read ${target.replace('&', '&amp;')}. Or <a href="https://example.org/b">the other one</a>.</p>`);
    const links = await herald.services.orm.em.fork().find(ShortLinkSchema, { rootPostId: rootId }, { orderBy: { targetUrl: 'asc' } });
    expect(links.map((link) => link.targetUrl)).toEqual([target, 'https://example.org/b']);
    const [article, other] = links;
    expect(article.shortUrl).toBe(`${herald.url}/l/${article.code}`);
    expect(article.code).toMatch(/^[0-9A-Za-z]{7}$/);
    expect(telegram.messages.at(-1)!.text).toBe(`Read ${article.shortUrl}. Or <a href="${other.shortUrl}">the other one</a>.`);

    const redirect = await follow(article.shortUrl!);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(target);
    expect(redirect.headers.get('cache-control')).toBe('no-store');
    expect((await follow(`${herald.url}/l/nothing1`)).status).toBe(404);
  });

  it('counts a click per visit and day, not link-preview fetchers nor HEAD; clicks appear in post analytics with no personal data kept', async () => {
    const rootId = await publishWithShortLinks('<p>Counted https://example.com/counted</p>');
    const [link] = await herald.services.orm.em.fork().find(ShortLinkSchema, { rootPostId: rootId });
    await follow(link.shortUrl!, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' });
    await follow(link.shortUrl!, { 'user-agent': 'Mozilla/5.0 (iPhone) Safari/605.1.15' });
    await follow(link.shortUrl!, { 'user-agent': 'TelegramBot (like TwitterBot)' });
    await follow(link.shortUrl!, { 'user-agent': 'facebookexternalhit/1.1' });
    await follow(link.shortUrl!, {}, 'HEAD');
    const analytics = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(analytics.status).toBe(200);
    expect(analytics.body).toHaveLength(1);
    const [clicks] = analytics.body;
    expect(clicks.label).toBe('clicks');
    expect(clicks.data).toHaveLength(7);
    expect(clicks.data.at(-1)).toEqual({ total: '2', date: today() });
    expect(clicks.data.slice(0, 6).every((point: { total: string }) => point.total === '0')).toBe(true);
    const stored = await herald.services.orm.em.fork().getConnection().execute('select * from short_link_click');
    expect(Object.keys(stored[0]).sort()).toEqual(['clicks', 'day', 'short_link_id']);
  });

  it('a retried publication reuses the short links it already made', async () => {
    const rootId = await publishWithShortLinks('<p>Once https://example.com/once</p>');
    const em = herald.services.orm.em.fork();
    const item = await em.findOneOrFail(PostSchema, { id: rootId });
    const again = await shortenContent(herald.services, em, item);
    const [link] = await em.find(ShortLinkSchema, { postId: rootId });
    expect(again).toBe(`<p>Once ${link.shortUrl}</p>`);
    expect(await em.count(ShortLinkSchema, { postId: rootId })).toBe(1);
  });

  it('leaves links alone when shortLink is false', async () => {
    const created = await herald.rest('POST', '/posts', { type: 'now', shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: '<p>Plain https://example.com/plain</p>', image: [] }], settings: {} }] });
    await publishUntilSettled(herald, created.body[0].postId);
    expect(telegram.messages.at(-1)!.text).toBe('Plain https://example.com/plain');
    expect((await herald.rest('GET', `/analytics/post/${created.body[0].postId}?date=7`)).body).toEqual([]);
  });
});

describe('Dub as the shortener', () => {
  it('creates Dub links with our id as externalId, recovers a link Dub already made, and reads clicks from Dub analytics', async () => {
    const previous = herald.services.config.shortLinks;
    herald.services.config.shortLinks = { kind: 'dub', apiKey: dub.apiKey, apiUrl: dub.url, domain: 'go.example' } satisfies Config['shortLinks'];
    try {
      const rootId = await publishWithShortLinks('<p>Via Dub https://example.com/dub</p>');
      const [link] = await herald.services.orm.em.fork().find(ShortLinkSchema, { rootPostId: rootId });
      const [created] = dub.links;
      expect(dub.server.requestsTo('POST', '/links')[0].json).toEqual({ url: 'https://example.com/dub', externalId: link.id, domain: 'go.example' });
      expect(link).toMatchObject({ shortener: 'dub', shortUrl: 'https://go.example/k000001', externalId: created.id, code: null });
      expect(telegram.messages.at(-1)!.text).toBe('Via Dub https://go.example/k000001');

      // A crash after Dub answered: our row has no short URL yet; the create answers 409 and the link is read back.
      const em = herald.services.orm.em.fork();
      await em.nativeUpdate(ShortLinkSchema, { id: link.id }, { shortUrl: null, externalId: null });
      const item = await em.findOneOrFail(PostSchema, { id: rootId });
      expect(await shortenContent(herald.services, em, item)).toBe('<p>Via Dub https://go.example/k000001</p>');
      expect(dub.server.requestsTo('GET', '/links/info')[0].query.get('externalId')).toBe(`ext_${link.id}`);
      expect(dub.links).toHaveLength(1);

      dub.clicks.set(created.id, new Map([[today(), 5]]));
      const analytics = await herald.rest('GET', `/analytics/post/${rootId}?date=3`);
      expect(analytics.body).toEqual([{ label: 'clicks', data: [expect.objectContaining({ total: '0' }), expect.objectContaining({ total: '0' }), { total: '5', date: today() }], percentageChange: 0 }]);
      const [query] = dub.server.requestsTo('GET', '/analytics');
      expect(query.headers.authorization).toBe(`Bearer ${dub.apiKey}`);
      expect(query.query.get('linkId')).toBe(created.id);

      dub.server.failNext('GET', '/analytics', { status: 403, json: { error: { code: 'forbidden', message: 'Analytics require a Pro plan.' } } });
      const refused = await herald.rest('GET', `/analytics/post/${rootId}?date=3`);
      expect(refused.status).toBe(502);
      expect(refused.body).toMatchObject({ code: 'provider_error', message: expect.stringContaining('Dub answered with an error reading the clicks') });
    } finally {
      herald.services.config.shortLinks = previous;
    }
  });

  it('keeps the post queued with the reason when Dub refuses, and names Dub', async () => {
    const previous = herald.services.config.shortLinks;
    herald.services.config.shortLinks = { kind: 'dub', apiKey: 'wrong', apiUrl: dub.url };
    try {
      const created = await herald.rest('POST', '/posts', { type: 'now', shortLink: true, tags: [], posts: [{ integration: { id: channelId }, value: [{ content: '<p>https://example.com/x</p>', image: [] }], settings: {} }] });
      expect((await publishChain(herald.services, created.body[0].postId)).kind).toBe('waiting');
      expect(telegram.messages.at(-1)!.text).not.toContain('example.com/x');
      const [item] = await chainOf(herald, created.body[0].postId);
      expect(item.state).toBe('QUEUE');
      expect(item.lastError).toContain('link shortening through Dub failed (401');
    } finally {
      herald.services.config.shortLinks = previous;
    }
  });
});
