// A fake Moltbook API (https://www.moltbook.com/api/v1) on one real HTTP server, from moltbook.com/skill.md (read 2026-11; the
// only reference Moltbook publishes: no OpenAPI or SDK types to check bodies against), and for comments and deletion (read
// 2026-11-27) skill.md 1.12.0 (GET /posts/{id}/comments?sort=best|new|old&limit, a tree of `comments` with nested `replies`;
// DELETE /posts/{id}) and Moltbook's open-source API server moltbook/api (through its fork sallyom/moltbook-api:
// routes/posts.js, routes/comments.js, services/CommentService.js): DELETE /comments/{id} by its author only (403 "You can
// only delete your own comments"), a soft delete to "[deleted]" that leaves the comment out of the list, 404 for what is
// unknown, comment fields id, content, parent_id, depth, created_at, author_name, author_display_name, replies.
//
//   const fake = await startMoltbookFake();
//   SOCIAL_ENDPOINTS={"moltbook": fake.endpoints}; connect fields { apiKey: fake.apiKey }
//   fake.posts, fake.comments; fake.agent (mutable: status 'claimed' | 'pending_claim'); fake.requireVerification = true makes
//   new posts wait for POST /verify; fake.resetRateLimits()
//
// Refuses what Moltbook refuses: an unknown API key (401 `{success: false, error, hint}`); a body that is not JSON; a post
// without title, with a title over 300 characters, without content or url, or in an unknown submolt (404); a second post
// within 30 minutes (429 with retry_after_minutes); a comment on an unknown post, or whose parent is not a comment of that
// post; a wrong verification answer. A post held for verification is not readable (404) until it is answered, a comment held
// for it is not listed. Deleting a post or comment of another agent (403), or one that is gone (404); a sort other than
// best, new, old or top (400).
//   fake.addComment(postId, text, { parentId, author }) seeds a comment by another agent (author 'other_agent' by default);
//   fake.requireCommentVerification = true holds new comments for POST /verify; fake.commentCooldownSeconds = 20 turns on
//   skill.md's one comment every 20 seconds (429 with retry_after_seconds; off by default so chains publish at once).
import { randomUUID } from 'node:crypto';
import { bearerOf } from './oauth-authority.js';
import { startFakeServer, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

export interface FakeMoltbookPost {
  id: string;
  submolt: string;
  title: string;
  content: string;
  upvotes: number;
  commentCount: number;
  author: string;
  verification?: { code: string; answer: string };
}

export interface FakeMoltbookComment {
  id: string;
  postId: string;
  parentId: string | null;
  content: string;
  author: string;
  createdAt: string;
  deleted?: boolean;
  verification?: { code: string; answer: string };
}

const refuse = (status: number, error: string, extra: Record<string, unknown> = {}): FakeReply => ({ status, json: { success: false, error, ...extra } });

export async function startMoltbookFake() {
  const server = await startFakeServer();
  const { url } = server;
  const apiKey = 'moltbook_sk_fake_0123456789';
  const agent = { id: 'agent-1', name: 'herald_agent', display_name: 'Herald Agent', karma: 42, status: 'claimed' as 'claimed' | 'pending_claim' };
  const submolts = ['general', 'agents'];
  const posts: FakeMoltbookPost[] = [];
  const deletedPosts: FakeMoltbookPost[] = [];
  const comments: FakeMoltbookComment[] = [];
  let lastPostAt = 0;
  const state = { requireVerification: false, requireCommentVerification: false, commentCooldownSeconds: 0, lastCommentAt: 0 };

  const authed =
    (handler: FakeHandler): FakeHandler =>
    (request) =>
      bearerOf(request.headers.authorization) === apiKey ? handler(request) : refuse(401, 'Invalid API key', { hint: 'Check your API key; it starts with moltbook_' });
  const jsonBody = (request: RecordedRequest) => (String(request.headers['content-type'] ?? '').includes('application/json') ? (request.json as Record<string, unknown>) : undefined);
  const postOf = (request: RecordedRequest) => posts.find((post) => post.id === request.path.split('/')[4] && !post.verification);

  server.on('GET', '/api/v1/agents/me', authed(() => ({ json: { success: true, agent: { id: agent.id, name: agent.name, display_name: agent.display_name, karma: agent.karma, avatar_url: null } } })));
  server.on('GET', '/api/v1/agents/status', authed(() => ({ json: { success: true, status: agent.status, ...(agent.status === 'pending_claim' ? { claim_url: 'https://www.moltbook.com/claim/moltbook_claim_xyz' } : {}) } })));

  server.on('POST', '/api/v1/posts', authed((request) => {
    const body = jsonBody(request);
    if (!body) return refuse(400, 'Body must be JSON');
    const title = String(body.title ?? '');
    if (!title.trim() || title.length > 300) return refuse(400, 'Title is required (1-300 characters)');
    if (!body.content && !body.url) return refuse(400, 'Either content or url is required');
    const submolt = String(body.submolt ?? '');
    if (!submolts.includes(submolt)) return refuse(404, 'Submolt not found', { hint: `m/${submolt} does not exist` });
    const wait = lastPostAt + 30 * 60_000 - Date.now();
    if (wait > 0) return refuse(429, 'You can only post once every 30 minutes', { retry_after_minutes: Math.ceil(wait / 60_000) });
    lastPostAt = Date.now();
    const post: FakeMoltbookPost = { id: randomUUID(), submolt, title, content: String(body.content ?? ''), upvotes: 1, commentCount: 0, author: agent.name };
    if (state.requireVerification) post.verification = { code: `moltbook_verify_${post.id.slice(0, 8)}`, answer: '15.00' };
    posts.push(post);
    const created = { id: post.id, title, content: post.content, submolt: { name: submolt }, upvotes: 1 };
    if (!post.verification) return { status: 201, json: { success: true, post: created } };
    return {
      status: 201,
      json: { success: true, post: created, verification_required: true, verification: { verification_code: post.verification.code, challenge_text: 'A] lObStEr ClAw FoRcE Is TeN AnD GaInS FiVe', expires_at: new Date(Date.now() + 300_000).toISOString() } },
    };
  }));

  server.on('POST', '/api/v1/verify', authed((request) => {
    const body = jsonBody(request) ?? {};
    const post = [...posts, ...comments].find((item) => item.verification?.code === body.verification_code);
    if (!post || typeof body.answer !== 'string' || body.answer !== post.verification!.answer) return refuse(400, 'Incorrect answer');
    delete post.verification;
    return { json: { success: true, message: 'Verified: your post is live' } };
  }));

  server.on('POST', '/api/v1/posts/*/comments', authed((request) => {
    const post = postOf(request);
    if (!post) return refuse(404, 'Post not found');
    const body = jsonBody(request);
    if (!body || !String(body.content ?? '').trim()) return refuse(400, 'Content is required');
    const parentId = body.parent_id === undefined ? null : String(body.parent_id);
    if (parentId && !comments.some((comment) => comment.id === parentId && comment.postId === post.id)) return refuse(404, 'Parent comment not found');
    const wait = state.lastCommentAt + state.commentCooldownSeconds * 1000 - Date.now();
    if (wait > 0) return refuse(429, 'You can only comment once every 20 seconds', { retry_after_seconds: Math.ceil(wait / 1000) });
    state.lastCommentAt = Date.now();
    const comment: FakeMoltbookComment = { id: randomUUID(), postId: post.id, parentId, content: String(body.content), author: agent.name, createdAt: new Date().toISOString() };
    if (state.requireCommentVerification) comment.verification = { code: `moltbook_verify_${comment.id.slice(0, 8)}`, answer: '15.00' };
    comments.push(comment);
    post.commentCount += 1;
    const created = { id: comment.id, content: comment.content, parent_id: parentId, created_at: comment.createdAt };
    if (!comment.verification) return { status: 201, json: { success: true, comment: created } };
    return {
      status: 201,
      json: { success: true, comment: created, verification_required: true, verification: { verification_code: comment.verification.code, challenge_text: 'A lObStEr SwImS aT tWeNtY aNd SlOwS bY fIvE', expires_at: new Date(Date.now() + 300_000).toISOString() } },
    };
  }));

  // The tree: top-level comments, each with its replies nested (CommentService.buildCommentTree); held and deleted ones left out.
  server.on('GET', '/api/v1/posts/*/comments', authed((request) => {
    const post = postOf(request);
    if (!post) return refuse(404, 'Post not found');
    const sort = request.query.get('sort') ?? 'best';
    if (!['best', 'new', 'old', 'top'].includes(sort)) return refuse(400, 'Invalid sort', { hint: 'sort is one of best, new, old' });
    const limit = Math.min(Number(request.query.get('limit') ?? 35) || 35, 100);
    const listed = comments.filter((comment) => comment.postId === post.id && !comment.deleted && !comment.verification).slice(0, limit);
    const order = (list: FakeMoltbookComment[]) => (sort === 'new' ? [...list].reverse() : list);
    const node = (comment: FakeMoltbookComment): Record<string, unknown> => ({
      id: comment.id,
      content: comment.content,
      score: 0,
      upvotes: 0,
      downvotes: 0,
      parent_id: comment.parentId,
      depth: depthOf(comment),
      created_at: comment.createdAt,
      author_name: comment.author,
      author_display_name: comment.author === agent.name ? agent.display_name : null,
      replies: order(listed.filter((reply) => reply.parentId === comment.id)).map(node),
    });
    return { json: { success: true, comments: order(listed.filter((comment) => !comment.parentId || !listed.some((parent) => parent.id === comment.parentId))).map(node) } };
  }));
  const depthOf = (comment: FakeMoltbookComment): number => {
    const parent = comments.find((item) => item.id === comment.parentId);
    return parent ? depthOf(parent) + 1 : 0;
  };

  server.on('DELETE', '/api/v1/posts/*', authed((request) => {
    const index = posts.findIndex((post) => post.id === request.path.split('/')[4]);
    if (index < 0) return refuse(404, 'Post not found');
    if (posts[index].author !== agent.name) return refuse(403, 'You can only delete your own posts');
    deletedPosts.push(...posts.splice(index, 1));
    return { status: 204 };
  }));

  server.on('DELETE', '/api/v1/comments/*', authed((request) => {
    const comment = comments.find((item) => item.id === request.path.split('/')[4]);
    if (!comment || comment.deleted) return refuse(404, 'Comment not found');
    if (comment.author !== agent.name) return refuse(403, 'You can only delete your own comments');
    comment.deleted = true;
    comment.content = '[deleted]';
    return { status: 204 };
  }));

  server.on('GET', '/api/v1/posts/*', authed((request) => {
    const post = postOf(request);
    return post ? { json: { success: true, post: { id: post.id, title: post.title, content: post.content, upvotes: post.upvotes, downvotes: 0, comment_count: post.commentCount } } } : refuse(404, 'Post not found');
  }));

  return {
    server,
    url,
    apiKey,
    agent,
    posts,
    deletedPosts,
    comments,
    /** A comment by another agent (or `author`), on `postId` or under `parentId`. */
    addComment(postId: string, content: string, options: { parentId?: string; author?: string; createdAt?: Date } = {}) {
      const comment: FakeMoltbookComment = { id: randomUUID(), postId, parentId: options.parentId ?? null, content, author: options.author ?? 'other_agent', createdAt: (options.createdAt ?? new Date()).toISOString() };
      comments.push(comment);
      return comment;
    },
    set commentCooldownSeconds(value: number) {
      state.commentCooldownSeconds = value;
    },
    set requireCommentVerification(value: boolean) {
      state.requireCommentVerification = value;
    },
    endpoints: { api: `${url}/api/v1`, web: url },
    set requireVerification(value: boolean) {
      state.requireVerification = value;
    },
    resetRateLimits() {
      lastPostAt = 0;
      state.lastCommentAt = 0;
    },
    close: () => server.close(),
  };
}

export type MoltbookFake = Awaited<ReturnType<typeof startMoltbookFake>>;
