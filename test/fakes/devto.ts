// A fake DEV (Forem API v1) on 127.0.0.1, built on startFakeServer. Shapes from developers.forem.com/api/v1 (createArticle,
// getUserAllArticles) and the Forem source (app/models/article.rb: the same title and body twice is refused), read 2026-11.
// Every request to /api is first checked against Forem's own OpenAPI 3 document, vendored in test/contracts/devto/openapi.json
// (api_v1.json from forem/forem-docs f2f06af, the file developers.forem.com/api/v1 renders, last changed 2023-12-13; with the
// corrections from Forem's controller listed in it), and for the `Accept: application/vnd.forem.api-v1+json` header that
// selects v1: a request outside the contract is answered 422 {error, status} and recorded in `contractViolations`, which the
// tests require to stay empty.
//
//   const dev = await startDevtoFake();             // dev.apiKey is the only key accepted
//   SOCIAL_ENDPOINTS={"devto":{"api": dev.url}}
//   dev.articles                                    // every article created: the `article` object as received, and its counters
//   dev.server.requestsTo('POST', '/api/articles'), dev.server.failNext(...)
//
// Routes (a missing or unknown `api-key` header answers 401 {error: "unauthorized", status: 401}, as Forem does):
//   GET  /api/users/me                      the user
//   POST /api/articles                      {article: {title, body_markdown, published, main_image, tags[], organization_id}} → 201
//                                            the article; 422 {error, status} as Forem words it for: a body that is not
//                                            {article: {...}}, a blank title or one over 128 characters, more than 4 tags, a tag
//                                            that is not alphanumeric or over 30 characters, a main_image that is not an http(s)
//                                            URL, and the same title and body twice. organization_id is kept only for an
//                                            organization the user belongs to (Forem ignores others).
//   GET  /api/articles/me/all|published     the user's articles, newest first (page, per_page), with published_at, page_views_count,
//                                            public_reactions_count, comments_count (tests bump them) and organization
//   GET  /api/tags                          popular tags
//   GET  /api/organizations/:username       an organization
//   PUT  /api/articles/:id                  {article: {...}} (updateArticle, read 2026-11): 404 {error: "not found"} for an unknown
//                                            id, 401 for an article of another user (Forem's Pundit refusal), 422 as a creation
//                                            for what the fields break; answers the article
//   GET  /api/comments?a_id=                the article's comment threads (getCommentsByArticleId): id_code, created_at,
//                                            body_html, user {user_id, username, name, profile_image_90}, children; public;
//                                            404 for an unknown article; a deleted comment shows "[deleted]" in its place
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { startFakeServer } from '../helpers/fake-server.js';
import { contractProblems } from '../contracts/devto/contract.js';

export interface DevtoFakeArticle {
  id: number;
  /** The `article` object as received. */
  article: Record<string, unknown>;
  url: string;
  organization?: { username: string; name: string };
  page_views_count: number;
  public_reactions_count: number;
  comments_count: number;
  /** When it was published (ISO 8601); a test may add older articles. */
  published_at: string;
  /** Written by another user: the key's user may not update it. */
  foreign?: boolean;
}

export interface DevtoFakeComment {
  id_code: string;
  articleId: number;
  parent?: string;
  body: string;
  user: { user_id: number; username: string; name: string };
  created_at: string;
  deleted?: boolean;
}

export interface DevtoFake {
  server: FakeServer;
  url: string;
  /** The only key accepted; assign another to revoke the current one. */
  apiKey: string;
  user: { id: number; username: string; name: string; profile_image: string };
  organizations: { id: number; username: string; name: string }[];
  articles: DevtoFakeArticle[];
  comments: DevtoFakeComment[];
  /** Requests Forem's OpenAPI contract refused, as "METHOD path: problem". */
  contractViolations: string[];
  /** A comment by someone (Ann by default) on an article, or under another comment of it. */
  addComment(articleId: number, body: string, options?: { parent?: string; user?: DevtoFakeComment['user']; secondsAgo?: number }): DevtoFakeComment;
  close(): Promise<void>;
}

const unprocessable = (error: string): FakeReply => ({ status: 422, json: { error, status: 422 } });

