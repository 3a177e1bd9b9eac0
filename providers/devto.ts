// DEV (dev.to, Forem): Markdown articles published with the user's API key, the first picture as the cover (`main_image`),
// the others as Markdown images of their public URL, optionally under one of the user's organizations.
// References: https://developers.forem.com/api/v1 (createArticle, getUserMe, getUserAllArticles / getUserPublishedArticles,
// getTags, getOrganization); the Forem source (forem/forem: app/controllers/api/v1/api_controller.rb for the `api-key` header
// and error bodies, app/models/article.rb for the limits: title 128 characters, at most 4 tags, tag names alphanumeric).
// Forem has no "organizations of the user" call: the organizations helper gathers those of the user's articles.
// Contract: Forem's OpenAPI 3 document for v1 (api_v1.json, forem/forem-docs f2f06af, last changed 2023-12-13; vendored in
// test/contracts/devto/). Where it differs from the controller, the controller is followed: `tags` is an array of names
// (article_params permits `tags: []`; the document's string would be dropped). Newer than the document: `ai_disclosure_level`
// (forem/forem#23743, 2026-08-17), which DEV's rules for automated clients (dev.to/llms.txt, 2026-09) ask on every create
// and update: the `aiDisclosure` setting, sent when given.
// What DEV would run (issue 21): Forem renders body_markdown, then runs Liquid tags ({% embed %}, {{ }}) over the page
// (app/services/markdown_processor/parser.rb, read 2026-11), so braces in text go as entities; a body starting with `---`
// lines is front matter, so rules are written `***`. The title and tags are plain text fields.
// Changes and comments (issue 24; developers.forem.com/api/v1 read 2026-11: updateArticle, getCommentsByArticleId,
// unpublishArticle): an article is edited with PUT /api/articles/{id} {article: {title, body_markdown, main_image, tags}}; the API
// has no deletion (its only removal, PUT /api/articles/{id}/unpublish, is for admins and moderators, and unpublishing by
// `published: false` leaves the article in the account as a draft, which is not what "deleted" promises), so Herald does not
// delete DEV articles. Comments are read from GET /api/comments?a_id= (threads of `id_code`, `body_html`, `user`, `children`);
// the API has no call to write, hide or delete a comment, so they are read only.
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, PlatformComment, Provider, ProviderContext, PublishItem, PublishedRef } from './types.js';
import { convertContent } from '../src/lib/content.js';
import { currentMetric, noVideo, tagsSchema } from './shared.js';
import { markdownArticle, picturesOf, plainRefusal, saidIn, splitCover, valuesOf } from './articles/common.js';
import { recoveryWindowStart } from './recovery.js';

const settings = z.object({
  title: z.string().trim().min(1, 'DEV needs a title for the article').max(128, 'DEV titles are at most 128 characters: shorten the title').describe('Article title, at most 128 characters'),
  tags: tagsSchema
    .max(4, 'DEV takes at most 4 tags: remove some')
    .optional()
    .describe('Up to 4 tags (names from the tags tool, letters and digits only)'),
  organization: z.string().regex(/^\d+$/, 'organization is an id from the organizations tool').optional().describe('Organization id from organizations: the article is published under it'),
  aiDisclosure: z
    .enum(['no_ai', 'some_ai', 'fully_autonomous'], { message: 'aiDisclosure is no_ai, some_ai or fully_autonomous' })
    .optional()
    .describe("How much AI made the article, as DEV asks every automated create and edit to say: no_ai (a person wrote it), some_ai (a person wrote it with meaningful AI help), fully_autonomous (an agent or model wrote it, even at a person's request). Left out, DEV records it as not disclosed"),
});

const userSchema = z.object({ id: z.number(), username: z.string(), name: z.string().nullish(), profile_image: z.string().nullish() });
const articleSchema = z.object({ id: z.number(), url: z.string() });
const myArticlesSchema = z.array(
  z.object({
    id: z.number(),
    title: z.string(),
    url: z.string(),
    body_markdown: z.string().nullish(),
    published_at: z.string().nullish(),
    page_views_count: z.number().nullish(),
    public_reactions_count: z.number().nullish(),
    comments_count: z.number().nullish(),
    organization: z.object({ username: z.string(), name: z.string() }).nullish(),
  }),
);
const organizationSchema = z.object({ id: z.number(), username: z.string(), name: z.string() });

/** Forem's error body is `{error, status}`; a refused key is 401 "unauthorized". */
function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  if (status === 401) {
    return { status: 401, retryable: false, message: `the API key was refused (${saidIn(status, body)}): create a key in DEV Settings, Extensions, DEV Community API Keys, and reconnect` };
  }
  return plainRefusal(status, body);
}

