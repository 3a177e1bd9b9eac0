// Whop: Markdown forum posts in a company's forum experience, with comments; OAuth 2.1 with PKCE and OpenID Connect.
// API reference: https://docs.whop.com/developer/guides/oauth (authorize, token with PKCE, 1-hour access tokens, rotating refresh
// tokens, userinfo), https://docs.whop.com/api-reference/forum-posts/create-forum-post (experience_id, content, title,
// attachments, parent_id), https://docs.whop.com/api-reference/forum-posts/retrieve-forum-post, https://docs.whop.com/api-reference/files/create-file
// and https://docs.whop.com/developer/guides/direct-file-uploads (presigned PUT with upload_headers, upload_status pending →
// processing → ready | failed, the Api-Version-Date header the /files endpoints need), companies and forums lists; the forum
// post list (https://docs.whop.com/api-reference/forum-posts/list-forumpost: experience_id, parent_id, first/after) and the
// post's created_at and user, as the official SDK @whop/sdk 0.0.42 types them (read 2026-11). Whop renders `content` as
// Markdown: typed Markdown is defused (../safe-markdown.ts); the bodies are checked at type level (test/contracts/chat-bodies.ts),
// and every API v1 request by the fake against the SDK's request types (@whop/sdk 0.0.42, commit 7fc61d2, 2026-07-21, vendored as
// OpenAPI in test/contracts/whop/openapi.json): all fit. The /files calls pin Api-Version-Date 2026-08-21-1 as the direct file
// uploads guide requires, later than the SDK 0.0.42's own default (2026-07-20).
// Comments and changes (issue 24; read 2026-11-27): a post's comments are forum posts whose parent_id is the post, and they nest
// (a reply's parent_id is the comment it answers, comment_count counts the direct ones), listed by experience_id + parent_id
// (https://docs.whop.com/developer/guides/forums "Comment on a post", .../api-reference/forum-posts/list-forumpost); a post or
// comment is edited by PATCH /forum_posts/{id} with content and title (https://docs.whop.com/api-reference/forum-posts/update-forum-post,
// the SDK's forumPosts.update / ForumPostUpdateParams: attachments, content, is_pinned, title, visibility). The SDK's forum posts
// have list, create, retrieve and update only, and the docs no delete or hide of a forum post: deleting what went out and
// hiding or deleting someone's comment are refused with that reason (Herald answers not_supported).
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import { CheckAgainLater, type ChannelAuth, type ConnectContext, type EditItem, type MediaFile, type PlatformComment, type Provider, type ProviderContext, type PublishItem, type PublishedRef, type StepAttempt } from './types.js';
import { couldNotConfirm, earliestCreation, identify } from './recovery.js';
import { defuseMarkdown } from './safe-markdown.js';
import { currentMetric, oauth2AuthorizeUrl, pickedId, putPresigned, storedTokens, tool } from './shared.js';

const scopes = ['openid', 'profile', 'email', 'forum:post:create', 'forum:read', 'company:basic:read'];

const tokenSchema = z.object({ access_token: z.string().min(1), refresh_token: z.string().optional(), expires_in: z.number().int().positive().optional() });
const userInfoSchema = z.looseObject({ sub: z.string(), name: z.string().nullish(), preferred_username: z.string().nullish(), picture: z.string().nullish() });
const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item).default([]), page_info: z.object({ has_next_page: z.boolean().nullish(), end_cursor: z.string().nullish() }).nullish() });
const forumPostSchema = z.looseObject({
  id: z.string(),
  content: z.string().nullish(),
  parent_id: z.string().nullish(),
  title: z.string().nullish(),
  user: z.looseObject({ id: z.string(), username: z.string().nullish(), name: z.string().nullish() }).nullish(),
  created_at: z.union([z.string(), z.number()]).nullish(),
  view_count: z.number().nullish(),
  like_count: z.number().nullish(),
  comment_count: z.number().nullish(),
});
const fileSchema = z.looseObject({
  id: z.string(),
  upload_status: z.enum(['pending', 'processing', 'ready', 'failed']),
  upload_url: z.string().nullish(),
  upload_headers: z.record(z.string(), z.string()).nullish(),
});

