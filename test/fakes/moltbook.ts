// A fake Moltbook API (https://www.moltbook.com/api/v1) on one real HTTP server, from moltbook.com/skill.md (read 2026-11; the
// only reference Moltbook publishes: no OpenAPI or SDK types to check bodies against).
//
//   const fake = await startMoltbookFake();
//   SOCIAL_ENDPOINTS={"moltbook": fake.endpoints}; connect fields { apiKey: fake.apiKey }
//   fake.posts, fake.comments; fake.agent (mutable: status 'claimed' | 'pending_claim'); fake.requireVerification = true makes
//   new posts wait for POST /verify; fake.resetRateLimits()
//
// Refuses what Moltbook refuses: an unknown API key (401 `{success: false, error, hint}`); a body that is not JSON; a post
// without title, with a title over 300 characters, without content or url, or in an unknown submolt (404); a second post
// within 30 minutes (429 with retry_after_minutes); a comment on an unknown post, or whose parent is not a comment of that
// post; a wrong verification answer. A post held for verification is not readable (404) until it is answered.
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
  const comments: { id: string; postId: string; parentId: string | null; content: string }[] = [];
  let lastPostAt = 0;
  const state = { requireVerification: false };

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
    const post: FakeMoltbookPost = { id: randomUUID(), submolt, title, content: String(body.content ?? ''), upvotes: 1, commentCount: 0 };
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
    const post = posts.find((item) => item.verification?.code === body.verification_code);
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
    const comment = { id: randomUUID(), postId: post.id, parentId, content: String(body.content) };
    comments.push(comment);
    post.commentCount += 1;
    return { status: 201, json: { success: true, comment: { id: comment.id, content: comment.content, parent_id: parentId } } };
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
    comments,
    endpoints: { api: `${url}/api/v1`, web: url },
    set requireVerification(value: boolean) {
      state.requireVerification = value;
    },
    resetRateLimits() {
      lastPostAt = 0;
    },
    close: () => server.close(),
  };
}

export type MoltbookFake = Awaited<ReturnType<typeof startMoltbookFake>>;
