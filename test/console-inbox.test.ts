// The console's comment inbox (issue 24), used as a browser without JavaScript uses it (plain forms, CSRF) and then in a
// real browser (screenshots in test-artifacts/screenshots, axe with content on the page): comments polled from the fake
// Mastodon and Bluesky listed with filters, a reply from the inbox published once (a second submit refused, the fake
// holding one reply), hiding refused with the platform's reason where it has no such API, the hide button where the
// provider has one, and a post's page listing its comments.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { launchBrowser, SCREENSHOT_DIR, seriousViolations } from './helpers/browser.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { chainOf, publishedPost, publishUntilSettled } from './helpers/posts.js';
import { CommentSchema } from '../src/db/comment-entities.js';
import { findProvider } from '../providers/index.js';
import type { Provider } from '../providers/types.js';
import { pollCommentsAt } from './helpers/after-publishing.js';

let herald: Herald;
let mastodon: MastodonFake;
let bluesky: BlueskyFake;
let client: ConsoleClient;
let mastodonChannel: string;
let blueskyChannel: string;
const posts: Record<string, { id: string; releaseId: string }> = {};
const comments: Record<string, string> = {};
const platformIds: Record<string, string> = {};

async function published(channel: string, text: string) {
  const id = await publishedPost(herald, channel, [text]);
  const root = (await chainOf(herald, id))[0];
  return { id: root.id, releaseId: root.releaseId! };
}

const pollSoon = () => pollCommentsAt(herald, 5);

const commentIdOf = async (platformId: string) => (await herald.services.orm.em.fork().findOneOrFail(CommentSchema, { platformId })).id;
/** The markup of one comment of the page. */
const itemOf = (text: string, id: string) => /<li class="card comment" id="comment-[^"]+">[\s\S]*?<\/li>/g.exec(text.slice(text.indexOf(`id="comment-${id}"`) - 40))?.[0] ?? '';

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  [mastodon, bluesky] = await Promise.all([startMastodonFake(), startBlueskyFake()]);
  herald = await startHerald({ COMMENT_POLL_SECONDS: '60' });
  mastodonChannel = (await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token })).body.id;
  blueskyChannel = (await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password })).body.id;
  client = new ConsoleClient(herald.url);
  await client.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
  posts.mastodon = await published(mastodonChannel, 'What should we build next?');
  posts.bluesky = await published(blueskyChannel, 'Bluesky asks the same');
  const question = mastodon.addReply('A calendar <em>export</em>, please', { inReplyToId: posts.mastodon.releaseId, createdAt: new Date(Date.parse('2026-11-20T08:30:00Z')) });
  const nice = bluesky.addReply(posts.bluesky.releaseId, 'Nice post!');
  await pollSoon();
  platformIds.mastodon = question.id;
  platformIds.bluesky = nice.uri;
  comments.mastodon = await commentIdOf(question.id);
  comments.bluesky = await commentIdOf(nice.uri);
}, 240_000);

afterAll(async () => {
  await herald?.stop();
  await mastodon?.close();
  await bluesky?.close();
});

