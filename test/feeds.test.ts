// Feeds to posts (issue 35) over real HTTP against a fake blog on 127.0.0.1: no backlog when a feed is added, one post per
// channel for a new entry (escaped, in each channel's next free slot), an entry used once (seen again, retitled, reordered,
// after a restart), conditional requests answered 304, failures that back off and notify once, the SSRF guard on every
// redirect, XXE refused; MCP lists the read tool to agents and the writes to owners only.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startFeedFake, type FeedFake, type FakeFeedItem } from './fakes/feed-server.js';
import { openDatabase } from '../src/db/orm.js';
import { buildServices } from '../src/bootstrap.js';
import { createLogger } from '../src/lib/logger.js';
import { FeedSchema } from '../src/db/feed-entities.js';
import { pollDueFeeds, pollFeed } from '../tools/internal/feeds.js';
import { findFreeSlot } from '../tools/internal/find-slot.js';
import { IntegrationSchema } from '../src/db/entities.js';

let herald: Herald;
let blog: FeedFake;
let alice: BlueskyFake;
let bob: BlueskyFake;
const channels: string[] = [];
const db = () => herald.services.orm.em.fork().getConnection();
const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Math.floor((Date.now() - days * DAY) / 1000) * 1000);

const startingItems = (): FakeFeedItem[] => [
  { guid: 'post-3', title: 'Third post', link: '/posts/3', html: '<p>Three &amp; more</p>', published: daysAgo(1) },
  { guid: 'post-2', title: 'Second post', link: '/posts/2', html: '<p>Two</p>', published: daysAgo(2) },
  { guid: 'post-1', title: 'First post', link: 'https://blog.example/posts/1', html: '<p>One</p>', published: daysAgo(3) },
];

const postsOf = async (feedId: string) => (await herald.rest('GET', `/feeds/${feedId}`)).body;
const postCount = async () => Number((await db().execute(`select count(*)::int as n from post where organization_id = ? and deleted_at is null`, [herald.organizationId]))[0].n);

