// A fake VK (VK ID OAuth 2.1 on the id host, the API methods on the api host, and the upload servers VK hands out) on one
// real HTTP server, from id.vk.com's VK ID API description and dev.vk.com's method and upload pages.
//
//   const fake = await startVkFake();
//   SOCIAL_ENDPOINTS={"vk": fake.endpoints}; VK_CLIENT_ID = fake.authority.clientId
//   fake.posts, fake.comments, fake.photos, fake.videos (each with its bytes)
//
// Refuses what VK refuses: a token exchange without PKCE's verifier (or a wrong one), without the device_id the redirect
// carried (or another one), without state; a used refresh token (they rotate) or one sent with another device_id; API
// calls answer HTTP 200 `{error: {error_code, error_msg}}`: 5 for a dead token, 8 without the version `v`, 100 for a
// missing or invalid parameter (an attachment that was never saved, a comment on an unknown post or reply to an unknown
// comment), 15 for another owner's wall. The photo upload server answers `photo: "[]"` when the file is not in the `photo`
// field (as VK does); the video upload server takes the file only in `video_file`. wall.post and wall.createComment
// honour `guid` for an hour, as dev.vk.com says: the same guid answers the same post or comment and creates nothing, until
// forgetGuids() (the hour has passed). wall.get answers the owner's posts newest first with their date (unixtime) and text.
// Comments and changes, from VK's method schema (github.com/VKCOM/vk-api-schema wall/*.json, errors.json at 0efe478, read
// 2026-11-27): wall.getComments (count ≤ 100, offset, sort, extended=1 → profiles/groups, thread_items_count ≤ 10 inline
// replies per comment with thread.count, comment_id → one thread), wall.getComment, wall.deleteComment (the wall's owner may
// delete any comment on its wall; 104 Not found when gone), wall.editComment (the author's own comments only: 211),
// wall.edit (message and attachments set as given: attachments not sent again are dropped), wall.delete (104 when gone).
// refuseNext(method, code) answers the next call of a method with a VK error (a rate limit 6/9/29, an access error).
// Every method call is first checked against VK's own method schema (test/contracts/vk/methods.json: github.com/VKCOM/
// vk-api-schema at 0efe478, 2025-01-21, API 5.199, by test/contracts/vk/contract.ts): an unknown method answers 3, a call
// without access_token 5, without `v` or with another version 8, a parameter the method does not declare, a missing required
// one or a value of the wrong type 100; each is recorded in `contractViolations`, which the tests require to stay empty.
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';
import { vkContractRefusal } from '../contracts/vk/contract.js';

export interface FakeVkPost {
  id: number;
  ownerId: number;
  message: string;
  attachments: string[];
  guid: string;
  likes: number;
  views: number;
  /** Unixtime of publication, as VK's `date`. */
  date: number;
  deleted?: boolean;
  edits?: FakeVkPostChange[];
}

export interface FakeVkComment {
  id: number;
  postId: number;
  message: string;
  replyTo: number | null;
  attachments: string[];
  guid: string;
  /** The author: a user id, or minus a community's id. */
  fromId: number;
  /** Unixtime. */
  date: number;
  deleted?: boolean;
  edits?: { message: string; attachments: string[] }[];
}

export interface FakeVkPostChange {
  message: string;
  attachments: string[];
}

const vkError = (code: number, message: string): FakeReply => ({ json: { error: { error_code: code, error_msg: message, request_params: [] } } });

async function fileIn(request: RecordedRequest, field: string): Promise<File | undefined> {
  const form = await multipartOf(request);
  const file = form?.get(field);
  return file && typeof file !== 'string' ? file : undefined;
}