/** Whop's error bodies (`{error: {message, type}}`, OAuth `{error, error_description}`) in words a user can act on. */
function classifyWhop(status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> {
  let said = body.slice(0, 200) || 'no answer body';
  try {
    const parsed = JSON.parse(body) as { error?: string | { message?: string; type?: string }; error_description?: string; message?: string };
    if (typeof parsed.error === 'object') said = parsed.error.message ?? parsed.error.type ?? said;
    else said = parsed.error_description ?? parsed.message ?? parsed.error ?? said;
  } catch {
    /* not JSON */
  }
  if (status === 429) {
    const reset = Number(headers.get('retry-after') ?? headers.get('x-ratelimit-reset'));
    return { retryable: true, retryAfterSeconds: Number.isFinite(reset) && reset > 0 ? reset : undefined, message: `rate limit reached (${said})` };
  }
  if (status === 401 || /invalid_grant|invalid_token/.test(body)) return { status: 401, retryable: false, message: `the access was refused (${said}); the token expired or was revoked` };
  // The same 403 for a forum the user may not post in, a post that is not theirs, and an app permission the company withheld.
  if (status === 403) {
    return { message: `Whop refused this for the account (${said}): the connected user must be allowed to post in this forum and edit only their own posts, and the company must give the app its forum permissions (forum:read, forum:post:create)` };
  }
  if (status === 404) return { message: `not found (${said}): check the company and experience ids with getCompanies and experiences` };
  return { message: `${said} (HTTP ${status})` };
}

type ApiContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: Pick<ChannelAuth, 'accessToken'> };

async function api<T>(
  context: ApiContext,
  path: string,
  schema: z.ZodType<T>,
  options: { method?: 'PATCH'; json?: unknown; query?: Record<string, string | number | undefined>; headers?: Record<string, string> } = {},
): Promise<T> {
  const response = await context.fetch({
    ...(options.method ? { method: options.method } : {}),
    url: `${context.endpoints.api}/${path}`,
    query: options.query,
    headers: { authorization: `Bearer ${context.auth.accessToken}`, ...options.headers },
    json: options.json,
    schema,
    classify: classifyWhop,
  });
  return response.data;
}

/** The token endpoint takes JSON; a public client proves itself with PKCE alone, a confidential one adds its secret. */
async function token(context: Pick<ProviderContext, 'fetch' | 'endpoints'>, body: Record<string, string | undefined>): Promise<Pick<ChannelAuth, 'accessToken' | 'refreshToken' | 'expiresAt'>> {
  const { data } = await context.fetch({ method: 'POST', url: `${context.endpoints.api}/oauth/token`, json: body, schema: tokenSchema, classify: classifyWhop });
  return storedTokens({ ...data, expires_in: data.expires_in ?? 3600 });
}

const filesHeaders = (context: ProviderContext) => ({ 'Api-Version-Date': context.endpoints.apiVersion });

/** The Create File body: the file's name; the bytes follow by the presigned URL it answers. */
export const fileBody = (filename: string) => ({ filename });