async function addFeed(body: Record<string, unknown>) {
  const created = await herald.rest('POST', '/feeds', { channels, mode: 'schedule', ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

beforeAll(async () => {
  // Only 127.0.0.1 passes the guard (the fakes' address): 127.0.0.2 and every other blocked range stay blocked.
  herald = await startHerald({}, { platformGuard: { allowLoopback: ['127.0.0.1'] } });
  [blog, alice, bob] = await Promise.all([startFeedFake(startingItems()), startBlueskyFake(), startBlueskyFake({ handle: 'bob.bsky.social' })]);
  for (const fake of [alice, bob]) {
    const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password });
    channels.push(connected.body.id);
  }
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([blog?.close(), alice?.close(), bob?.close()]);
});

beforeEach(() => {
  blog.items = startingItems();
  herald.setNow(undefined);
});

describe('adding a feed', () => {
  it('reads it once and makes no backlog: what it has is its baseline', async () => {
    const before = await postCount();
    const feed = await addFeed({ url: `${blog.url}/rss.xml` });
    expect(feed).toMatchObject({ name: "Tom & Jerry's blog", status: 'active', posts: 0, mode: 'schedule', template: '{title}\n{link}', channels });
    const shown = await postsOf(feed.id);
    expect(shown.entries.map((entry: { state: string }) => entry.state)).toEqual(['baseline', 'baseline', 'baseline']);
    expect(await postCount()).toBe(before);
  });

  it('posts the newest N when asked (backlog), from an Atom feed with xml:base links and an xhtml summary', async () => {
    blog.items[0].image = '/images/third.jpg';
    const feed = await addFeed({ url: `${blog.url}/atom.xml`, backlog: 1, mode: 'draft', template: '{title}\n{summary}\n{link}', channels: [channels[0]] });
    expect(feed.posts).toBe(1);
    const [entry] = (await postsOf(feed.id)).entries.filter((item: { state: string }) => item.state === 'posted');
    expect(entry.title).toBe('Third post');
    expect(entry.link).toBe(`${blog.url}/blog/posts/3`);
    const [post] = await db().execute(`select content, state, media from post where id = ?`, [entry.posts[0].postId]);
    expect(post.state).toBe('DRAFT');
    expect(post.content).toBe(`<p>Third post</p><p>Three &amp; more</p><p>${blog.url}/blog/posts/3</p>`);
    expect(post.media).toEqual([{ id: `${blog.url}/images/third.jpg`, path: `${blog.url}/images/third.jpg` }]);
  });

  it('refuses what is not a usable feed, saying why, and creates nothing', async () => {
    blog.server.on('GET', '/page.html', () => ({ headers: { 'content-type': 'text/html' }, body: '<!doctype html><html><body>A blog</body></html>' }));
    blog.server.on('GET', '/xxe.xml', () => ({ body: '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY secret SYSTEM "file:///etc/passwd">]><rss><channel><item><title>&secret;</title></item></channel></rss>' }));
    blog.server.on('GET', '/laughs.xml', () => ({
      body: `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, index) => `<!ENTITY lol${index + 1} "${`&lol${index || ''};`.repeat(10)}">`).join('')}]><rss><channel><title>&lol9;</title></channel></rss>`,
    }));
    const feedsBefore = (await herald.rest('GET', '/feeds')).body.length;
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ url: `${blog.url}/page.html` }, 400, /web page \(HTML\), not an RSS or Atom feed/],
      [{ url: `${blog.url}/xxe.xml` }, 400, /declares XML entities/],
      [{ url: `${blog.url}/laughs.xml` }, 400, /declares XML entities/],
      [{ url: 'http://10.0.0.1/feed' }, 400, /10\.0\.0\.1 is refused: 10\.0\.0\.1 is a blocked address \(private network\)/],
      [{ url: 'http://127.0.0.2:9/feed' }, 400, /blocked address \(loopback\)/],
      [{ url: 'ftp://example.com/feed' }, 400, /http or https/],
      [{ url: `${blog.url}/rss.xml`, template: '{title} {author}' }, 400, /does not know \{author\}/],
      [{ url: `${blog.url}/rss.xml`, template: 'Always the same' }, 400, /no placeholder/],
      [{ url: `${blog.url}/rss.xml`, channels: ['no-such-channel'] }, 404, /no-such-channel is not a channel/],
      [{ url: `${blog.url}/rss.xml`, mode: 'sometimes' }, 400, /mode/],
    ];
    for (const [body, status, message] of cases) {
      const refused = await herald.rest('POST', '/feeds', { channels, mode: 'schedule', ...body });
      expect(refused.status, JSON.stringify(body)).toBe(status);
      expect(refused.body.message).toMatch(message);
      expect(JSON.stringify(refused.body)).not.toContain('root:'); // nothing of /etc/passwd
    }
    expect((await herald.rest('GET', '/feeds')).body).toHaveLength(feedsBefore);
  });
});

