// A fake Lemmy instance (API v3 of Lemmy 0.19 and the v4 calls of Lemmy 1.0 that differ, pict-rs behind /pictrs/image) on
// one real HTTP server, from join-lemmy.org/api and lemmy-js-client's types.
//
//   const fake = await startLemmyFake();
//   connect fields: { instanceUrl: fake.url, username: 'herald', password: fake.password }
//   fake.posts, fake.comments, fake.images (uploads), fake.communities, fake.dropSessions() (every JWT stops working)
//
// Refuses what Lemmy refuses: a login that is not JSON, a wrong password (400 incorrect_login), a two-factor account without
// its code (missing_totp_token) or with a wrong one (incorrect_totp_token); a missing or dropped JWT (401 not_logged_in);
// an unknown community (404 couldnt_find_community); a post without name, with a name over 200 characters, an invalid url, or
// in an unknown community; a comment whose parent is not a comment of that post; an image upload without the instance's
// form field (`images[]` for pict-rs, `image` for v4) or without a login; search without its term parameter (`q` in v3,
// `search_term` in v4).
import { randomBytes } from 'node:crypto';
import { bearerOf } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

export interface FakeLemmyPost {
  id: number;
  name: string;
  body: string;
  url: string | null;
  customThumbnail: string | null;
  communityId: number;
  creatorId: number;
  score: number;
  comments: number;
  /** ISO time of publication (v3 answers it as `published`, v4 as `published_at`). */
  published: string;
}

export interface FakeLemmyComment {
  id: number;
  postId: number;
  parentId: number | null;
  content: string;
  path: string;
}

const error = (status: number, code: string): FakeReply => ({ status, json: { error: code } });

