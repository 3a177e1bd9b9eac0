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
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

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
}

export interface FakeVkComment {
  id: number;
  postId: number;
  message: string;
  replyTo: number | null;
  attachments: string[];
  guid: string;
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
      const post = posts.find((item) => String(item.id) === params.get('post_id'));
      if (!post) return vkError(100, 'One of the parameters specified was missing or invalid: post_id');
      const guid = params.get('guid') ?? '';
      const seen = guid && !forgotten.has(guid) ? comments.find((comment) => comment.guid === guid) : undefined;
      if (seen) return { json: { response: { comment_id: seen.id, parents_stack: [] } } };
      const replyTo = params.get('reply_to_comment') ? Number(params.get('reply_to_comment')) : null;
      if (replyTo !== null && !comments.some((comment) => comment.id === replyTo && comment.postId === post.id)) return vkError(100, 'One of the parameters specified was missing or invalid: reply_to_comment');
      const comment: FakeVkComment = { id: nextId++, postId: post.id, message: params.get('message') ?? '', replyTo, attachments: (params.get('attachments') ?? '').split(',').filter(Boolean), guid };
      comments.push(comment);
      return { json: { response: { comment_id: comment.id, parents_stack: replyTo ? [replyTo] : [] } } };
    },
    'wall.getById': (params) => {
      const items = posts.filter((post) => (params.get('posts') ?? '').split(',').includes(`${post.ownerId}_${post.id}`));
      return { json: { response: { items: items.map((post) => ({ id: post.id, owner_id: post.ownerId, text: post.message, likes: { count: post.likes }, reposts: { count: 0 }, comments: { count: comments.filter((comment) => comment.postId === post.id).length }, views: { count: post.views } })) } } };
    },
    'wall.get': (params) => ({
      json: { response: { count: posts.length, items: [...posts].sort((a, b) => b.date - a.date || b.id - a.id).slice(0, Math.min(Number(params.get('count') ?? 20), 100)).map((post) => ({ id: post.id, owner_id: post.ownerId, from_id: post.ownerId, date: post.date, text: post.message })) } },
    }),
  };

  server.on('POST', '/method/*', async (request) => {
    const params = request.form ?? new URLSearchParams();
    if (!params.get('v')) return vkError(8, 'Invalid request: v is required');
    if (authority.subjectOf(params.get('access_token') ?? '') !== String(userId)) return vkError(5, 'User authorization failed: invalid access_token (4).');
    const method = methods[request.path.split('/')[2]];
    return method ? method(params) : vkError(3, 'Unknown method passed');
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
    /** VK's guid hour has passed for every guid seen so far. */
    forgetGuids() {
      for (const item of [...posts, ...comments]) if (item.guid) forgotten.add(item.guid);
    },
    close: () => server.close(),
  };
}

export type VkFake = Awaited<ReturnType<typeof startVkFake>>;
