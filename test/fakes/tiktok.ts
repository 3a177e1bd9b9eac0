// A fake TikTok (Login Kit v2, user info, Content Posting API, video list and query) on one real HTTP server.
// Shapes follow developers.tiktok.com: the `{data, error: {code, message, log_id}}` envelope, OAuth errors `{error,
// error_description, log_id}`.
//
//   const fake = await startTikTokFake();
//   SOCIAL_ENDPOINTS={"tiktok":{"authorize":fake.url,"api":fake.url,"web":"https://www.tiktok.com"}}
//   fake.posts      -> every init: { publishId, kind, mode, postInfo, sourceInfo, bytes, photos, status, publicId }
//   fake.videos     -> the account's videos (video/list, video/query); posts land here once complete
//   fake.creator, fake.user (mutable); fake.setProcessingChecks(n); fake.authority (expire, revoke, rotation)
//
// Refuses what TikTok refuses: `client_id` instead of `client_key`; an authorization without code_challenge (S256) or whose
// challenge is not what TikTok computes, the hex SHA-256 of the verifier (Login Kit for Desktop: "You must use hex encoding of
// SHA256"), so a base64url challenge fails the exchange with TikTok's "Code verifier or code challenge is invalid.";
// a used (rotated) refresh token;
// an invalid bearer token (401 access_token_invalid); a privacy level the creator does not allow
// (privacy_level_option_mismatch); branded content set private; post_info on an inbox upload; a chunk plan against the
// media transfer rules (5-64 MB chunks, whole file when under 5 MB, count = floor(size / chunk), last chunk at most 128 MB);
// chunks out of order or of the wrong size, a Content-Range that skips bytes; photos that are not JPEG or WebP (the post
// FAILS with file_format_check_failed, as TikTok pulls and checks them).
// References (read 2026-11-27; TikTok publishes no machine-readable contract): developers.tiktok.com/doc/login-kit-web,
// /doc/login-kit-desktop (PKCE: hex SHA-256 challenge), /doc/oauth-user-access-token-management, /doc/tiktok-api-v2-error-handling,
// /doc/content-posting-api-reference-direct-post (title 2,200 runes), -upload-video, -photo-post (title 90, description 4,000),
// -get-video-status, -query-creator-info, /doc/content-posting-api-media-transfer-guide (chunk rules), /doc/tiktok-api-v2-video-list.
import { createHash, randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal } from './oauth-authority.js';
import { startFakeServer, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

const MB = 1024 * 1024;

export interface FakeTikTokPost {
  publishId: string;
  kind: 'video' | 'photo';
  mode: 'DIRECT_POST' | 'UPLOAD';
  postInfo?: any;
  sourceInfo: any;
  received: Buffer[];
  uploaded: number;
  photos: { url: string; type: string }[];
  /** Status checks still answering PROCESSING_* once the media is in. */
  processing: number;
  failReason?: string;
  publicId?: string;
  done: boolean;
}

export interface FakeTikTokVideo {
  id: string;
  title: string;
  cover_image_url: string;
  like_count: number;
  comment_count: number;
  share_count: number;
  view_count: number;
}

const logId = () => randomBytes(8).toString('hex').toUpperCase();
const ok = (data: unknown): FakeReply => ({ json: { data, error: { code: 'ok', message: '', log_id: logId() } } });
export const tiktokError = (status: number, code: string, message: string): FakeReply => ({ status, json: { data: {}, error: { code, message, log_id: logId() } } });
const oauthError = (error: string, description: string): FakeReply => ({ status: 400, json: { error, error_description: description, log_id: logId() } });

/** A 19-digit id, too large for a JSON number to hold exactly (as TikTok's are). */
const bigId = () => `73${String(Date.now()).slice(-10)}${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

function chunkPlanProblem(source: any): string | undefined {
  const { video_size: size, chunk_size: chunk, total_chunk_count: count } = source ?? {};
  if (![size, chunk, count].every((value) => Number.isInteger(value) && value > 0)) return 'video_size, chunk_size and total_chunk_count are required for FILE_UPLOAD';
  if (size < 5 * MB && (chunk !== size || count !== 1)) return 'a video under 5 MB must be uploaded whole: chunk_size = video_size, total_chunk_count = 1';
  if (chunk === size && count === 1) return size > 64 * MB ? 'a video over 64 MB must be uploaded in several chunks' : undefined;
  if (chunk < 5 * MB || chunk > 64 * MB) return 'chunk_size must be between 5 MB and 64 MB';
  if (count !== Math.floor(size / chunk)) return 'total_chunk_count must be video_size / chunk_size, rounded down';
  if (count > 1000) return 'at most 1000 chunks';
  if (size - (count - 1) * chunk > 128 * MB) return 'the final chunk may not exceed 128 MB';
  return undefined;
}

export async function startTikTokFake() {
  const server = await startFakeServer();
  const { url } = server;
  // PKCE is checked here, the TikTok way (hex), not by the authority (base64url, RFC 7636).
  const authority = createOAuthAuthority({ clientId: 'tiktok-client-key', clientSecret: 'tiktok-secret', rotateRefreshTokens: true, expiresIn: 86_400 });
  const challenges = new Map<string, string>();
  const creator = {
    creator_avatar_url: `${url}/avatar.jpeg`,
    creator_username: 'heraldtok',
    creator_nickname: 'Herald on TikTok',
    privacy_level_options: ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'],
    comment_disabled: false,
    duet_disabled: false,
    stitch_disabled: false,
    max_video_post_duration_sec: 600,
  };
  const user: Record<string, string | number> = {
    open_id: '-000ZFhpMQ2ZBH8pNCVYtmDxyFqa2F5zsGuN',
    union_id: 'c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1',
    avatar_url: `${url}/avatar.jpeg`,
    display_name: 'Herald on TikTok',
    username: 'heraldtok',
    follower_count: 1234,
    following_count: 56,
    likes_count: 7890,
    video_count: 12,
  };
  const posts: FakeTikTokPost[] = [];
  const videos: FakeTikTokVideo[] = [{ id: '7100000000000000001', title: 'An older video', cover_image_url: `${url}/covers/old.jpeg`, like_count: 3, comment_count: 1, share_count: 0, view_count: 40 }];
  let processingChecks = 0;

  const authed = authority.guard(() => tiktokError(401, 'access_token_invalid', 'The access token is invalid or not found in the request.'));

  server.on('GET', '/v2/auth/authorize/', (request) => {
    const query = request.query;
    if (query.has('client_id') || !query.get('client_key')) return { status: 400, body: 'client_key is required (TikTok does not read client_id)' };
    if (query.get('response_type') !== 'code') return { status: 400, body: 'response_type must be code' };
    if (!(query.get('scope') ?? '').split(',').includes('video.publish')) return { status: 400, body: 'scope is a comma-separated list and must include video.publish' };
    const challenge = query.get('code_challenge');
    if (!challenge || query.get('code_challenge_method') !== 'S256') return { status: 400, body: 'code_challenge' };
    try {
      const location = authority.approvalRedirect({ clientId: query.get('client_key')!, redirectUri: query.get('redirect_uri') ?? '', state: query.get('state') ?? '', scope: query.get('scope')! });
      challenges.set(new URL(location).searchParams.get('code')!, challenge);
      return { status: 302, headers: { location } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, body: `${error.error}: ${error.description}` };
      throw error;
    }
  });

  server.on('POST', '/v2/oauth/token/', (request) => {
    const form = request.form ?? new URLSearchParams();
    if (form.has('client_id')) return oauthError('invalid_request', 'client_key is required');
    try {
      authority.checkClient(form.get('client_key') ?? undefined, form.get('client_secret') ?? undefined);
      const grant = form.get('grant_type');
      if (grant === 'authorization_code') {
        const challenge = challenges.get(form.get('code') ?? '');
        const computed = createHash('sha256').update(form.get('code_verifier') ?? '').digest('hex');
        if (challenge !== undefined && challenge !== computed) return oauthError('invalid_request', 'Code verifier or code challenge is invalid.');
      }
      const issued =
        grant === 'authorization_code'
          ? authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, codeVerifier: form.get('code_verifier') ?? undefined, clientId: form.get('client_key') ?? undefined })
          : grant === 'refresh_token'
            ? authority.redeemRefreshToken(form.get('refresh_token') ?? undefined)
            : undefined;
      if (!issued) return oauthError('unsupported_grant_type', 'grant_type is not supported');
      return {
        json: { access_token: issued.accessToken, expires_in: issued.expiresIn, open_id: user.open_id, refresh_token: issued.refreshToken, refresh_expires_in: 31_536_000, scope: issued.scope ?? 'user.info.basic,video.publish,video.upload', token_type: 'Bearer' },
      };
    } catch (error) {
      if (error instanceof OAuthRefusal) return oauthError(error.error, error.description);
      throw error;
    }
  });

  server.on('GET', '/v2/user/info/', authed((request) => {
    const fields = (request.query.get('fields') ?? '').split(',').filter(Boolean);
    const unknown = fields.filter((field) => !(field in user));
    if (fields.length === 0 || unknown.length > 0) return tiktokError(400, 'invalid_params', `Invalid fields: ${unknown.join(',') || '(none)'}`);
    return ok({ user: Object.fromEntries(fields.map((field) => [field, user[field]])) });
  }));

  server.on('POST', '/v2/post/publish/creator_info/query/', authed(() => ok(creator)));

  const checkPostInfo = (info: any, kind: 'video' | 'photo'): FakeReply | undefined => {
    if (!creator.privacy_level_options.includes(info?.privacy_level)) return tiktokError(403, 'privacy_level_option_mismatch', `privacy_level ${info?.privacy_level} is not in the creator's privacy_level_options`);
    if (info.brand_content_toggle && info.privacy_level === 'SELF_ONLY') return tiktokError(400, 'invalid_params', 'Branded content cannot be set to private.');
    if (kind === 'video' && String(info.title ?? '').length > 2200) return tiktokError(400, 'invalid_params', 'title is longer than 2200 runes');
    if (kind === 'photo' && (String(info.title ?? '').length > 90 || String(info.description ?? '').length > 4000)) return tiktokError(400, 'invalid_params', 'photo title is at most 90 runes, description 4000');
    return undefined;
  };

  const initVideo = (mode: 'DIRECT_POST' | 'UPLOAD') =>
    authed((request) => {
      const body = request.json;
      if (mode === 'UPLOAD' && body?.post_info !== undefined) return tiktokError(400, 'invalid_params', 'The inbox upload takes source_info only.');
      if (mode === 'DIRECT_POST') {
        const refused = checkPostInfo(body?.post_info, 'video');
        if (refused) return refused;
      }
      if (body?.source_info?.source !== 'FILE_UPLOAD') return tiktokError(400, 'invalid_params', 'this fake takes FILE_UPLOAD videos only');
      const problem = chunkPlanProblem(body.source_info);
      if (problem) return tiktokError(400, 'invalid_params', problem);
      const post: FakeTikTokPost = { publishId: `v_pub_file~v2-1.${bigId()}`, kind: 'video', mode, postInfo: body.post_info, sourceInfo: body.source_info, received: [], uploaded: 0, photos: [], processing: processingChecks, done: false };
      posts.push(post);
      return ok({ publish_id: post.publishId, upload_url: `${url}/video/upload/?upload_id=${encodeURIComponent(post.publishId)}&upload_token=${randomBytes(8).toString('hex')}` });
    });
  server.on('POST', '/v2/post/publish/video/init/', initVideo('DIRECT_POST'));
  server.on('POST', '/v2/post/publish/inbox/video/init/', initVideo('UPLOAD'));

  server.on('PUT', '/video/upload/', (request: RecordedRequest) => {
    const post = posts.find((candidate) => candidate.publishId === request.query.get('upload_id'));
    if (!post) return { status: 404, json: { error: 'upload_id not found' } };
    const { video_size: size, chunk_size: chunk, total_chunk_count: count } = post.sourceInfo;
    const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(request.headers['content-range'] ?? ''));
    if (!match || Number(match[3]) !== size) return { status: 400, json: { error: `Content-Range must be bytes first-last/${size}` } };
    const [first, last] = [Number(match[1]), Number(match[2])];
    if (first !== post.uploaded) return { status: 400, json: { error: `chunks must be sent in order: expected the range starting at ${post.uploaded}, got ${first}` } };
    const index = first / chunk;
    const expectedLast = index === count - 1 ? size - 1 : first + chunk - 1;
    if (!Number.isInteger(index) || last !== expectedLast || request.body.length !== last - first + 1) return { status: 400, json: { error: `chunk ${index} must cover bytes ${first}-${expectedLast}` } };
    if (!String(request.headers['content-type'] ?? '').startsWith('video/')) return { status: 400, json: { error: 'Content-Type must be the video type' } };
    post.received.push(request.body);
    post.uploaded = last + 1;
    return { status: post.uploaded === size ? 201 : 206 };
  });

  server.on('POST', '/v2/post/publish/content/init/', authed(async (request) => {
    const body = request.json;
    if (body?.media_type !== 'PHOTO' || !['DIRECT_POST', 'MEDIA_UPLOAD'].includes(body?.post_mode)) return tiktokError(400, 'invalid_params', 'media_type PHOTO and post_mode DIRECT_POST or MEDIA_UPLOAD are required');
    const images: string[] = body.source_info?.photo_images ?? [];
    if (body.source_info?.source !== 'PULL_FROM_URL' || images.length === 0 || images.length > 35) return tiktokError(400, 'invalid_params', 'source PULL_FROM_URL with 1 to 35 photo_images is required');
    if (!(body.source_info.photo_cover_index >= 0 && body.source_info.photo_cover_index < images.length)) return tiktokError(400, 'invalid_params', 'photo_cover_index is out of range');
    if (body.post_mode === 'DIRECT_POST') {
      const refused = checkPostInfo(body.post_info, 'photo');
      if (refused) return refused;
    }
    const post: FakeTikTokPost = { publishId: `p_pub_url~v2.${bigId()}`, kind: 'photo', mode: body.post_mode === 'DIRECT_POST' ? 'DIRECT_POST' : 'UPLOAD', postInfo: body.post_info, sourceInfo: body.source_info, received: [], uploaded: 0, photos: [], processing: processingChecks, done: false };
    // TikTok pulls each picture from its URL and reads it: only JPEG and WebP pass.
    for (const image of images) {
      const response = await fetch(image).catch(() => undefined);
      const bytes = response?.ok ? Buffer.from(await response.arrayBuffer()) : Buffer.alloc(0);
      const type = bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])) ? 'image/jpeg' : bytes.subarray(8, 12).toString('latin1') === 'WEBP' ? 'image/webp' : 'other';
      post.photos.push({ url: image, type });
      if (!response?.ok) post.failReason ??= 'photo_pull_failed';
      else if (type === 'other') post.failReason ??= 'file_format_check_failed';
    }
    posts.push(post);
    return ok({ publish_id: post.publishId });
  }));

  /** The post's status; once the media is in and the processing checks are used up, the post completes (once). */
  const statusOf = (post: FakeTikTokPost) => {
    const mediaIn = post.kind === 'photo' || post.uploaded === post.sourceInfo.video_size;
    if (post.failReason) return { status: 'FAILED', fail_reason: post.failReason };
    if (!mediaIn) return { status: 'PROCESSING_UPLOAD', uploaded_bytes: post.uploaded };
    if (post.processing > 0) {
      post.processing -= 1;
      return { status: post.kind === 'photo' ? 'PROCESSING_DOWNLOAD' : 'PROCESSING_UPLOAD', uploaded_bytes: post.uploaded };
    }
    if (!post.done) {
      post.done = true;
      const id = bigId();
      videos.unshift({ id, title: post.postInfo?.title ?? post.postInfo?.description ?? '', cover_image_url: `${url}/covers/${id}.jpeg`, like_count: 5, comment_count: 2, share_count: 1, view_count: 100 });
      // TikTok names no public id for inbox drafts and private posts.
      if (post.mode === 'DIRECT_POST' && post.postInfo?.privacy_level !== 'SELF_ONLY') post.publicId = id;
    }
    return post.mode === 'UPLOAD' ? { status: 'SEND_TO_USER_INBOX' } : { status: 'PUBLISH_COMPLETE', publicaly_available_post_id: post.publicId ? ['__PUBLIC_ID__'] : [], uploaded_bytes: post.uploaded };
  };

  server.on('POST', '/v2/post/publish/status/fetch/', authed((request) => {
    const post = posts.find((candidate) => candidate.publishId === request.json?.publish_id);
    if (!post) return tiktokError(400, 'invalid_params', 'publish_id not found');
    const data = statusOf(post);
    // The id goes out as a JSON number, as TikTok's int64 does.
    const body = JSON.stringify({ data, error: { code: 'ok', message: '', log_id: logId() } }).replace('"__PUBLIC_ID__"', post.publicId ?? '0');
    return { headers: { 'content-type': 'application/json' }, body };
  }));

  const pick = (video: FakeTikTokVideo, fields: string[]) => Object.fromEntries(fields.map((field) => [field, video[field as keyof FakeTikTokVideo]]));
  const fieldsOf = (request: RecordedRequest) => (request.query.get('fields') ?? '').split(',').filter(Boolean);

  server.on('POST', '/v2/video/list/', authed((request) => {
    const max = request.json?.max_count ?? 10;
    if (fieldsOf(request).length === 0 || max > 20) return tiktokError(400, 'invalid_params', 'fields is required and max_count is at most 20');
    return ok({ videos: videos.slice(0, max).map((video) => pick(video, fieldsOf(request))), cursor: 0, has_more: videos.length > max });
  }));

  server.on('POST', '/v2/video/query/', authed((request) => {
    const ids: string[] = request.json?.filters?.video_ids ?? [];
    if (fieldsOf(request).length === 0 || ids.length === 0 || ids.length > 20) return tiktokError(400, 'invalid_params', 'fields and 1 to 20 filters.video_ids are required');
    return ok({ videos: videos.filter((video) => ids.includes(video.id)).map((video) => pick(video, fieldsOf(request))), cursor: 0, has_more: false });
  }));

  return {
    server,
    url,
    authority,
    creator,
    user,
    posts,
    videos,
    endpoints: { authorize: url, api: url },
    setProcessingChecks(n: number) {
      processingChecks = n;
    },
    close: () => server.close(),
  };
}

export type TikTokFake = Awaited<ReturnType<typeof startTikTokFake>>;
