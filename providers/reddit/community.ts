// Reddit comments and changes to what went out (issue 24).
// Reference (2026-11): https://www.reddit.com/dev/api/ — GET /comments/{article} (scope read: [the submission's listing, its
// comment tree]; a node is `t1` with `replies` '' or a Listing, or `more` with `children` ids, whose id "_" with no children
// means "continue this thread", read again with `comment={parent}`), GET /api/morechildren (scope read; api_type=json, link_id,
// children, answered `{json: {data: {things}}}` flat), POST /api/editusertext (scope edit; thing_id, text: a self post's body or
// a comment; a link or image post has no body to edit and a title never changes), POST /api/del (scope edit; id: the fullname
// of the account's own link or comment, answered `{}`, also for one already deleted), POST /api/remove and /api/approve (scope
// modposts; moderators of the subreddit only), GET /r/{sr}/about (`user_is_moderator`). Field meanings checked against
// Pyprohly/reddit-api-doc-notes (docs/api-reference/comment.rst: author "[deleted]" / "[removed]", `removed`, `edited`).
// Reddit lets only a comment's author delete it: a comment someone left on the account's post can be removed (hidden from
// everyone but moderators, and approved back) by a moderator of its subreddit, which is what `hideComment` does; there is no
// `deleteComment` for Reddit.
import { z } from 'zod';
import { notSupported } from '../../src/errors.js';
import type { ChainRefs, EditItem, PlatformComment, ProviderContext, PublishedRef } from '../types.js';
import { idsOf } from '../shared.js';
import { listing, redditCall } from './api.js';
import { subredditName, type SubredditEntry } from './submit.js';
import { commonMarkLineBreaks } from '../safe-markdown.js';

type Node = { kind: string; data: Record<string, unknown> };
const nodeSchema: z.ZodType<Node> = z.looseObject({ kind: z.string(), data: z.record(z.string(), z.unknown()) });
const treeSchema = z.tuple([z.unknown(), z.object({ data: z.object({ children: z.array(nodeSchema) }) })]).rest(z.unknown());
const thingsSchema = z.object({ json: z.object({ data: z.object({ things: z.array(nodeSchema) }).optional() }) });
const commentSchema = z.looseObject({
  id: z.string(),
  parent_id: z.string(),
  author: z.string(),
  author_fullname: z.string().nullish(),
  body: z.string(),
  created_utc: z.number(),
  permalink: z.string().nullish(),
  subreddit: z.string().nullish(),
  removed: z.boolean().nullish(),
  replies: z.unknown().optional(),
});

/** How many morechildren / continue-thread reads one poll of one submission makes at most (each is one API call). */
const MAX_EXPANSIONS = 10;
const GONE = new Set(['[deleted]', '[removed]']);

/** Walks a comment tree: comments into `found`, the `more` stubs into `more` (ids to expand) and `continued` (parents to re-read). */
function walk(nodes: Node[], found: z.infer<typeof commentSchema>[], more: string[], continued: string[]): void {
  for (const node of nodes) {
    if (node.kind === 'more') {
      const children = Array.isArray(node.data.children) ? (node.data.children as string[]) : [];
      if (children.length > 0) more.push(...children);
      else if (typeof node.data.parent_id === 'string' && node.data.parent_id.startsWith('t1_')) continued.push(node.data.parent_id.slice(3));
      continue;
    }
    if (node.kind !== 't1') continue;
    const parsed = commentSchema.safeParse(node.data);
    if (!parsed.success) continue;
    found.push(parsed.data);
    const replies = parsed.data.replies as { data?: { children?: Node[] } } | '' | undefined;
    if (replies && typeof replies === 'object' && Array.isArray(replies.data?.children)) walk(replies.data.children, found, more, continued);
  }
}

/** Every comment under one submission: the tree, then its `more` stubs expanded (up to MAX_EXPANSIONS calls). */
async function commentsOf(context: ProviderContext, submissionId: string) {
  const found: z.infer<typeof commentSchema>[] = [];
  const more: string[] = [];
  const continued: string[] = [];
  const read = async (query: Record<string, string | number | undefined>) => {
    const [, tree] = await redditCall(context, { path: `comments/${encodeURIComponent(submissionId)}`, query: { sort: 'new', limit: 500, ...query }, schema: treeSchema });
    walk(tree.data.children, found, more, continued);
  };
  await read({});
  for (let calls = 0; calls < MAX_EXPANSIONS && (more.length > 0 || continued.length > 0); calls++) {
    if (more.length > 0) {
      const children = more.splice(0, 100);
      const answer = await redditCall(context, { path: 'api/morechildren', query: { api_type: 'json', link_id: `t3_${submissionId}`, children: children.join(','), sort: 'new', limit_children: 'false' }, schema: thingsSchema });
      walk(answer.json.data?.things ?? [], found, more, continued);
    } else {
      await read({ comment: continued.shift() });
    }
  }
  return found;
}