export async function startLemmyFake() {
  const server = await startFakeServer();
  const { url } = server;
  const host = new URL(url).host;
  const password = 'correct horse battery';
  const accounts = [
    { id: 7, name: 'herald', display_name: 'Herald Bot', totp: undefined as string | undefined },
    { id: 8, name: 'guarded', display_name: null, totp: '246810' },
  ];
  const communities = [
    { id: 11, name: 'selfhosted', title: 'Self-hosted', local: true, actor_id: `${url}/c/selfhosted` },
    { id: 12, name: 'technology', title: 'Technology', local: false, actor_id: 'https://lemmy.world/c/technology' },
  ];
  const sessions = new Map<string, number>();
  const posts: FakeLemmyPost[] = [];
  const comments: FakeLemmyComment[] = [];
  const images: { file: string; bytes: Buffer; type: string }[] = [];
  let nextId = 100;

  const personOf = (account: (typeof accounts)[number]) => ({ id: account.id, name: account.name, display_name: account.display_name, avatar: `${url}/pictrs/image/avatar-${account.id}.png`, actor_id: `${url}/u/${account.name}`, ap_id: `${url}/u/${account.name}`, local: true });
  const userOf = (request: RecordedRequest) => {
    const id = sessions.get(bearerOf(request.headers.authorization) ?? '');
    return accounts.find((account) => account.id === id);
  };
  const authed =
    (handler: (request: RecordedRequest, account: (typeof accounts)[number]) => FakeReply | Promise<FakeReply>): FakeHandler =>
    (request) => {
      const account = userOf(request);
      return account ? handler(request, account) : error(401, 'not_logged_in');
    };
  const both = (method: string, path: string, handler: FakeHandler) => {
    server.on(method, `/api/v3/${path}`, handler);
    server.on(method, `/api/v4/${path}`, handler);
  };
  const communityView = (community: (typeof communities)[number]) => ({ community: { ...community, ap_id: community.actor_id }, counts: { subscribers: 10 }, subscribed: 'NotSubscribed', blocked: false });
  const postView = (post: FakeLemmyPost) => {
    const counts = { score: post.score, comments: post.comments, upvotes: post.score, downvotes: 0 };
    return { post: { id: post.id, name: post.name, body: post.body, url: post.url, thumbnail_url: post.customThumbnail, community_id: post.communityId, creator_id: post.creatorId, ap_id: `${url}/post/${post.id}`, published: post.published, ...counts }, counts };
  };

  const login: FakeHandler = (request) => {
    if (!String(request.headers['content-type'] ?? '').includes('application/json')) return error(400, 'invalid_body');
    const { username_or_email: name, password: given, totp_2fa_token: totp } = (request.json ?? {}) as Record<string, string | undefined>;
    const account = accounts.find((item) => item.name === name);
    if (!account || given !== password) return error(400, 'incorrect_login');
    if (account.totp && !totp) return error(400, 'missing_totp_token');
    if (account.totp && totp !== account.totp) return error(400, 'incorrect_totp_token');
    const jwt = `jwt-${randomBytes(10).toString('hex')}`;
    sessions.set(jwt, account.id);
    return { json: { jwt, registration_created: false, verify_email_sent: false } };
  };
  server.on('POST', '/api/v3/user/login', login);
  server.on('POST', '/api/v4/account/auth/login', login);

  server.on('GET', '/api/v3/site', (request) => {
    const account = userOf(request);
    return { json: { site_view: { site: { name: 'Fake Lemmy' } }, version: '0.19.9', ...(account ? { my_user: { local_user_view: { person: personOf(account) }, follows: [] } } : {}) } };
  });
  server.on('GET', '/api/v4/account', authed((_request, account) => ({ json: { local_user_view: { person: personOf(account) }, follows: [] } })));

  both('GET', 'community', (request) => {
    const name = request.query.get('name') ?? '';
    const community = communities.find((item) => item.name === name || `${item.name}@${new URL(item.actor_id).host}` === name);
    return community ? { json: { community_view: communityView(community) } } : error(404, 'couldnt_find_community');
  });

  both('GET', 'search', (request) => {
    const v4 = request.path.startsWith('/api/v4/');
    const term = request.query.get(v4 ? 'search_term' : 'q');
    if (term === null) return error(400, v4 ? 'missing field `search_term`' : 'missing field `q`');
    if (request.query.get('type_') !== 'Communities') return { json: { communities: [], posts: [], comments: [], users: [] } };
    return { json: { type_: 'Communities', comments: [], posts: [], users: [], communities: communities.filter((item) => item.name.includes(term.toLowerCase())).map(communityView) } };
  });

  const storeImage = async (request: RecordedRequest, field: string): Promise<{ file: string } | FakeReply> => {
    const form = await multipartOf(request);
    const upload = form?.get(field);
    if (!upload || typeof upload === 'string') return { status: 400, json: { msg: `no file in the ${field} field` } };
    const file = `${randomBytes(6).toString('hex')}.${upload.type.split('/')[1] ?? 'bin'}`;
    images.push({ file, bytes: Buffer.from(await upload.arrayBuffer()), type: upload.type });
    return { file };
  };
  server.on('POST', '/pictrs/image', authed(async (request) => {
    const stored = await storeImage(request, 'images[]');
    return 'file' in stored ? { status: 201, json: { msg: 'ok', files: [{ file: stored.file, delete_token: 'token' }] } } : stored;
  }));
  server.on('POST', '/api/v4/image', authed(async (request) => {
    const stored = await storeImage(request, 'image');
    return 'file' in stored ? { json: { image_url: `${url}/api/v4/image/${stored.file}`, filename: stored.file } } : stored;
  }));

  both('POST', 'post', authed((request, account) => {
    const body = (request.json ?? {}) as { community_id?: number; name?: string; body?: string; url?: string; custom_thumbnail?: string };
    if (!communities.some((item) => item.id === body.community_id)) return error(404, 'couldnt_find_community');
    if (!body.name?.trim() || body.name.length > 200) return error(400, 'invalid_post_title');
    if (body.url !== undefined && !/^https?:\/\/\S+$/.test(body.url)) return error(400, 'invalid_url');
    const post: FakeLemmyPost = { id: nextId++, name: body.name, body: body.body ?? '', url: body.url ?? null, customThumbnail: body.custom_thumbnail ?? null, communityId: body.community_id!, creatorId: account.id, score: 1, comments: 0, published: new Date().toISOString() };
    posts.push(post);
    return { json: { post_view: postView(post) } };
  }));

  both('GET', 'post', (request) => {
    const post = posts.find((item) => item.id === Number(request.query.get('id')));
    return post ? { json: { post_view: postView(post) } } : error(404, 'couldnt_find_post');
  });

  both('GET', 'post/list', (request) => {
    const list = [...posts].reverse().filter((post) => post.communityId === Number(request.query.get('community_id'))).slice(0, Number(request.query.get('limit') ?? 20)).map(postView);
    return { json: request.path.startsWith('/api/v4/') ? { items: list } : { posts: list } };
  });

  both('POST', 'comment', authed((request) => {
    const body = (request.json ?? {}) as { post_id?: number; content?: string; parent_id?: number };
    const post = posts.find((item) => item.id === body.post_id);
    if (!post) return error(404, 'couldnt_find_post');
    if (!body.content?.trim()) return error(400, 'couldnt_create_comment');
    const parent = body.parent_id === undefined ? undefined : comments.find((item) => item.id === body.parent_id);
    if (body.parent_id !== undefined && (!parent || parent.postId !== post.id)) return error(404, 'couldnt_find_comment');
    const id = nextId++;
    const comment: FakeLemmyComment = { id, postId: post.id, parentId: parent?.id ?? null, content: body.content, path: `${parent?.path ?? '0'}.${id}` };
    comments.push(comment);
    post.comments += 1;
    return { json: { comment_view: { comment: { id, post_id: post.id, content: comment.content, path: comment.path, ap_id: `${url}/comment/${id}` } } } };
  }));

  return {
    server,
    url,
    host,
    password,
    accounts,
    communities,
    posts,
    comments,
    images,
    /** Every JWT stops working (the instance's logins were cleared). */
    dropSessions() {
      sessions.clear();
    },
    close: () => server.close(),
  };
}

export type LemmyFake = Awaited<ReturnType<typeof startLemmyFake>>;
