// Moltbook: text posts by an AI agent in a submolt, with comments, through the agent's API key.
// API reference: https://www.moltbook.com/skill.md (base URL, agents/me and agents/status, POST /posts {submolt, title, content},
// POST /posts/{id}/comments {content, parent_id}, GET /posts/{id}, rate limits, the verification challenge and POST /verify).
// Always the www host: moltbook.com without www redirects and the redirect drops the Authorization header.
// Moltbook shows a post's and a comment's content as Markdown (its agents' own formatting guides write headers, lists and code
// blocks): typed Markdown is defused (./safe-markdown.ts), so a link leads only to a web or mail address; the title is plain text.
// Recovery: Moltbook offers no marker and a new post is limited to one every 30 minutes, so an interrupted post is not looked
// up: it stops with "could not confirm" (the step has no recover). An interrupted comment is looked up among the post's newest
// comments: the agent's own, same content, same parent, made since the attempt began (findComment).
// Comments and changes (issue 24; read 2026-11-27): skill.md 1.12.0 documents GET /posts/{id}/comments?sort=best|new|old&limit
// (a tree: top-level `comments`, each with its `replies`), replies with parent_id, and DELETE /posts/{id} (author only). It
// documents no edit of a post or comment (no PATCH/PUT), so edits are refused (`unchangeable`). Moltbook's open-source API
// server (moltbook/api, read through its fork sallyom/moltbook-api src/routes/comments.js, posts.js, services/CommentService.js)
// adds DELETE /comments/{id} for the comment's own author only (403 "You can only delete your own comments"; the comment is
// soft-deleted to "[deleted]"), 404 for an unknown post or comment, and the comment fields (id, content, parent_id, depth,
// created_at, author_name, author_display_name, replies). Nothing lets a post's author hide or delete another agent's comment.
// Comments may be held for the same verification challenge as posts (skill.md): a held reply stops like a held post.
// platforms.md marks Moltbook ✗ for edit/delete: skill.md documents DELETE /posts/{id}, so delete is offered.
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import { notSupported } from '../src/errors.js';
import type { ConnectContext, PlatformComment, Provider, ProviderContext, PublishedRef, StepAttempt } from './types.js';
import { couldNotConfirm, createdSince, onlyCandidate } from './recovery.js';
import { defuseMarkdown } from './safe-markdown.js';
import { currentMetric, textOnly } from './shared.js';

const endpoints = { api: 'https://www.moltbook.com/api/v1', web: 'https://www.moltbook.com' };
const MAX_TITLE = 300;

const agentSchema = z.object({
  success: z.boolean().optional(),
  agent: z.looseObject({ id: z.string().optional(), name: z.string(), display_name: z.string().nullish(), avatar_url: z.string().nullish(), karma: z.number().optional() }),
});
const statusSchema = z.looseObject({ status: z.string().optional(), claim_url: z.string().optional() });
const itemSchema = z.looseObject({ id: z.union([z.string(), z.number()]).transform(String) });
/** Moltbook answers `{success, post|comment}`; newer answers put the item in `data`. */
const createdSchema = z.looseObject({ post: itemSchema.optional(), comment: itemSchema.optional(), data: itemSchema.optional() });
const postSchema = z.looseObject({
  post: z.looseObject({ upvotes: z.number().optional(), downvotes: z.number().optional(), comment_count: z.number().optional() }).optional(),
});

/** Moltbook's error body `{success: false, error, hint, retry_after_minutes | retry_after_seconds}`, in words a user can act on. */
function classifyMoltbook(status: number, body: string): Partial<PlatformHttpErrorInit> {
  let parsed: { error?: string; hint?: string; retry_after_minutes?: number; retry_after_seconds?: number } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    /* not JSON: the raw text below */
  }
  const said = [parsed.error, parsed.hint].filter(Boolean).join(' — ') || body.slice(0, 200) || 'no answer body';
  if (status === 429) {
    const wait = parsed.retry_after_seconds ?? (parsed.retry_after_minutes !== undefined ? parsed.retry_after_minutes * 60 : undefined);
    return { retryAfterSeconds: wait, message: `rate limit reached (${said}); Moltbook allows one post every 30 minutes, one comment every 20 seconds and 50 a day` };
  }
  if (status === 401) return { status: 401, retryable: false, message: `the agent API key was refused (${said})` };
  return { message: `${said} (HTTP ${status})` };
}

type CallContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: { accessToken: string } };

async function call<T>(context: CallContext, path: string, schema: z.ZodType<T>, json?: unknown, method?: 'DELETE'): Promise<T> {
  const response = await context.fetch({
    ...(method ? { method } : {}),
    url: `${context.endpoints.api}/${path}`,
    headers: { authorization: `Bearer ${context.auth.accessToken}` },
    json,
    schema,
    classify: classifyMoltbook,
  });
  return response.data;
}

/** The challenge Moltbook may answer instead of publishing at once (a "reverse CAPTCHA" for agents), when there is one. */
function verificationOf(value: unknown, depth = 0): { code: string; challenge?: string } | undefined {
  if (!value || typeof value !== 'object' || depth > 3) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.verification_code === 'string') {
    const challenge = record.challenge_text ?? record.challenge;
    return { code: record.verification_code, challenge: typeof challenge === 'string' ? challenge : undefined };
  }
  for (const nested of Object.values(record)) {
    const found = verificationOf(nested, depth + 1);
    if (found) return found;
  }
  return undefined;
}

const postUrl = (context: ProviderContext, id: string) => `${context.endpoints.web}/post/${encodeURIComponent(id)}`;

/** A title for the post: its first line (Moltbook requires one; posts are 300 characters at most anyway). */
const titleOf = (text: string) => (text.split('\n').find((line) => line.trim()) ?? text).trim().slice(0, MAX_TITLE);

/** Create Post: in the submolt, titled by its first line, the content's Markdown defused. */
export const postBody = (submolt: string, text: string) => ({ submolt, submolt_name: submolt, title: titleOf(text), content: defuseMarkdown(text) });

/** Create Comment: a reply to the post, or to a comment of it. */
export const commentBody = (text: string, parentId?: string) => ({ content: defuseMarkdown(text), ...(parentId ? { parent_id: parentId } : {}) });

/** A post or comment Moltbook holds for its challenge stays unpublished; once answered it can be read, so a retry finds it there. */
async function confirmVerified(context: ProviderContext, what: 'post' | 'comment', id: string, visible: () => Promise<boolean>, verification: { code: string; challenge?: string }): Promise<void> {
  if (await visible()) return;
  throw new PlatformHttpError({
    status: 403,
    retryable: false,
    bodyExcerpt: verification.challenge ?? '',
    message:
      `Moltbook holds ${what} ${id} until its verification challenge is answered${verification.challenge ? ` ("${verification.challenge}")` : ''}; ` +
      `Herald cannot answer it. Answer it as the agent with POST /api/v1/verify {"verification_code": "${verification.code}", "answer": "…"} ` +
      `within 5 minutes, then retry this ${what === 'post' ? 'post' : 'reply'}: Herald will find it instead of creating it again`,
  });
}

/** Whether a post can be read (a held one answers 404). */
const postVisible = (context: ProviderContext, id: string) => () =>
  call(context, `posts/${encodeURIComponent(id)}`, postSchema).then(
    () => true,
    (error: unknown) => {
      if (error instanceof PlatformHttpError && error.status === 404) return false;
      throw error;
    },
  );

/** Whether a comment is among its post's comments (a held one is not listed). */
const commentVisible = (context: ProviderContext, postId: string, id: string) => async () => (await commentsOf(context, postId)).some((comment) => comment.id === id);

async function create(context: ProviderContext, path: string, body: Record<string, unknown>, postId?: string): Promise<string> {
  const created = await context.step('create', async () => {
    const answer = await call(context, path, createdSchema, body);
    const id = (answer.post ?? answer.comment ?? answer.data)?.id;
    if (!id) throw new PlatformHttpError({ status: 200, retryable: false, bodyExcerpt: JSON.stringify(answer).slice(0, 500), message: 'Moltbook answered without the id of what it created' });
    const verification = verificationOf(answer);
    return { id, verificationCode: verification?.code ?? null, challenge: verification?.challenge ?? null };
  }, postId ? (attempt) => findComment(context, postId, body, attempt) : undefined);
  if (created.verificationCode) {
    const verification = { code: created.verificationCode, challenge: created.challenge ?? undefined };
    if (postId) await confirmVerified(context, 'comment', created.id, commentVisible(context, postId, created.id), verification);
    else await confirmVerified(context, 'post', created.id, postVisible(context, created.id), verification);
  }
  return created.id;
}

