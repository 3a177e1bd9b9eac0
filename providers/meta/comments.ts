// Comments on a Facebook Page's posts and on an Instagram professional account's media, and changes to what went out
// (issue 24). References (read 2026-11-27):
//   Facebook: https://developers.facebook.com/docs/graph-api/reference/object/comments/ (GET with filter=stream — every
//   comment at any depth, flattened, with parent — order, fields, cursor paging; POST /{object-id}/comments replies to a
//   comment; needs pages_read_engagement and pages_read_user_content to read people's comments, pages_manage_engagement to
//   write, hide and delete), https://developers.facebook.com/docs/graph-api/reference/comment/ (POST /{comment-id}
//   is_hidden, DELETE /{comment-id}, can_hide; comments nest two levels: a reply to a reply goes under its top-level
//   comment), https://developers.facebook.com/docs/graph-api/reference/post/ (POST /{post-id} message updates a Page post,
//   DELETE /{post-id}; pages_manage_posts), https://developers.facebook.com/docs/graph-api/reference/video/ (POST
//   description, DELETE).
//   Instagram: https://developers.facebook.com/docs/instagram-platform/comment-moderation,
//   …/instagram-graph-api/reference/ig-media/comments (top-level comments; the `replies` edge expands their replies),
//   …/reference/ig-comment (POST hide=true|false, DELETE; fields hidden, from, username, parent_id),
//   …/reference/ig-comment/replies (POST message; only top-level comments take replies — a reply to a reply is added to
//   the top-level comment — and not hidden ones), …/reference/instagram-media (Updating: comment_enabled only; Deleting:
//   "This operation is not supported").
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { PlatformComment, ProviderContext, PublishedRef } from '../types.js';
import { timeOf } from '../recovery.js';
import { graph, node } from './graph.js';

/** At most this many pages of 100 comments are read per poll; a busier post is read further on the next poll. */
const MAX_PAGES = 10;
const successSchema = z.looseObject({ success: z.boolean() });
const iso = (value: string) => new Date(timeOf(value) ?? Date.now()).toISOString();

/** Meta's "Object with ID … does not exist" (code 100, subcode 33): what a delete of something already gone answers. */
export const isGone = (error: unknown) => error instanceof PlatformHttpError && (error.status === 404 || /"error_subcode":\s*33\b/.test(error.bodyExcerpt));

/** A DELETE that counts "already gone" as done, so a repeat after a lost answer deletes nothing else. */
export async function deleteNode(context: ProviderContext, id: string): Promise<void> {
  try {
    await graph(context, node(id), { method: 'DELETE', schema: successSchema });
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/**
 * Where a reply to `parent` goes: the comment itself when it is top-level, else its top-level comment (Facebook and Instagram
 * nest two levels; `meta.parent` is what `comments` recorded as its parent). Answers the target and, when it is not the
 * comment itself, a warning for the person.
 */
export function replyTarget(parent: PublishedRef, root: PublishedRef, platform: string): { target: string; warnings?: string[] } {
  const above = parent.meta?.parent;
  if (!above || above === root.id) return { target: parent.id };
  return { target: above, warnings: [`${platform} nests replies two levels deep: the reply went under the comment the answered reply belongs to.`] };
}

const facebookCommentSchema = z.object({
  id: z.string(),
  message: z.string().optional(),
  created_time: z.string(),
  from: z.object({ id: z.string(), name: z.string().optional() }).optional(),
  parent: z.object({ id: z.string() }).optional(),
  is_hidden: z.boolean().optional(),
  permalink_url: z.string().optional(),
});
const facebookPageSchema = z.object({
  data: z.array(facebookCommentSchema),
  paging: z.looseObject({ cursors: z.looseObject({ after: z.string().optional() }).optional(), next: z.string().optional() }).optional(),
});

/** Every comment under a Page post at any depth (filter=stream), oldest first; paging stops at what `since` already holds. */
export async function facebookComments(context: ProviderContext, post: PublishedRef, since: Date | undefined): Promise<PlatformComment[]> {
  const found: z.infer<typeof facebookCommentSchema>[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data, paging } = await graph(context, `${node(post.id)}/comments`, {
      query: { filter: 'stream', order: 'reverse_chronological', fields: 'id,message,created_time,from{id,name},parent{id},is_hidden,permalink_url', limit: 100, after },
      schema: facebookPageSchema,
    });
    found.push(...data);
    after = paging?.next ? paging.cursors?.after : undefined;
    const oldest = data.at(-1);
    if (!after || !oldest || (since && (timeOf(oldest.created_time) ?? 0) < since.getTime())) break;
  }
  return found.reverse().map((comment) => ({
    id: comment.id,
    parentId: comment.parent?.id,
    // Facebook leaves `from` out for people who did not allow apps to see them: the comment is kept, its author unnamed.
    author: { id: comment.from?.id ?? 'unknown', name: comment.from?.name ?? 'A Facebook user' },
    text: comment.message ?? '',
    createdAt: iso(comment.created_time),
    url: comment.permalink_url,
    meta: { parent: comment.parent?.id ?? post.id },
    byAccount: comment.from?.id === context.auth.internalId,
    hidden: comment.is_hidden === true,
  }));
}

export async function hideFacebookComment(context: ProviderContext, comment: PublishedRef, hidden: boolean): Promise<void> {
  await graph(context, node(comment.id), { json: { is_hidden: hidden }, schema: successSchema });
}

const instagramReplySchema = z.object({
  id: z.string(),
  text: z.string().optional(),
  timestamp: z.string(),
  username: z.string().optional(),
  from: z.object({ id: z.string(), username: z.string().optional() }).optional(),
  hidden: z.boolean().optional(),
});
const instagramCommentSchema = instagramReplySchema.extend({ replies: z.object({ data: z.array(instagramReplySchema) }).optional() });
const instagramPageSchema = z.object({
  data: z.array(instagramCommentSchema),
  paging: z.looseObject({ cursors: z.looseObject({ after: z.string().optional() }).optional(), next: z.string().optional() }).optional(),
});
const REPLY_FIELDS = 'id,text,timestamp,username,from{id,username},hidden';

/** The comments on a media and their replies (expanded in the same call), oldest first. */
export async function instagramComments(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const found: PlatformComment[] = [];
  const toComment = (comment: z.infer<typeof instagramReplySchema>, parent: string | undefined): PlatformComment => {
    const username = comment.from?.username ?? comment.username;
    return {
      id: comment.id,
      parentId: parent,
      author: { id: comment.from?.id ?? username ?? 'unknown', name: username ?? 'An Instagram user', handle: username, url: username ? `https://www.instagram.com/${username}/` : undefined },
      text: comment.text ?? '',
      createdAt: iso(comment.timestamp),
      meta: { parent: parent ?? post.id },
      byAccount: comment.from?.id === context.auth.internalId,
      hidden: comment.hidden === true,
    };
  };
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data, paging } = await graph(context, `${node(post.id)}/comments`, { query: { fields: `${REPLY_FIELDS},replies{${REPLY_FIELDS}}`, limit: 50, after }, schema: instagramPageSchema });
    for (const comment of data) found.push(toComment(comment, undefined), ...(comment.replies?.data ?? []).map((reply) => toComment(reply, comment.id)));
    after = paging?.next ? paging.cursors?.after : undefined;
    if (!after) break;
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export async function hideInstagramComment(context: ProviderContext, comment: PublishedRef, hidden: boolean): Promise<void> {
  await graph(context, node(comment.id), { json: { hide: hidden }, schema: successSchema });
}
