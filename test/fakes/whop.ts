// A fake Whop (OAuth 2.1 + PKCE + OIDC endpoints, API v1 forums, forum posts and files, and the presigned file storage) on
// one real HTTP server, from docs.whop.com (OAuth guide, forum posts, files, direct file uploads; read 2026-11) and the shapes of
// the official SDK @whop/sdk 0.0.42 (ForumPost: created_at, user, parent_id; list: experience_id, parent_id for a post's comments,
// first/after cursor paging with page_info.end_cursor/has_next_page), with comments and changes (issue 24; read 2026-11-27): a
// post's comments are forum posts with its id as parent_id, nesting (a reply's parent_id is the comment), comment_count the direct
// ones (https://docs.whop.com/developer/guides/forums); PATCH /forum_posts/{id} edits content, title, attachments, pinning or
// visibility and answers the ForumPost with is_edited true (https://docs.whop.com/api-reference/forum-posts/update-forum-post,
// @whop/sdk forumPosts.update); there is no delete or hide of a forum post in the API (the SDK has list, create, retrieve, update).
//
//   const fake = await startWhopFake();
//   SOCIAL_ENDPOINTS={"whop": fake.endpoints}; WHOP_CLIENT_ID = fake.authority.clientId (a public client: no secret)
//   fake.posts, fake.files; fake.setProcessingChecks(n): a file answers `processing` to n status reads after its bytes arrive
//   fake.postAs(content, {userId?, at?, parentId?}) -> a post someone (by default the connected user, earlier) made
//   fake.withhold(permission) / fake.grant(permission): the company withdraws (gives back) one of the app's permissions
//   (forum:read, forum:post:create): its calls answer 403
//
// Every API v1 request (/api/v1/...) is first checked against Whop's own contract (test/contracts/whop/contract.ts: the
// operations Herald calls as @whop/sdk 0.0.42 types them, commit 7fc61d2 of 2026-07-21, rebuilt as OpenAPI 3.1 by
// scripts/contracts/whop.mjs): an unknown operation, a body field or query parameter the SDK has not, a required one missing or
// a wrong type answers 400 `{error: {type, message}}` and is recorded in `fake.contractViolations`, which tests expect empty.
// Refuses what Whop refuses: a token request that is not JSON, without PKCE's code_verifier (or with a wrong one), a client
// secret that is not the app's; a used (rotated) refresh token (400 invalid_grant); an authorize without nonce, PKCE or the
// forum scope; a dead bearer token (401); /files calls without an Api-Version-Date of 2026-08-21-1 or later; a PUT without
// the upload_headers the file record gave; a forum post without content, in an unknown experience (404), attaching a file
// that is not ready, or replying to a post of another experience; forums without company_id; an edit of a post that is not the
// user's (403) or not there (404), an empty content; a call whose permission the app was not given (403).
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal, refusalReply } from './oauth-authority.js';
import { startFakeServer, type FakeHandler, type FakeReply } from '../helpers/fake-server.js';
import { whopContractProblems } from '../contracts/whop/contract.js';

export interface FakeWhopPost {
  id: string;
  experienceId: string;
  title: string | null;
  content: string;
  parentId: string | null;
  attachments: string[];
  userId: string;
  viewCount: number;
  likeCount: number;
  commentCount: number;
  createdAt: number;
  edited?: boolean;
}

export interface FakeWhopFile {
  id: string;
  filename: string;
  headers: Record<string, string>;
  bytes?: Buffer;
  status: 'pending' | 'processing' | 'ready' | 'failed';
  checksLeft: number;
}

const whopError = (status: number, message: string, type = 'invalid_request'): FakeReply => ({ status, json: { error: { type, message } } });
const oauthError = (error: string, description: string): FakeReply => ({ status: error === 'invalid_client' ? 401 : 400, json: { error, error_description: description } });
const id = (prefix: string) => `${prefix}_${randomBytes(7).toString('hex')}`;

