// Comments and replies an audience leaves on the posts Herald published (tools/internal/comments.ts), and the state of
// polling each post for them (tools/internal/comment-poll.ts).
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

const timestamp = () => p.datetime().columnType('timestamptz');

/** new: nobody answered yet; answered: a reply went out (Herald's, or the account's own on the platform); hidden; deleted. */
export const commentStates = ['new', 'answered', 'hidden', 'deleted'] as const;
export type CommentState = (typeof commentStates)[number];

export interface CommentAuthor {
  id: string;
  name: string;
  handle?: string;
  url?: string;
  picture?: string;
}

/** One comment or reply, kept once per channel (`platform_id` is unique per integration). */
export const CommentSchema = defineEntity({
  name: 'Comment',
  tableName: 'comment',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    integrationId: p.string(),
    /** The root post (ours) it was left on, directly or under another comment. */
    postId: p.string(),
    platformId: p.string(),
    /** The platform id of the comment it answers; null when it answers the post itself. */
    parentPlatformId: p.string().nullable(),
    author: p.json<CommentAuthor>(),
    text: p.text(),
    url: p.text().nullable(),
    /** What a reply or a moderation call needs besides the id (Bluesky's cid, YouTube's thread id). */
    meta: p.json<Record<string, string>>().nullable(),
    state: p.string().$type<CommentState>(),
    /** Herald's reply (a post row whose `replyTo` names this comment), once one was made. */
    replyPostId: p.string().nullable(),
    /** When the platform says it was written. */
    createdAt: timestamp(),
    fetchedAt: timestamp(),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Comment = InferEntity<typeof CommentSchema>;

/** When a published post is next read for comments, and how the last reads went. */
export const CommentPollSchema = defineEntity({
  name: 'CommentPoll',
  tableName: 'comment_poll',
  properties: {
    postId: p.string().primary(),
    organizationId: p.string(),
    integrationId: p.string(),
    nextPollAt: timestamp(),
    /** The newest comment's time seen so far: the provider's paging may stop there. */
    since: timestamp().nullable(),
    /** Failed reads in a row (back-off), and the last failure. */
    failures: p.integer().default(0),
    lastError: p.text().nullable(),
    lastPolledAt: timestamp().nullable(),
  },
});
export type CommentPoll = InferEntity<typeof CommentPollSchema>;

export const commentEntities = [CommentSchema, CommentPollSchema];