/** One attachment: the file record (a recorded step), its bytes PUT to the presigned URL, then Whop's processing awaited by re-scheduled runs. */
async function uploadFile(context: ProviderContext, file: MediaFile, index: number): Promise<string> {
  const record = await context.step(`file:${index}`, async () => {
    const name = file.url.split(/[?#]/)[0].split('/').pop() || `attachment-${index + 1}`;
    const created = await api(context, 'api/v1/files', fileSchema, { json: fileBody(decodeURIComponent(name)), headers: filesHeaders(context) });
    if (!created.upload_url) throw new PlatformHttpError({ status: 200, retryable: false, bodyExcerpt: created.id, message: `Whop created file ${created.id} without an upload URL` });
    return { id: created.id, uploadUrl: created.upload_url, headers: created.upload_headers ?? {} };
  });
  await context.step(`put:${index}`, async () => {
    const { bytes } = await file.load();
    await putPresigned(context, record.uploadUrl, record.headers as Record<string, string>, bytes, 'Whop');
    return true;
  });
  const status = await api(context, `api/v1/files/${encodeURIComponent(record.id)}`, fileSchema, { headers: filesHeaders(context) });
  if (status.upload_status === 'failed') throw new PlatformHttpError({ status: 422, retryable: false, bodyExcerpt: record.id, message: `Whop could not process attachment ${index + 1} (file ${record.id})` });
  if (status.upload_status !== 'ready') throw new CheckAgainLater(5, `Whop is still processing attachment ${index + 1}`, 900);
  return record.id;
}

/** Whop's created_at: a Unix timestamp (seconds, or milliseconds) or an ISO date; NaN when absent. */
function createdMs(value: string | number | null | undefined): number {
  if (value === null || value === undefined || value === '') return NaN;
  const number = Number(value);
  if (Number.isFinite(number)) return number < 1e11 ? number * 1000 : number;
  return Date.parse(String(value));
}

const LOOKUP_PAGES = 20;

/**
 * A forum post (or comment) whose answer was lost: the account's post with this content, under the same parent, created since
 * the attempt began (less the clock skew). An older post of the same text is never taken for it, and two that could be it
 * (one inside the skew allowance) are not guessed between: the item stops with "could not confirm" (issue 31;
 * providers/recovery.ts identify); a post without a creation time cannot be told apart, so it stops the item too. Read to
 * the end of the list without a match, nothing was created.
 */
async function findPost(context: ProviderContext, body: { experience_id: string; content: string; parent_id?: string }, attempt: StepAttempt): Promise<{ id: string } | undefined> {
  const since = earliestCreation(attempt.startedAt);
  let after: string | undefined;
  const candidates = [];
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const query = { experience_id: body.experience_id, parent_id: body.parent_id, first: 50, after };
    const { data, page_info: pageInfo } = await api(context, 'api/v1/forum_posts', listOf(forumPostSchema), { query });
    const same = data.filter((post) => post.content === body.content && (post.parent_id ?? undefined) === body.parent_id && post.user?.id === context.auth.internalId);
    const undated = same.find((post) => Number.isNaN(createdMs(post.created_at)));
    if (undated) throw couldNotConfirm('Whop', `a post of the same text (${undated.id}) has no creation time to tell it from an older one`, 'the forum');
    candidates.push(...same.map((post) => ({ item: { id: post.id }, created: createdMs(post.created_at), whole: true })));
    after = pageInfo?.end_cursor ?? undefined;
    // A page listed newest first that reaches back before the window holds the last candidates there can be (Whop does not
    // document the order: any other is read to the end).
    const times = data.map((post) => createdMs(post.created_at));
    const reachesBack = times.length > 0 && times.every((time, index) => index === 0 || time <= times[index - 1]) && times.at(-1)! < since;
    if (!pageInfo?.has_next_page || !after || reachesBack) return identify(attempt, candidates, 'Whop', 'posts', 'the forum');
  }
  throw couldNotConfirm('Whop', `the forum has more than ${LOOKUP_PAGES * 50} posts to read through`, 'the forum');
}

/** The Create Forum Post body: the Markdown defused, in the experience, with the title or parent and the ready attachments. */
export function forumPostBody(experienceId: string, text: string, extra: { title?: string; parent_id?: string }, attachments: { id: string }[]) {
  return { experience_id: experienceId, content: defuseMarkdown(text), ...extra, ...(attachments.length > 0 ? { attachments } : {}) };
}

async function createForumPost(context: ProviderContext, experience: string, item: PublishItem, extra: { title?: string; parent_id?: string }): Promise<string> {
  const attachments = [];
  for (const [index, file] of item.media.entries()) attachments.push({ id: await uploadFile(context, file, index) });
  const body = forumPostBody(experience, item.text, extra, attachments);
  const created = await context.step(
    'post',
    async () => ({ id: (await api(context, 'api/v1/forum_posts', forumPostSchema, { json: body })).id }),
    (attempt) => findPost(context, { experience_id: experience, content: body.content, parent_id: extra.parent_id }, attempt),
  );
  return created.id;
}

const postUrl = (context: ProviderContext, experience: string, id: string) => `${context.endpoints.web}/experiences/${encodeURIComponent(experience)}/${encodeURIComponent(id)}`;

/**
 * The forum experience of one of the account's posts: kept with it when published (`meta.experience`), else read from its URL
 * (…/experiences/{experience}/{post}). Replies and the comment poll run without the post's settings, and a Whop forum post does
 * not name its experience.
 */
function experienceOf(post: PublishedRef): string {
  if (post.meta?.experience) return post.meta.experience;
  const match = post.url ? /\/experiences\/([^/?#]+)\/[^/?#]+$/.exec(post.url) : null;
  if (match) return decodeURIComponent(match[1]);
  throw new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: post.id, message: `Herald does not know the forum experience of Whop post ${post.id}` });
}

const COMMENT_CALLS = 100;

/**
 * The comments on one of the account's posts, the whole tree: each post's direct comments page by page (parent_id), then the
 * comments of each comment that has some (comment_count), oldest first. Bounded: a post past COMMENT_CALLS pages is read in part.
 */
async function commentsOn(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const experience = experienceOf(post);
  const found: PlatformComment[] = [];
  const parents = [post.id];
  let calls = 0;
  for (let parent = parents.shift(); parent !== undefined && calls < COMMENT_CALLS; parent = parents.shift()) {
    let after: string | undefined;
    do {
      calls += 1;
      const { data, page_info: pageInfo } = await api(context, 'api/v1/forum_posts', listOf(forumPostSchema), { query: { experience_id: experience, parent_id: parent, first: 50, after } });
      for (const comment of data) {
        const at = createdMs(comment.created_at);
        found.push({
          id: comment.id,
          parentId: comment.parent_id ?? parent,
          author: { id: comment.user?.id ?? 'unknown', name: comment.user?.name || comment.user?.username || 'Whop member', handle: comment.user?.username ?? undefined },
          text: comment.content ?? '',
          createdAt: new Date(Number.isNaN(at) ? Date.now() : at).toISOString(),
          url: postUrl(context, experience, post.id),
          meta: { experience },
          byAccount: comment.user?.id === context.auth.internalId,
        });
        if ((comment.comment_count ?? 0) > 0) parents.push(comment.id);
      }
      after = pageInfo?.has_next_page ? (pageInfo.end_cursor ?? undefined) : undefined;
    } while (after && calls < COMMENT_CALLS);
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * Edits a forum post or comment in place (PATCH: what is not sent is kept, so the attachments stay): the new Markdown, and a
 * post's title from the settings. Setting the same content again is harmless, so a lost answer is simply repeated.
 */
async function editForumPost(context: ProviderContext, ref: PublishedRef, item: EditItem, root: PublishedRef | undefined): Promise<PublishedRef> {
  const title = root ? '' : text(context.settings.title);
  const body = { content: defuseMarkdown(item.text), ...(title ? { title } : {}) };
  await context.step('edit', async () => {
    await api(context, `api/v1/forum_posts/${encodeURIComponent(ref.id)}`, forumPostSchema, { method: 'PATCH', json: body });
    return true;
  });
  const experience = experienceOf(root ?? ref);
  return { id: ref.id, url: postUrl(context, experience, (root ?? ref).id), meta: { ...ref.meta, experience } };
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

const whop: Provider = {
  identifier: 'whop',
  name: 'Whop',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { api: 'https://api.whop.com', web: 'https://whop.com', apiVersion: '2026-08-21-1' },
  maxLength: () => 50000,
  rules:
    'A forum post in Markdown, with an optional title and attachments (pictures, videos, files), in the chosen company and forum experience ' +
    '(ids from getCompanies and experiences). Later items are comments, each replying to the one before, and may carry attachments too.',
  settings: z.object({
    company: pickedId('Company id from getCompanies'),
    experience: pickedId('Forum experience id from experiences'),
    title: z.string().optional().describe('Title of the post'),
  }),
  chain: 'comments',
  recordsSteps: true,
  tools: [
    {
      ...tool('getCompanies', 'Lists the Whop companies the account can post for: {id, name} items, the id to use as the company setting.'),
      async run(context) {
        const { data } = await api(context, 'api/v1/companies', listOf(z.looseObject({ id: z.string(), title: z.string().nullish() })), { query: { first: 50 } });
        return data.map((company) => ({ id: company.id, name: company.title ?? company.id }));
      },
    },
    {
      ...tool('experiences', 'Lists the forum experiences of a Whop company: {id, name} items, the id to use as the experience setting.', [
        { key: 'company', type: 'string', description: 'Company id from getCompanies' },
      ]),
      async run(context, data) {
        const forums = await api(context, 'api/v1/forums', listOf(z.looseObject({ id: z.string(), experience: z.looseObject({ id: z.string(), name: z.string().nullish() }).nullish() })), {
          query: { company_id: data.company ?? data.id, first: 50 },
        });
        return forums.data.map((forum) => ({ id: forum.experience?.id ?? forum.id, name: forum.experience?.name ?? forum.id }));
      },
    },
  ],
  // The state doubles as the OpenID nonce: both are single-use random values of this authorization, checked at the callback.
  authorizeUrl: (options) => oauth2AuthorizeUrl('api', 'oauth/authorize', scopes, { pkce: true, extra: { nonce: options.state } })(options),

  async exchangeCode(context: ConnectContext, options) {
    const tokens = await token(context, {
      grant_type: 'authorization_code',
      code: options.code,
      redirect_uri: options.redirectUri,
      client_id: options.clientId,
      client_secret: options.clientSecret,
      code_verifier: options.codeVerifier,
    });
    const user = await api({ ...context, auth: tokens }, 'oauth/userinfo', userInfoSchema);
    return { internalId: user.sub, name: user.name || user.preferred_username || user.sub, profile: user.preferred_username || user.sub, picture: user.picture ?? undefined, ...tokens };
  },

  // Refresh tokens rotate: the new one is stored in place of the one used.
  refresh: (context) =>
    token(context, { grant_type: 'refresh_token', refresh_token: context.auth.refreshToken, client_id: context.client?.clientId, client_secret: context.client?.clientSecret }),

  async publish(context, item) {
    const experience = String(context.settings.experience);
    const title = text(context.settings.title) || undefined;
    const id = await createForumPost(context, experience, item, title ? { title } : {});
    return { id, url: postUrl(context, experience, id), meta: { experience } };
  },

  // A comment down the chain, or a reply to someone's comment: a forum post whose parent is the item (or comment) it answers.
  async comment(context, item, { root, parent }): Promise<PublishedRef> {
    const experience = experienceOf(root);
    const id = await createForumPost(context, experience, item, { parent_id: parent.id });
    return { id, url: postUrl(context, experience, root.id), meta: { experience } };
  },

  comments: (context, post) => commentsOn(context, post),
  editPublished: (context, ref, item, thread) => editForumPost(context, ref, item, thread?.root),
  editProblem(before, after) {
    if (text(before.experience) !== text(after.experience) || text(before.company) !== text(after.company)) {
      return 'Whop keeps a forum post in the forum it went to: delete it on Whop and publish it again to post in another forum.';
    }
    if (text(before.title) && !text(after.title)) return "Whop's API changes a post's title but does not remove it: give a new title, or remove it on Whop itself.";
    return undefined;
  },
  unchangeable: {
    delete: "Whop's API cannot delete a forum post (its forum posts can be listed, created, read and edited only): delete it on Whop itself.",
  },

  async postAnalytics(context, post) {
    const view = await api(context, `api/v1/forum_posts/${encodeURIComponent(post.id)}`, forumPostSchema);
    return [
      currentMetric('Views', view.view_count ?? undefined),
      currentMetric('Likes', view.like_count ?? undefined),
      currentMetric('Comments', view.comment_count ?? undefined),
    ];
  },
};

export default whop;
