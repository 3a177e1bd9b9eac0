// Moltbook: text posts by an AI agent in a submolt, with comments, through the agent's API key.
// API reference: https://www.moltbook.com/skill.md (base URL, agents/me and agents/status, POST /posts {submolt, title, content},
// POST /posts/{id}/comments {content, parent_id}, GET /posts/{id}, rate limits, the verification challenge and POST /verify).
// Always the www host: moltbook.com without www redirects and the redirect drops the Authorization header.
// Moltbook shows a post's and a comment's content as Markdown (its agents' own formatting guides write headers, lists and code
// blocks): typed Markdown is defused (./safe-markdown.ts), so a link leads only to a web or mail address; the title is plain text.
// Recovery: Moltbook offers no marker and a new post is limited to one every 30 minutes, so an interrupted create is not looked
// up: it stops with "could not confirm" (the step has no recover).
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, Provider, ProviderContext, PublishedRef } from './types.js';
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
    return { retryAfterSeconds: wait, message: `rate limit reached (${said}); Moltbook allows one post every 30 minutes` };
  }
  if (status === 401) return { status: 401, retryable: false, message: `the agent API key was refused (${said})` };
  return { message: `${said} (HTTP ${status})` };
}

type CallContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: { accessToken: string } };

async function call<T>(context: CallContext, path: string, schema: z.ZodType<T>, json?: unknown): Promise<T> {
  const response = await context.fetch({
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

/** A post Moltbook holds for its challenge stays unpublished; once answered it can be read, so a retry finds it there. */
async function confirmVerified(context: ProviderContext, id: string, verification: { code: string; challenge?: string }): Promise<void> {
  const visible = await call(context, `posts/${encodeURIComponent(id)}`, postSchema).then(
    () => true,
    (error: unknown) => {
      if (error instanceof PlatformHttpError && error.status === 404) return false;
      throw error;
    },
  );
  if (visible) return;
  throw new PlatformHttpError({
    status: 403,
    retryable: false,
    bodyExcerpt: verification.challenge ?? '',
    message:
      `Moltbook holds post ${id} until its verification challenge is answered${verification.challenge ? ` ("${verification.challenge}")` : ''}; ` +
      `Herald cannot answer it. Answer it as the agent with POST /api/v1/verify {"verification_code": "${verification.code}", "answer": "…"} ` +
      'within 5 minutes, then retry this post: Herald will find the post instead of creating it again',
  });
}

async function create(context: ProviderContext, path: string, body: Record<string, unknown>): Promise<string> {
  const created = await context.step('create', async () => {
    const answer = await call(context, path, createdSchema, body);
    const id = (answer.post ?? answer.comment ?? answer.data)?.id;
    if (!id) throw new PlatformHttpError({ status: 200, retryable: false, bodyExcerpt: JSON.stringify(answer).slice(0, 500), message: 'Moltbook answered without the id of what it created' });
    const verification = verificationOf(answer);
    return { id, verificationCode: verification?.code ?? null, challenge: verification?.challenge ?? null };
  });
  if (created.verificationCode && path === 'posts') {
    await confirmVerified(context, created.id, { code: created.verificationCode, challenge: created.challenge ?? undefined });
  }
  return created.id;
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
    return { internalId: agent.id ?? agent.name, name: agent.display_name || agent.name, profile: agent.name, picture: agent.avatar_url ?? undefined, accessToken };
  },

  async publish(context, item) {
    const submolt = String(context.settings.submolt ?? 'general');
    const id = await create(context, 'posts', postBody(submolt, item.text));
    return { id, url: postUrl(context, id) };
  },

  async comment(context, item, { root, parent }): Promise<PublishedRef> {
    const id = await create(context, `posts/${encodeURIComponent(root.id)}/comments`, commentBody(item.text, parent.id !== root.id ? parent.id : undefined));
    return { id, url: postUrl(context, root.id) };
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
