// A feed as the tools answer it (tools/feeds.ts, the console's Feeds pages), and the lookups of the feeds and entries a
// caller may see. The feeds' work is tools/internal/feeds.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import { FeedEntrySchema, FeedSchema, type Feed, type FeedEntry as FeedEntryRow, type FeedEntryPost, type FeedMode } from '../../src/db/feed-entities.js';
import { notFound } from '../../src/errors.js';
import { canSeeChannel } from './visibility.js';

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