type CommentNode = {
  id: string;
  content?: string | null;
  parent_id?: string | null;
  created_at?: string | null;
  is_deleted?: boolean;
  author_id?: string | null;
  author_name?: string | null;
  author_display_name?: string | null;
  author?: { id?: string | null; name?: string | null; display_name?: string | null; avatar_url?: string | null } | null;
  replies?: CommentNode[];
};
const commentNodeSchema: z.ZodType<CommentNode> = z.lazy(() =>
  z.looseObject({
    id: z.union([z.string(), z.number()]).transform(String),
    content: z.string().nullish(),
    parent_id: z.union([z.string(), z.number()]).transform(String).nullish(),
    created_at: z.string().nullish(),
    is_deleted: z.boolean().optional(),
    author_id: z.string().nullish(),
    author_name: z.string().nullish(),
    author_display_name: z.string().nullish(),
    author: z.looseObject({ id: z.string().nullish(), name: z.string().nullish(), display_name: z.string().nullish(), avatar_url: z.string().nullish() }).nullish(),
    replies: z.array(commentNodeSchema).optional(),
  }),
);
/** `{success, comments}`; answers in the newer `{success, data}` form carry the same list there. */
const commentsSchema = z.looseObject({ comments: z.array(commentNodeSchema).optional(), data: z.union([z.array(commentNodeSchema), z.looseObject({ comments: z.array(commentNodeSchema).optional() })]).optional() });

/**
 * An interrupted comment: the agent's own comment with the same content under the same parent, made since the attempt began,
 * among the post's newest comments. None found proves nothing (a comment held for its challenge is not listed, and a busy
 * post may have more than one page), so the item stops with "could not confirm" rather than commenting twice.
 */
async function findComment(context: ProviderContext, postId: string, body: Record<string, unknown>, attempt: StepAttempt) {
  const parentId = typeof body.parent_id === 'string' ? body.parent_id : undefined;
  const candidates = (await commentsOf(context, postId, 'new')).filter(
    (comment) => comment.byAccount && comment.text === body.content && (comment.parentId ?? undefined) === parentId && createdSince(attempt, comment.createdAt),
  );
  const found = onlyCandidate(candidates, 'Moltbook', 'comments');
  if (!found) throw couldNotConfirm('Moltbook', 'the comment was sent but its answer was lost, and it is not among the post\'s newest comments (it may be held for its verification challenge)', `the post ${postUrl(context, postId)}`);
  return { id: found.id, verificationCode: null, challenge: null };
}

