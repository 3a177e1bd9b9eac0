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
import { FeedParseError, parseFeed, type FeedEntry } from '../../src/lib/feed-parse.js';
import type { Services, ToolContext } from '../types.js';
import { approvalRequest, credentialRef } from './approval.js';
import { recordChange } from './audit.js';
import { entryMaxLength, measure } from './create-posts.js';
import { createStandingPost, oneItemEntry } from './standing-posts.js';
import { FeedFetchError, fetchFeed } from './feed-fetch.js';
import { findFreeSlot } from './find-slot.js';
import { checkTemplate, DEFAULT_TEMPLATE, renderTemplate } from './feed-template.js';
import { providerOf } from './integrations.js';
import { notify } from './notifications.js';
import { canSeeChannel } from './visibility.js';

export const DEFAULT_INTERVAL_MINUTES = 60;
/** At most this many new entries become posts in one read; the rest wait for the next reads (no flood when a feed bursts). */
export const MAX_POSTS_PER_READ = 10;
export const MAX_BACKLOG = 20;
const MAX_BACKOFF_MS = 24 * 3_600_000;
const MAX_RETRY_AFTER_MS = 7 * 24 * 3_600_000;

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
      const postId = await createStandingPost(services, em, {
        organizationId: feed.organizationId,
        creationMethod: 'API',
        createdBy: feed.createdBy,
        // Drafts are for review: only what is scheduled waits at the approval gate.
        approval: feed.mode === 'schedule' ? feed.approval : null,
        entry: oneItemEntry({
          integrationId,
          type: feed.mode === 'schedule' ? 'schedule' : 'draft',
          date,
          groupKey: 0,
          settings: {},
          content,
          media: feed.attachPicture && entry.picture ? [{ id: entry.picture, path: entry.picture }] : [],
        }),
        summary: (created) => `Herald created post ${created} from the feed "${feed.name}" (entry "${entry.title.slice(0, 100)}").`,
        changes: { feedId: feed.id },
      });
      results.push({ integrationId, postId });
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

/** A feed's first read (when added, or given another URL): a document, or a 400 saying why it could not be read. */
async function firstRead(services: Services, url: string) {
  let read: Awaited<ReturnType<typeof readFeed>>;
  try {
    read = await readFeed(services, url, {});
  } catch (error) {
    if (!(error instanceof FeedReadFailure)) throw error;
    throw invalidInput(`url: the feed could not be read: ${error.message}.`, { hint: 'Give the address of a public RSS 2.0 or Atom 1.0 feed (open it in a browser: it shows XML).' });
  }
  if (read.kind !== 'document') throw invalidInput('url: the feed answered 304 Not Modified to a first read.', { hint: 'Check the URL.' });
  return read;
}

export async function createFeed(context: ToolContext, input: CreateFeedInput): Promise<{ feed: Feed; posts: number }> {
  const { em, caller, services } = context;
  const url = checkUrl(input.url);
  const template = checkTemplate(input.template ?? DEFAULT_TEMPLATE);
  await channelsOf(em, caller.organizationId, input.channels);
  const read = await firstRead(services, url);
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
  const url = changes.url === undefined ? undefined : checkUrl(changes.url);
  if (url !== undefined && url !== feed.url) {
    // Another document: what it has now is its baseline, as when a feed is added.
    const read = await firstRead(services, url);
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
      notify(em, feed.organizationId, 'feed_failed', `The feed "${feed.name}" could not be read: ${message} Herald tries again, less often while it fails, and tells you once per spell; the feed's page (Feeds) shows the reason.`, `${services.config.publicUrl}/feeds/${feed.id}`, undefined, undefined, { target: { kind: 'feed', id: feed.id } });
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