type Api = Pick<ConnectContext, 'fetch' | 'endpoints'> & { apiKey: string };

const apiOf = (context: ProviderContext): Api => ({ fetch: context.fetch, endpoints: context.endpoints, apiKey: context.auth.accessToken });

async function call<T>(api: Api, path: string, schema: z.ZodType<T>, request: { method?: 'POST' | 'PUT'; json?: unknown; query?: Record<string, string | number> } = {}): Promise<T> {
  const response = await api.fetch({
    ...request,
    url: `${api.endpoints.api}/api/${path}`,
    // Forem's v1 API is chosen by this media type.
    headers: { 'api-key': api.apiKey, accept: 'application/vnd.forem.api-v1+json' },
    schema,
    classify,
  });
  return response.data;
}

/** The user's articles, newest first, a page of up to 1000 at a time (Forem's page size limit). */
async function myArticles(api: Api, which: 'all' | 'published', pages = 3) {
  const all: z.infer<typeof myArticlesSchema> = [];
  for (let page = 1; page <= pages; page++) {
    const batch = await call(api, `articles/me/${which}`, myArticlesSchema, { query: { page, per_page: 1000 } });
    all.push(...batch);
    if (batch.length < 1000) break;
  }
  return all;
}

/** The article as DEV takes it, from the item and the post's settings (the same for a creation and an edit). */
function articleOf(context: ProviderContext, item: PublishItem) {
  const options = settings.parse(context.settings);
  const { cover, rest } = splitCover(picturesOf(item.media, 'DEV'));
  // DEV's Markdown (Redcarpet with hard_wrap) breaks lines on a newline and knows GFM tables.
  const body = markdownArticle(item.text, rest, { tables: true, lineBreak: '\n', templates: 'liquid' });
  const article = {
    title: options.title,
    body_markdown: body,
    published: true,
    main_image: cover?.url,
    tags: valuesOf(options.tags),
    organization_id: options.organization ? Number(options.organization) : undefined,
    ai_disclosure_level: options.aiDisclosure,
  };
  return { article, body };
}

type ForemComment = { id_code: string; created_at: string; body_html: string; user: { user_id: number; username: string; name?: string | null; profile_image_90?: string | null }; children: ForemComment[] };
const commentSchema: z.ZodType<ForemComment> = z.lazy(() =>
  z.looseObject({
    id_code: z.string(),
    created_at: z.string(),
    body_html: z.string(),
    user: z.looseObject({ user_id: z.number(), username: z.string(), name: z.string().nullish(), profile_image_90: z.string().nullish() }),
    children: z.array(commentSchema).default([]),
  }),
);

