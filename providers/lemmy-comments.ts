// Lemmy comments and changes to what went out (issue 24), API v3 (Lemmy 0.19) and the v4 answers of Lemmy 1.0.
// Reference (2026-11): https://join-lemmy.org/api/ and lemmy-js-client (GetComments: post_id, sort "New", limit ≤ 50, page in
// v3, page_cursor in v4; GetCommentsResponse `comments` (v3) / `items` + `next_page` (v4); CommentView {comment, creator,
// community}; a comment's parent is the second-to-last id of its `path` "0.<root>.….<id>"; EditPost PUT /post {post_id, name,
// url, body}; EditComment PUT /comment {comment_id, content}; DeletePost POST /post/delete {post_id, deleted} (v4: DELETE /post); DeleteComment
// POST /comment/delete {comment_id, deleted}; RemoveComment POST /comment/remove {comment_id, removed, reason}; GetCommunity
// `moderators`). Lemmy's own handlers (crates/api_crud post/delete.rs, comment/delete.rs) refuse a delete of what is already
// deleted with couldnt_update_post / couldnt_update_comment and another's item with no_post_edit_allowed /
// no_comment_edit_allowed; only a community's moderators (and the instance's admins) may remove someone's comment, which
// they can restore: that is `hideComment`. Nobody but its author deletes a comment, so Lemmy has no `deleteComment`.
import { z } from 'zod';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import { notSupported } from '../src/errors.js';
import type { ChainRefs, EditItem, PlatformComment, ProviderContext, PublishedRef } from './types.js';
import { idsOf } from './shared.js';
import { earliestCreation } from './recovery.js';
import { api, instanceOf, versionOf, versions } from './lemmy.js';
import { commonMarkLineBreaks } from './safe-markdown.js';

const personSchema = z.looseObject({ id: z.number(), name: z.string(), display_name: z.string().nullish(), avatar: z.string().nullish(), actor_id: z.string().optional(), ap_id: z.string().optional() });
const commentViewSchema = z.looseObject({
  comment: z.looseObject({
    id: z.number(),
    creator_id: z.number(),
    post_id: z.number(),
    content: z.string(),
    path: z.string(),
    published: z.string().optional(),
    published_at: z.string().optional(),
    deleted: z.boolean().optional(),
    removed: z.boolean().optional(),
    ap_id: z.string().optional(),
  }),
  creator: personSchema,
  community: z.looseObject({ id: z.number() }).optional(),
});
type CommentView = z.infer<typeof commentViewSchema>;
const listSchema = z.looseObject({ comments: z.array(commentViewSchema).optional(), items: z.array(commentViewSchema).optional(), next_page: z.string().nullish() });

/** Lemmy 0.19 writes times without a zone: they are UTC. */
const timeOf = (view: CommentView) => {
  const published = view.comment.published ?? view.comment.published_at ?? '';
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(published) ? published : `${published}Z`);
};
/** The comment a comment answers, from its path ("0.12.34": 34 answers 12; "0.12": a comment on the post). */
const parentOf = (path: string) => {
  const ids = path.split('.');
  return ids.length > 2 ? ids[ids.length - 2] : undefined;
};

const PAGE = 50;
const MAX_PAGES = 10;

/** The comments of one post, newest first, page by page until `stop` says the rest is older than needed. */
async function commentPages(context: ProviderContext, postId: string, stop: (page: CommentView[]) => boolean): Promise<CommentView[]> {
  const all: CommentView[] = [];
  let cursor: string | undefined;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const v4 = versionOf(context) === 'v4';
    const spelling = versions[versionOf(context)];
    const answer = await api(context, 'comment/list', listSchema, { query: { post_id: postId, sort: spelling.newest, type_: spelling.all, limit: PAGE, ...(v4 ? { page_cursor: cursor } : { page }) } });
    const views = answer.comments ?? answer.items ?? [];
    all.push(...views);
    cursor = answer.next_page ?? undefined;
    if (views.length < PAGE || stop(views) || (v4 && !cursor)) break;
  }
  return all;
}