/** The whole tree of a post's comments, flattened, oldest first (read `sort=old`, or `new` for the newest; limit 100, the most Moltbook answers). */
async function commentsOf(context: ProviderContext, postId: string, sort: 'old' | 'new' = 'old'): Promise<PlatformComment[]> {
  const answer = await call(context, `posts/${encodeURIComponent(postId)}/comments?sort=${sort}&limit=100`, commentsSchema);
  const roots = answer.comments ?? (Array.isArray(answer.data) ? answer.data : answer.data?.comments) ?? [];
  const agentName = typeof context.channel?.agentName === 'string' ? context.channel.agentName : undefined;
  const flat: PlatformComment[] = [];
  const walk = (node: CommentNode, parentId: string | undefined) => {
    const name = node.author?.name ?? node.author_name ?? 'unknown agent';
    const authorId = node.author?.id ?? node.author_id ?? name;
    // A deleted comment keeps its place in the tree (its replies stay) but is no comment to answer.
    if (!node.is_deleted && node.content !== '[deleted]') {
      flat.push({
        id: node.id,
        parentId: node.parent_id ?? parentId,
        author: { id: authorId, name: node.author?.display_name || node.author_display_name || name, handle: name, url: `${context.endpoints.web}/u/${encodeURIComponent(name)}`, picture: node.author?.avatar_url ?? undefined },
        text: node.content ?? '',
        createdAt: node.created_at ?? new Date(0).toISOString(),
        url: `${context.endpoints.web}/post/${encodeURIComponent(postId)}`,
        byAccount: authorId === context.auth.internalId || (agentName !== undefined && name === agentName),
      });
    }
    for (const reply of node.replies ?? []) walk(reply, node.id);
  };
  for (const root of roots) walk(root, undefined);
  return flat.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** DELETE of a post or comment; one already gone (404) counts as deleted. */
async function remove(context: ProviderContext, path: string): Promise<void> {
  try {
    await call(context, path, z.unknown(), undefined, 'DELETE');
  } catch (error) {
    if (!(error instanceof PlatformHttpError && error.status === 404)) throw error;
  }
}

const moltbook: Provider = {
  identifier: 'moltbook',
  name: 'Moltbook',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'apiKey', label: 'Agent API key', type: 'password', required: true, description: 'API key of a claimed Moltbook agent (moltbook_…)' }],
  },
  endpoints,
  maxLength: () => 300,
  rules:
    'A text post (no media) in the chosen submolt; its first line becomes the title. Later items are comments, each replying to the one before. ' +
    'Moltbook allows one post every 30 minutes and 50 comments a day per agent. The agent must be claimed by its human first. ' +
    'When Moltbook holds a post for its verification challenge, Herald cannot answer it: the post fails with the challenge and its code.',
  settings: z.object({
    submolt: z.string().min(1).describe('Submolt to post in, for example general'),
  }),
  chain: 'comments',
  recordsSteps: true,
  validate: textOnly('Moltbook'),
  tools: [],

  async connect(context: ConnectContext, fields) {
    const accessToken = (fields.apiKey ?? '').trim();
    const auth = { ...context, auth: { accessToken } };
    const { agent } = await call(auth, 'agents/me', agentSchema);
    const { status, claim_url: claimUrl } = await call(auth, 'agents/status', statusSchema);
    if (status && status !== 'claimed') {
      throw new PlatformHttpError({
        status: 403,
        retryable: false,
        bodyExcerpt: status,
        message: `the agent "${agent.name}" is not claimed yet (${status}): its human must claim it${claimUrl ? ` at ${claimUrl}` : ''} before it can post`,
      });
    }
    return {
      internalId: agent.id ?? agent.name,
      name: agent.display_name || agent.name,
      profile: agent.name,
      picture: agent.avatar_url ?? undefined,
      accessToken,
      // Comments name their author by name (author_name): the agent's own are told apart by it.
      channelSettings: { agentName: agent.name },
    };
  },

  async publish(context, item) {
    const submolt = String(context.settings.submolt ?? 'general');
    const id = await create(context, 'posts', postBody(submolt, item.text));
    return { id, url: postUrl(context, id) };
  },

  // A chain's next comment, or a reply to someone's comment: either way a comment on the root post whose parent_id is the
  // comment it answers (Moltbook's comments nest).
  async comment(context, item, { root, parent }): Promise<PublishedRef> {
    const id = await create(context, `posts/${encodeURIComponent(root.id)}/comments`, commentBody(item.text, parent.id !== root.id ? parent.id : undefined), root.id);
    return { id, url: postUrl(context, root.id) };
  },

  comments: (context, post) => commentsOf(context, post.id),

  // Moltbook lets an agent delete only its own comments: another agent's comment on our post stays (403 becomes not_supported).
  // Safe to repeat: a comment already gone (404) counts as deleted.
  async deleteComment(context, comment) {
    try {
      await remove(context, `comments/${encodeURIComponent(comment.id)}`);
    } catch (error) {
      if (error instanceof PlatformHttpError && error.status === 403) {
        throw notSupported('Moltbook lets an agent delete only its own comments, and this one was written by another agent (not_supported).', {
          hint: 'Leave it, or ask the moderators of the submolt on Moltbook.',
        });
      }
      throw error;
    }
  },

  // A post (DELETE /posts/{id}) or one of its comments (DELETE /comments/{id}); a repeat after a lost answer finds it gone.
  async deletePublished(context, ref, thread) {
    await context.step('delete', async () => {
      await remove(context, thread ? `comments/${encodeURIComponent(ref.id)}` : `posts/${encodeURIComponent(ref.id)}`);
      return true;
    });
  },

  unchangeable: {
    edit: 'Moltbook cannot edit a post or comment: its API (moltbook.com/skill.md) offers no edit, only deletion. Delete it and post again.',
  },

  async postAnalytics(context, post) {
    const { post: view } = await call(context, `posts/${encodeURIComponent(post.id)}`, postSchema);
    return view ? [currentMetric('Upvotes', view.upvotes), currentMetric('Downvotes', view.downvotes), currentMetric('Comments', view.comment_count)] : [];
  },

  async analytics(context) {
    const { agent } = await call(context, 'agents/me', agentSchema);
    return [currentMetric('Karma', agent.karma)];
  },
};

export default moltbook;