/** The comment threads of one article, flattened; Forem shows a deleted comment in its place as "[deleted]". */
async function commentsOf(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const threads = await call(apiOf(context), 'comments', z.array(commentSchema), { query: { a_id: post.id } });
  const found: PlatformComment[] = [];
  const walk = (comments: ForemComment[], parentId: string | undefined) => {
    for (const comment of comments) {
      const text = convertContent(comment.body_html, 'plain').trim();
      if (!/^\[(deleted|hidden by post author)\]$/.test(text)) {
        found.push({
          id: comment.id_code,
          parentId,
          author: { id: String(comment.user.user_id), name: comment.user.name || comment.user.username, handle: comment.user.username, url: `${context.endpoints.api}/${comment.user.username}`, picture: comment.user.profile_image_90 ?? undefined },
          text,
          createdAt: comment.created_at,
          url: `${context.endpoints.api}/${comment.user.username}/comment/${comment.id_code}`,
          byAccount: String(comment.user.user_id) === context.auth.internalId,
        });
      }
      walk(comment.children, comment.id_code);
    }
  };
  walk(threads, undefined);
  return found.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

const devto: Provider = {
  identifier: 'devto',
  name: 'DEV',
  editor: 'markdown',
  article: true,
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'apiKey', label: 'API key', type: 'password', required: true, description: 'From dev.to Settings, Extensions, DEV Community API Keys.' }],
  },
  endpoints: { api: 'https://dev.to' },
  maxLength: () => 100000,
  rules:
    'An article (Markdown, or HTML with headings, emphasis, lists, quotes, code, tables and pictures), published at once, with a required title (at most 128 characters) and up to 4 tags (letters and digits, from the tags tool); ' +
    'optionally under an organization (from organizations); aiDisclosure says how much AI made it (DEV asks automated clients to send it on every create and edit). The first picture becomes the cover image, the others follow the text; ' +
    'DEV loads pictures from their public URL, so PUBLIC_URL must be public. No video, one item (no comments). Views, reactions and comments are the post analytics. Liquid tags ({% %}, {{ }}) in the text show as written, they are not run.',
  settings,
  chain: 'none',
  mediaByUrl: true,
  recordsSteps: true,
  validate(items, raw) {
    const tag = valuesOf((raw as z.infer<typeof settings>).tags).find((value) => !/^[\p{L}\p{N}]{1,30}$/u.test(value));
    if (tag !== undefined) return `The tag "${tag}" cannot be used on DEV: tags are letters and digits only, at most 30 (pick them with the tags tool).`;
    return noVideo(items, 'DEV');
  },
  tools: [
    {
      methodName: 'tags',
      description: 'Lists popular DEV tags (names to use in the tags setting).',
      dataSchema: [],
      run: async (context) => (await call(apiOf(context), 'tags', z.array(z.object({ id: z.number(), name: z.string() })), { query: { per_page: 100 } })).map((tag) => ({ id: tag.name, name: tag.name })),
    },
    {
      methodName: 'organizations',
      description: 'Lists the DEV organizations the account has published under (ids for the organization setting).',
      dataSchema: [],
      run: async (context) => {
        const api = apiOf(context);
        const usernames = [...new Set((await myArticles(api, 'all', 1)).flatMap((article) => (article.organization ? [article.organization.username] : [])))];
        const organizations = await Promise.all(usernames.map((username) => call(api, `organizations/${encodeURIComponent(username)}`, organizationSchema)));
        return organizations.map((organization) => ({ id: String(organization.id), name: organization.name, username: organization.username }));
      },
    },
  ],

  async connect(context, fields) {
    const apiKey = (fields.apiKey ?? '').trim();
    const user = await call({ ...context, apiKey }, 'users/me', userSchema);
    return { internalId: String(user.id), name: user.name?.trim() || user.username, profile: user.username, picture: user.profile_image ?? undefined, accessToken: apiKey };
  },

  async publish(context, item) {
    const options = settings.parse(context.settings);
    const api = apiOf(context);
    const { article, body } = articleOf(context, item);
    const created = await context.step(
      'article',
      () => call(api, 'articles', articleSchema, { method: 'POST', json: { article } }),
      async ({ startedAt }) => {
        // The lost one is among the newest, with this title and body, published since the attempt began: an older article
        // with the same words is not it (Forem itself refuses the same title and body twice).
        const since = recoveryWindowStart(startedAt).getTime();
        const found = (await call(api, 'articles/me/all', myArticlesSchema, { query: { page: 1, per_page: 30 } })).find(
          (mine) => mine.title === options.title && mine.body_markdown === body && mine.published_at != null && Date.parse(mine.published_at) >= since,
        );
        return found ? { id: found.id, url: found.url } : undefined;
      },
    );
    return { id: String(created.id), url: created.url };
  },

  // Setting the same article again is harmless: an interrupted edit is simply made again.
  async editPublished(context, ref, item) {
    const { article } = articleOf(context, item);
    const { published: _published, ...changes } = article;
    const api = apiOf(context);
    const edited = await context.step(
      'edit',
      () =>
        call(api, `articles/${encodeURIComponent(ref.id)}`, articleSchema, { method: 'PUT', json: { article: changes } }).catch(async (error: unknown) => {
          // Forem answers 401 both for a dead key and for an article the key's user may not change (its Pundit refusal): a key
          // that still reads the user means the latter, which must not disconnect the channel.
          if (!(error instanceof PlatformHttpError && error.status === 401)) throw error;
          await call(api, 'users/me', userSchema);
          throw new PlatformHttpError({ status: 403, retryable: false, bodyExcerpt: error.bodyExcerpt, message: 'DEV refused the edit: the article is not one this account may change (unauthorized)' });
        }),
      async () => undefined,
    );
    return { id: String(edited.id), url: edited.url };
  },
  unchangeable: {
    delete:
      "DEV's API cannot delete an article (only DEV's admins and moderators may unpublish one through it): delete it on dev.to, from the article's Manage page.",
  },
  comments: (context, post) => commentsOf(context, post),

  async postAnalytics(context, post) {
    const article = (await myArticles(apiOf(context), 'published')).find((mine) => String(mine.id) === post.id);
    if (!article) return [];
    return [currentMetric('Views', article.page_views_count ?? 0), currentMetric('Reactions', article.public_reactions_count ?? 0), currentMetric('Comments', article.comments_count ?? 0)];
  },
};

export default devto;