export async function startDevtoFake(): Promise<DevtoFake> {
  const server = await startFakeServer();
  // Every route of the API is registered behind the contract check (paths in the contract are relative to /api).
  const contractViolations = server.underContract(
    (_method, path) => (path.startsWith('/api/') ? (request) => contractProblems(request, request.path.slice('/api'.length)) : undefined),
    (problems) => unprocessable(`Invalid request: ${problems.join('; ')}`),
  );
  let apiKey = 'dev-api-key-0123456789';
  const user = { id: 1234, username: 'heraldwriter', name: 'Herald Writer', profile_image: `${server.url}/uploads/user/profile_image/1234/avatar.png` };
  const organizations = [{ id: 42, username: 'heraldlabs', name: 'Herald Labs' }];
  const articles: DevtoFakeArticle[] = [];
  let nextId = 2_000_000;
  const comments: DevtoFakeComment[] = [];

  const authorized = (handler: (request: RecordedRequest) => FakeReply) => (request: RecordedRequest) =>
    request.headers['api-key'] === apiKey ? handler(request) : { status: 401, json: { error: 'unauthorized', status: 401 } };

  function validate(article: Record<string, unknown>, except?: DevtoFakeArticle): FakeReply | undefined {
    const title = typeof article.title === 'string' ? article.title.trim() : '';
    if (!title) return unprocessable("Title can't be blank");
    if (title.length > 128) return unprocessable('Title is too long (maximum is 128 characters)');
    const tags = Array.isArray(article.tags) ? (article.tags as unknown[]).map(String) : [];
    if (tags.length > 4) return unprocessable('Tag list exceed the maximum of 4 tags');
    const wrongTag = tags.find((tag) => !/^[\p{L}\p{N}]+$/u.test(tag) || tag.length > 30);
    if (wrongTag) return unprocessable(`Tag "${wrongTag}" contains non-alphanumeric or prohibited unicode characters`);
    if (article.main_image !== undefined && article.main_image !== null && !/^https?:\/\/[^\s]+$/.test(String(article.main_image))) return unprocessable('Main image is not a valid URL');
    if (articles.some((other) => other !== except && other.article.title === article.title && other.article.body_markdown === article.body_markdown)) return unprocessable('Body markdown has already been taken');
    return undefined;
  }

  server.on('GET', '/api/users/me', authorized(() => ({ json: { type_of: 'user', ...user, summary: null, joined_at: 'Jan 1, 2024' } })));

  server.on('POST', '/api/articles', authorized((request) => {
    const article = (request.json as { article?: unknown } | undefined)?.article;
    if (!article || typeof article !== 'object' || Array.isArray(article)) return unprocessable('article param must be a JSON object. You provided article as a NilClass');
    const refusal = validate(article as Record<string, unknown>);
    if (refusal) return refusal;
    const fields = article as Record<string, unknown>;
    const organization = organizations.find((candidate) => candidate.id === fields.organization_id);
    const slug = `${String(fields.title).toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${(nextId + 1).toString(36)}`;
    const created: DevtoFakeArticle = {
      id: ++nextId,
      article: fields,
      url: `${server.url}/${organization?.username ?? user.username}/${slug}`,
      organization: organization && { username: organization.username, name: organization.name },
      page_views_count: 0,
      public_reactions_count: 0,
      comments_count: 0,
      published_at: new Date().toISOString(),
    };
    articles.push(created);
    return { status: 201, json: { type_of: 'article', id: created.id, title: fields.title, url: created.url, published: fields.published === true, tags: fields.tags ?? [] } };
  }));

  for (const which of ['all', 'published']) {
    server.on('GET', `/api/articles/me/${which}`, authorized((request) => {
      const perPage = Number(request.query.get('per_page') ?? 30);
      const page = Number(request.query.get('page') ?? 1);
      const mine = articles.filter((article) => which === 'all' || article.article.published === true).reverse();
      return {
        json: mine.slice((page - 1) * perPage, page * perPage).map((article) => ({
          type_of: 'article',
          id: article.id,
          title: article.article.title,
          url: article.url,
          published: article.article.published === true,
          body_markdown: article.article.body_markdown,
          published_at: article.article.published === true ? article.published_at : null,
          page_views_count: article.page_views_count,
          public_reactions_count: article.public_reactions_count,
          comments_count: article.comments_count,
          ...(article.organization ? { organization: article.organization } : {}),
        })),
      };
    }));
  }

  server.on('GET', '/api/tags', () => ({ json: [{ id: 6, name: 'javascript' }, { id: 8, name: 'webdev' }, { id: 555, name: 'herald' }] }));
  server.on('GET', '/api/organizations/*', (request) => {
    const organization = organizations.find((candidate) => candidate.username === request.path.split('/').pop());
    return organization ? { json: { type_of: 'organization', ...organization, summary: 'We publish.' } } : { status: 404, json: { error: 'not found', status: 404 } };
  });

  server.on('PUT', '/api/articles/*', authorized((request) => {
    const target = articles.find((candidate) => String(candidate.id) === request.path.split('/').pop());
    if (!target) return { status: 404, json: { error: 'not found', status: 404 } };
    if (target.foreign) return { status: 401, json: { error: 'unauthorized', status: 401 } };
    const changes = (request.json as { article?: unknown } | undefined)?.article;
    if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return unprocessable('article param must be a JSON object. You provided article as a NilClass');
    const merged = { ...target.article, ...(changes as Record<string, unknown>) };
    const refusal = validate(merged, target);
    if (refusal) return refusal;
    target.article = merged;
    return { json: { type_of: 'article', id: target.id, title: merged.title, url: target.url, published: merged.published === true, body_markdown: merged.body_markdown, tags: merged.tags ?? [], edited_at: new Date().toISOString() } };
  }));

  server.on('GET', '/api/comments', (request) => {
    const articleId = Number(request.query.get('a_id'));
    if (!articles.some((article) => article.id === articleId)) return { status: 404, json: { error: 'not found', status: 404 } };
    const thread = (parent: string | undefined): unknown[] =>
      comments
        .filter((comment) => comment.articleId === articleId && comment.parent === parent)
        .map((comment) => ({
          type_of: 'comment',
          id_code: comment.id_code,
          created_at: comment.created_at,
          body_html: comment.deleted ? '<p>[deleted]</p>' : `<p>${comment.body}</p>\n\n`,
          user: { ...comment.user, twitter_username: null, github_username: null, website_url: null, profile_image: `${server.url}/p/${comment.user.user_id}.png`, profile_image_90: `${server.url}/p/${comment.user.user_id}-90.png` },
          children: thread(comment.id_code),
        }));
    return { json: thread(undefined) };
  });

  return {
    server,
    url: server.url,
    get apiKey() {
      return apiKey;
    },
    set apiKey(value: string) {
      apiKey = value;
    },
    user,
    organizations,
    articles,
    comments,
    contractViolations,
    addComment(articleId, body, options = {}) {
      const comment: DevtoFakeComment = {
        id_code: Math.floor(Math.random() * 36 ** 4).toString(36),
        articleId,
        parent: options.parent,
        body,
        user: options.user ?? { user_id: 77, username: 'ann', name: 'Ann' },
        created_at: new Date(Date.now() - (options.secondsAgo ?? 0) * 1000).toISOString(),
      };
      comments.push(comment);
      return comment;
    },
    close: () => server.close(),
  };
}
