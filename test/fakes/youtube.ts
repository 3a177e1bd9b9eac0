// A fake Google (OAuth 2.0 + userinfo) with the YouTube Data API v3, its resumable upload, and the YouTube Analytics API v2,
// on one real HTTP server (startFakeServer). Shapes follow developers.google.com/youtube/v3/docs and the resumable upload guide.
//
//   const fake = await startYouTubeFake();           // fake.channels: the channels `mine=true` lists (two by default)
//   SOCIAL_ENDPOINTS={"youtube":{"authorize":fake.url,"token":fake.url,"api":fake.url,"analytics":fake.url}}
//   fake.videos     -> every finished upload: { id, snippet, status, bytes, sessionId }
//   fake.sessions   -> every resumable session: { id, metadata, size, mimeType, received }
//   fake.comments, fake.playlistItems; fake.authority (tokens: expireAccessTokens, revokeAll)
//
// Refuses what Google refuses: an authorization request without offline access, consent prompt, PKCE S256 or the upload scope;
// a code exchange with the wrong verifier, redirect URI or client (credentials in the form body, as Google's web flow sends
// them); API calls without a valid bearer token (401 authError); a session without X-Upload-Content-Length/-Type or with a
// title that is missing, over 100 characters or contains < or >, a description over 5000 bytes (UTF-8) or with < or >
// (developers.google.com/youtube/v3/docs/videos: snippet.title, snippet.description; read 2026-11-27); a chunk whose length is not a multiple of 256 KiB (except
// the last), a Content-Range that skips or repeats bytes or disagrees with the body, and an unknown session (404).
// cutChunk(start, keep): the chunk starting at byte `start` is cut to its first `keep` bytes (a server that lost the rest).
// unverifiedProject = true: uploads are locked to private whatever privacyStatus asked, as Google does for unverified API
// projects (videos.insert); rejectNext(reason): the next finished upload is rejected (uploadStatus rejected, rejectionReason).
// GET /youtube/v3/videos?part=status&id= answers the video's status.
// References (read 2026-11-27): developers.google.com/youtube/v3/docs/videos (resource, limits, status), /videos/insert (private
// lock of unverified projects), /v3/guides/using_resumable_upload_protocol, /commentThreads, /playlistItems, /v3/docs/errors,
// /youtube/analytics/reference/reports/query; the bodies Herald sends are also type-checked against @googleapis/youtube.
// Comments and changes (read 2026-11-27: /v3/docs/commentThreads/list, /comments/list, /comments/insert, /comments/update,
// /comments/setModerationStatus, /comments/delete, /videos/update, /videos/delete, /v3/determine_quota_cost):
//   GET commentThreads (part snippet[,replies]; videoId; maxResults 1–100; pageToken; only published comments unless
//   moderationStatus; `replies` carries at most 2 replies, snippet.totalReplyCount all), GET comments?parentId (all the
//   replies), POST comments (a reply: snippet.parentId must be a top-level comment, else 404 parentCommentNotFound),
//   PUT comments (the author only), POST comments/setModerationStatus (the video's owner only, 403 forbidden otherwise;
//   rejected → published refused; banAuthor only with rejected; 204), DELETE comments (the author only, 403 otherwise; 204),
//   PUT videos (part snippet[,status]; snippet.title and snippet.categoryId required; replaces the parts sent; the owner only),
//   DELETE videos (204; 404 videoNotFound). Quota: each call costs its documented units (list 1, insert/update/moderate/
//   delete 50, upload 100); past `fake.quota.limit` a call answers 403 quotaExceeded.
//   fake.addComment(videoId, text, { parentId?, author? }) -> a comment someone left (author: fake.viewers[n])
// The contract: before its own checks, every Data API and Analytics request (and the resumable upload's first request) is checked
// against Google's Discovery documents, vendored in test/contracts/youtube/ (YouTube Data API v3 revision 20240529, YouTube
// Analytics API v2 revision 20230705, from googleapis/google-api-nodejs-client discovery/ at fd63525, 2024-08-19; read
// 2026-11-27): method and path, known query parameters with their types and enums, required ones, and the JSON body against the
// method's request schema (no field the schema lacks). A request outside it is answered 400 (404 for a path that is no method)
// and recorded in `contractViolations`, which the tests require to stay empty. The upload session's PUTs follow the resumable
// protocol (not a Discovery method) and are checked by the fake's own rules.
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal, refusalReply } from './oauth-authority.js';
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { contractProblems } from '../contracts/youtube/contract.js';