describe('reading a feed', () => {
  it('makes one post per channel for a new entry, escaped, in each channel\'s next free slot', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml`, template: '{title}\n{summary}\n{link}' });
    blog.items.unshift({ guid: 'post-4', title: 'Cats & <dogs>', link: '/posts/4', html: '<p>Fish &lt;3 &amp; <b>chips</b></p><script>alert(1)</script>', published: daysAgo(0) });
    const checked = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(checked.status).toBe(200);
    expect(checked.body.check).toEqual({ ok: true, notModified: false, posts: 2 });
    const [entry] = (await postsOf(feed.id)).entries;
    expect(entry).toMatchObject({ title: 'Cats & <dogs>', link: `${blog.url}/posts/4`, state: 'posted' });
    expect(entry.posts.map((post: { integrationId: string }) => post.integrationId)).toEqual(channels);
    const rows = await db().execute(`select integration_id, content, state, publish_date, created_by from post where id in (?, ?) order by integration_id = ? desc`, [entry.posts[0].postId, entry.posts[1].postId, channels[0]]);
    for (const row of rows) {
      expect(row.content).toBe(`<p>Cats &amp; &lt;dogs&gt;</p><p>Fish &lt;3 &amp; chips</p><p>${blog.url}/posts/4</p>`);
      expect(row.state).toBe('QUEUE');
      expect(row.publish_date.getTime()).toBeGreaterThan(Date.now());
    }
    // The slot each post took was that channel's first free one; the next entry gets the one after.
    const em = herald.services.orm.em.fork();
    const integration = (await em.findOne(IntegrationSchema, { id: channels[0] }))!;
    const next = await findFreeSlot(em, integration, new Date(), herald.services.config.defaultPostingTimes);
    expect(next!.getTime()).toBeGreaterThan(rows[0].publish_date.getTime());
  });

  it('uses an entry once: seen again, with a changed title, reordered, and after Herald restarts', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml` });
    blog.items.unshift({ guid: 'post-5', title: 'Fifth', link: '/posts/5', published: daysAgo(0) });
    expect((await herald.rest('POST', `/feeds/${feed.id}/check`)).body.check.posts).toBe(2);
    const posts = await postCount();
    expect((await herald.rest('POST', `/feeds/${feed.id}/check`)).body.check.posts).toBe(0);
    blog.items[0].title = 'Fifth (edited)';
    blog.items[0].html = '<p>Now with a summary</p>';
    blog.items.reverse();
    expect((await herald.rest('POST', `/feeds/${feed.id}/check`)).body.check).toMatchObject({ ok: true, notModified: false, posts: 0 });
    // A second Herald on the same database (a restart): nothing of the first one's memory, the same answer.
    const orm = await openDatabase(herald.databaseUrl, { migrate: false });
    try {
      const restarted = await buildServices(herald.services.config, { orm, secrets: herald.services.secrets, logger: createLogger('silent'), now: () => new Date(), platformGuard: { allowLoopback: ['127.0.0.1'] } });
      const em = orm.em.fork();
      const stored = (await em.findOne(FeedSchema, { id: feed.id }))!;
      stored.etag = null; // a full read, not a 304
      stored.lastModified = null;
      expect(await pollFeed(restarted, em, stored)).toEqual({ ok: true, notModified: false, posts: 0 });
    } finally {
      await orm.close();
    }
    expect(await postCount()).toBe(posts);
  });

  it('sends If-None-Match and If-Modified-Since from the last answer, and takes 304 as nothing new', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml` });
    const first = blog.requests('/rss.xml').at(-1)!;
    expect(first.headers['if-none-match']).toBeUndefined();
    const notModified = blog.notModified;
    const checked = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(checked.body.check).toEqual({ ok: true, notModified: true, posts: 0 });
    const conditional = blog.requests('/rss.xml').at(-1)!;
    expect(conditional.headers['if-none-match']).toMatch(/^"[0-9a-f]{16}"$/);
    expect(conditional.headers['if-modified-since']).toBe(blog.items[0].published.toUTCString());
    expect(blog.notModified).toBe(notModified + 1);
    expect(checked.body.status).toBe('active');
  });

  it('a failing feed says why, backs off, honours Retry-After and notifies once per spell', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml`, intervalMinutes: 30 });
    const notifications = async () => (await herald.rest('GET', '/notifications')).body.notifications.filter((item: { content: string }) => item.content.includes(feed.name) && item.content.includes('could not be read'));
    const before = (await notifications()).length;

    blog.server.failNext('GET', '/rss.xml', { status: 500, body: 'oops' });
    const failed = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(failed.body.check).toMatchObject({ ok: false, posts: 0 });
    expect(failed.body).toMatchObject({ status: 'failing', lastError: `127.0.0.1:${blog.server.port} answered HTTP 500.` });
    const firstWait = Date.parse(failed.body.nextPollAt) - Date.parse(failed.body.lastPolledAt);
    expect(firstWait).toBe(60 * 60_000); // 30 minutes × 2

    blog.server.failNext('GET', '/rss.xml', { status: 200, body: '<rss><channel><item></channel></rss>' });
    const badXml = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(badXml.body.lastError).toMatch(/^the document is not well-formed XML/);
    expect(Date.parse(badXml.body.nextPollAt) - Date.parse(badXml.body.lastPolledAt)).toBe(120 * 60_000);

    blog.server.failNext('GET', '/rss.xml', { status: 429, headers: { 'retry-after': String(3 * 86_400) }, body: '' });
    const limited = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(limited.body.lastError).toContain('answered HTTP 429 (too many requests)');
    expect(Date.parse(limited.body.nextPollAt) - Date.parse(limited.body.lastPolledAt)).toBe(3 * 86_400_000);

    const said = await notifications();
    expect(said).toHaveLength(before + 1);
    expect(said[0].content).toContain('answered HTTP 500');
    expect(failed.body.failingSince).toBe(limited.body.failingSince);

    // It works again: the error goes, the interval is back; a later failure is a new spell with its own notification.
    const recovered = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(recovered.body).toMatchObject({ status: 'active', lastError: null, failingSince: null });
    blog.server.failNext('GET', '/rss.xml', { status: 503, body: '' });
    await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(await notifications()).toHaveLength(before + 2);
  });

  it('refuses a redirect to the metadata address or another loopback address, each hop checked', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml` });
    const moved = (location: string) => ({ status: 302, headers: { location } });
    blog.server.failNext('GET', '/rss.xml', moved('http://169.254.169.254/latest/meta-data/'));
    const metadata = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(metadata.body.lastError).toBe('it redirected to 169.254.169.254, which is refused: 169.254.169.254 is a blocked address (link-local).');
    blog.server.failNext('GET', '/rss.xml', moved(`http://127.0.0.2:${blog.server.port}/rss.xml`));
    const loopback = await herald.rest('POST', `/feeds/${feed.id}/check`);
    expect(loopback.body.lastError).toContain('127.0.0.2 is a blocked address (loopback)');
    // A redirect to a public-looking host is followed to its end; one back to the fake itself works.
    blog.server.failNext('GET', '/rss.xml', moved('/atom.xml'));
    expect((await herald.rest('POST', `/feeds/${feed.id}/check`)).body).toMatchObject({ status: 'active', lastError: null });
  });

  it('the periodic job reads only the due feeds, spread over their interval, and skips paused ones', async () => {
    // Only this test's feeds (the others' would post the same entry first, and the duplicate guard refuse these).
    for (const earlier of (await herald.rest('GET', '/feeds')).body) await herald.rest('DELETE', `/feeds/${earlier.id}`);
    const one = await addFeed({ url: `${blog.url}/rss.xml`, intervalMinutes: 60 });
    // Another text: the same text on the same channels would be refused by the duplicate guard.
    const two = await addFeed({ url: `${blog.url}/rss.xml`, intervalMinutes: 60, template: 'New: {title}\n{link}' });
    expect(one.nextPollAt).not.toBe(two.nextPollAt); // offset within the interval by id
    const paused = await herald.rest('PUT', `/feeds/${two.id}`, { paused: true });
    expect(paused.body.status).toBe('paused');
    blog.items.unshift({ guid: 'post-6', title: 'Sixth', link: '/posts/6', published: daysAgo(0) });
    herald.setNow(new Date(Date.now() + 2 * 3_600_000));
    const before = await postCount();
    await pollDueFeeds(herald.services);
    expect((await postsOf(one.id)).entries[0]).toMatchObject({ title: 'Sixth', state: 'posted' });
    expect((await postsOf(two.id)).entries.map((entry: { title: string }) => entry.title)).not.toContain('Sixth');
    expect(await postCount()).toBeGreaterThanOrEqual(before + 2);
    // Resumed: read at the next run, and the entry that came while it was paused is new to it.
    const resumed = await herald.rest('PUT', `/feeds/${two.id}`, { paused: false });
    expect(resumed.body.status).toBe('active');
    await pollDueFeeds(herald.services);
    expect((await postsOf(two.id)).entries[0]).toMatchObject({ title: 'Sixth', state: 'posted' });
  });

  it('an entry dated before the newest one the feed had when it was added is old news', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml` });
    blog.items.push({ guid: 'post-0', title: 'From the archive', link: '/posts/0', published: daysAgo(30) });
    expect((await herald.rest('POST', `/feeds/${feed.id}/check`)).body.check.posts).toBe(0);
    expect((await postsOf(feed.id)).entries.find((entry: { title: string }) => entry.title === 'From the archive').state).toBe('baseline');
  });
});

describe('feeds over REST and MCP', () => {
  it('changes, deletes (the posts stay), and hides feeds from another organization', async () => {
    const feed = await addFeed({ url: `${blog.url}/rss.xml`, backlog: 1 });
    const changed = await herald.rest('PUT', `/feeds/${feed.id}`, { name: 'The blog', template: '{title}', mode: 'draft', channels: [channels[1]] });
    expect(changed.body).toMatchObject({ name: 'The blog', template: '{title}', mode: 'draft', channels: [channels[1]] });
    const other = await herald.newOrganization('Other');
    for (const [method, path] of [['GET', `/feeds/${feed.id}`], ['PUT', `/feeds/${feed.id}`], ['POST', `/feeds/${feed.id}/check`], ['DELETE', `/feeds/${feed.id}`]]) {
      const refused = await fetch(`${herald.restUrl}${path}`, { method, headers: { authorization: other.apiKey, 'content-type': 'application/json' }, body: method === 'PUT' ? '{}' : undefined });
      expect(refused.status, `${method} ${path}`).toBe(404);
    }
    const posts = await postCount();
    expect((await herald.rest('DELETE', `/feeds/${feed.id}`)).body).toEqual({ id: feed.id, deleted: true });
    expect((await herald.rest('GET', `/feeds/${feed.id}`)).status).toBe(404);
    expect(await postCount()).toBe(posts);
  });

  it('lists feedList to an agent key (not the writes) and lets an owner key add a feed over MCP', async () => {
    const key = await herald.rest('POST', '/keys', { name: 'the agent' });
    const connect = async (secret: string) => {
      const client = new Client({ name: 'feeds-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
      return client;
    };
    const agent = await connect(key.body.secret);
    const owner = await connect(herald.apiKey);
    try {
      const listed = (await agent.listTools()).tools.map((tool) => tool.name).filter((name) => /feed/i.test(name));
      expect(listed).toEqual(['feedList']);
      expect((await owner.listTools()).tools.map((tool) => tool.name).filter((name) => /feed/i.test(name))).toEqual(['feedList', 'createFeed', 'changeFeed', 'checkFeed', 'deleteFeed']);
      const created = await owner.callTool({ name: 'createFeed', arguments: { url: `${blog.url}/atom.xml`, channels: [channels[0]], mode: 'draft' } });
      expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
      const id = (created.structuredContent as { id: string }).id;
      const shown = await agent.callTool({ name: 'feedList', arguments: { id } });
      const [feed] = (shown.structuredContent as { output: { id: string; entries: unknown[] }[] }).output;
      expect(feed.id).toBe(id);
      expect(feed.entries).toHaveLength(3);
      const refused = await agent.callTool({ name: 'createFeed', arguments: { url: `${blog.url}/atom.xml`, channels: [channels[0]], mode: 'draft' } });
      expect(refused.isError).toBe(true);
      const unconfirmed = await owner.callTool({ name: 'deleteFeed', arguments: { id } });
      expect((unconfirmed.structuredContent as { deleted: boolean }).deleted).toBe(false);
      expect((await owner.callTool({ name: 'deleteFeed', arguments: { id, confirm: true } })).structuredContent).toMatchObject({ deleted: true });
    } finally {
      await agent.close();
      await owner.close();
    }
  });
});
