// X: the replies under the account's posts, hiding them, and deleting the account's own posts (issue 24).
// Reference (2026-11-27): https://docs.x.com/x-api/posts/search/introduction and the OpenAPI document 2.167 (operation
// searchPostsRecent, GET /2/tweets/search/recent: query `conversation_id:<id>`, max_results 10–100, next_token paging, only
// the last 7 days; apps whose access level has no search are answered 403 "client-forbidden" / reason
// "client-not-enrolled"), https://docs.x.com/x-api/posts/hide-replies/introduction (PUT /2/tweets/:tweet_id/hidden
// {hidden}: only replies in a conversation the account started; scope tweet.moderate.write; hiding what is hidden succeeds),
// https://developer.x.com/en/docs/x-api/tweets/manage-tweets/api-reference/delete-tweets-id (DELETE /2/tweets/:id, the
// account's own posts only, {data: {deleted}}), https://docs.x.com/x-api/fundamentals/edit-posts (edits: 30 minutes, 5 times,
// each a new post id; OpenAPI `edit_options.previous_post_id`). X lets an account delete only its own posts: someone
// else's reply can be hidden, not deleted.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { notSupported } from '../../src/errors.js';
import type { PlatformComment, ProviderContext, PublishedRef } from '../types.js';
import { xCall } from './api.js';

const searchSchema = z.object({
  data: z
    .array(
      z.looseObject({
        id: z.string(),
        text: z.string().default(''),
        author_id: z.string().optional(),
        created_at: z.string().optional(),
        referenced_tweets: z.array(z.looseObject({ type: z.string(), id: z.string() })).optional(),
      }),
    )
    .default([]),
  includes: z.looseObject({ users: z.array(z.looseObject({ id: z.string(), name: z.string(), username: z.string(), profile_image_url: z.string().optional() })).optional() }).optional(),
  meta: z.looseObject({ next_token: z.string().optional() }).optional(),
});

/** Recent search reads the last 7 days; a post older than that has no replies X will answer. */
const SEARCH_WINDOW_MS = 7 * 86_400_000;
const MAX_PAGES = 5;

/** The access level of the app does not include search (X's Free tier): X's 403 client-forbidden, said as not_supported. */
function tierRefusal(error: unknown): Error | undefined {
  if (!(error instanceof PlatformHttpError && error.status === 403 && /client-forbidden|client-not-enrolled|access level/i.test(`${error.bodyExcerpt} ${error.message}`))) return undefined;
  return notSupported(
    "X does not let this app read replies: its API access level (X's Free tier) has no recent search, which is how replies to a post are read (X answered client-forbidden).",
    { hint: 'Move the X developer app to the Basic tier or above (or pay-per-use with search) in the X developer console; replies can still be answered on X itself.' },
  );
}

/**
 * The replies in the conversation the post started (GET /2/tweets/search/recent `conversation_id:<id>`, newest first),
 * paged until a page reaches `since`, returned oldest first. Replies older than 7 days are beyond recent search.
 */
export async function repliesOf(context: ProviderContext, post: PublishedRef, since: Date | undefined): Promise<PlatformComment[]> {
  const found: PlatformComment[] = [];
  const users = new Map<string, { name: string; username: string; profile_image_url?: string }>();
  let nextToken: string | undefined;
  const windowStart = Date.now() - SEARCH_WINDOW_MS + 60_000;
  for (let page = 0; page < MAX_PAGES; page++) {
    let answer: z.infer<typeof searchSchema>;
    try {
      answer = await xCall(context, {
        path: '2/tweets/search/recent',
        query: {
          query: `conversation_id:${post.id}`,
          max_results: 100,
          'tweet.fields': 'author_id,created_at,conversation_id,referenced_tweets',
          expansions: 'author_id',
          'user.fields': 'name,username,profile_image_url',
          ...(since && since.getTime() > windowStart ? { start_time: since.toISOString().replace(/\.\d{3}Z$/, 'Z') } : {}),
          next_token: nextToken,
        },
        schema: searchSchema,
      });
    } catch (error) {
      throw tierRefusal(error) ?? error;
    }
    for (const user of answer.includes?.users ?? []) users.set(user.id, user);
    for (const reply of answer.data) {
      if (reply.id === post.id) continue;
      const author = reply.author_id ? users.get(reply.author_id) : undefined;
      const username = author?.username;
      found.push({
        id: reply.id,
        parentId: reply.referenced_tweets?.find((reference) => reference.type === 'replied_to')?.id,
        author: { id: reply.author_id ?? '', name: author?.name ?? username ?? reply.author_id ?? 'unknown', handle: username, url: username ? `${context.endpoints.web}/${username}` : undefined, picture: author?.profile_image_url },
        text: reply.text,
        createdAt: reply.created_at ?? new Date().toISOString(),
        url: `${context.endpoints.web}/${username ?? 'i/web'}/status/${reply.id}`,
        byAccount: reply.author_id === context.auth.internalId,
      });
    }
    nextToken = answer.meta?.next_token;
    if (!nextToken) break;
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Hides (or shows again) a reply in a conversation the account started; hiding what is hidden succeeds on X. */
export async function hideReply(context: ProviderContext, comment: PublishedRef, hidden: boolean): Promise<void> {
  try {
    await xCall(context, { method: 'PUT', path: `2/tweets/${encodeURIComponent(comment.id)}/hidden`, json: { hidden }, schema: z.object({ data: z.looseObject({ hidden: z.boolean() }) }) });
  } catch (error) {
    if (error instanceof PlatformHttpError && error.status === 403) {
      throw notSupported(`X refused ${hidden ? 'hiding' : 'showing'} this reply (${error.message}).`, {
        hint: 'X hides only replies in a conversation the account started, and needs the tweet.moderate.write permission: reconnect the X channel if it was connected before Herald asked for it.',
      });
    }
    throw error;
  }
}

/** Someone else's reply cannot be deleted through X's API (only the account's own posts): refused with the way that works. */
export function deleteReply(): never {
  throw notSupported("X lets an account delete only its own posts, not someone else's reply (not_supported).", { hint: 'Hide the reply instead (POST /comments/{id}/hide), or report it on X.' });
}

const deleteSchema = z.object({
  data: z.object({ deleted: z.boolean() }).optional(),
  errors: z.array(z.looseObject({ type: z.string().optional(), title: z.string().optional(), detail: z.string().optional() })).optional(),
});

/** Deletes one of the account's posts; one already gone (404) counts as deleted, so a repeat deletes nothing else. */
export async function deletePost(context: ProviderContext, ref: PublishedRef): Promise<void> {
  await context.step('delete', async () => {
    try {
      const answer = await xCall(context, { method: 'DELETE', path: `2/tweets/${encodeURIComponent(ref.id)}`, schema: deleteSchema });
      // X answers a post it no longer has with an error object (resource-not-found) instead of data: already deleted.
      if (!answer.data?.deleted && !answer.errors?.some((problem) => /resource-not-found/.test(problem.type ?? ''))) {
        throw new Error(`X did not delete post ${ref.id}: ${answer.errors?.map((problem) => problem.detail ?? problem.title).join('; ') || 'it answered deleted: false'}.`);
      }
    } catch (error) {
      if (!(error instanceof PlatformHttpError && error.status === 404)) throw error;
    }
    return true;
  });
}