/** The comments on every submission of the post (one per subreddit), flattened, oldest first, each once. */
export async function readComments(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const me = (context.auth.data.username ?? '').toLowerCase();
  const seen = new Map<string, PlatformComment>();
  for (const submission of idsOf(post)) {
    for (const comment of await commentsOf(context, submission)) {
      // A comment its author deleted (or the subreddit removed) keeps its place in the tree without author or text.
      if (seen.has(comment.id) || GONE.has(comment.author) || GONE.has(comment.body)) continue;
      seen.set(comment.id, {
        id: comment.id,
        parentId: comment.parent_id.startsWith('t1_') ? comment.parent_id.slice(3) : undefined,
        author: { id: comment.author_fullname ?? comment.author, name: comment.author, handle: comment.author, url: `${context.endpoints.www}/user/${encodeURIComponent(comment.author)}` },
        text: comment.body,
        createdAt: new Date(comment.created_utc * 1000).toISOString(),
        url: comment.permalink ? `${context.endpoints.www}${comment.permalink}` : undefined,
        meta: comment.subreddit ? { subreddit: comment.subreddit } : undefined,
        byAccount: comment.author.toLowerCase() === me,
        hidden: comment.removed === true || undefined,
      });
    }
  }
  return [...seen.values()].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

const aboutSchema = z.object({ data: z.looseObject({ display_name: z.string(), user_is_moderator: z.boolean().nullish() }) });
const infoSchema = listing(z.looseObject({ subreddit: z.string() }));

/**
 * Removes (hidden) or approves back (shown) someone's comment, as a moderator of its subreddit: Reddit's /about tells whether
 * the account moderates it (`user_is_moderator`); when it does not, Reddit offers the post's author no way to hide a comment.
 */
export async function moderateComment(context: ProviderContext, comment: PublishedRef, hidden: boolean): Promise<void> {
  const subreddit =
    comment.meta?.subreddit ??
    (await redditCall(context, { path: 'api/info', query: { id: `t1_${comment.id}` }, schema: infoSchema })).data.children[0]?.data.subreddit;
  if (!subreddit) throw notSupported(`Reddit no longer shows comment ${comment.id}: it was deleted.`);
  const about = await redditCall(context, { path: `r/${encodeURIComponent(subredditName(subreddit))}/about`, schema: aboutSchema });
  if (!about.data.user_is_moderator) {
    throw notSupported(`Reddit lets only the moderators of r/${about.data.display_name} remove someone's comment, and this account does not moderate it (not_supported).`, {
      hint: 'Report the comment on Reddit, or ask the subreddit\'s moderators.',
    });
  }
  await redditCall(context, { method: 'POST', path: hidden ? 'api/remove' : 'api/approve', form: hidden ? { id: `t1_${comment.id}`, spam: 'false' } : { id: `t1_${comment.id}` }, schema: z.unknown() });
}

const editedSchema = z.object({ json: z.object({ data: z.object({ things: z.array(z.object({ data: z.looseObject({ id: z.string() }) })).min(1) }) }) });

/**
 * Edits the text of what went out: a thread item's comments (one per subreddit, t1_), or the post's submissions (t3_), whose
 * body only a text (self) post has. Setting the same text again is harmless, so an interrupted edit is simply made again.
 */
export async function editText(context: ProviderContext, ref: PublishedRef, item: EditItem, thread?: ChainRefs): Promise<PublishedRef> {
  const ids = idsOf(ref);
  if (!thread) {
    const entries = ((context.settings.subreddit ?? []) as { value: SubredditEntry }[]).map(({ value }) => value);
    const fixed = entries.filter((entry) => !['self', 'text'].includes(entry.type));
    if (fixed.length > 0) {
      throw notSupported(`Reddit cannot change the text of a ${fixed[0].type} post (${fixed[0].subreddit}): only a text post's body can be edited (not_supported).`, {
        hint: 'Edit its comments instead, or delete the post and submit a new one.',
      });
    }
  }
  for (const [index, id] of ids.entries()) {
    const thing = `${thread ? 't1' : 't3'}_${id}`;
    await context.step(
      `edit:${index}`,
      async () => {
        await redditCall(context, { method: 'POST', path: 'api/editusertext', form: { api_type: 'json', thing_id: thing, text: commonMarkLineBreaks(item.text), return_rtjson: 'false' }, schema: editedSchema });
        return true;
      },
      async () => undefined,
    );
  }
  return { id: ref.id, url: ref.url, meta: ref.meta };
}

/** Deletes every submission (or comment) of the item; Reddit answers a delete of what is already gone as done. */
export async function deleteThings(context: ProviderContext, ref: PublishedRef, thread?: ChainRefs): Promise<void> {
  for (const [index, id] of idsOf(ref).entries()) {
    await context.step(
      `delete:${index}`,
      async () => {
        await redditCall(context, { method: 'POST', path: 'api/del', form: { id: `${thread ? 't1' : 't3'}_${id}` }, schema: z.unknown() });
        return true;
      },
      async () => undefined,
    );
  }
}

/** What a submission keeps as it went out: its subreddits, titles, types, links and flairs. */
export function submissionProblem(before: Record<string, unknown>, after: Record<string, unknown>): string | undefined {
  const shape = (settings: Record<string, unknown>) =>
    JSON.stringify(((settings.subreddit ?? []) as { value: SubredditEntry }[]).map(({ value }) => [subredditName(value.subreddit).toLowerCase(), value.title, value.type === 'text' ? 'self' : value.type, value.url ?? '', value.flair?.id ?? '']));
  if (shape(before) === shape(after)) return undefined;
  return 'Reddit keeps a submission\'s subreddit, title, type, link and flair as they went out: only the text of a text post and of comments can be edited.';
}
