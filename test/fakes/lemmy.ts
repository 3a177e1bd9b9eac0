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
//
// Comments and changes (reference 2026-11: join-lemmy.org/api, lemmy-js-client GetComments/EditPost/EditComment/DeletePost/
// DeleteComment/RemoveComment/GetCommunity, Lemmy's crates/api_crud post/delete.rs and comment/delete.rs): GET comment/list
// (post_id, sort New, limit at most 50, `page` in v3 answering `comments`, `page_cursor` in v4 answering `items` and
// `next_page`), PUT post and PUT comment (the creator only: no_post_edit_allowed / no_comment_edit_allowed), POST post/delete
// and comment/delete (the creator only; a delete of what is already deleted is refused couldnt_update_post /
// couldnt_update_comment, as Lemmy does), POST comment/remove (a moderator of the community only: not_a_mod_or_admin),
// GET community?id= with its `moderators`, GET comment?id=.
// Every /api/v3 and /api/v4 request is first checked against the request types of Lemmy's official client for that version
// (test/contracts/lemmy/v3.json: lemmy-js-client 0.19.9, b9cd50f, 2025-02-10; v4.json: 1.0.0-beta.1, c5846ba, 2026-07-03;
// made by scripts/contracts/lemmy.mjs, checked by test/contracts/lemmy/contract.ts): a call the client does not make, a field
// its type lacks, a missing required one or a wrong type/enum answers 400 `{error: "invalid_request", message}` and is
// recorded in `contractViolations`, which the tests require to stay empty. v4 deletes with DELETE /post and DELETE /comment;
// both image uploads take the file in the client's `images[]` field.
import { randomBytes } from 'node:crypto';
import { bearerOf } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';
import { lemmyContractProblems, lemmyUpload, type LemmyApiVersion } from '../contracts/lemmy/contract.js';

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
  deleted?: boolean;
}

export interface FakeLemmyComment {
  id: number;
  postId: number;
  parentId: number | null;
  content: string;
  path: string;
  creatorId?: number;
  /** ISO time, without a zone as Lemmy 0.19 writes it. */
  published?: string;
  deleted?: boolean;
  removed?: boolean;
}

const error = (status: number, code: string): FakeReply => ({ status, json: { error: code } });

