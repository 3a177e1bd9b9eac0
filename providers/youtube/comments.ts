// YouTube: the comments under the account's videos, replies to them, moderation, and changing what went out (issue 24).
// References (read 2026-11-27): developers.google.com/youtube/v3/docs/commentThreads/list (part=snippet,replies, videoId,
// maxResults 1–100, pageToken; `replies` holds only some of a thread's replies, `snippet.totalReplyCount` says how many),
// /comments/list (parentId: all the replies of a top-level comment), /comments/insert (a reply: snippet.parentId = the
// top-level comment; YouTube replies do not nest deeper), /comments/update (snippet.textOriginal; the author only),
// /comments/setModerationStatus (POST, id + moderationStatus heldForReview | published | rejected, 204; by the owner of the
// video; a rejected comment cannot be published again; "to remove a comment authored by another user … set its moderation
// status to rejected. The comments.delete method can only be used by the comment's original author"), /comments/delete,
// /videos/update (PUT part=snippet,status: replaces every mutable property of the parts sent, snippet.title and
// snippet.categoryId required, so the video is read first and sent back with the change), /videos/delete (204),
// /youtube/v3/determine_quota_cost (list 1 unit; insert, update, setModerationStatus, delete 50 units).
import type { youtube_v3 } from '@googleapis/youtube';
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { ChainRefs, EditItem, PlatformComment, ProviderContext, PublishedRef, StepAttempt } from '../types.js';
import { createdSince, onlyCandidate } from '../recovery.js';
import { bearerFetch, permanent } from '../shared.js';
import { classify } from './upload.js';

const data = (context: ProviderContext, resource: string) => `${context.endpoints.api}/youtube/${context.endpoints.dataVersion}/${resource}`;
const watchUrl = (context: ProviderContext, videoId: string, commentId?: string) =>
  `${context.endpoints.web}/watch?v=${encodeURIComponent(videoId)}${commentId ? `&lc=${encodeURIComponent(commentId)}` : ''}`;
const call = <T>(context: ProviderContext, request: Parameters<typeof bearerFetch<T>>[3]) => bearerFetch<T>(context, context.auth.accessToken, classify, request);

const commentSchema = z.object({
  id: z.string(),
  snippet: z.object({
    textOriginal: z.string().optional(),
    textDisplay: z.string().optional(),
    parentId: z.string().optional(),
    authorDisplayName: z.string().optional(),
    authorProfileImageUrl: z.string().optional(),
    authorChannelUrl: z.string().optional(),
    authorChannelId: z.object({ value: z.string() }).optional(),
    publishedAt: z.string(),
    moderationStatus: z.string().optional(),
  }),
});
type Comment = z.infer<typeof commentSchema>;
const threadsSchema = z.object({
  items: z.array(z.object({ id: z.string(), snippet: z.object({ topLevelComment: commentSchema, totalReplyCount: z.number().int().default(0) }), replies: z.object({ comments: z.array(commentSchema).default([]) }).optional() })).default([]),
  nextPageToken: z.string().optional(),
});
const repliesSchema = z.object({ items: z.array(commentSchema).default([]), nextPageToken: z.string().optional() });

/** Pages read per poll of one video: each list call costs 1 quota unit of the project's 10,000 a day. */
const MAX_THREAD_PAGES = 5;
const MAX_REPLY_PAGES = 3;

function toComment(context: ProviderContext, videoId: string, comment: Comment, topLevelId?: string): PlatformComment {
  const author = comment.snippet.authorChannelId?.value ?? '';
  return {
    id: comment.id,
    parentId: topLevelId,
    author: { id: author, name: comment.snippet.authorDisplayName ?? author, url: comment.snippet.authorChannelUrl, picture: comment.snippet.authorProfileImageUrl },
    text: comment.snippet.textOriginal ?? comment.snippet.textDisplay ?? '',
    createdAt: comment.snippet.publishedAt,
    url: watchUrl(context, videoId, comment.id),
    // The thread a reply goes into (YouTube replies name the top-level comment) and who wrote it (delete or reject).
    meta: { threadId: topLevelId ?? comment.id, authorChannelId: author },
    byAccount: author === context.auth.internalId,
    hidden: comment.snippet.moderationStatus === 'heldForReview' || undefined,
  };
}

