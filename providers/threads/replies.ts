// The replies people leave under the account's Threads posts, and what the account may do about them (read 2026-11-27):
//   https://developers.facebook.com/documentation/threads/retrieve-and-manage-replies/replies-and-conversations (GET
//   /{media-id}/conversation: every reply at any depth, flattened, newest first by default, cursor paging; fields username,
//   timestamp, replied_to, root_post, hide_status, is_reply_owned_by_me; needs threads_read_replies),
//   https://developers.facebook.com/documentation/threads/reply-management and …/threads/reference/reply-management
//   (POST /{reply-id}/manage_reply hide=true|false, top-level replies only — hiding one hides its nested replies; needs
//   threads_manage_replies; no endpoint deletes another person's reply),
//   https://developers.facebook.com/docs/threads/posts/delete-posts (DELETE /{media-id} of the account's own post, answered
//   {success, deleted_id}; needs threads_delete; 100 deletions a day per account). The API has no edit of a published post.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { notSupported } from '../../src/errors.js';
import type { PlatformComment, ProviderContext, PublishedRef } from '../types.js';
import { graph } from './api.js';

const FIELDS = 'id,text,username,permalink,timestamp,replied_to,root_post,hide_status,is_reply_owned_by_me,profile_picture_url';
/** At most this many pages of 50 replies are read per poll; a busier conversation is read further on the next poll. */
const MAX_PAGES = 10;

const replySchema = z.looseObject({
  id: z.string(),
  text: z.string().optional(),
  username: z.string().optional(),
  permalink: z.string().optional(),
  timestamp: z.string(),
  replied_to: z.object({ id: z.string() }).optional(),
  hide_status: z.string().optional(),
  is_reply_owned_by_me: z.boolean().optional(),
  profile_picture_url: z.string().optional(),
});
const pageSchema = z.object({
  data: z.array(replySchema),
  paging: z.looseObject({ cursors: z.looseObject({ after: z.string().optional() }).optional(), next: z.string().optional() }).optional(),
});

/**
 * Every reply under the post, at any depth, oldest first. Threads answers newest first; paging stops once a page reaches
 * replies older than `since` (already held), or after MAX_PAGES.
 */
export async function repliesOf(context: ProviderContext, post: PublishedRef, since: Date | undefined): Promise<PlatformComment[]> {
  const found: z.infer<typeof replySchema>[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data, paging } = await graph(context, { path: `${encodeURIComponent(post.id)}/conversation`, params: { fields: FIELDS, reverse: 'true', limit: 50, after }, schema: pageSchema });
    found.push(...data);
    after = paging?.next ? paging.cursors?.after : undefined;
    const oldest = data.at(-1);
    if (!after || !oldest || (since && Date.parse(oldest.timestamp.replace(/([+-]\d\d)(\d\d)$/, '$1:$2')) < since.getTime())) break;
  }
  return found.reverse().map((reply) => ({
    id: reply.id,
    parentId: reply.replied_to?.id,
    // Threads names a reply's author by username only (public accounts); it is also the profile address.
    author: { id: reply.username ?? 'unknown', name: reply.username ?? 'A Threads user', handle: reply.username, url: reply.username ? `https://www.threads.com/@${reply.username}` : undefined, picture: reply.profile_picture_url },
    text: reply.text ?? '',
    createdAt: new Date(Date.parse(reply.timestamp.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'))).toISOString(),
    url: reply.permalink,
    // Kept so a hide can tell a top-level reply (which Threads can hide) from a nested one (which it cannot target).
    meta: { parent: reply.replied_to?.id ?? post.id },
    byAccount: reply.is_reply_owned_by_me === true,
    hidden: reply.hide_status === 'HIDDEN',
  }));
}

/** Hides (or shows) a reply directly under the post; Threads hides its nested replies with it and cannot target those alone. */
export async function hideReply(context: ProviderContext, reply: PublishedRef, hidden: boolean, post: PublishedRef): Promise<void> {
  if (reply.meta?.parent && reply.meta.parent !== post.id) {
    throw notSupported('Threads hides only the replies directly under your post (a nested reply goes with the reply it answers): hide that reply instead.');
  }
  // Setting the same state again is harmless: the call is simply repeated after a lost answer.
  await graph(context, { method: 'POST', path: `${encodeURIComponent(reply.id)}/manage_reply`, params: { hide: String(hidden) }, schema: z.looseObject({ success: z.boolean() }) });
}

/** Meta's "Object with ID … does not exist" (code 100, subcode 33): what a delete of a gone post answers. */
const isGone = (error: unknown) => error instanceof PlatformHttpError && (error.status === 404 || /"error_subcode":\s*33\b/.test(error.bodyExcerpt));

/** Deletes one of the account's posts (a thread item or a reply Herald made); one already gone counts as deleted. */
export async function deletePost(context: ProviderContext, ref: PublishedRef): Promise<void> {
  await context.step('delete', async () => {
    try {
      await graph(context, { method: 'DELETE', path: encodeURIComponent(ref.id), schema: z.looseObject({ success: z.boolean() }) });
    } catch (error) {
      if (!isGone(error)) throw error;
    }
    return true;
  });
}
