// Feeds to posts (tools/internal/feeds.ts): an RSS or Atom feed that turns each new entry into posts on chosen channels,
// and the entries it has seen (each used once: its key is unique per feed).
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PostApproval } from './entities.js';

const timestamp = () => p.datetime().columnType('timestamptz');

export const feedModes = ['draft', 'schedule'] as const;
export type FeedMode = (typeof feedModes)[number];

export const FeedSchema = defineEntity({
  name: 'Feed',
  tableName: 'feed',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    name: p.string(),
    url: p.text(),
    integrationIds: p.json<string[]>(),
    /** Plain text with {title}, {link}, {summary} and {picture}; each line a paragraph of the post. */
    template: p.text(),
    mode: p.string().$type<FeedMode>(),
    /** The entry's picture is attached to the post as media (when it has one). */
    attachPicture: p.boolean().default(true),
    intervalMinutes: p.integer(),
    paused: p.boolean().default(false),
    /** credentialRef of who added the feed: its posts are theirs (they never approve them). */
    createdBy: p.string(),
    /** Set when the feed was added by a credential under the approval gate: its scheduled posts wait for approval. */
    approval: p.json<PostApproval>().nullable(),
    /** The document's own title, from the last successful read. */
    feedTitle: p.text().nullable(),
    etag: p.text().nullable(),
    lastModified: p.text().nullable(),
    nextPollAt: timestamp(),
    lastPolledAt: timestamp().nullable(),
    lastSuccessAt: timestamp().nullable(),
    /** Failed reads in a row (the back-off), why the last one failed, and since when it fails (one notification a spell). */
    failures: p.integer().default(0),
    lastError: p.text().nullable(),
    failingSince: timestamp().nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
});
export type Feed = InferEntity<typeof FeedSchema>;

/** posted: made into posts; baseline: there when the feed was added (never posted); failed: the create was refused. */
export const feedEntryStates = ['posted', 'baseline', 'failed'] as const;
export type FeedEntryState = (typeof feedEntryStates)[number];

export interface FeedEntryPost {
  integrationId: string;
  postId?: string;
  error?: string;
}

export const FeedEntrySchema = defineEntity({
  name: 'FeedEntry',
  tableName: 'feed_entry',
  properties: {
    id: p.string().primary(),
    feedId: p.string(),
    organizationId: p.string(),
    /** The entry's GUID or id, else its link (unique per feed). */
    entryKey: p.text(),
    title: p.text(),
    link: p.text().nullable(),
    publishedAt: timestamp().nullable(),
    state: p.string().$type<FeedEntryState>(),
    posts: p.json<FeedEntryPost[]>(),
    seenAt: timestamp(),
  },
});
export type FeedEntry = InferEntity<typeof FeedEntrySchema>;

export const feedEntities = [FeedSchema, FeedEntrySchema];
