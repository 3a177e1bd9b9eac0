// Feeds to posts (issue 35, Postiz's "AutoPost"): an RSS or Atom feed whose new entries become posts on chosen channels,
// from a template, as drafts for review or scheduled into each channel's next free posting slot (find-slot.ts).
//
// Never twice: every entry seen is a feed_entry row, unique per feed by its GUID/id (else its link), claimed by an insert
// before its posts are made, so an entry seen again, edited (a new title, the same GUID) or moved in the feed makes nothing
// new, in this process or after a restart. No backlog: when a feed is added, the entries it has are recorded as its
// baseline (unless the person asked for the newest N), and a later entry dated before the newest of them is old news.
// A failing read backs off exponentially (Retry-After honoured), says why on the feed, and notifies once per spell.
import type { EntityManager } from '@mikro-orm/postgresql';
import { FeedEntrySchema, FeedSchema, type Feed, type FeedEntry as FeedEntryRow, type FeedEntryPost, type FeedMode } from '../../src/db/feed-entities.js';
import { IntegrationSchema, type Integration } from '../../src/db/entities.js';
import { DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { escapeHtmlText } from '../../src/lib/content.js';
import { FeedParseError, parseFeed, type FeedEntry } from '../../src/lib/feed-parse.js';
import type { Services, ToolContext } from '../types.js';
import { approvalRequest, credentialRef } from './approval.js';
import { recordChange, sourceOf } from './audit.js';
import { createPosts, entryMaxLength, measure, type PlanEntry } from './create-posts.js';
import { FeedFetchError, fetchFeed } from './feed-fetch.js';
import { findFreeSlot } from './find-slot.js';
import { providerOf } from './integrations.js';
import { notify } from './notifications.js';
import { canSeeChannel } from './visibility.js';

export const FEED_PLACEHOLDERS = ['title', 'link', 'summary', 'picture'] as const;
export const DEFAULT_TEMPLATE = '{title}\n{link}';
export const DEFAULT_INTERVAL_MINUTES = 60;
/** At most this many new entries become posts in one read; the rest wait for the next reads (no flood when a feed bursts). */
export const MAX_POSTS_PER_READ = 10;
export const MAX_BACKLOG = 20;
const MAX_BACKOFF_MS = 24 * 3_600_000;
const MAX_RETRY_AFTER_MS = 7 * 24 * 3_600_000;
const SUMMARY_CHARACTERS = 500;

export interface FeedSettings {
  name?: string;
  url?: string;
  channels?: string[];
  template?: string;
  mode?: FeedMode;
  attachPicture?: boolean;
  intervalMinutes?: number;
  paused?: boolean;
}

export interface FeedRecord {
  id: string;
  name: string;
  url: string;
  channels: string[];
  template: string;
  mode: FeedMode;
  attachPicture: boolean;
  intervalMinutes: number;
  status: 'active' | 'paused' | 'failing';
  feedTitle: string | null;
  lastError: string | null;
  failingSince: string | null;
  lastPolledAt: string | null;
  lastSuccessAt: string | null;
  nextPollAt: string;
  createdAt: string;
}

export interface FeedEntryRecord {
  title: string;
  link: string | null;
  publishedAt: string | null;
  state: FeedEntryRow['state'];
  seenAt: string;
  posts: FeedEntryPost[];
}

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

export function toFeedRecord(feed: Feed): FeedRecord {
  return {
    id: feed.id,
    name: feed.name,
    url: feed.url,
    channels: feed.integrationIds,
    template: feed.template,
    mode: feed.mode,
    attachPicture: feed.attachPicture,
    intervalMinutes: feed.intervalMinutes,
    status: feed.paused ? 'paused' : feed.lastError ? 'failing' : 'active',
    feedTitle: feed.feedTitle ?? null,
    lastError: feed.lastError ?? null,
    failingSince: iso(feed.failingSince),
    lastPolledAt: iso(feed.lastPolledAt),
    lastSuccessAt: iso(feed.lastSuccessAt),
    nextPollAt: feed.nextPollAt.toISOString(),
    createdAt: feed.createdAt.toISOString(),
  };
}

export const toFeedEntryRecord = (entry: FeedEntryRow): FeedEntryRecord => ({
  title: entry.title,
  link: entry.link ?? null,
  publishedAt: iso(entry.publishedAt),
  state: entry.state,
  seenAt: entry.seenAt.toISOString(),
  posts: entry.posts,
});

/** A feed the caller may see: its organization's, and (for a key limited to channels) only on channels it sees. */
export async function findFeed(em: EntityManager, organizationId: string, id: string): Promise<Feed> {
  const feed = await em.findOne(FeedSchema, { id, organizationId });
  if (!feed || !feed.integrationIds.every(canSeeChannel)) throw notFound(`Feed ${id} not found.`, { hint: 'GET /feeds (feedList) lists the feeds of this organization.' });
  return feed;
}

export async function listFeeds(em: EntityManager, organizationId: string): Promise<Feed[]> {
  const feeds = await em.find(FeedSchema, { organizationId }, { orderBy: { createdAt: 'asc' } });
  return feeds.filter((feed) => feed.integrationIds.every(canSeeChannel));
}

export const recentEntries = (em: EntityManager, feed: Feed, limit = 20) => em.find(FeedEntrySchema, { feedId: feed.id }, { orderBy: { seenAt: 'desc', publishedAt: 'desc' }, limit });

function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalidInput(`url: "${raw.slice(0, 200)}" is not an absolute URL.`, { hint: 'Give the feed\'s full address, such as https://blog.example.com/feed.xml.' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidInput('url: a feed is read over http or https.', { hint: 'Give an address starting with https://.' });
  if (url.username || url.password) throw invalidInput('url: a feed URL may not carry a user name or password.', { hint: 'Herald reads public feeds only.' });
  return url.toString();
}

function checkTemplate(template: string): string {
  const unknown = [...template.matchAll(/\{([^{}\s]*)\}/g)].map((match) => match[1]).filter((name) => !(FEED_PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw invalidInput(`template: Herald does not know ${unknown.map((name) => `{${name}}`).join(', ')}.`, { hint: `The placeholders are ${FEED_PLACEHOLDERS.map((name) => `{${name}}`).join(', ')}.` });
  }
  if (!FEED_PLACEHOLDERS.some((name) => template.includes(`{${name}}`))) {
    throw invalidInput('template: it has no placeholder, so every post would read the same.', { hint: `Use at least one of ${FEED_PLACEHOLDERS.map((name) => `{${name}}`).join(', ')}, e.g. "{title}\\n{link}".` });
  }
  return template;
}

/** The feed's channels: each one of the organization's, not deleted, and visible to the caller. */
async function channelsOf(em: EntityManager, organizationId: string, ids: readonly string[]): Promise<Integration[]> {
  const found = await em.find(IntegrationSchema, { id: { $in: [...ids] }, organizationId, deletedAt: null });
  const missing = ids.filter((id) => !canSeeChannel(id) || !found.some((channel) => channel.id === id));
  if (missing.length > 0) throw notFound(`channels: ${missing.join(', ')} ${missing.length === 1 ? 'is not a channel' : 'are not channels'} of this organization.`, { hint: 'integrationList (GET /integrations) lists the channel ids.' });
  return ids.map((id) => found.find((channel) => channel.id === id)!);
}

/** Where in its interval a feed polls (0–10% of it, by its id), so feeds added together do not all poll at once. */
function spread(feed: Pick<Feed, 'id' | 'intervalMinutes'>): number {
  let hash = 0;
  for (const character of feed.id) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
  return (hash % 1000) / 10_000 * feed.intervalMinutes * 60_000;
}

const nextRegularPoll = (feed: Pick<Feed, 'id' | 'intervalMinutes'>, now: Date) => new Date(now.getTime() + feed.intervalMinutes * 60_000 + spread(feed));

/** Exponential back-off from the interval (×2 each failure in a row, at most a day); a server's Retry-After wins when later. */
export function backoffMs(intervalMinutes: number, failures: number, retryAfter?: number): number {
  const backoff = Math.min(intervalMinutes * 60_000 * 2 ** Math.min(failures, 20), MAX_BACKOFF_MS);
  return retryAfter === undefined ? backoff : Math.max(backoff, Math.min(retryAfter, MAX_RETRY_AFTER_MS));
}

/** Reads and parses the feed; a failure is a FeedReadFailure with the sentence the person sees. */
class FeedReadFailure extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

async function readFeed(services: Services, url: string, validators: { etag?: string | null; lastModified?: string | null }) {
  try {
    const document = await fetchFeed(services.platformGuard, url, validators, services.now());
    if (document.kind === 'not_modified') return document;
    return { ...document, feed: parseFeed(document.text, document.url) };
  } catch (error) {
    if (error instanceof FeedFetchError) throw new FeedReadFailure(error.message, error.retryAfterMs);
    if (error instanceof FeedParseError) throw new FeedReadFailure(error.message);
    throw error;
  }
}

/** Oldest first: by date where both have one, else by place (feeds list the newest first). */
function oldestFirst(entries: FeedEntry[]): FeedEntry[] {
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => (a.entry.publishedAt && b.entry.publishedAt ? a.entry.publishedAt.getTime() - b.entry.publishedAt.getTime() : b.index - a.index))
    .map(({ entry }) => entry);
}

/** Claims an entry for this feed: true when it was not seen before (the unique key decides, across processes). */
async function claim(em: EntityManager, feed: Feed, entry: FeedEntry, state: FeedEntryRow['state'], now: Date): Promise<string | undefined> {
  const id = newId();
  const rows = await em.getConnection().execute<{ id: string }[]>(
    `insert into feed_entry (id, feed_id, organization_id, entry_key, title, link, published_at, state, posts, seen_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, '[]', ?) on conflict (feed_id, entry_key) do nothing returning id`,
    [id, feed.id, feed.organizationId, entry.key, entry.title, entry.link ?? null, entry.publishedAt ?? null, state, now],
  );
  return rows[0]?.id;
}

/** The post's text for one channel: the template's lines as paragraphs, each value escaped; the summary cut to fit the channel. */
export function renderTemplate(template: string, entry: FeedEntry, fit?: (content: string) => number): string {
  const render = (summary: string) =>
    template
      .replace(/\r\n?/g, '\n')
      .split('\n')
      .map((line) => line.replace(/\{(title|link|summary|picture)\}/g, (_all, name: string) => (name === 'summary' ? summary : name === 'title' ? entry.title : name === 'link' ? (entry.link ?? '') : (entry.picture ?? ''))))
      .filter((line) => line.trim() !== '')
      .map((line) => `<p>${escapeHtmlText(line)}</p>`)
      .join('');
  let summary = cut(entry.summary, SUMMARY_CHARACTERS);
  let content = render(summary);
  const over = fit?.(content) ?? 0;
  if (over > 0 && template.includes('{summary}') && summary) {
    summary = cut(summary, summary.length - over - 1);
    content = render(summary);
    if ((fit?.(content) ?? 0) > 0) content = render('');
  }
  return content;
}

/** At most `length` characters, cut at a word and marked with an ellipsis. */
function cut(text: string, length: number): string {
  if (text.length <= length) return text;
  if (length <= 1) return '';
  const part = text.slice(0, length - 1);
  const space = part.lastIndexOf(' ');
  return `${(space > length / 2 ? part.slice(0, space) : part).trimEnd()}…`;
}

/** One entry's posts, one create per channel (a channel that refuses it does not stop the others). */
async function postEntry(services: Services, em: EntityManager, feed: Feed, entry: FeedEntry, channels: Map<string, Integration>): Promise<FeedEntryPost[]> {
  const results: FeedEntryPost[] = [];
  for (const integrationId of feed.integrationIds) {
    const integration = channels.get(integrationId);
    if (!integration) {
      results.push({ integrationId, error: 'The channel no longer exists.' });
      continue;
    }
    try {
      const provider = providerOf(integration);
      const max = entryMaxLength(provider, integration, { settings: {} });
      const content = renderTemplate(feed.template, entry, (html) => measure(provider, html).length - max);
      const now = services.now();
      const date = feed.mode === 'schedule' ? await findFreeSlot(em, integration, now, services.config.defaultPostingTimes) : now;
      if (!date) throw invalidInput('The channel has no free posting slot within a year.');
      const planEntry: PlanEntry = {
        integrationId,
        type: feed.mode === 'schedule' ? 'schedule' : 'draft',
        date,
        shortLink: false,
        tags: [],
        groupKey: 0,
        settings: {},
        items: [{ content, media: feed.attachPicture && entry.picture ? [{ id: entry.picture, path: entry.picture }] : [], delay: 0 }],
      };
      const [created] = await createPosts(services, em, feed.organizationId, {
        creationMethod: 'API',
        entries: [planEntry],
        approval: feed.mode === 'schedule' && feed.approval ? { ...feed.approval, requestedAt: now.toISOString() } : undefined,
        createdBy: feed.createdBy,
        audit: (post) => ({
          ...sourceOf(undefined, feed.organizationId),
          action: 'post.created',
          target: { kind: 'post', id: post.postId },
          integrationId: post.integration,
          summary: `Herald created post ${post.postId} from the feed "${feed.name}" (entry "${entry.title.slice(0, 100)}").`,
          changes: { feedId: feed.id, awaitingApproval: Boolean(post.approval) },
        }),
      });
      results.push({ integrationId, postId: created.postId });
    } catch (error) {
      if (!(error instanceof DomainError) || error.code === 'internal') throw error;
      results.push({ integrationId, error: error.message.slice(0, 500) });
    }
  }
  return results;
}

/** Records the entries as seen; the newest `backlog` of them (and, later, every new one) become posts. Answers the posts made. */
async function takeEntries(services: Services, em: EntityManager, feed: Feed, entries: FeedEntry[], options: { first: boolean; backlog: number }): Promise<number> {
  const ordered = oldestFirst(entries);
  const now = services.now();
  const known = new Set(
    (await em.find(FeedEntrySchema, { feedId: feed.id, entryKey: { $in: ordered.map((entry) => entry.key) } }, { fields: ['entryKey'] })).map((row) => row.entryKey),
  );
  const fresh = ordered.filter((entry) => !known.has(entry.key));
  if (fresh.length === 0) return 0;
  // Old news: a new key dated before the newest entry the feed had when it was added (a feed that pages, a re-published archive).
  const [{ newest } = { newest: null }] = await em.getConnection().execute<{ newest: Date | null }[]>(`select max(published_at) as newest from feed_entry where feed_id = ? and state = 'baseline'`, [feed.id]);
  const toPost = options.first ? fresh.slice(Math.max(0, fresh.length - options.backlog)) : fresh.filter((entry) => !newest || !entry.publishedAt || entry.publishedAt > newest).slice(0, MAX_POSTS_PER_READ);
  const later = new Set(options.first ? [] : fresh.filter((entry) => !toPost.includes(entry) && (!newest || !entry.publishedAt || entry.publishedAt > newest)));
  let channels: Map<string, Integration> | undefined;
  let posts = 0;
  for (const entry of fresh) {
    if (later.has(entry)) continue; // past this read's share: taken by the next read
    const post = toPost.includes(entry);
    const id = await claim(em, feed, entry, post ? 'posted' : 'baseline', now);
    if (!id || !post) continue;
    channels ??= new Map((await em.find(IntegrationSchema, { id: { $in: feed.integrationIds }, organizationId: feed.organizationId, deletedAt: null })).map((channel) => [channel.id, channel]));
    const results = await postEntry(services, em, feed, entry, channels);
    posts += results.filter((result) => result.postId).length;
    const state = results.some((result) => result.postId) ? 'posted' : 'failed';
    await em.getConnection().execute('update feed_entry set state = ?, posts = ?::jsonb where id = ?', [state, JSON.stringify(results), id]);
  }
  return posts;
}

export interface CreateFeedInput extends Required<Pick<FeedSettings, 'url' | 'channels' | 'mode'>> {
  name?: string;
  template?: string;
  attachPicture?: boolean;
  intervalMinutes?: number;
  /** Also post the newest N entries the feed has now (0: start after its newest entry). */
  backlog?: number;
}

const readRefusal = (failure: FeedReadFailure) =>
  invalidInput(`url: the feed could not be read: ${failure.message}.`, { hint: 'Give the address of a public RSS 2.0 or Atom 1.0 feed (open it in a browser: it shows XML).' });

export async function createFeed(context: ToolContext, input: CreateFeedInput): Promise<{ feed: Feed; posts: number }> {
  const { em, caller, services } = context;
  const url = checkUrl(input.url);
  const template = checkTemplate(input.template ?? DEFAULT_TEMPLATE);
  await channelsOf(em, caller.organizationId, input.channels);
  let read: Awaited<ReturnType<typeof readFeed>>;
  try {
    read = await readFeed(services, url, {});
  } catch (error) {
    if (error instanceof FeedReadFailure) throw readRefusal(error);
    throw error;
  }
  if (read.kind !== 'document') throw invalidInput('url: the feed answered 304 Not Modified to a first read.', { hint: 'Check the URL.' });
  const now = services.now();
  const feed = em.create(FeedSchema, {
    id: newId(),
    organizationId: caller.organizationId,
    name: (input.name?.trim() || read.feed.title || new URL(url).host).slice(0, 200),
    url,
    integrationIds: [...new Set(input.channels)],
    template,
    mode: input.mode,
    attachPicture: input.attachPicture ?? true,
    intervalMinutes: input.intervalMinutes ?? DEFAULT_INTERVAL_MINUTES,
    paused: false,
    createdBy: credentialRef(caller),
    approval: (await approvalRequest(em, context)) ?? null,
    feedTitle: read.feed.title || null,
    etag: read.etag ?? null,
    lastModified: read.lastModified ?? null,
    nextPollAt: now,
    lastPolledAt: now,
    lastSuccessAt: now,
    failures: 0,
    lastError: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  });
  feed.nextPollAt = nextRegularPoll(feed, now);
  await em.flush();
  await recordChange(em, caller.organizationId, { action: 'feed.created', target: { kind: 'feed', id: feed.id }, did: `added the feed "${feed.name}" (${url})`, changes: { channels: feed.integrationIds, mode: feed.mode } });
  const posts = await takeEntries(services, em, feed, read.feed.entries, { first: true, backlog: Math.min(input.backlog ?? 0, MAX_BACKLOG) });
  return { feed, posts };
}

export async function changeFeed(context: ToolContext, feed: Feed, changes: FeedSettings): Promise<Feed> {
  const { em, caller, services } = context;
  const now = services.now();
  if (changes.channels) feed.integrationIds = (await channelsOf(em, caller.organizationId, [...new Set(changes.channels)])).map((channel) => channel.id);
  if (changes.template !== undefined) feed.template = checkTemplate(changes.template);
  if (changes.name !== undefined && changes.name.trim()) feed.name = changes.name.trim().slice(0, 200);
  if (changes.mode) feed.mode = changes.mode;
  if (changes.attachPicture !== undefined) feed.attachPicture = changes.attachPicture;
  if (changes.intervalMinutes !== undefined) feed.intervalMinutes = changes.intervalMinutes;
  let rebaseline: FeedEntry[] | undefined;
  if (changes.url !== undefined && checkUrl(changes.url) !== feed.url) {
    // Another document: what it has now is its baseline, as when a feed is added.
    const url = checkUrl(changes.url);
    const read = await readFeed(services, url, {}).catch((error: unknown) => {
      throw error instanceof FeedReadFailure ? readRefusal(error) : error;
    });
    if (read.kind !== 'document') throw invalidInput('url: the feed answered 304 Not Modified to a first read.', { hint: 'Check the URL.' });
    Object.assign(feed, { url, etag: read.etag ?? null, lastModified: read.lastModified ?? null, feedTitle: read.feed.title || null, failures: 0, lastError: null, failingSince: null });
    rebaseline = read.feed.entries;
  }
  if (changes.paused !== undefined && changes.paused !== feed.paused) {
    feed.paused = changes.paused;
    // Resumed: read soon (and from where it stands: entries that came while paused are new).
    if (!changes.paused) feed.nextPollAt = now;
  }
  feed.updatedAt = now;
  await em.flush();
  for (const entry of rebaseline ?? []) await claim(em, feed, entry, 'baseline', now);
  const changed = Object.keys(changes).filter((key) => changes[key as keyof FeedSettings] !== undefined);
  await recordChange(em, caller.organizationId, { action: 'feed.changed', target: { kind: 'feed', id: feed.id }, did: `changed the feed "${feed.name}" (${changed.join(', ')})`, changes: { fields: changed } });
  return feed;
}

export async function deleteFeed(em: EntityManager, feed: Feed): Promise<void> {
  await em.getConnection().execute('delete from feed where id = ? and organization_id = ?', [feed.id, feed.organizationId]);
  await recordChange(em, feed.organizationId, { action: 'feed.deleted', target: { kind: 'feed', id: feed.id }, did: `deleted the feed "${feed.name}" (the posts it made stay)` });
}

export interface PollOutcome {
  ok: boolean;
  notModified?: boolean;
  posts: number;
  error?: string;
}

/** Reads one feed now: new entries become posts; a failure backs off and, first in its spell, notifies. */
export async function pollFeed(services: Services, em: EntityManager, feed: Feed): Promise<PollOutcome> {
  const now = services.now();
  feed.lastPolledAt = now;
  try {
    const read = await readFeed(services, feed.url, { etag: feed.etag, lastModified: feed.lastModified });
    let posts = 0;
    if (read.kind === 'document') {
      feed.etag = read.etag ?? null;
      feed.lastModified = read.lastModified ?? null;
      feed.feedTitle = read.feed.title || feed.feedTitle;
      posts = await takeEntries(services, em, feed, read.feed.entries, { first: false, backlog: 0 });
    }
    Object.assign(feed, { failures: 0, lastError: null, failingSince: null, lastSuccessAt: now, nextPollAt: nextRegularPoll(feed, now) });
    await em.flush();
    return { ok: true, notModified: read.kind === 'not_modified', posts };
  } catch (error) {
    if (!(error instanceof FeedReadFailure)) throw error;
    const message = `${error.message}.`;
    feed.failures += 1;
    feed.lastError = message;
    feed.nextPollAt = new Date(now.getTime() + backoffMs(feed.intervalMinutes, feed.failures, error.retryAfterMs));
    if (!feed.failingSince) {
      feed.failingSince = now;
      notify(em, feed.organizationId, 'feed_failed', `The feed "${feed.name}" could not be read: ${message} Herald tries again, less often while it fails, and tells you once per spell; the feed's page (Feeds) shows the reason.`, `${services.config.publicUrl}/feeds/${feed.id}`);
    }
    await em.flush();
    return { ok: false, posts: 0, error: message };
  }
}

const FEEDS_PER_RUN = 25;
const IN_PARALLEL = 4;

/**
 * The periodic job's work: the feeds that are due (at most FEEDS_PER_RUN a run, the longest-waiting first, IN_PARALLEL at
 * a time), each on its own entity manager. Answers how many were read.
 */
export async function pollDueFeeds(services: Services): Promise<number> {
  const now = services.now();
  const due = await services.orm.em.fork().find(FeedSchema, { paused: false, nextPollAt: { $lte: now } }, { orderBy: { nextPollAt: 'asc' }, limit: FEEDS_PER_RUN });
  let next = 0;
  const worker = async () => {
    while (next < due.length) {
      const em = services.orm.em.fork();
      const feed = await em.findOne(FeedSchema, { id: due[next++].id });
      if (!feed || feed.paused) continue;
      try {
        await pollFeed(services, em, feed);
      } catch (error) {
        services.logger.warn({ err: (error as Error).message, feedId: feed.id }, 'feed poll failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_PARALLEL, due.length) }, worker));
  return due.length;
}