export async function startWhopFake() {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ clientId: 'app_whopclient', clientSecret: 'whop-secret', requirePkce: true, rotateRefreshTokens: true, expiresIn: 3600 });
  authority.setSubject('user_herald');
  const experiences = [{ id: 'exp_announce', name: 'Announcements', companyId: 'biz_herald' }];
  const posts: FakeWhopPost[] = [];
  /** The members the forum shows as authors (the connected user and the people who comment). */
  const users: Record<string, { username: string; name: string | null }> = { user_herald: { username: 'heraldlabs', name: 'Herald Labs Owner' }, user_ana: { username: 'ana', name: 'Ana Lima' } };
  const files: FakeWhopFile[] = [];
  let processingChecks = 0;
  const withheld = new Set<string>();
  /** The app's permission (granted by the company) a route needs: without it Whop answers 403. */
  const needs =
    (permission: string, handler: (request: Parameters<FakeHandler>[0], user: string) => FakeReply | Promise<FakeReply>) =>
    (request: Parameters<FakeHandler>[0], user: string) =>
      withheld.has(permission) ? whopError(403, `You do not have permission to perform this action. Missing permission: ${permission}`, 'forbidden') : handler(request, user);

  /** API v1 routes are checked against Whop's contract (the SDK's request types) before their handler: a mismatch answers 400. */
  const contractViolations = server.underContract(
    (_method, path) => (path.startsWith('/api/v1/') ? (request) => whopContractProblems(request, request.path.slice('/api/v1'.length)) : undefined),
    (problems) => whopError(400, `Invalid request: ${problems.join('; ')}`),
  );
  const authed = authority.guard(() => whopError(401, 'The access token is invalid or expired', 'unauthorized'));
  const versioned =
    (handler: FakeHandler): FakeHandler =>
    (request) =>
      String(request.headers['api-version-date'] ?? '') >= '2026-08-21-1' ? handler(request) : whopError(400, 'The /files endpoints require API version 2026-08-21-1 or later (Api-Version-Date header)');

  server.on('GET', '/oauth/authorize', (request) => {
    const query = request.query;
    if (!query.get('nonce')) return { status: 400, body: 'nonce is required (OpenID Connect)' };
    if (!(query.get('scope') ?? '').split(' ').includes('forum:post:create')) return { status: 400, body: 'scope must include forum:post:create' };
    try {
      const location = authority.approveQuery(query);
      return { status: 302, headers: { location } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, body: `${error.error}: ${error.description}` };
      throw error;
    }
  });

  server.on('POST', '/oauth/token', (request) => {
    if (!String(request.headers['content-type'] ?? '').includes('application/json')) return oauthError('invalid_request', 'the token endpoint takes a JSON body');
    const body = (request.json ?? {}) as Record<string, string | undefined>;
    try {
      authority.checkClient(body.client_id, body.client_secret, { secretRequired: false });
      if (body.client_secret !== undefined && body.client_secret !== authority.clientSecret) throw new OAuthRefusal('invalid_client', 'client_secret is wrong');
      const issued =
        body.grant_type === 'authorization_code'
          ? authority.redeemCode({ code: body.code, redirectUri: body.redirect_uri, codeVerifier: body.code_verifier, clientId: body.client_id })
          : body.grant_type === 'refresh_token'
            ? authority.redeemRefreshToken(body.refresh_token)
            : undefined;
      if (!issued) return oauthError('unsupported_grant_type', `grant_type ${body.grant_type} is not supported`);
      return { json: { access_token: issued.accessToken, refresh_token: issued.refreshToken, expires_in: issued.expiresIn, token_type: 'Bearer', id_token: 'eyJ.fake.idtoken' } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return refusalReply(error);
      throw error;
    }
  });

  server.on('GET', '/oauth/userinfo', authed((_request, user) => ({ json: { sub: user, name: 'Herald Labs Owner', preferred_username: 'heraldlabs', picture: `${url}/avatar.png`, email: 'owner@herald.example' } })));

  server.on('GET', '/api/v1/companies', authed(() => ({ json: { data: [{ id: 'biz_herald', title: 'Herald Labs' }], page_info: { has_next_page: false } } })));
  server.on('GET', '/api/v1/forums', authed((request) => {
    const company = request.query.get('company_id');
    if (!company) return whopError(400, 'company_id is required');
    const data = experiences.filter((item) => item.companyId === company).map((item) => ({ id: `forum_${item.id.slice(4)}`, experience: { id: item.id, name: item.name } }));
    return { json: { data, page_info: { has_next_page: false } } };
  }));

  const fileView = (file: FakeWhopFile) => ({ id: file.id, upload_status: file.status, filename: file.filename, content_type: file.headers['Content-Type'], size: file.bytes ? String(file.bytes.length) : null, url: file.status === 'ready' ? `${url}/cdn/${file.id}/${file.filename}` : null });
  server.on('POST', '/api/v1/files', versioned(authed((request) => {
    const filename = (request.json as { filename?: string } | undefined)?.filename;
    if (!filename) return whopError(400, 'filename is required');
    const type = /\.png$/i.test(filename) ? 'image/png' : /\.jpe?g$/i.test(filename) ? 'image/jpeg' : 'application/octet-stream';
    const file: FakeWhopFile = { id: id('file'), filename, headers: { 'Content-Type': type, 'x-amz-server-side-encryption': 'AES256' }, status: 'pending', checksLeft: 0 };
    files.push(file);
    return { json: { ...fileView(file), upload_url: `${url}/uploads/${file.id}?X-Amz-Signature=${randomBytes(6).toString('hex')}`, upload_headers: file.headers } };
  })));
  server.on('PUT', '/uploads/*', (request) => {
    const file = files.find((item) => item.id === request.path.split('/')[2]);
    if (!file || !request.query.get('X-Amz-Signature')) return { status: 403, body: '<Error><Code>AccessDenied</Code></Error>' };
    for (const [name, value] of Object.entries(file.headers)) {
      if (request.headers[name.toLowerCase()] !== value) return { status: 403, body: `<Error><Code>SignatureDoesNotMatch</Code><Message>header ${name} is missing or differs</Message></Error>` };
    }
    file.bytes = request.body;
    file.status = 'processing';
    file.checksLeft = processingChecks;
    return { status: 200 };
  });
  server.on('GET', '/api/v1/files/*', versioned(authed((request) => {
    const file = files.find((item) => item.id === request.path.split('/')[4]);
    if (!file) return whopError(404, 'File not found', 'not_found');
    if (file.status === 'processing') {
      if (file.checksLeft > 0) file.checksLeft -= 1;
      else file.status = 'ready';
    }
    return { json: fileView(file) };
  })));

  const postView = (post: FakeWhopPost) => ({ id: post.id, title: post.title, content: post.content, parent_id: post.parentId, is_edited: post.edited ?? false, is_pinned: false, is_poster_admin: true, user: { id: post.userId, ...(users[post.userId] ?? { username: post.userId, name: null }) }, view_count: post.viewCount, like_count: post.likeCount, comment_count: post.commentCount, created_at: String(Math.floor(post.createdAt / 1000)) });
  server.on('POST', '/api/v1/forum_posts', authed(needs('forum:post:create', (request, user) => {
    const body = (request.json ?? {}) as { experience_id?: string; content?: string; title?: string; parent_id?: string; attachments?: { id: string }[] };
    if (!experiences.some((item) => item.id === body.experience_id)) return whopError(404, 'Experience not found', 'not_found');
    if (!body.content?.trim()) return whopError(400, 'content is required');
    const attachments = (body.attachments ?? []).map((item) => item.id);
    if (attachments.some((fileId) => files.find((file) => file.id === fileId)?.status !== 'ready')) return whopError(422, 'An attachment is not ready yet');
    const parent = body.parent_id ? posts.find((item) => item.id === body.parent_id) : undefined;
    if (body.parent_id && parent?.experienceId !== body.experience_id) return whopError(404, 'Parent post not found', 'not_found');
    const post: FakeWhopPost = { id: id('post'), experienceId: body.experience_id!, title: body.title ?? null, content: body.content, parentId: body.parent_id ?? null, attachments, userId: user, viewCount: 0, likeCount: 0, commentCount: 0, createdAt: Date.now() };
    posts.push(post);
    if (parent) parent.commentCount += 1;
    return { json: postView(post) };
  })));
  server.on('GET', '/api/v1/forum_posts', authed(needs('forum:read', (request) => {
    const parentId = request.query.get('parent_id');
    const list = [...posts].sort((a, b) => b.createdAt - a.createdAt).filter((post) => post.experienceId === request.query.get('experience_id') && post.parentId === (parentId || null));
    const first = Number(request.query.get('first') ?? 20);
    const start = request.query.get('after') ? Number(Buffer.from(request.query.get('after')!, 'base64').toString()) : 0;
    const page = list.slice(start, start + first);
    const more = start + first < list.length;
    return { json: { data: page.map(postView), page_info: { has_next_page: more, end_cursor: more ? Buffer.from(String(start + first)).toString('base64') : null, has_previous_page: start > 0, start_cursor: null } } };
  })));
  server.on('GET', '/api/v1/forum_posts/*', authed(needs('forum:read', (request) => {
    const post = posts.find((item) => item.id === request.path.split('/')[4]);
    return post ? { json: postView(post) } : whopError(404, 'Forum post not found', 'not_found');
  })));
  // Update forum post: only its author edits it; what the body leaves out is kept.
  // The SDK names no permission for it (forumPosts.update has no "Required permissions"): ownership is what is checked.
  server.on('PATCH', '/api/v1/forum_posts/*', authed((request, user) => {
    const post = posts.find((item) => item.id === request.path.split('/')[4]);
    if (!post) return whopError(404, 'Forum post not found', 'not_found');
    if (post.userId !== user) return whopError(403, 'You can only edit your own forum posts', 'forbidden');
    const body = (request.json ?? {}) as { content?: string | null; title?: string | null; attachments?: { id: string }[] | null; is_pinned?: boolean | null };
    if (body.content !== undefined && body.content !== null && !body.content.trim()) return whopError(400, 'content cannot be empty');
    // "Only top-level posts can be pinned, not comments" (ForumPostUpdateParams.is_pinned).
    if (body.is_pinned && post.parentId) return whopError(400, 'Only top-level posts can be pinned, not comments');
    if (body.content) post.content = body.content;
    if (body.title) post.title = body.title;
    if (body.attachments) post.attachments = body.attachments.map((item) => item.id);
    post.edited = true;
    return { json: postView(post) };
  }));

  return {
    server,
    url,
    authority,
    posts,
    files,
    contractViolations,
    endpoints: { api: url, web: url },
    postAs(content: string, options: { userId?: string; at?: number; parentId?: string } = {}) {
      const post: FakeWhopPost = { id: id('post'), experienceId: 'exp_announce', title: null, content, parentId: options.parentId ?? null, attachments: [], userId: options.userId ?? 'user_herald', viewCount: 0, likeCount: 0, commentCount: 0, createdAt: options.at ?? Date.now() };
      posts.push(post);
      return post;
    },
    withhold(permission: string) {
      withheld.add(permission);
    },
    grant(permission: string) {
      withheld.delete(permission);
    },
    setProcessingChecks(n: number) {
      processingChecks = n;
    },
    close: () => server.close(),
  };
}

export type WhopFake = Awaited<ReturnType<typeof startWhopFake>>;
