// LinkedIn comments and changes (issue 24), for organization pages and personal profiles.
// References (read 2026-11-27): learn.microsoft.com/linkedin/marketing/community-management/shares/comments-api (GET
// /rest/socialActions/{postUrn}/comments, start/count paging; a comment's replies at /rest/socialActions/{commentUrn}/comments;
// a reply is POSTed there with `parentComment` (one level of nesting: a reply to a reply names the top-level comment);
// DELETE …/comments/{commentId}?actor= by the comment's actor; PARTIAL_UPDATE of message.text), …/shares/posts-api
// ("Update Posts": POST /rest/posts/{encoded urn} with X-RestLi-Method: PARTIAL_UPDATE and {patch: {$set: {commentary}}};
// "Delete Posts": DELETE /rest/posts/{encoded urn} with X-RestLi-Method: DELETE, 204), …/integrations/people/… (members
// read posts and comments only with r_member_social, which LinkedIn grants to approved partners only).
// LinkedIn has no way to hide a comment through the API, and deletes a comment only as its author.
import { z } from 'zod';
import { notSupported } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { ChainRefs, EditItem, PlatformComment, ProviderContext, PublishedRef, PublishItem, StepAttempt } from '../types.js';
import { createdSince, onlyCandidate } from '../recovery.js';
import { authorOf, littleText, postUrl, rest, urnParam } from './api.js';

const commentSchema = z.object({
  id: z.string().optional(),
  $URN: z.string().optional(),
  actor: z.string().optional(),
  parentComment: z.string().optional(),
  message: z.object({ text: z.string() }).optional(),
  created: z.object({ time: z.number() }).optional(),
  commentsSummary: z.looseObject({ aggregatedTotalComments: z.number().optional() }).optional(),
});
type Comment = z.infer<typeof commentSchema>;
const listSchema = z.object({ elements: z.array(commentSchema).default([]), paging: z.looseObject({ total: z.number().optional() }).optional() });

/** What readers see of little text: hashtag templates as #tags, escapes removed. */
const unescapedText = (text: string) => text.replace(/\{hashtag\|\\#\|([^}]*)\}/g, '#$1').replace(/\\(.)/g, '$1');

const PAGE = 50;
const MAX_PAGES = 4;

/** A comment's URN: the one LinkedIn answers, else built from its post and id. */
const urnOf = (comment: Comment, object: string) => comment.$URN ?? `urn:li:comment:(${object},${comment.id})`;
/** The comment id inside `urn:li:comment:(<activity>,<id>)`. */
const commentIdOf = (urn: string) => /,([^,()]+)\)$/.exec(urn)?.[1] ?? urn;

async function listComments(context: ProviderContext, target: string): Promise<Comment[]> {
  const found: Comment[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data } = await rest(context, { path: `socialActions/${urnParam(target)}/comments?start=${page * PAGE}&count=${PAGE}`, schema: listSchema });
    found.push(...data.elements);
    if (data.elements.length < PAGE || (data.paging?.total !== undefined && found.length >= data.paging.total)) break;
  }
  return found;
}

function toPlatformComment(context: ProviderContext, post: PublishedRef, comment: Comment, topLevel?: string): PlatformComment {
  const urn = urnOf(comment, post.id);
  const actor = comment.actor ?? '';
  return {
    id: urn,
    parentId: topLevel,
    author: { id: actor, name: actor.startsWith('urn:li:organization:') ? 'LinkedIn page' : 'LinkedIn member' },
    text: unescapedText(comment.message?.text ?? ''),
    createdAt: new Date(comment.created?.time ?? Date.now()).toISOString(),
    url: `${postUrl(context, post.id)}?commentUrn=${encodeURIComponent(urn)}`,
    meta: { threadUrn: topLevel ?? urn, actor },
    byAccount: actor === authorOf(context),
  };
}