export async function startVkFake() {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ clientId: '51234567', clientSecret: 'vk-protected-key', requirePkce: true, rotateRefreshTokens: true, expiresIn: 3600 });
  const userId = 1234567;
  authority.setSubject(String(userId));
  const devices = new Map<string, string>(); // code or refresh token → device_id
  const posts: FakeVkPost[] = [];
  /** Guids whose hour has passed: VK no longer matches them. */
  const forgotten = new Set<string>();
  const comments: FakeVkComment[] = [];
  const photos: { id: number; bytes: Buffer; hash: string; saved: boolean }[] = [];
  const videos: { id: number; bytes?: Buffer }[] = [];
  let nextId = 500;
  /** Method calls VK's schema refused, as "method: problem" (tests require it to stay empty). */
  const contractViolations: string[] = [];
  const refusals = new Map<string, { code: number; message: string; times: number }>();
  /** Users and communities (negative ids) who comment, as extended=1 answers them. */
  const people = new Map<number, Record<string, unknown>>([[userId, { id: userId, first_name: 'Ivan', last_name: 'Heraldov', screen_name: 'ivan.herald', photo_100: `${url}/avatar.jpg` }]]);

  const attachmentObject = (attachment: string) => {
    const [, type, owner, id] = /^([a-z]+)(-?\d+)_(\d+)/.exec(attachment) ?? [];
    return { type, [type]: { id: Number(id), owner_id: Number(owner) } };
  };
  const knownAttachment = (attachment: string) =>
    attachment.startsWith('photo') ? photos.some((photo) => photo.saved && attachment === `photo${userId}_${photo.id}`) : videos.some((video) => video.bytes && attachment === `video${userId}_${video.id}`);
  const threadRoot = (comment: FakeVkComment): FakeVkComment => {
    const parent = comment.replyTo === null ? undefined : comments.find((item) => item.id === comment.replyTo);
    return parent ? threadRoot(parent) : comment;
  };
  const commentObject = (comment: FakeVkComment) => ({
    id: comment.id,
    from_id: comment.fromId,
    post_id: comment.postId,
    owner_id: userId,
    parents_stack: comment.replyTo === null ? [] : [threadRoot(comment).id],
    date: comment.date,
    text: comment.message,
    ...(comment.attachments.length ? { attachments: comment.attachments.map(attachmentObject) } : {}),
    ...(comment.replyTo !== null ? { reply_to_comment: comment.replyTo, reply_to_user: comments.find((item) => item.id === comment.replyTo)?.fromId } : {}),
  });
  const wallOwner = (params: URLSearchParams) => (params.get('owner_id') ?? String(userId)) === String(userId);
  const liveComment = (params: URLSearchParams) => comments.find((item) => String(item.id) === params.get('comment_id') && !item.deleted);

  function commentMethods(): Record<string, (params: URLSearchParams) => FakeReply> {
    return {
      'wall.getComments': (params) => {
        if (!wallOwner(params)) return vkError(212, 'Access to post comments denied');
        const post = posts.find((item) => String(item.id) === params.get('post_id') && !item.deleted);
        if (!post) return vkError(100, 'One of the parameters specified was missing or invalid: post_id');
        const count = Number(params.get('count') ?? 10);
        const offset = Number(params.get('offset') ?? 0);
        const inline = Number(params.get('thread_items_count') ?? 0);
        if (!Number.isInteger(count) || count < 0 || count > 100) return vkError(100, 'One of the parameters specified was missing or invalid: count must be at most 100');
        if (!Number.isInteger(inline) || inline < 0 || inline > 10) return vkError(100, 'One of the parameters specified was missing or invalid: thread_items_count must be at most 10');
        const of = params.get('comment_id');
        const live = comments.filter((item) => item.postId === post.id && !item.deleted);
        const level = of ? live.filter((item) => item.replyTo !== null && String(threadRoot(item).id) === of) : live.filter((item) => item.replyTo === null);
        const sorted = level.sort((a, b) => (params.get('sort') === 'desc' ? b.date - a.date || b.id - a.id : a.date - b.date || a.id - b.id));
        const items = sorted.slice(offset, offset + count).map((comment) => {
          if (of) return commentObject(comment);
          const thread = live.filter((item) => item.replyTo !== null && threadRoot(item).id === comment.id).sort((a, b) => a.date - b.date || a.id - b.id);
          return { ...commentObject(comment), thread: { count: thread.length, items: thread.slice(0, inline).map(commentObject), can_post: true, show_reply_button: true, groups_can_post: true } };
        });
        const extended = params.get('extended') === '1';
        const authors = [...new Set([...items, ...items.flatMap((item) => ('thread' in item ? item.thread.items : []))].map((item) => item.from_id))];
        return {
          json: {
            response: {
              count: level.length,
              items,
              current_level_count: level.length,
              can_post: true,
              ...(extended ? { profiles: authors.filter((id) => id > 0).map((id) => people.get(id)).filter(Boolean), groups: authors.filter((id) => id < 0).map((id) => people.get(id)).filter(Boolean) } : {}),
            },
          },
        };
      },
      'wall.getComment': (params) => {
        const comment = liveComment(params);
        if (!wallOwner(params) || !comment) return vkError(104, 'Not found');
        return { json: { response: { items: [commentObject(comment)], can_post: true } } };
      },
      'wall.deleteComment': (params) => {
        if (!wallOwner(params)) return vkError(211, "Access to wall's comment denied");
        const comment = liveComment(params);
        if (!comment) return vkError(104, 'Not found');
        comment.deleted = true;
        return { json: { response: 1 } };
      },
      'wall.editComment': (params) => {
        const comment = liveComment(params);
        if (!wallOwner(params) || !comment) return vkError(104, 'Not found');
        if (comment.fromId !== userId) return vkError(211, "Access to wall's comment denied");
        const attachments = (params.get('attachments') ?? '').split(',').filter(Boolean);
        if (attachments.some((attachment) => !knownAttachment(attachment))) return vkError(100, 'One of the parameters specified was missing or invalid: attachments');
        if (!params.get('message') && attachments.length === 0) return vkError(100, 'One of the parameters specified was missing or invalid: message is empty');
        comment.message = params.get('message') ?? '';
        comment.attachments = attachments;
        (comment.edits ??= []).push({ message: comment.message, attachments });
        return { json: { response: 1 } };
      },
      'wall.edit': (params) => {
        if (!wallOwner(params)) return vkError(15, 'Access denied: you can edit only your own posts');
        const post = posts.find((item) => String(item.id) === params.get('post_id') && !item.deleted);
        if (!post) return vkError(104, 'Not found');
        const attachments = (params.get('attachments') ?? '').split(',').filter(Boolean);
        if (attachments.some((attachment) => !knownAttachment(attachment))) return vkError(100, 'One of the parameters specified was missing or invalid: attachments');
        if (!params.get('message') && attachments.length === 0) return vkError(100, 'One of the parameters specified was missing or invalid: message is empty');
        post.message = params.get('message') ?? '';
        post.attachments = attachments;
        (post.edits ??= []).push({ message: post.message, attachments });
        return { json: { response: { post_id: post.id } } };
      },
      'wall.delete': (params) => {
        if (!wallOwner(params)) return vkError(210, "Access to wall's post denied");
        const post = posts.find((item) => String(item.id) === params.get('post_id') && !item.deleted);
        if (!post) return vkError(104, 'Not found');
        post.deleted = true;
        return { json: { response: 1 } };
      },
    };
  }

  const oauthError = (error: string, description: string): FakeReply => ({ status: 400, json: { error, error_description: description } });
  const issued = (token: { accessToken: string; refreshToken?: string; expiresIn: number }, deviceId: string, state: string) => {
    if (token.refreshToken) devices.set(token.refreshToken, deviceId);
    return { json: { access_token: token.accessToken, refresh_token: token.refreshToken, id_token: 'eyJ.fake', token_type: 'Bearer', expires_in: token.expiresIn, user_id: userId, state, scope: 'vkid.personal_info wall photos video' } };
  };

  server.on('GET', '/authorize', (request) => {
    const query = request.query;
    if (!(query.get('scope') ?? '').split(' ').includes('wall')) return { status: 400, body: 'scope must include wall' };
    try {
      const redirect = new URL(authority.approveQuery(query));
      const deviceId = `device-${randomBytes(6).toString('hex')}`;
      devices.set(redirect.searchParams.get('code')!, deviceId);
      redirect.searchParams.set('device_id', deviceId);
      redirect.searchParams.set('type', 'code_v2');
      redirect.searchParams.set('expires_in', '600');
      return { status: 302, headers: { location: redirect.toString() } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, body: `${error.error}: ${error.description}` };
      throw error;
    }
  });

  server.on('POST', '/oauth2/auth', (request) => {
    const form = request.form ?? new URLSearchParams();
    const deviceId = form.get('device_id') ?? '';
    const state = form.get('state') ?? '';
    if (!state) return oauthError('invalid_request', 'state is missing');
    if (form.get('client_id') !== authority.clientId) return oauthError('invalid_client', 'client_id is wrong');
    try {
      if (form.get('grant_type') === 'authorization_code') {
        const code = form.get('code') ?? '';
        if (!deviceId || devices.get(code) !== deviceId) return oauthError('invalid_request', 'device_id is missing or does not match the code');
        return issued(authority.redeemCode({ code, redirectUri: form.get('redirect_uri') ?? undefined, codeVerifier: form.get('code_verifier') ?? undefined, clientId: form.get('client_id') ?? undefined }), deviceId, state);
      }
      if (form.get('grant_type') === 'refresh_token') {
        const refresh = form.get('refresh_token') ?? '';
        if (devices.get(refresh) !== deviceId) return oauthError('invalid_request', 'device_id does not match the refresh token');
        return issued(authority.redeemRefreshToken(refresh), deviceId, state);
      }
      return oauthError('unsupported_grant_type', 'grant_type is not supported');
    } catch (error) {
      if (error instanceof OAuthRefusal) return oauthError(error.error, error.description);
      throw error;
    }
  });

  server.on('POST', '/oauth2/user_info', (request) => {
    const form = request.form ?? new URLSearchParams();
    if (!authority.subjectOf(form.get('access_token') ?? '') || form.get('client_id') !== authority.clientId) return { status: 401, json: { error: 'invalid_token', error_description: 'access_token is invalid' } };
    return { json: { user: { user_id: String(userId), first_name: 'Ivan', last_name: 'Heraldov', avatar: `${url}/avatar.jpg`, email: 'ivan@herald.example' } } };
  });

  type Params = URLSearchParams;
  const methods: Record<string, (params: Params) => FakeReply | Promise<FakeReply>> = {
    'photos.getWallUploadServer': () => ({ json: { response: { upload_url: `${url}/upload/photo?srv=77`, album_id: -14, user_id: userId } } }),
    'photos.saveWallPhoto': (params) => {
      const photo = photos.find((item) => item.hash === params.get('hash') && params.get('photo')?.includes(`"p${item.id}"`));
      if (!photo || params.get('server') !== '77') return vkError(100, 'One of the parameters specified was missing or invalid: photo or hash is wrong');
      photo.saved = true;
      return { json: { response: [{ id: photo.id, owner_id: userId, album_id: -14, sizes: [] }] } };
    },
    'video.save': () => {
      const video = { id: nextId++ };
      videos.push(video);
      return { json: { response: { upload_url: `${url}/upload/video?vid=${video.id}`, video_id: video.id, owner_id: userId, title: 'Video', access_key: 'k' } } };
    },
    'wall.post': (params) => {
      if (params.get('owner_id') !== String(userId)) return vkError(15, 'Access denied: you can post only on your own wall');
      const guid = params.get('guid') ?? '';
      const seen = guid && !forgotten.has(guid) ? posts.find((post) => post.guid === guid) : undefined;
      if (seen) return { json: { response: { post_id: seen.id } } };
      const attachments = (params.get('attachments') ?? '').split(',').filter(Boolean);
      const known = (attachment: string) =>
        attachment.startsWith('photo') ? photos.some((photo) => photo.saved && attachment === `photo${userId}_${photo.id}`) : videos.some((video) => video.bytes && attachment === `video${userId}_${video.id}`);
      if (attachments.some((attachment) => !known(attachment))) return vkError(100, 'One of the parameters specified was missing or invalid: attachments');
      if (!params.get('message') && attachments.length === 0) return vkError(100, 'One of the parameters specified was missing or invalid: message is empty');
      const post: FakeVkPost = { id: nextId++, ownerId: userId, message: params.get('message') ?? '', attachments, guid, likes: 0, views: 0, date: Math.floor(Date.now() / 1000) };
      posts.push(post);
      return { json: { response: { post_id: post.id } } };
    },
    'wall.createComment': (params) => {
      const post = posts.find((item) => String(item.id) === params.get('post_id') && !item.deleted);
      if (!post) return vkError(100, 'One of the parameters specified was missing or invalid: post_id');
      const guid = params.get('guid') ?? '';
      const seen = guid && !forgotten.has(guid) ? comments.find((comment) => comment.guid === guid) : undefined;
      if (seen) return { json: { response: { comment_id: seen.id, parents_stack: [] } } };
      const replyTo = params.get('reply_to_comment') ? Number(params.get('reply_to_comment')) : null;
      if (replyTo !== null && !comments.some((comment) => comment.id === replyTo && comment.postId === post.id && !comment.deleted)) return vkError(100, 'One of the parameters specified was missing or invalid: reply_to_comment');
      const comment: FakeVkComment = { id: nextId++, postId: post.id, message: params.get('message') ?? '', replyTo, attachments: (params.get('attachments') ?? '').split(',').filter(Boolean), guid, fromId: userId, date: Math.floor(Date.now() / 1000) };
      comments.push(comment);
      return { json: { response: { comment_id: comment.id, parents_stack: replyTo ? [replyTo] : [] } } };
    },
    'wall.getById': (params) => {
      const items = posts.filter((post) => !post.deleted && (params.get('posts') ?? '').split(',').includes(`${post.ownerId}_${post.id}`));
      return { json: { response: { items: items.map((post) => ({ id: post.id, owner_id: post.ownerId, text: post.message, attachments: post.attachments.map(attachmentObject), likes: { count: post.likes }, reposts: { count: 0 }, comments: { count: comments.filter((comment) => comment.postId === post.id).length }, views: { count: post.views } })) } } };
    },
    // The schema's wall.get names the wall by `domain` (an id or short name); without it, the token's user's wall.
    'wall.get': (params) => {
      const domain = params.get('domain');
      if (domain && ![String(userId), `id${userId}`, 'ivan.herald'].includes(domain)) return vkError(100, 'One of the parameters specified was missing or invalid: domain');
      const items = [...posts].filter((post) => !post.deleted).sort((a, b) => b.date - a.date || b.id - a.id);
      return { json: { response: { count: items.length, items: items.slice(0, Math.min(Number(params.get('count') ?? 20), 100)).map((post) => ({ id: post.id, owner_id: post.ownerId, from_id: post.ownerId, date: post.date, text: post.message })) } } };
    },
  };

  Object.assign(methods, commentMethods());

  server.on('POST', '/method/*', async (request) => {
    const params = request.form ?? new URLSearchParams();
    const name = request.path.split('/')[2];
    const refused = vkContractRefusal(name, params);
    if (refused) {
      contractViolations.push(...refused.problems.map((problem) => `${name}: ${problem}`));
      return vkError(refused.code, refused.message);
    }
    if (authority.subjectOf(params.get('access_token') ?? '') !== String(userId)) return vkError(5, 'User authorization failed: invalid access_token (4).');
    const refusal = refusals.get(name);
    if (refusal) {
      if (--refusal.times <= 0) refusals.delete(name);
      return vkError(refusal.code, refusal.message);
    }
    return methods[name]?.(params) ?? vkError(3, 'Unknown method passed');
  });

  server.on('POST', '/upload/photo', async (request) => {
    const file = await fileIn(request, 'photo');
    if (!file) return { json: { server: 77, photo: '[]', hash: '' } };
    const photo = { id: nextId++, bytes: Buffer.from(await file.arrayBuffer()), hash: randomBytes(8).toString('hex'), saved: false };
    photos.push(photo);
    return { json: { server: 77, photo: JSON.stringify([{ photo: `p${photo.id}`, sizes: [] }]), hash: photo.hash } };
  });

  server.on('POST', '/upload/video', async (request) => {
    const video = videos.find((item) => String(item.id) === request.query.get('vid'));
    const file = await fileIn(request, 'video_file');
    if (!video) return { status: 404, json: { error: 'upload url expired' } };
    if (!file) return { status: 400, json: { error: 'video_file is missing' } };
    video.bytes = Buffer.from(await file.arrayBuffer());
    return { json: { video_id: video.id, owner_id: userId, size: video.bytes.length, video_hash: randomBytes(6).toString('hex') } };
  });

  return {
    server,
    url,
    authority,
    userId,
    posts,
    comments,
    photos,
    videos,
    endpoints: { id: url, api: url, web: url },
    contractViolations,
    /** A comment someone left on a post (a user, or a community with a negative id), `secondsAgo` before now. */
    addComment(postId: number, message: string, options: { fromId?: number; replyTo?: number; secondsAgo?: number; name?: string } = {}): FakeVkComment {
      const fromId = options.fromId ?? 777_001;
      if (!people.has(fromId)) {
        const [first, last] = (options.name ?? `Person ${Math.abs(fromId)}`).split(' ');
        people.set(fromId, fromId > 0 ? { id: fromId, first_name: first, last_name: last ?? '', screen_name: `user${fromId}`, photo_100: `${url}/p/${fromId}.jpg` } : { id: -fromId, name: options.name ?? `Club ${-fromId}`, screen_name: `club${-fromId}`, photo_100: `${url}/g/${-fromId}.jpg` });
      }
      const comment: FakeVkComment = { id: nextId++, postId, message, replyTo: options.replyTo ?? null, attachments: [], guid: '', fromId, date: Math.floor(Date.now() / 1000) - (options.secondsAgo ?? 0) };
      comments.push(comment);
      return comment;
    },
    /** The next `times` calls of `method` answer VK error `code` (HTTP 200); `times` 0 lifts a refusal still pending. */
    refuseNext(method: string, code: number, message: string, times = 1) {
      if (times > 0) refusals.set(method, { code, message, times });
      else refusals.delete(method);
    },
    /** VK's guid hour has passed for every guid seen so far. */
    forgetGuids() {
      for (const item of [...posts, ...comments]) if (item.guid) forgotten.add(item.guid);
    },
    close: () => server.close(),
  };
}

export type VkFake = Awaited<ReturnType<typeof startVkFake>>;