/** Every reply of a top-level comment (comments.list parentId), when the thread carried only some of them. */
async function allReplies(context: ProviderContext, parentId: string): Promise<Comment[]> {
  const found: Comment[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_REPLY_PAGES; page++) {
    const { data: list } = await call(context, { url: data(context, 'comments'), query: { part: 'snippet', parentId, maxResults: 100, textFormat: 'plainText', pageToken }, schema: repliesSchema });
    found.push(...list.items);
    pageToken = list.nextPageToken;
    if (!pageToken) break;
  }
  return found;
}

/** The comments and replies under a video, newest threads first as YouTube orders them by time, answered oldest first. */
export async function videoComments(context: ProviderContext, post: PublishedRef, since: Date | undefined): Promise<PlatformComment[]> {
  const found: PlatformComment[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_THREAD_PAGES; page++) {
    const { data: list } = await call(context, {
      url: data(context, 'commentThreads'),
      query: { part: 'snippet,replies', videoId: post.id, order: 'time', maxResults: 100, textFormat: 'plainText', pageToken },
      schema: threadsSchema,
    });
    for (const thread of list.items) {
      const top = thread.snippet.topLevelComment;
      found.push(toComment(context, post.id, top));
      const included = thread.replies?.comments ?? [];
      const replies = thread.snippet.totalReplyCount > included.length ? await allReplies(context, top.id) : included;
      found.push(...replies.map((reply) => toComment(context, post.id, reply, top.id)));
    }
    pageToken = list.nextPageToken;
    // Threads come newest first: once a page ends before `since`, the older pages hold nothing new (replies to an old
    // thread are missed until it is read again, a cost kept within the quota on purpose).
    const oldest = list.items.at(-1)?.snippet.topLevelComment.snippet.publishedAt;
    if (!pageToken || (since && oldest && Date.parse(oldest) < since.getTime())) break;
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** A reply in the thread of the comment answered (YouTube's replies name the top-level comment), made once. */
export async function replyToComment(context: ProviderContext, text: string, comment: PublishedRef, videoId: string): Promise<PublishedRef> {
  const parentId = comment.meta?.threadId ?? comment.id;
  const made = await context.step(
    'comment',
    async () => {
      const { data: reply } = await call(context, {
        method: 'POST',
        url: data(context, 'comments'),
        query: { part: 'snippet' },
        json: { snippet: { parentId, textOriginal: text } } satisfies youtube_v3.Schema$Comment,
        schema: commentSchema,
      });
      return reply.id;
    },
    // The reply an interrupted insert made: this channel's reply in that thread with the same text, written since the attempt.
    async (attempt: StepAttempt) => {
      const same = (await allReplies(context, parentId)).filter(
        (reply) => reply.snippet.authorChannelId?.value === context.auth.internalId && reply.snippet.textOriginal === text && createdSince(attempt, reply.snippet.publishedAt),
      );
      return onlyCandidate(same, 'YouTube', 'replies')?.id;
    },
  );
  return { id: made, url: watchUrl(context, videoId, made), meta: { threadId: parentId } };
}

const isGone = (error: unknown) => error instanceof PlatformHttpError && error.status === 404;

/** heldForReview hides a comment from the video until it is published again (the owner of the video only). */
export async function moderate(context: ProviderContext, comment: PublishedRef, status: 'heldForReview' | 'published' | 'rejected'): Promise<void> {
  await call(context, { method: 'POST', url: data(context, 'comments/setModerationStatus'), query: { id: comment.id, moderationStatus: status } });
}

/**
 * Removes a comment under the account's video: the account's own with comments.delete; someone else's is rejected
 * (setModerationStatus rejected, YouTube's way to remove it, which also hides its replies). One already gone is done.
 */
export async function removeComment(context: ProviderContext, comment: PublishedRef): Promise<void> {
  const own = comment.meta?.authorChannelId === context.auth.internalId;
  try {
    if (own) await call(context, { method: 'DELETE', url: data(context, 'comments'), query: { id: comment.id } });
    else await moderate(context, comment, 'rejected');
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/** The comment id of a chain item (a comment thread answered `…&lc=<comment id>`) or of a reply (its own id). */
const commentIdOf = (ref: PublishedRef) => (ref.url ? new URL(ref.url).searchParams.get('lc') : null) ?? ref.id;

const videoSchema = z.object({ items: z.array(z.object({ id: z.string(), snippet: z.looseObject({ title: z.string(), categoryId: z.string().optional() }), status: z.looseObject({}).optional() })).default([]) });

/** The settings an edit can change: the title, tags, privacy and made-for-kids (videos.update); the playlist is not an edit. */
export function editProblem(before: Record<string, unknown>, after: Record<string, unknown>): string | undefined {
  if ((before.playlist ?? null) !== (after.playlist ?? null)) return "An edit cannot move a published video to another playlist: change the playlist in YouTube Studio.";
  return undefined;
}

/**
 * Edits a published video (its title, description, tags, privacy and made-for-kids) or a comment of the chain (its text). The
 * video is read first and sent back whole with the change, since videos.update replaces what it is not sent.
 */
export async function editOnYouTube(context: ProviderContext, ref: PublishedRef, item: EditItem, thread?: ChainRefs): Promise<PublishedRef> {
  if (thread) {
    const id = commentIdOf(ref);
    await context.step('edit', async () => {
      await call(context, { method: 'PUT', url: data(context, 'comments'), query: { part: 'snippet' }, json: { id, snippet: { textOriginal: item.text } } satisfies youtube_v3.Schema$Comment, schema: commentSchema });
      return true;
    });
    return ref;
  }
  const settings = context.settings as { title?: string; type?: string; selfDeclaredMadeForKids?: string; tags?: { value: string }[] };
  await context.step('edit', async () => {
    const { data: found } = await call(context, { url: data(context, 'videos'), query: { part: 'snippet,status', id: ref.id }, schema: videoSchema });
    const video = found.items[0];
    if (!video) throw permanent(`YouTube no longer has video ${ref.id}: it was deleted on YouTube`, 404);
    const { title: _title, description: _description, tags: _tags, thumbnails: _thumbnails, localized: _localized, channelId: _channel, channelTitle: _channelTitle, publishedAt: _publishedAt, liveBroadcastContent: _live, ...kept } = video.snippet;
    const snippet = { ...kept, categoryId: video.snippet.categoryId ?? '22', title: settings.title ?? video.snippet.title, description: item.text, ...(settings.tags?.length ? { tags: settings.tags.map((tag) => tag.value) } : {}) };
    const { uploadStatus: _upload, failureReason: _failure, rejectionReason: _rejection, madeForKids: _madeForKids, ...status } = (video.status ?? {}) as Record<string, unknown>;
    const body = {
      id: ref.id,
      snippet,
      status: { ...status, ...(settings.type ? { privacyStatus: settings.type } : {}), ...(settings.selfDeclaredMadeForKids ? { selfDeclaredMadeForKids: settings.selfDeclaredMadeForKids === 'yes' } : {}) },
    } satisfies youtube_v3.Schema$Video;
    await call(context, { method: 'PUT', url: data(context, 'videos'), query: { part: 'snippet,status' }, json: body, schema: z.object({ id: z.string() }) });
    return true;
  });
  return ref;
}

/** Deletes the video (videos.delete) or a comment of the chain (comments.delete); what is already gone counts as deleted. */
export async function deleteOnYouTube(context: ProviderContext, ref: PublishedRef, thread?: ChainRefs): Promise<void> {
  await context.step('delete', async () => {
    try {
      if (thread) await call(context, { method: 'DELETE', url: data(context, 'comments'), query: { id: commentIdOf(ref) } });
      else await call(context, { method: 'DELETE', url: data(context, 'videos'), query: { id: ref.id } });
    } catch (error) {
      if (!isGone(error)) throw error;
    }
    return true;
  });
}