/** The comments of an organization's post and their replies (one level deep on LinkedIn), oldest first. */
export async function pageComments(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const found: PlatformComment[] = [];
  for (const comment of await listComments(context, post.id)) {
    const urn = urnOf(comment, post.id);
    found.push(toPlatformComment(context, post, comment));
    if ((comment.commentsSummary?.aggregatedTotalComments ?? 1) === 0) continue;
    found.push(...(await listComments(context, urn)).map((reply) => toPlatformComment(context, post, reply, urn)));
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Personal profiles: reading comments needs r_member_social, which LinkedIn reserves to approved partners. */
export function memberComments(): never {
  throw notSupported(
    "LinkedIn does not let Herald read the comments on a personal profile's posts: that needs the r_member_social permission, which LinkedIn grants only to approved partners (not_supported).",
    { hint: 'Read and answer them on LinkedIn; a LinkedIn Page channel can read its comments.' },
  );
}

/** A reply under someone's comment (parentComment; a reply to a reply goes under its top-level comment), made once. */
export async function replyToComment(context: ProviderContext, item: PublishItem, root: PublishedRef, comment: PublishedRef): Promise<PublishedRef> {
  const actor = authorOf(context);
  const parent = comment.meta?.threadUrn ?? comment.id;
  const path = `socialActions/${urnParam(parent)}/comments`;
  const text = littleText(item.text);
  const create = async () => {
    const created = await rest(context, { method: 'POST', path, json: { actor, object: root.id, message: { text }, parentComment: parent }, schema: commentSchema.optional() });
    const made = created.data ?? {};
    if (!made.$URN && !made.id) throw new PlatformHttpError({ status: created.status, retryable: false, outcomeUnknown: true, bodyExcerpt: '', message: 'LinkedIn created the reply without answering its id: check the post before retrying.' });
    return urnOf(made, root.id);
  };
  const lookUp = async (attempt: StepAttempt) => {
    const found = (await listComments(context, parent)).filter((reply) => reply.actor === actor && reply.message?.text === text && createdSince(attempt, reply.created?.time));
    const only = onlyCandidate(found, 'LinkedIn', 'replies');
    return only ? urnOf(only, root.id) : undefined;
  };
  const urn = await context.step('comment', create, lookUp);
  return { id: urn, url: `${postUrl(context, root.id)}?commentUrn=${encodeURIComponent(urn)}`, meta: { threadUrn: parent } };
}

const gone = (error: unknown) => error instanceof PlatformHttpError && error.status === 404;

/** Deletes a comment on the page's post: only one the page wrote (LinkedIn deletes a comment only as its actor). */
export async function deletePageComment(context: ProviderContext, comment: PublishedRef, post: PublishedRef): Promise<void> {
  const actor = authorOf(context);
  if (comment.meta?.actor && comment.meta.actor !== actor) {
    throw notSupported("LinkedIn's API deletes a comment only as its author, so Herald cannot delete someone else's comment (not_supported).", { hint: 'Delete or report it on LinkedIn itself.' });
  }
  try {
    await rest(context, { method: 'DELETE', path: `socialActions/${urnParam(post.id)}/comments/${encodeURIComponent(commentIdOf(comment.id))}?actor=${urnParam(actor)}` });
  } catch (error) {
    if (!gone(error)) throw error;
  }
}

/** Edits the commentary of a post, or the text of a comment of the chain (PARTIAL_UPDATE); setting it again is harmless. */
export async function editOnLinkedin(context: ProviderContext, ref: PublishedRef, item: EditItem, thread?: ChainRefs): Promise<PublishedRef> {
  const text = littleText(item.text);
  await context.step('edit', async () => {
    if (thread) {
      await rest(context, {
        method: 'POST',
        path: `socialActions/${urnParam(thread.root.id)}/comments/${encodeURIComponent(commentIdOf(ref.id))}?actor=${urnParam(authorOf(context))}`,
        headers: { 'x-restli-method': 'PARTIAL_UPDATE' },
        json: { patch: { message: { $set: { text } } } },
      });
    } else {
      await rest(context, { method: 'POST', path: `posts/${urnParam(ref.id)}`, headers: { 'x-restli-method': 'PARTIAL_UPDATE' }, json: { patch: { $set: { commentary: text } } } });
    }
    return true;
  });
  return ref;
}

/** Deletes a post (DELETE /rest/posts) or a comment of the chain; what is already gone (404) counts as deleted. */
export async function deleteOnLinkedin(context: ProviderContext, ref: PublishedRef, thread?: ChainRefs): Promise<void> {
  await context.step('delete', async () => {
    try {
      if (thread) await rest(context, { method: 'DELETE', path: `socialActions/${urnParam(thread.root.id)}/comments/${encodeURIComponent(commentIdOf(ref.id))}?actor=${urnParam(authorOf(context))}` });
      else await rest(context, { method: 'DELETE', path: `posts/${urnParam(ref.id)}`, headers: { 'x-restli-method': 'DELETE' } });
    } catch (error) {
      if (!gone(error)) throw error;
    }
    return true;
  });
}