/** Every comment on every community post of the item, oldest first; deleted and removed ones are left out. */
export async function readComments(context: ProviderContext, post: PublishedRef, since: Date | undefined): Promise<PlatformComment[]> {
  const found: PlatformComment[] = [];
  for (const postId of idsOf(post)) {
    // Newest first: once a page reaches what Herald already holds, older pages hold nothing new.
    const views = await commentPages(context, postId, (page) => since !== undefined && page.some((view) => timeOf(view) < since.getTime()));
    for (const view of views) {
      if (view.comment.deleted || view.comment.removed) continue;
      const author = view.creator;
      const actor = author.ap_id ?? author.actor_id;
      found.push({
        id: String(view.comment.id),
        parentId: parentOf(view.comment.path),
        author: { id: String(author.id), name: author.display_name || author.name, handle: actor ? `${author.name}@${new URL(actor).host}` : author.name, url: actor, picture: author.avatar ?? undefined },
        text: view.comment.content,
        createdAt: new Date(timeOf(view)).toISOString(),
        url: `${instanceOf(context)}/comment/${view.comment.id}`,
        meta: { post: String(view.comment.post_id), ...(view.community ? { community: String(view.community.id) } : {}) },
        byAccount: String(author.id) === context.auth.internalId,
      });
    }
  }
  return found.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

/**
 * The account's comment an interrupted create made: on that post, under that parent, with that text, published since the
 * attempt began. The newest-first pages reaching back before the attempt without it prove it was not made.
 */
export async function findComment(context: ProviderContext, postId: string, parentId: string | undefined, text: string, startedAt: Date): Promise<number | undefined> {
  const since = earliestCreation(startedAt);
  const views = await commentPages(context, postId, (page) => page.some((view) => timeOf(view) < since));
  return views.find((view) => String(view.comment.creator_id) === context.auth.internalId && view.comment.content === text && parentOf(view.comment.path) === parentId && timeOf(view) >= since)?.comment.id;
}

const communitySchema = z.looseObject({ moderators: z.array(z.looseObject({ moderator: z.looseObject({ id: z.number() }) })).default([]), community_view: z.looseObject({ community: z.looseObject({ name: z.string() }) }) });

/** Removes (hidden) or restores someone's comment, as a moderator of the post's community (GetCommunity `moderators`). */
export async function moderateComment(context: ProviderContext, comment: PublishedRef, hidden: boolean, post: PublishedRef): Promise<void> {
  let community = comment.meta?.community;
  if (!community) {
    const postId = comment.meta?.post ?? post.id;
    community = String((await api(context, 'post', z.object({ post_view: z.looseObject({ post: z.looseObject({ community_id: z.number() }) }) }), { query: { id: postId } })).post_view.post.community_id);
  }
  const about = await api(context, 'community', communitySchema, { query: { id: community } });
  if (!about.moderators.some(({ moderator }) => String(moderator.id) === context.auth.internalId)) {
    throw notSupported(`Lemmy lets only the moderators of !${about.community_view.community.name} remove someone's comment, and this account does not moderate it (not_supported).`, {
      hint: 'Report the comment on the instance, or ask the community\'s moderators.',
    });
  }
  // v4's RemoveComment requires a reason (v3's takes one): a restore gives its own.
  await api(context, 'comment/remove', z.unknown(), { json: { comment_id: Number(comment.id), removed: hidden, reason: hidden ? 'Removed from Herald' : 'Restored from Herald' } });
}

const entriesOf = (context: ProviderContext) => ((context.settings.subreddit ?? []) as { value: { subreddit: string; title: string; url?: string } }[]).map(({ value }) => value);

/** Edits each community post (title, link, text) or each comment of a thread item; the same edit again is harmless. */
export async function editPublished(context: ProviderContext, ref: PublishedRef, item: EditItem, thread?: ChainRefs): Promise<PublishedRef> {
  const entries = entriesOf(context);
  for (const [index, id] of idsOf(ref).entries()) {
    await context.step(
      `edit:${index}`,
      async () => {
        if (thread) await api(context, 'comment', z.unknown(), { method: 'PUT', json: { comment_id: Number(id), content: commonMarkLineBreaks(item.text) } });
        else await api(context, 'post', z.unknown(), { method: 'PUT', json: { post_id: Number(id), name: entries[index]?.title, url: entries[index]?.url || undefined, body: commonMarkLineBreaks(item.text) } });
        return true;
      },
      async () => undefined,
    );
  }
  return { id: ref.id, url: ref.url, meta: ref.meta };
}

/**
 * Deletes each community post (or comment). Lemmy refuses a delete of what is already deleted (couldnt_update_…): the item is
 * read back, and one that shows deleted counts as done, so a repeat after a lost answer deletes nothing else.
 */
export async function deletePublished(context: ProviderContext, ref: PublishedRef, thread?: ChainRefs): Promise<void> {
  const what = thread ? 'comment' : 'post';
  for (const [index, id] of idsOf(ref).entries()) {
    await context.step(
      `delete:${index}`,
      async () => {
        try {
          const json = { [`${what}_id`]: Number(id), deleted: true };
          if (versions[versionOf(context)].deleteBy === 'DELETE') await api(context, what, z.unknown(), { method: 'DELETE', json });
          else await api(context, `${what}/delete`, z.unknown(), { json });
        } catch (error) {
          if (!(error instanceof PlatformHttpError) || !(error.status === 404 || /couldnt_update/.test(error.message))) throw error;
          if (error.status !== 404 && !(await isDeleted(context, what, id))) throw error;
        }
        return true;
      },
      async () => undefined,
    );
  }
}

async function isDeleted(context: ProviderContext, what: 'post' | 'comment', id: string): Promise<boolean> {
  const schema = z.looseObject({ [`${what}_view`]: z.looseObject({ [what]: z.looseObject({ deleted: z.boolean().optional() }) }) });
  const answer = (await api(context, what, schema, { query: { id } })) as Record<string, { [key: string]: { deleted?: boolean } }>;
  return answer[`${what}_view`][what].deleted === true;
}

/** A Lemmy post stays in its community: moving it is a new post. */
export function editProblem(before: Record<string, unknown>, after: Record<string, unknown>): string | undefined {
  const communities = (settings: Record<string, unknown>) => JSON.stringify(((settings.subreddit ?? []) as { value: { id: string } }[]).map(({ value }) => String(value.id)));
  if (communities(before) !== communities(after)) return 'Lemmy keeps a post in the communities it went to: its title, link and text can be edited, not where it was posted.';
  return undefined;
}