describe('the comment inbox without JavaScript', () => {
  it('lists the comments with author, text, time in the person\'s zone and post, and filters them', async () => {
    const inbox = await client.get('/comments');
    expect(inbox.status).toBe(200);
    expect(inbox.text).toContain('<a href="/comments" aria-current="page">Comments</a>');
    const item = itemOf(inbox.text, comments.mastodon);
    expect(item).toContain('A calendar &lt;em&gt;export&lt;/em&gt;, please'); // text, never markup
    expect(item).toContain('<strong><a href="https://example.social/@bob" rel="noopener noreferrer">Bob</a></strong> <span class="hint">@bob@example.social</span>');
    // The organization's zone (UTC) names itself on the time.
    expect(item).toContain('<time datetime="2026-11-20T08:30:00.000Z" title="UTC">2026-11-20 08:30 UTC</time>');
    expect(item).toContain(`<a href="/posts/${posts.mastodon.id}">“What should we build next?”</a>`);
    expect(item).toContain(`action="/comments/${comments.mastodon}/reply"`);
    expect(inbox.text).toContain('Nice post!');

    const mastodonOnly = await client.get(`/comments?channel=${mastodonChannel}`);
    expect(mastodonOnly.text).toContain('A calendar');
    expect(mastodonOnly.text).not.toContain('Nice post!');
    const onPost = await client.get(`/comments?post=${posts.bluesky.id}&unanswered=yes`);
    expect(onPost.text).toContain('Nice post!');
    expect(onPost.text).not.toContain('A calendar');
    // An unknown channel is the tool's not_found, as over REST.
    expect((await client.get('/comments?channel=nope')).status).toBe(404);

    // A post's page lists its comments, with the same reply form.
    const postPage = await client.get(`/posts/${posts.mastodon.id}`);
    expect(postPage.text).toContain('<h2 id="comments-title">Comments (1)</h2>');
    expect(itemOf(postPage.text, comments.mastodon)).toContain('<input type="hidden" name="back" value="/posts/');
  });

  it('publishes a reply from the inbox once: a second submit is refused with the first reply named', async () => {
    const sent = await client.submit('/comments?unanswered=yes', `/comments/${comments.mastodon}/reply`, { content: 'On the list for December!', back: '/comments?unanswered=yes' });
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`/comments?unanswered=yes&notice=replied#comment-${comments.mastodon}`);
    const stored = await herald.services.orm.em.fork().findOneOrFail(CommentSchema, { id: comments.mastodon });
    expect(stored.replyPostId).toBeTruthy();

    // The same form sent again (a double click, the back button): the per-comment guard of replyToComment.
    const again = await client.submit('/comments', `/comments/${comments.mastodon}/reply`, { content: 'On the list for December!', back: '/comments' });
    expect(again.status).toBe(409);
    expect(again.text).toContain(`already has a reply (post ${stored.replyPostId}, queue)`);

    expect((await publishUntilSettled(herald, stored.replyPostId!)).outcome.kind).toBe('published');
    const replies = mastodon.statuses.filter((status) => status.in_reply_to_id === platformIds.mastodon);
    expect(replies.map((status) => status.status)).toEqual(['On the list for December!']);

    const after = itemOf((await client.get('/comments')).text, comments.mastodon);
    expect(after).toContain('<span class="badge ok">Answered</span>');
    expect(after).toContain(`Reply: <span class="badge ok">Published</span> <a href="/posts/${stored.replyPostId}">`);
    expect(after).not.toContain('/reply"'); // no second reply form
    expect((await client.get('/comments?unanswered=yes')).text).not.toContain('A calendar');
  });

  it('says why hiding and deleting are not offered on Mastodon, and refuses them with the platform\'s reason', async () => {
    const item = itemOf((await client.get('/comments')).text, comments.mastodon);
    expect(item).toContain('Hiding: Mastodon does not let Herald hide comments through its API.');
    expect(item).toContain('Deleting: Mastodon does not let Herald delete comments through its API');
    expect(item).not.toContain('/hide"');
    expect(item).not.toContain('/delete"');
    // A form sent anyway gets the hideComment tool's refusal, as REST answers it.
    const hide = await client.submit('/comments', `/comments/${comments.mastodon}/hide`, { hidden: 'true', back: '/comments' });
    expect(hide.status).toBe(400);
    expect(hide.text).toContain('Mastodon does not let Herald do hiding comments through its API (not_supported).');
    const unconfirmed = await client.submit('/comments', `/comments/${comments.mastodon}/delete`, { back: '/comments' });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('Tick the box to confirm the deletion');
    const remove = await client.submit('/comments', `/comments/${comments.mastodon}/delete`, { confirm: 'yes', back: '/comments' });
    expect(remove.status).toBe(400);
    expect(remove.text).toContain('Mastodon does not let Herald do deleting comments');
    // A form from another site is refused before anything runs.
    expect((await client.request('POST', `/comments/${comments.mastodon}/reply`, { content: 'x' })).status).toBe(403);
  });

  it('offers hide and show again where the provider can hide comments, through the hideComment tool', async () => {
    const provider = findProvider('bluesky') as Provider;
    const calls: [string, boolean][] = [];
    const original = provider.hideComment;
    provider.hideComment = async (_context, comment, hidden) => void calls.push([comment.id, hidden]);
    try {
      const item = itemOf((await client.get('/comments')).text, comments.bluesky);
      expect(item).toContain(`action="/comments/${comments.bluesky}/hide"`);
      const hidden = await client.submit('/comments', `/comments/${comments.bluesky}/hide`, { hidden: 'true', back: '/comments' });
      expect(hidden.location).toBe(`/comments?notice=hidden#comment-${comments.bluesky}`);
      const page = await client.follow(hidden);
      expect(page.text).toContain('Hidden on the platform.');
      expect(itemOf(page.text, comments.bluesky)).toContain('Show again');
      expect((await client.submit('/comments', `/comments/${comments.bluesky}/hide`, { hidden: 'false', back: '/comments' })).location).toContain('notice=shown');
      expect(calls).toEqual([[platformIds.bluesky, true], [platformIds.bluesky, false]]);
    } finally {
      if (original) provider.hideComment = original;
      else delete provider.hideComment;
    }
  });

  it('shows a refused reply\'s reason with what was typed, and creates nothing', async () => {
    const long = 'word '.repeat(80).trim(); // 399 characters: Bluesky takes 300
    const refused = await client.submit('/comments', `/comments/${comments.bluesky}/reply`, { content: long, back: `/posts/${posts.bluesky.id}` });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('content: the maximum characters is 300, we got 399.');
    expect(refused.text).toContain(`${long}</textarea>`);
    expect((await herald.services.orm.em.fork().findOneOrFail(CommentSchema, { id: comments.bluesky })).replyPostId).toBeNull();
  });
});

describe('the comment inbox in a real browser', () => {
  it('is accessible with comments on it, and replies from the form', { timeout: 300_000 }, async () => {
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ baseURL: herald.url, viewport: { width: 1000, height: 900 }, timezoneId: 'Europe/Paris' });
      await context.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: herald.url })));
      const page = await context.newPage();
      await page.goto('/comments');
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-comment-inbox.png'), fullPage: true });
      await page.getByLabel('Your reply').fill('Thanks, Bob!');
      await page.getByRole('button', { name: 'Reply' }).click();
      await page.getByText('Reply created').waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-comment-inbox-replied.png'), fullPage: true });
      const stored = await herald.services.orm.em.fork().findOneOrFail(CommentSchema, { id: comments.bluesky });
      expect(stored.replyPostId).toBeTruthy();
      await page.goto(`/posts/${posts.bluesky.id}`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-post-comments.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