export const QUANTUM = 256 * 1024;
const UPLOAD_SCOPE = 'https://www.googleapis.com/auth/youtube.upload';

export interface FakeChannel {
  id: string;
  title: string;
  customUrl: string;
  thumbnail: string;
}

export interface FakeSession {
  id: string;
  metadata: any;
  size: number;
  mimeType: string;
  received: Buffer[];
  held: number;
  videoId?: string;
}

export interface FakeVideo {
  id: string;
  channelId: string;
  snippet: any;
  status: any;
  bytes: Buffer;
  sessionId: string;
}

/** Google's error body. */
export const googleError = (code: number, reason: string, message: string, domain = 'youtube'): FakeReply => ({
  status: code,
  json: { error: { code, message, errors: [{ message, domain, reason }] } },
});

const id = (prefix: string, length = 11) => `${prefix}${randomBytes(16).toString('base64url').slice(0, length)}`;

export interface FakeComment {
  id: string;
  commentId: string;
  videoId: string;
  text: string;
  channelId: string;
  authorName?: string;
  publishedAt: string;
  parentId?: string;
  moderationStatus: 'published' | 'heldForReview' | 'rejected';
}

export async function startYouTubeFake() {
  const server: FakeServer = await startFakeServer();
  const { url } = server;
  // Routes of the APIs are registered behind the contract check (the OAuth and userinfo routes and the session PUTs are not).
  const contractViolations = server.underContract(
    (method, path) => (/^\/(youtube\/v3|v2)\//.test(path) || (method === 'POST' && path.startsWith('/upload/youtube/v3/')) ? (request) => contractProblems(request, request.path) : undefined),
    (problems) => {
      const unknown = problems.some((problem) => problem.includes('is not a method of'));
      return googleError(unknown ? 404 : 400, unknown ? 'notFound' : 'badRequest', problems.join('; '), 'global');
    },
  );
  const authority = createOAuthAuthority({ clientId: 'google-client', clientSecret: 'google-secret', requirePkce: true, expiresIn: 3599 });
  const channels: FakeChannel[] = [
    { id: 'UCmain0000000000000000a', title: 'Herald Main', customUrl: '@heraldmain', thumbnail: `${url}/thumbs/main.jpg` },
    { id: 'UCbrand000000000000000b', title: 'Herald Brand', customUrl: '@heraldbrand', thumbnail: `${url}/thumbs/brand.jpg` },
  ];
  const playlists = [
    { id: 'PLfavourites', title: 'Favourites' },
    { id: 'PLlaunches', title: 'Launches' },
  ];
  const sessions: FakeSession[] = [];
  const videos: FakeVideo[] = [];
  /** Top-level comments (`id` the thread, `commentId` the comment) and replies (`parentId` the top-level comment, id = commentId). */
  const comments: FakeComment[] = [];
  const viewers = [
    { id: 'UCviewer0000000000000001', name: 'Bob Viewer' },
    { id: 'UCviewer0000000000000002', name: 'Carol Viewer' },
  ];
  const quota = { used: 0, limit: 10_000 };
  const COSTS: Record<string, number> = { GET: 1, POST: 50, PUT: 50, DELETE: 50 };
  const project = { unverified: false, reject: undefined as string | undefined };
  const playlistItems: { id: string; playlistId: string; videoId: string }[] = [];
  let cut: { start: number; keep: number } | undefined;
  /** The channel the token acts as (the one chosen on Google's consent screen, or the first). */
  let actingChannel = () => channels[0];

  const unauthorized = googleError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'global');
  const guard = authority.guard(unauthorized);
  // Every Data API call spends quota units; past the limit YouTube answers 403 quotaExceeded.
  const authed = (handler: Parameters<typeof guard>[0]) =>
    guard((request, subject) => {
      const cost = request.path.startsWith('/upload/') ? 100 : request.path.startsWith('/youtube/v3/') ? COSTS[request.method] ?? 1 : 0;
      if (cost > 0 && quota.used + cost > quota.limit) return googleError(403, 'quotaExceeded', 'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.');
      quota.used += cost;
      return handler(request, subject);
    });

  server.on('GET', '/o/oauth2/v2/auth', (request) => {
    const query = request.query;
    const scope = query.get('scope') ?? '';
    const missing = [
      query.get('response_type') !== 'code' && 'response_type=code',
      query.get('access_type') !== 'offline' && 'access_type=offline',
      !(query.get('prompt') ?? '').split(' ').includes('consent') && 'prompt=consent',
      !scope.split(' ').includes(UPLOAD_SCOPE) && `scope ${UPLOAD_SCOPE}`,
    ].filter(Boolean);
    if (missing.length > 0) return { status: 400, body: `Error 400: invalid_request. Missing ${missing.join(', ')}` };
    try {
      const location = authority.approveQuery(query);
      return { status: 302, headers: { location } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, body: `Error 400: ${error.error}. ${error.description}` };
      throw error;
    }
  });

  server.on('POST', '/token', (request) => {
    const form = request.form ?? new URLSearchParams();
    try {
      authority.checkClient(form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined);
      if (form.get('grant_type') === 'authorization_code') {
        const issued = authority.redeemCode({
          code: form.get('code') ?? undefined,
          redirectUri: form.get('redirect_uri') ?? undefined,
          codeVerifier: form.get('code_verifier') ?? undefined,
          clientId: form.get('client_id') ?? undefined,
        });
        return { json: { access_token: issued.accessToken, expires_in: issued.expiresIn, refresh_token: issued.refreshToken, scope: issued.scope, token_type: 'Bearer' } };
      }
      if (form.get('grant_type') === 'refresh_token') {
        // Google keeps the refresh token: the answer carries none.
        const issued = authority.redeemRefreshToken(form.get('refresh_token') ?? undefined);
        return { json: { access_token: issued.accessToken, expires_in: issued.expiresIn, scope: UPLOAD_SCOPE, token_type: 'Bearer' } };
      }
      throw new OAuthRefusal('unsupported_grant_type', 'Invalid grant_type');
    } catch (error) {
      if (error instanceof OAuthRefusal) return refusalReply(error);
      throw error;
    }
  });

  server.on('GET', '/oauth2/v3/userinfo', authed(() => ({ json: { sub: '108000000000000000001', name: 'Herald Owner', picture: `${url}/photos/owner.jpg`, locale: 'en' } })));

  const channelResource = (channel: FakeChannel) => ({
    kind: 'youtube#channel',
    etag: 'etag',
    id: channel.id,
    snippet: { title: channel.title, description: '', customUrl: channel.customUrl, thumbnails: { default: { url: channel.thumbnail, width: 88, height: 88 } } },
  });
  const list = (items: unknown[], kind: string) => ({ kind, etag: 'etag', pageInfo: { totalResults: items.length, resultsPerPage: items.length }, items });

  server.on('GET', '/youtube/v3/channels', authed((request) => {
    if (request.query.get('mine') !== 'true' || !request.query.get('part')?.includes('snippet')) return googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: mine, id, forHandle...');
    return { json: list(channels.map(channelResource), 'youtube#channelListResponse') };
  }));

  server.on('GET', '/youtube/v3/playlists', authed((request) => {
    if (request.query.get('mine') !== 'true') return googleError(400, 'missingRequiredParameter', 'No filter selected.');
    return { json: list(playlists.map((playlist) => ({ kind: 'youtube#playlist', id: playlist.id, snippet: { title: playlist.title, channelId: actingChannel().id } })), 'youtube#playlistListResponse') };
  }));

  server.on('POST', '/youtube/v3/playlistItems', authed((request) => {
    const snippet = request.json?.snippet;
    if (request.query.get('part') !== 'snippet' || !snippet?.playlistId || snippet?.resourceId?.kind !== 'youtube#video') return googleError(400, 'invalidResourceId', 'The resource ID is invalid.');
    if (!playlists.some((playlist) => playlist.id === snippet.playlistId)) return googleError(404, 'playlistNotFound', 'The playlist identified with the request\'s playlistId parameter cannot be found.');
    if (!videos.some((video) => video.id === snippet.resourceId.videoId)) return googleError(404, 'videoNotFound', 'The video that you are trying to add to the playlist cannot be found.');
    const item = { id: id('PLI', 20), playlistId: snippet.playlistId, videoId: snippet.resourceId.videoId };
    playlistItems.push(item);
    return { json: { kind: 'youtube#playlistItem', id: item.id, snippet: { playlistId: item.playlistId, resourceId: { kind: 'youtube#video', videoId: item.videoId } } } };
  }));

  server.on('GET', '/youtube/v3/playlistItems', authed((request) => {
    const found = playlistItems.filter((item) => item.playlistId === request.query.get('playlistId') && (!request.query.get('videoId') || item.videoId === request.query.get('videoId')));
    return { json: list(found.map((item) => ({ kind: 'youtube#playlistItem', id: item.id })), 'youtube#playlistItemListResponse') };
  }));

  const commentResource = (comment: FakeComment) => ({
    kind: 'youtube#comment',
    id: comment.commentId,
    snippet: {
      ...(comment.parentId ? { parentId: comment.parentId } : {}),
      videoId: comment.videoId,
      textOriginal: comment.text,
      textDisplay: comment.text,
      authorDisplayName: comment.authorName ?? channels.find((channel) => channel.id === comment.channelId)?.title ?? comment.channelId,
      authorChannelUrl: `http://www.youtube.com/channel/${comment.channelId}`,
      authorChannelId: { value: comment.channelId },
      canRate: true,
      viewerRating: 'none',
      likeCount: 0,
      ...(comment.moderationStatus !== 'published' ? { moderationStatus: comment.moderationStatus } : {}),
      publishedAt: comment.publishedAt,
      updatedAt: comment.publishedAt,
    },
  });
  const repliesOf = (comment: FakeComment, status = 'published') => comments.filter((reply) => reply.parentId === comment.commentId && reply.moderationStatus === status);
  const threadResource = (comment: FakeComment, withReplies = false) => ({
    kind: 'youtube#commentThread',
    id: comment.id,
    snippet: { videoId: comment.videoId, topLevelComment: commentResource(comment), canReply: true, totalReplyCount: repliesOf(comment).length, isPublic: true },
    // YouTube includes only some replies in the thread; comments.list?parentId= has them all.
    ...(withReplies && repliesOf(comment).length > 0 ? { replies: { comments: repliesOf(comment).slice(0, 2).map(commentResource) } } : {}),
  });
  const page = <T>(items: T[], request: RecordedRequest): { items: T[]; nextPageToken?: string } | { refusal: FakeReply } => {
    const max = Number(request.query.get('maxResults') ?? 20);
    if (!Number.isInteger(max) || max < 1 || max > 100) return { refusal: googleError(400, 'invalidValue', 'Invalid value for maxResults: it must be between 1 and 100.', 'global') };
    const start = Number(request.query.get('pageToken') ?? 0);
    return { items: items.slice(start, start + max), ...(items.length > start + max ? { nextPageToken: String(start + max) } : {}) };
  };
  const videoOf = (videoId: string | undefined) => videos.find((video) => video.id === videoId);

  server.on('POST', '/youtube/v3/commentThreads', authed((request) => {
    const snippet = request.json?.snippet;
    const text = snippet?.topLevelComment?.snippet?.textOriginal;
    if (request.query.get('part') !== 'snippet' || typeof text !== 'string' || text.trim() === '') return googleError(400, 'commentTextRequired', 'The comment resource must contain a snippet.topLevelComment.snippet.textOriginal property.');
    if (!videos.some((video) => video.id === snippet.videoId)) return googleError(404, 'videoNotFound', 'The video identified by the videoId parameter could not be found.');
    const comment: FakeComment = { id: id('Ug', 24), commentId: id('Ug', 24), videoId: snippet.videoId, text, channelId: actingChannel().id, publishedAt: new Date().toISOString(), moderationStatus: 'published' };
    comments.push(comment);
    return { json: threadResource(comment) };
  }));

  server.on('GET', '/youtube/v3/commentThreads', authed((request) => {
    const parts = (request.query.get('part') ?? '').split(',');
    if (!parts.includes('snippet') || parts.some((part) => !['id', 'snippet', 'replies'].includes(part))) return googleError(400, 'invalidPart', `Invalid part ${request.query.get('part')}.`, 'global');
    const video = videoOf(request.query.get('videoId') ?? undefined);
    if (!video) return googleError(404, 'videoNotFound', 'The video identified by the videoId parameter could not be found.');
    const status = request.query.get('moderationStatus') ?? 'published';
    const found = comments.filter((comment) => comment.videoId === video.id && !comment.parentId && comment.moderationStatus === status).reverse();
    const answer = page(found, request);
    if ('refusal' in answer) return answer.refusal;
    return { json: { ...list(answer.items.map((comment) => threadResource(comment, parts.includes('replies'))), 'youtube#commentThreadListResponse'), ...(answer.nextPageToken ? { nextPageToken: answer.nextPageToken } : {}) } };
  }));

  server.on('GET', '/youtube/v3/comments', authed((request) => {
    const parent = comments.find((comment) => !comment.parentId && comment.commentId === request.query.get('parentId'));
    if (!request.query.get('part')?.includes('snippet')) return googleError(400, 'invalidPart', 'part must include snippet.', 'global');
    if (!parent) return googleError(404, 'commentNotFound', 'One or more of the comments identified by the id parameter could not be found.');
    const answer = page(repliesOf(parent), request);
    if ('refusal' in answer) return answer.refusal;
    return { json: { ...list(answer.items.map(commentResource), 'youtube#commentListResponse'), ...(answer.nextPageToken ? { nextPageToken: answer.nextPageToken } : {}) } };
  }));

  server.on('POST', '/youtube/v3/comments', authed((request) => {
    const snippet = request.json?.snippet;
    if (request.query.get('part') !== 'snippet' || typeof snippet?.textOriginal !== 'string' || snippet.textOriginal.trim() === '') return googleError(400, 'commentTextRequired', 'The comment resource must contain a snippet.textOriginal property.');
    const unknown = Object.keys(snippet).filter((key) => !['parentId', 'textOriginal'].includes(key));
    if (unknown.length > 0) return googleError(400, 'invalidCommentMetadata', `The request metadata is invalid (${unknown.join(', ')}).`);
    // A reply names a top-level comment: YouTube's replies do not nest.
    const parent = comments.find((comment) => !comment.parentId && comment.commentId === snippet.parentId);
    if (!parent) return googleError(404, 'parentCommentNotFound', 'The parent comment specified for the reply could not be found.');
    const reply: FakeComment = { id: '', commentId: `${parent.commentId}.${id('', 22)}`, videoId: parent.videoId, text: snippet.textOriginal, channelId: actingChannel().id, publishedAt: new Date().toISOString(), parentId: parent.commentId, moderationStatus: 'published' };
    reply.id = reply.commentId;
    comments.push(reply);
    return { json: commentResource(reply) };
  }));

  const commentById = (value: string | null) => comments.find((comment) => comment.commentId === value);

  server.on('PUT', '/youtube/v3/comments', authed((request) => {
    const comment = commentById(request.json?.id ?? null);
    if (request.query.get('part') !== 'snippet' || typeof request.json?.snippet?.textOriginal !== 'string') return googleError(400, 'commentTextRequired', 'The comment resource must contain a snippet.textOriginal property.');
    if (!comment) return googleError(404, 'commentNotFound', 'The comment could not be found.');
    if (comment.channelId !== actingChannel().id) return googleError(403, 'forbidden', 'The comment could not be updated due to insufficient permissions.');
    comment.text = request.json.snippet.textOriginal;
    return { json: commentResource(comment) };
  }));

  server.on('POST', '/youtube/v3/comments/setModerationStatus', authed((request) => {
    const status = request.query.get('moderationStatus') ?? '';
    const targets = (request.query.get('id') ?? '').split(',').filter(Boolean).map((value) => commentById(value));
    if (!['heldForReview', 'published', 'rejected'].includes(status)) return googleError(400, 'invalidModerationStatus', 'The moderationStatus parameter is invalid.');
    if (request.query.get('banAuthor') === 'true' && status !== 'rejected') return googleError(400, 'banWithoutReject', 'The banAuthor parameter can only be used if the moderationStatus parameter value is rejected.');
    if (targets.length === 0 || targets.some((target) => !target)) return googleError(404, 'commentNotFound', 'One or more comments that the request is trying to update cannot be found.');
    if (targets.some((target) => videoOf(target!.videoId)?.channelId !== actingChannel().id)) return googleError(403, 'forbidden', 'The moderation status of one or more comments cannot be set due to insufficient permissions.');
    if (status === 'published' && targets.some((target) => target!.moderationStatus === 'rejected')) return googleError(400, 'processingFailure', "A rejected comment's moderation status cannot be changed to published.");
    for (const target of targets) target!.moderationStatus = status as FakeComment['moderationStatus'];
    return { status: 204 };
  }));

  server.on('DELETE', '/youtube/v3/comments', authed((request) => {
    const comment = commentById(request.query.get('id'));
    if (!comment) return googleError(404, 'commentNotFound', 'The comment could not be found.');
    if (comment.channelId !== actingChannel().id) return googleError(403, 'forbidden', 'The comment could not be deleted due to insufficient permissions.');
    comments.splice(comments.indexOf(comment), 1);
    return { status: 204 };
  }));

  server.on('PUT', '/youtube/v3/videos', authed((request) => {
    const parts = (request.query.get('part') ?? '').split(',');
    const body = request.json;
    if (!parts.includes('snippet') && !parts.includes('status')) return googleError(400, 'invalidPart', 'part must name what is updated.', 'global');
    const video = videoOf(body?.id);
    if (!video) return googleError(404, 'videoNotFound', 'The video that you are trying to update cannot be found.');
    if (video.channelId !== actingChannel().id) return googleError(403, 'forbidden', 'The video that you are trying to update cannot be updated due to insufficient permissions.');
    if (parts.includes('snippet')) {
      const snippet = body.snippet ?? {};
      if (typeof snippet.title !== 'string' || snippet.title.trim() === '' || snippet.title.length > 100 || /[<>]/.test(snippet.title)) return googleError(400, 'invalidTitle', 'The request metadata specifies an invalid or empty video title.');
      if (typeof snippet.categoryId !== 'string') return googleError(400, 'invalidCategoryId', 'The snippet.categoryId property specifies an invalid category ID. Use the videoCategories.list method to retrieve supported categories.');
      if (/[<>]/.test(snippet.description ?? '') || Buffer.byteLength(String(snippet.description ?? ''), 'utf8') > 5000) return googleError(400, 'invalidDescription', 'The request metadata specifies an invalid video description.');
      // The snippet is replaced: what is not sent (tags, description) is gone.
      video.snippet = { title: snippet.title, categoryId: snippet.categoryId, description: snippet.description ?? '', ...(snippet.tags ? { tags: snippet.tags } : {}), ...(snippet.defaultLanguage ? { defaultLanguage: snippet.defaultLanguage } : {}) };
    }
    if (parts.includes('status')) {
      const status = body.status ?? {};
      if (!['public', 'private', 'unlisted'].includes(status.privacyStatus)) return googleError(400, 'invalidVideoMetadata', 'The request metadata is invalid: status.privacyStatus is required.');
      video.status = { uploadStatus: video.status.uploadStatus, ...status };
    }
    return { json: videoResource(video) };
  }));

  server.on('DELETE', '/youtube/v3/videos', authed((request) => {
    const video = videoOf(request.query.get('id') ?? undefined);
    if (!video) return googleError(404, 'videoNotFound', 'The video that you are trying to delete cannot be found.');
    if (video.channelId !== actingChannel().id) return googleError(403, 'forbidden', 'The video that you are trying to delete cannot be deleted due to insufficient permissions.');
    videos.splice(videos.indexOf(video), 1);
    return { status: 204 };
  }));

  const videoResource = (video: FakeVideo) => ({ kind: 'youtube#video', etag: 'etag', id: video.id, snippet: { ...video.snippet, channelId: video.channelId }, status: { uploadStatus: 'uploaded', ...video.status } });

  server.on('POST', '/upload/youtube/v3/videos', authed((request) => {
    const size = Number(request.headers['x-upload-content-length']);
    const mimeType = String(request.headers['x-upload-content-type'] ?? '');
    if (request.query.get('uploadType') !== 'resumable') return googleError(400, 'invalidUploadType', 'Only resumable uploads are served by this fake.', 'global');
    if (!Number.isInteger(size) || size <= 0) return googleError(400, 'invalidValue', 'X-Upload-Content-Length is required.', 'global');
    if (!/^video\/|^application\/octet-stream$/.test(mimeType)) return googleError(400, 'invalidValue', 'X-Upload-Content-Type must be a video type.', 'global');
    const metadata = request.json;
    const title = metadata?.snippet?.title;
    if (typeof title !== 'string' || title.trim() === '') return googleError(400, 'invalidTitle', 'The request metadata specifies an invalid or empty video title.');
    if (title.length > 100 || /[<>]/.test(title)) return googleError(400, 'invalidTitle', 'The request metadata specifies an invalid video title.');
    const description = String(metadata?.snippet?.description ?? '');
    if (/[<>]/.test(description) || Buffer.byteLength(description, 'utf8') > 5000) return googleError(400, 'invalidDescription', 'The request metadata specifies an invalid video description.');
    if (!['public', 'private', 'unlisted'].includes(metadata?.status?.privacyStatus)) return googleError(400, 'invalidVideoMetadata', 'The request metadata is invalid.');
    const session: FakeSession = { id: id('ABPtcP', 30), metadata, size, mimeType, received: [], held: 0 };
    sessions.push(session);
    return { headers: { location: `${url}/upload/youtube/v3/videos?uploadType=resumable&upload_id=${session.id}` } };
  }));

  const resumeIncomplete = (session: FakeSession): FakeReply => ({ status: 308, headers: session.held > 0 ? { range: `bytes=0-${session.held - 1}` } : {} });

  server.on('PUT', '/upload/youtube/v3/videos', (request: RecordedRequest) => {
    const session = sessions.find((candidate) => candidate.id === request.query.get('upload_id'));
    if (!session) return { status: 404, body: 'Not Found' };
    const range = String(request.headers['content-range'] ?? '');
    const finished = () => videos.find((video) => video.id === session.videoId)!;
    if (range === `bytes */${session.size}`) {
      if (request.body.length > 0) return googleError(400, 'badRequest', 'A status check carries no body.', 'global');
      return session.videoId ? { status: 201, json: videoResource(finished()) } : resumeIncomplete(session);
    }
    if (session.videoId) return googleError(400, 'badRequest', 'The upload is already complete.', 'global');
    const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
    if (!match || Number(match[3]) !== session.size) return googleError(400, 'badContent', `Invalid Content-Range "${range}".`, 'global');
    const [first, last] = [Number(match[1]), Number(match[2])];
    if (first > session.held) return googleError(400, 'badContent', `Content-Range starts at ${first} but the session holds ${session.held} bytes: bytes were skipped.`, 'global');
    if (first < session.held) return googleError(400, 'badContent', `Content-Range starts at ${first} but the session already holds ${session.held} bytes.`, 'global');
    if (last - first + 1 !== request.body.length || last >= session.size) return googleError(400, 'badContent', 'Content-Range does not match the body.', 'global');
    const isLast = last === session.size - 1;
    if (!isLast && request.body.length % QUANTUM !== 0) return googleError(400, 'badContent', `Chunk of ${request.body.length} bytes: every chunk but the last must be a multiple of 256 KiB.`, 'global');
    let body = request.body;
    if (cut?.start === first) {
      body = body.subarray(0, cut.keep);
      cut = undefined;
    }
    session.received.push(body);
    session.held += body.length;
    if (session.held < session.size) return resumeIncomplete(session);
    const asked = session.metadata.status ?? {};
    const status = {
      ...asked,
      uploadStatus: project.reject ? 'rejected' : 'uploaded',
      ...(project.reject ? { rejectionReason: project.reject } : {}),
      ...(project.unverified ? { privacyStatus: 'private' } : {}),
    };
    project.reject = undefined;
    // YouTube files a video without a category under People & Blogs (22).
    const video: FakeVideo = { id: id('', 11), channelId: actingChannel().id, snippet: { categoryId: '22', ...session.metadata.snippet }, status, bytes: Buffer.concat(session.received), sessionId: session.id };
    videos.push(video);
    session.videoId = video.id;
    return { status: 201, json: videoResource(video) };
  });

  server.on('GET', '/youtube/v3/videos', authed((request) => {
    const ids = (request.query.get('id') ?? '').split(',').filter(Boolean);
    if (ids.length === 0 || !request.query.get('part')) return googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: id, myRated, chart.');
    return { json: list(videos.filter((video) => ids.includes(video.id)).map(videoResource), 'youtube#videoListResponse') };
  }));

  /** Daily rows: views 10, 11, 12...; the other metrics derived from the day index; `filters=video==ID` scales them down. */
  server.on('GET', '/v2/reports', authed((request) => {
    const query = request.query;
    const missing = ['ids', 'startDate', 'endDate', 'metrics'].filter((key) => !query.get(key));
    if (missing.length > 0) return googleError(400, 'required', `Required parameter(s) missing: ${missing.join(', ')}.`, 'global');
    if (query.get('ids') !== 'channel==MINE' || query.get('dimensions') !== 'day') return googleError(400, 'badRequest', 'The query is not supported.', 'global');
    const metrics = query.get('metrics')!.split(',');
    const start = new Date(`${query.get('startDate')}T00:00:00Z`).getTime();
    const days = Math.round((new Date(`${query.get('endDate')}T00:00:00Z`).getTime() - start) / 86_400_000) + 1;
    const scale = query.get('filters')?.startsWith('video==') ? 1 : 10;
    const rows = Array.from({ length: days }, (_, index) => [new Date(start + index * 86_400_000).toISOString().slice(0, 10), ...metrics.map((_metric, column) => (10 + index + column) * scale)]);
    return {
      json: {
        kind: 'youtubeAnalytics#resultTable',
        columnHeaders: [{ name: 'day', columnType: 'DIMENSION', dataType: 'STRING' }, ...metrics.map((name) => ({ name, columnType: 'METRIC', dataType: 'INTEGER' }))],
        rows,
      },
    };
  }));

  return {
    server,
    url,
    authority,
    channels,
    playlists,
    sessions,
    videos,
    comments,
    playlistItems,
    /** The SOCIAL_ENDPOINTS entry pointing the youtube provider here. */
    endpoints: { authorize: url, token: url, api: url, analytics: url },
    project,
    viewers,
    quota,
    /** Requests the Discovery contract refused, as "METHOD path: problem". */
    contractViolations,
    /** A comment someone left on a video (a reply when `parentId` names a top-level comment). */
    addComment(videoId: string, text: string, options: { parentId?: string; author?: { id: string; name: string }; publishedAt?: Date } = {}): FakeComment {
      const author = options.author ?? viewers[0];
      const commentId = options.parentId ? `${options.parentId}.${id('', 22)}` : id('Ug', 24);
      const comment: FakeComment = { id: commentId, commentId, videoId, text, channelId: author.id, authorName: author.name, publishedAt: (options.publishedAt ?? new Date()).toISOString(), parentId: options.parentId, moderationStatus: 'published' };
      comments.push(comment);
      return comment;
    },
    cutChunk(start: number, keep: number) {
      cut = { start, keep };
    },
    actAs(channelId: string) {
      actingChannel = () => channels.find((channel) => channel.id === channelId)!;
    },
    close: () => server.close(),
  };
}

export type YouTubeFake = Awaited<ReturnType<typeof startYouTubeFake>>;