export async function startLemmyFake() {
  const server = await startFakeServer();
  const { url } = server;
  const host = new URL(url).host;
  /** API requests lemmy-js-client's types refused, as "METHOD path: problem" (tests require it to stay empty). */
  // Every API route is registered behind the contract check of its version (the image uploads check their own field).
  const contractViolations = server.underContract(
    (_method, path) => {
      const version = /^\/api\/(v3|v4)\//.exec(path)?.[1] as LemmyApiVersion | undefined;
      if (!version || path === `/api/v4${lemmyUpload('v4').path}`) return undefined;
      return (request) => lemmyContractProblems(version, request, request.path.slice(`/api/${version}`.length));
    },
    (problems) => ({ status: 400, json: { error: 'invalid_request', message: problems.join('; ') } }),
  );
  const password = 'correct horse battery';
  const accounts = [
    { id: 7, name: 'herald', display_name: 'Herald Bot', totp: undefined as string | undefined },
    { id: 8, name: 'guarded', display_name: null, totp: '246810' },
    { id: 21, name: 'bob', display_name: 'Bob', totp: 'no login' },
  ];
  const communities = [
    { id: 11, name: 'selfhosted', title: 'Self-hosted', local: true, actor_id: `${url}/c/selfhosted` },
    { id: 12, name: 'technology', title: 'Technology', local: false, actor_id: 'https://lemmy.world/c/technology' },
  ];
  /** The persons who moderate each community (by community id). */
  const moderators = new Map<number, number[]>([[11, [21]], [12, []]]);
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
    return { post: { id: post.id, name: post.name, body: post.body, url: post.url, thumbnail_url: post.customThumbnail, community_id: post.communityId, creator_id: post.creatorId, ap_id: `${url}/post/${post.id}`, published: post.published, deleted: post.deleted ?? false, ...counts }, counts };
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
    const id = Number(request.query.get('id') ?? NaN);
    const community = communities.find((item) => item.id === id || item.name === name || `${item.name}@${new URL(item.actor_id).host}` === name);
    const mods = (community && moderators.get(community.id)) ?? [];
    const moderatorViews = mods.map((person) => ({ community: community!, moderator: personOf(accounts.find((account) => account.id === person)!) }));
    return community ? { json: { community_view: communityView(community), moderators: moderatorViews, discussion_languages: [] } } : error(404, 'couldnt_find_community');
  });

  both('GET', 'search', (request) => {
    const v4 = request.path.startsWith('/api/v4/');
    const term = request.query.get(v4 ? 'search_term' : 'q');
    if (term === null) return error(400, v4 ? 'missing field `search_term`' : 'missing field `q`');
    if (request.query.get('type_')?.toLowerCase() !== 'communities') return { json: { communities: [], posts: [], comments: [], users: [] } };
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
  server.on('POST', lemmyUpload('v3').path, authed(async (request) => {
    const stored = await storeImage(request, lemmyUpload('v3').field);
    return 'file' in stored ? { status: 201, json: { msg: 'ok', files: [{ file: stored.file, delete_token: 'token' }] } } : stored;
  }));
  server.on('POST', `/api/v4${lemmyUpload('v4').path}`, authed(async (request) => {
    const stored = await storeImage(request, lemmyUpload('v4').field);
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

  both('POST', 'comment', authed((request, account) => {
    const body = (request.json ?? {}) as { post_id?: number; content?: string; parent_id?: number };
    const post = posts.find((item) => item.id === body.post_id);
    if (!post) return error(404, 'couldnt_find_post');
    if (!body.content?.trim()) return error(400, 'couldnt_create_comment');
    const parent = body.parent_id === undefined ? undefined : comments.find((item) => item.id === body.parent_id);
    if (body.parent_id !== undefined && (!parent || parent.postId !== post.id)) return error(404, 'couldnt_find_comment');
    const id = nextId++;
    const comment: FakeLemmyComment = { id, postId: post.id, parentId: parent?.id ?? null, content: body.content, path: `${parent?.path ?? '0'}.${id}`, creatorId: account.id, published: new Date().toISOString().replace('Z', '') };
    comments.push(comment);
    post.comments += 1;
    return { json: { comment_view: { comment: { id, post_id: post.id, content: comment.content, path: comment.path, ap_id: `${url}/comment/${id}` } } } };
  }));

  const commentView = (comment: FakeLemmyComment, v4: boolean) => {
    const post = posts.find((item) => item.id === comment.postId)!;
    const community = communities.find((item) => item.id === post.communityId)!;
    const creator = accounts.find((account) => account.id === (comment.creatorId ?? 7))!;
    const published = comment.published ?? new Date().toISOString().replace('Z', '');
    return {
      comment: { id: comment.id, creator_id: creator.id, post_id: post.id, content: comment.deleted || comment.removed ? '' : comment.content, removed: comment.removed ?? false, deleted: comment.deleted ?? false, path: comment.path, ap_id: `${url}/comment/${comment.id}`, local: true, distinguished: false, ...(v4 ? { published_at: `${published}Z` } : { published }) },
      creator: personOf(creator),
      post: postView(post).post,
      community: communityView(community).community,
      counts: { score: 1, upvotes: 1, downvotes: 0, child_count: comments.filter((item) => item.parentId === comment.id).length },
    };
  };

  both('GET', 'comment/list', (request) => {
    const v4 = request.path.startsWith('/api/v4/');
    const postId = Number(request.query.get('post_id'));
    const limit = Number(request.query.get('limit') ?? 10);
    if (limit > 50) return error(400, 'couldnt_get_comments');
    if (request.query.get('sort')?.toLowerCase() !== 'new') return error(400, 'this fake answers sort=New (new in v4) only');
    const all = comments.filter((item) => item.postId === postId).sort((a, b) => (b.published ?? '').localeCompare(a.published ?? '') || b.id - a.id);
    const start = v4 ? Number(request.query.get('page_cursor') ?? 0) : (Number(request.query.get('page') ?? 1) - 1) * limit;
    const page = all.slice(start, start + limit).map((item) => commentView(item, v4));
    if (v4) return { json: { items: page, next_page: start + limit < all.length ? String(start + limit) : null } };
    return { json: { comments: page } };
  });

  both('GET', 'comment', (request) => {
    const comment = comments.find((item) => item.id === Number(request.query.get('id')));
    return comment ? { json: { comment_view: commentView(comment, request.path.startsWith('/api/v4/')) } } : error(404, 'couldnt_find_comment');
  });

  both('PUT', 'post', authed((request, account) => {
    const body = (request.json ?? {}) as { post_id?: number; name?: string; url?: string; body?: string };
    const post = posts.find((item) => item.id === body.post_id);
    if (!post || post.deleted) return error(404, 'couldnt_find_post');
    if (post.creatorId !== account.id) return error(400, 'no_post_edit_allowed');
    if (body.name !== undefined && (!body.name.trim() || body.name.length > 200)) return error(400, 'invalid_post_title');
    if (body.url !== undefined && !/^https?:\/\/\S+$/.test(body.url)) return error(400, 'invalid_url');
    Object.assign(post, { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.url !== undefined ? { url: body.url } : {}), ...(body.body !== undefined ? { body: body.body } : {}) });
    return { json: { post_view: postView(post) } };
  }));

  both('PUT', 'comment', authed((request, account) => {
    const body = (request.json ?? {}) as { comment_id?: number; content?: string };
    const comment = comments.find((item) => item.id === body.comment_id);
    if (!comment || comment.deleted) return error(404, 'couldnt_find_comment');
    if ((comment.creatorId ?? 7) !== account.id) return error(400, 'no_comment_edit_allowed');
    if (!body.content?.trim()) return error(400, 'couldnt_update_comment');
    comment.content = body.content;
    return { json: { comment_view: commentView(comment, request.path.startsWith('/api/v4/')) } };
  }));

  // Lemmy 0.19 deletes with POST …/delete, Lemmy 1.0 with DELETE on the item's path; the body is the same.
  const deletes = (what: 'post' | 'comment', handler: FakeHandler) => {
    server.on('POST', `/api/v3/${what}/delete`, handler);
    server.on('DELETE', `/api/v4/${what}`, handler);
  };
  deletes('post', authed((request, account) => {
    const body = (request.json ?? {}) as { post_id?: number; deleted?: boolean };
    const post = posts.find((item) => item.id === body.post_id);
    if (!post) return error(404, 'couldnt_find_post');
    if ((post.deleted ?? false) === body.deleted) return error(400, 'couldnt_update_post');
    if (post.creatorId !== account.id) return error(400, 'no_post_edit_allowed');
    post.deleted = body.deleted === true;
    return { json: { post_view: postView(post) } };
  }));

  deletes('comment', authed((request, account) => {
    const body = (request.json ?? {}) as { comment_id?: number; deleted?: boolean };
    const comment = comments.find((item) => item.id === body.comment_id);
    if (!comment) return error(404, 'couldnt_find_comment');
    if ((comment.deleted ?? false) === body.deleted) return error(400, 'couldnt_update_comment');
    if ((comment.creatorId ?? 7) !== account.id) return error(400, 'no_comment_edit_allowed');
    comment.deleted = body.deleted === true;
    return { json: { comment_view: commentView(comment, request.path.startsWith('/api/v4/')) } };
  }));

  both('POST', 'comment/remove', authed((request, account) => {
    const body = (request.json ?? {}) as { comment_id?: number; removed?: boolean };
    const comment = comments.find((item) => item.id === body.comment_id);
    if (!comment) return error(404, 'couldnt_find_comment');
    const post = posts.find((item) => item.id === comment.postId)!;
    if (!(moderators.get(post.communityId) ?? []).includes(account.id)) return error(400, 'not_a_mod_or_admin');
    if (typeof body.removed !== 'boolean') return error(400, 'invalid_body');
    comment.removed = body.removed;
    return { json: { comment_view: commentView(comment, request.path.startsWith('/api/v4/')) } };
  }));

  return {
    server,
    url,
    host,
    contractViolations,
    password,
    accounts,
    communities,
    posts,
    comments,
    images,
    moderators,
    /** Someone else's comment (Bob's) on a post, or under a comment of it, `secondsAgo` in the past. */
    addComment(postId: number, content: string, options: { parentId?: number; secondsAgo?: number; creatorId?: number } = {}): FakeLemmyComment {
      const parent = options.parentId === undefined ? undefined : comments.find((item) => item.id === options.parentId)!;
      const id = nextId++;
      const published = new Date(Date.now() - (options.secondsAgo ?? 0) * 1000).toISOString().replace('Z', '');
      const comment: FakeLemmyComment = { id, postId, parentId: parent?.id ?? null, content, path: `${parent?.path ?? '0'}.${id}`, creatorId: options.creatorId ?? 21, published };
      comments.push(comment);
      return comment;
    },
    /** Every JWT stops working (the instance's logins were cleared). */
    dropSessions() {
      sessions.clear();
    },
    close: () => server.close(),
  };
}

export type LemmyFake = Awaited<ReturnType<typeof startLemmyFake>>;
