// A fake Threads Graph API (graph.threads.net/v1.0) and its login dialog on 127.0.0.1, shaped after Meta's Threads docs.
//
//   const fake = await startThreadsFake();              // endpoints: { authorize: fake.url, graph: fake.url, graphVersion: 'v1.0' }
//   auth: fake.channelAuth()                             // a connected channel's long-lived token (no HTTP call)
//   fake.containers / fake.posts / fake.downloads        // what Threads holds and every media download it made
//   fake.setVideoChecks(n)                               // VIDEO containers made afterwards answer IN_PROGRESS on their first n status checks
//   fake.failNextVideo('INVALID_ASPEC_RATIO')            // the next VIDEO container ends in ERROR with this error_message
//
// OAuth: GET /oauth/authorize approves at once (302 to redirect_uri?code&state#_ like Meta; no PKCE). POST /oauth/access_token
//   (client_id, client_secret, code, grant_type=authorization_code, redirect_uri) → {access_token (short-lived), user_id};
//   GET /access_token?grant_type=th_exchange_token&client_secret&access_token (a short-lived token) → long-lived {access_token,
//   token_type, expires_in}; GET /refresh_access_token?grant_type=th_refresh_token&access_token (a live long-lived token).
// Graph (the token in `access_token`, else 400 OAuthException code 190): GET /v1.0/me; POST /v1.0/{uid}/threads (container:
//   TEXT needs text, IMAGE image_url, VIDEO video_url, CAROUSEL 2–20 FINISHED carousel items; text ≤ 500 with emoji as UTF-8
//   bytes, ≤ 5 links; reply_to_id must be a published post) — the media URL is really downloaded; GET /v1.0/{container}
//   ?fields=status,error_message; POST /v1.0/{uid}/threads_publish (refused unless FINISHED, and once published);
//   GET /v1.0/{media}?fields=permalink; GET /v1.0/{uid}/threads and /replies; GET /v1.0/{uid}/threads_insights; GET /v1.0/{media}/insights.
// Replies (Meta's reply-management docs, read 2026-11-27: …/threads/retrieve-and-manage-replies/replies-and-conversations,
//   …/threads/reference/reply-management, …/threads/posts/delete-posts): GET /v1.0/{media}/conversation (every reply at any
//   depth, newest first unless reverse=false, 2 per page here so paging is exercised; needs threads_read_replies; only under
//   the account's own posts) and /v1.0/{media}/replies (top level); POST /v1.0/{reply}/manage_reply hide=true|false (needs
//   threads_manage_replies; a top-level reply under the account's post only); DELETE /v1.0/{media} (needs threads_delete;
//   the account's own posts only; one gone answers code 100/33). People's replies: fake.addReply(parentId, text).
//   A token's permissions are those of its authorization (channelAuth(permissions) for a channel made without one).
import { randomBytes } from 'node:crypto';
import type { ChannelAuth } from '../../providers/types.js';
import { startFakeServer, type FakeHandler, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { createOAuthAuthority, OAuthRefusal, type OAuthAuthority } from './oauth-authority.js';

export interface ThreadsFakeContainer {
  id: string;
  params: Record<string, string>;
  status: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';
  error_message?: string;
  /** Status checks still answering IN_PROGRESS. */
  pendingChecks: number;
}

export interface ThreadsFakePost {
  id: string;
  container: string;
  media_type: string;
  text: string;
  reply_to_id: string | null;
  children: string[];
  timestamp: string;
  permalink: string;
  /** Who wrote it: the account's own username, or another person's (their replies under the account's posts). */
  username: string;
  hide_status: 'NOT_HUSHED' | 'HIDDEN' | 'UNHUSHED';
  insights: Record<'views' | 'likes' | 'replies' | 'reposts' | 'quotes' | 'shares', number>;
}

export interface ThreadsFakeDownload {
  url: string;
  status: number;
  contentType: string;
  bytes: Buffer;
}

export interface ThreadsFake {
  server: FakeServer;
  url: string;
  oauth: OAuthAuthority;
  user: { id: string; username: string; name: string; threads_profile_picture_url: string; followers_count: number };
  containers: ThreadsFakeContainer[];
  posts: ThreadsFakePost[];
  /** Posts the account deleted through the API. */
  deleted: ThreadsFakePost[];
  downloads: ThreadsFakeDownload[];
  setVideoChecks(n: number): void;
  failNextVideo(errorMessage: string): void;
  /** Another person's reply to `parentId` (a post of the account or a reply under it). */
  addReply(parentId: string, text: string, options?: { username?: string; createdAt?: Date }): ThreadsFakePost;
  /** A connected channel's token; `permissions` defaults to every permission Herald asks for. */
  channelAuth(permissions?: string[]): ChannelAuth;
  close(): Promise<void>;
}

const metaError = (message: string, code: number, extra: Record<string, unknown> = {}): FakeReply => ({
  status: 400,
  json: { error: { message, type: code === 190 ? 'OAuthException' : 'THApiException', code, ...extra, fbtrace_id: randomBytes(8).toString('base64url') } },
});
const expired = () => metaError('Error validating access token: Session has expired.', 190, { error_subcode: 463 });

/** Threads' own count: characters, with each emoji counted as its UTF-8 bytes. */
function threadsLength(text: string): number {
  let length = 0;
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) {
    length += /\p{Extended_Pictographic}/u.test(segment) ? Buffer.byteLength(segment) : [...segment].length;
  }
  return length;
}

export async function startThreadsFake(options: { clientId?: string; clientSecret?: string } = {}): Promise<ThreadsFake> {
  const server = await startFakeServer();
  const oauth = createOAuthAuthority({ clientId: options.clientId ?? '990602627938098', clientSecret: options.clientSecret ?? 'threads-app-secret', noRefreshTokens: true, expiresIn: 3600 });
  const user = { id: '17841400000000001', username: 'herald.test', name: 'Herald Test', threads_profile_picture_url: `${server.url}/avatars/herald.jpg`, followers_count: 77 };
  oauth.setSubject(user.id);
  const containers: ThreadsFakeContainer[] = [];
  const posts: ThreadsFakePost[] = [];
  const downloads: ThreadsFakeDownload[] = [];
  const longLived = new Set<string>();
  const deleted: ThreadsFakePost[] = [];
  /** The permissions granted with each token (what the person approved at authorization). */
  const granted = new Map<string, Set<string>>();
  const ALL = ['threads_basic', 'threads_content_publish', 'threads_read_replies', 'threads_manage_replies', 'threads_manage_insights', 'threads_delete'];
  const videoErrors: string[] = [];
  let videoChecks = 0;
  let nextId = 18000000000000000n;
  const newId = () => String(++nextId);

  const issueLongLived = (permissions: Iterable<string> = ALL) => {
    const issued = oauth.issue(user.id);
    longLived.add(issued.accessToken);
    granted.set(issued.accessToken, new Set(permissions));
    return issued.accessToken;
  };
  /** Meta's refusal of a call whose token lacks the permission (code 10). */
  const lacks = (request: RecordedRequest, permission: string): FakeReply | undefined =>
    granted.get(tokenOf(request) ?? '')?.has(permission) ? undefined : metaError(`(#10) Application does not have permission for this action: ${permission} is required`, 10);
  const nowStamp = (date = new Date()) => date.toISOString().replace(/\.\d{3}Z$/, '+0000');
  /** The account's own post a reply is under (the root of its chain). */
  const rootOf = (post: ThreadsFakePost): ThreadsFakePost => {
    let current = post;
    for (let parent = posts.find((item) => item.id === current.reply_to_id); parent; parent = posts.find((item) => item.id === current.reply_to_id)) current = parent;
    return current;
  };
  /** The token of a Graph call: `access_token` in the query (GET) or the form body (POST). */
  const tokenOf = (request: RecordedRequest) => request.form?.get('access_token') ?? request.query.get('access_token') ?? undefined;
  const param = (request: RecordedRequest, key: string) => request.form?.get(key) ?? request.query.get(key) ?? undefined;
  const authed = (handler: FakeHandler): FakeHandler => (request) => {
    const token = tokenOf(request);
    return token && longLived.has(token) && oauth.subjectOf(token) ? handler(request) : expired();
  };
  const ownUser = (request: RecordedRequest) => request.path.split('/')[2] === user.id || request.path.split('/')[2] === 'me';

  server.on('GET', '/oauth/authorize', (request) => {
    const query = request.query;
    try {
      if (query.get('response_type') !== 'code') throw new OAuthRefusal('invalid_request', 'response_type must be code');
      const scope = (query.get('scope') ?? '').split(/[ ,]/);
      if (!scope.includes('threads_basic') || !scope.includes('threads_content_publish')) throw new OAuthRefusal('invalid_request', 'threads_basic and threads_content_publish are required');
      const location = oauth.approveQuery(query);
      return { status: 302, headers: { location: `${location}#_` } };
    } catch (error) {
      return error instanceof OAuthRefusal ? metaError(error.description, 100) : { status: 500 };
    }
  });

  server.on('POST', '/oauth/access_token', (request) => {
    try {
      if (param(request, 'grant_type') !== 'authorization_code') throw new OAuthRefusal('unsupported_grant_type', 'grant_type must be authorization_code');
      oauth.checkClient(param(request, 'client_id'), param(request, 'client_secret'));
      const issued = oauth.redeemCode({ code: param(request, 'code'), redirectUri: param(request, 'redirect_uri'), clientId: param(request, 'client_id') });
      granted.set(issued.accessToken, new Set((issued.scope ?? '').split(/[ ,]/).filter(Boolean)));
      return { json: { access_token: issued.accessToken, user_id: Number(user.id) } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return metaError(`${error.error}: ${error.description}`, error.error === 'invalid_client' ? 101 : 100);
      throw error;
    }
  });

  server.on('GET', '/access_token', (request) => {
    const token = request.query.get('access_token') ?? undefined;
    if (request.query.get('grant_type') !== 'th_exchange_token') return metaError('grant_type must be th_exchange_token', 100);
    if (request.query.get('client_secret') !== oauth.clientSecret) return metaError('Error validating client secret.', 1);
    if (!token || longLived.has(token) || !oauth.subjectOf(token)) return expired();
    return { json: { access_token: issueLongLived(granted.get(token)), token_type: 'bearer', expires_in: 5183944 } };
  });

  server.on('GET', '/refresh_access_token', (request) => {
    const token = request.query.get('access_token') ?? undefined;
    if (request.query.get('grant_type') !== 'th_refresh_token') return metaError('grant_type must be th_refresh_token', 100);
    if (!token || !longLived.has(token) || !oauth.subjectOf(token)) return expired();
    return { json: { access_token: issueLongLived(granted.get(token)), token_type: 'bearer', expires_in: 5183944 } };
  });

  server.on('GET', '/v1.0/*', authed((request) => {
    const id = request.path.split('/')[2];
    const fields = (request.query.get('fields') ?? 'id').split(',');
    const pick = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([key]) => key === 'id' || fields.includes(key)));
    if (id === 'me') return { json: pick({ id: user.id, username: user.username, name: user.name, threads_profile_picture_url: user.threads_profile_picture_url }) };
    const container = containers.find((item) => item.id === id);
    if (container) {
      if (container.status === 'IN_PROGRESS' && --container.pendingChecks <= 0) {
        const failure = container.params.media_type === 'VIDEO' ? videoErrors.shift() : undefined;
        Object.assign(container, failure ? { status: 'ERROR', error_message: failure } : { status: 'FINISHED' });
      }
      return { json: pick({ id: container.id, status: container.status, error_message: container.error_message }) };
    }
    const post = posts.find((item) => item.id === id);
    if (post) return { json: pick({ id: post.id, permalink: post.permalink, text: post.text, media_type: post.media_type, timestamp: post.timestamp, username: post.username }) };
    return metaError(`Unsupported get request. Object with ID '${id}' does not exist`, 100, { error_subcode: 33 });
  }));

  const download = async (url: string): Promise<ThreadsFakeDownload> => {
    try {
      const response = await fetch(url);
      const entry = { url, status: response.status, contentType: response.headers.get('content-type') ?? '', bytes: Buffer.from(await response.arrayBuffer()) };
      downloads.push(entry);
      return entry;
    } catch {
      const entry = { url, status: 0, contentType: '', bytes: Buffer.alloc(0) };
      downloads.push(entry);
      return entry;
    }
  };

  server.on('POST', '/v1.0/*/threads', authed(async (request) => {
    if (!ownUser(request)) return metaError('Unsupported post request.', 100, { error_subcode: 33 });
    const refused = lacks(request, 'threads_content_publish') ?? (param(request, 'reply_to_id') ? lacks(request, 'threads_manage_replies') : undefined);
    if (refused) return refused;
    const params = Object.fromEntries([...(request.form ?? new URLSearchParams()).entries()].filter(([key]) => key !== 'access_token'));
    const type = params.media_type;
    const text = params.text ?? '';
    const carouselItem = params.is_carousel_item === 'true';
    if (!['TEXT', 'IMAGE', 'VIDEO', 'CAROUSEL'].includes(type)) return metaError('Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}', 100);
    if (type === 'TEXT' && text.trim() === '') return metaError('Param text is required for TEXT posts', 100);
    if (threadsLength(text) > 500) return metaError('Param text must be at most 500 characters long.', 100, { error_user_msg: 'The post text is too long.' });
    if (new Set(text.match(/https?:\/\/[^\s<>"]+/g) ?? []).size > 5) return metaError('THREADS_API__LINK_LIMIT_EXCEEDED', 100);
    if (carouselItem && !['IMAGE', 'VIDEO'].includes(type)) return metaError('Only IMAGE and VIDEO containers can be carousel items', 100);
    if (params.reply_to_id && !posts.some((post) => post.id === params.reply_to_id)) return metaError(`The post ${params.reply_to_id} to reply to does not exist`, 100, { error_subcode: 4279009 });
    const container: ThreadsFakeContainer = { id: newId(), params, status: 'FINISHED', pendingChecks: 0 };
    if (type === 'CAROUSEL') {
      const children = (params.children ?? '').split(',').filter(Boolean).map((id) => containers.find((item) => item.id === id));
      if (children.length < 2 || children.length > 20) return metaError('A carousel takes 2 to 20 children', 100);
      if (children.some((child) => !child || child.params.is_carousel_item !== 'true')) return metaError('children must be carousel item containers', 100);
      if (children.some((child) => child!.status !== 'FINISHED')) return metaError('The carousel items are not ready: wait until each is FINISHED', 100, { error_subcode: 2207027 });
    }
    if (type === 'IMAGE' || type === 'VIDEO') {
      const url = type === 'IMAGE' ? params.image_url : params.video_url;
      if (!url) return metaError(`Param ${type === 'IMAGE' ? 'image_url' : 'video_url'} is required`, 100);
      const fetched = await download(url);
      const expected = type === 'IMAGE' ? 'image/' : 'video/';
      if (fetched.status !== 200 || !fetched.contentType.startsWith(expected)) {
        Object.assign(container, { status: 'ERROR', error_message: type === 'VIDEO' ? 'FAILED_DOWNLOADING_VIDEO' : 'UNKNOWN' });
      } else if (type === 'VIDEO' && videoChecks > 0) {
        Object.assign(container, { status: 'IN_PROGRESS', pendingChecks: videoChecks });
      } else if (type === 'VIDEO' && videoErrors.length > 0) {
        Object.assign(container, { status: 'ERROR', error_message: videoErrors.shift() });
      }
    }
    containers.push(container);
    return { json: { id: container.id } };
  }));

  server.on('POST', '/v1.0/*/threads_publish', authed((request) => {
    if (!ownUser(request)) return metaError('Unsupported post request.', 100, { error_subcode: 33 });
    const container = containers.find((item) => item.id === param(request, 'creation_id'));
    if (!container || container.params.is_carousel_item === 'true') return metaError('Param creation_id must be a media container of this user', 100);
    if (container.status === 'PUBLISHED') return metaError('The media container was already published', 100, { error_subcode: 4279005 });
    if (container.status !== 'FINISHED') return metaError('The media is not ready for publishing, please wait for a moment', 9007, { error_subcode: 2207027 });
    container.status = 'PUBLISHED';
    const id = newId();
    const post: ThreadsFakePost = {
      id,
      container: container.id,
      media_type: container.params.media_type === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : container.params.media_type === 'TEXT' ? 'TEXT_POST' : container.params.media_type,
      text: container.params.text ?? '',
      reply_to_id: container.params.reply_to_id ?? null,
      children: (container.params.children ?? '').split(',').filter(Boolean),
      timestamp: nowStamp(),
      permalink: `https://www.threads.net/@${user.username}/post/${id.slice(-11)}`,
      username: user.username,
      hide_status: 'NOT_HUSHED',
      insights: { views: 0, likes: 0, replies: 0, reposts: 0, quotes: 0, shares: 0 },
    };
    posts.push(post);
    const parent = posts.find((item) => item.id === post.reply_to_id);
    if (parent) parent.insights.replies += 1;
    return { json: { id } };
  }));

  const list = (replies: boolean): FakeHandler => authed((request) => {
    if (!ownUser(request)) return metaError('Unsupported get request.', 100, { error_subcode: 33 });
    const fields = (request.query.get('fields') ?? 'id').split(',');
    const limit = Number(request.query.get('limit') ?? 25);
    const chosen = [...posts].reverse().filter((post) => post.username === user.username && (post.reply_to_id !== null) === replies).slice(0, limit);
    const data = chosen.map((post) => {
      const view: Record<string, unknown> = { id: post.id, text: post.text, permalink: post.permalink, media_type: post.media_type, timestamp: post.timestamp };
      if (post.media_type === 'IMAGE') view.media_url = `${server.url}/cdn/${post.id}.jpg`;
      if (post.media_type === 'VIDEO') view.thumbnail_url = `${server.url}/cdn/${post.id}-thumb.jpg`;
      if (post.reply_to_id) view.replied_to = { id: post.reply_to_id };
      return Object.fromEntries(Object.entries(view).filter(([key]) => key === 'id' || fields.includes(key)));
    });
    return { json: { data, paging: { cursors: { before: 'BEFORE', after: 'AFTER' } } } };
  });
  server.on('GET', '/v1.0/*/threads', list(false));

  /** The replies under one of the account's posts: every depth (conversation) or the top level (replies), Meta's fields. */
  const repliesUnder = (topLevel: boolean): FakeHandler => (request) => {
    const refused = lacks(request, 'threads_read_replies');
    if (refused) return refused;
    const post = posts.find((item) => item.id === request.path.split('/')[2]);
    if (!post) return metaError(`Object with ID '${request.path.split('/')[2]}' does not exist`, 100, { error_subcode: 33 });
    if (rootOf(post).username !== user.username) return metaError('Unsupported get request. The replies of another person\'s post cannot be read.', 100, { error_subcode: 33 });
    const fields = (request.query.get('fields') ?? 'id').split(',');
    const under = posts.filter((item) => item !== post && (topLevel ? item.reply_to_id === post.id : rootOf(item) === post));
    const ordered = request.query.get('reverse') === 'false' ? under : [...under].reverse();
    const after = Number(request.query.get('after') ?? 0);
    const page = ordered.slice(after, after + 2);
    const data = page.map((reply) => {
      const view: Record<string, unknown> = {
        id: reply.id,
        text: reply.text,
        username: reply.username,
        permalink: reply.permalink,
        timestamp: reply.timestamp,
        media_type: reply.media_type,
        replied_to: { id: reply.reply_to_id },
        root_post: { id: post.id },
        is_reply: true,
        is_reply_owned_by_me: reply.username === user.username,
        hide_status: reply.hide_status,
      };
      return Object.fromEntries(Object.entries(view).filter(([key]) => key === 'id' || fields.includes(key)));
    });
    const more = after + page.length < ordered.length;
    return { json: { data, paging: { cursors: { before: String(after), after: String(after + page.length) }, ...(more ? { next: `${server.url}${request.path}?after=${after + page.length}` } : {}) } } };
  };
  const ownReplies = list(true);
  const mediaReplies = authed(repliesUnder(true));
  server.on('GET', '/v1.0/*/replies', (request) => (ownUser(request) ? ownReplies(request) : mediaReplies(request)));
  server.on('GET', '/v1.0/*/conversation', authed(repliesUnder(false)));

  server.on('POST', '/v1.0/*/manage_reply', authed((request) => {
    const refused = lacks(request, 'threads_manage_replies');
    if (refused) return refused;
    const reply = posts.find((item) => item.id === request.path.split('/')[2]);
    if (!reply || reply.reply_to_id === null) return metaError(`Object with ID '${request.path.split('/')[2]}' does not exist or is not a reply`, 100, { error_subcode: 33 });
    const parent = posts.find((item) => item.id === reply.reply_to_id)!;
    if (parent.username !== user.username || parent.reply_to_id !== null) return metaError('Only top-level replies to your own posts can be hidden', 100);
    const hide = param(request, 'hide');
    if (hide !== 'true' && hide !== 'false') return metaError('Param hide must be a boolean', 100);
    reply.hide_status = hide === 'true' ? 'HIDDEN' : 'UNHUSHED';
    return { json: { success: true } };
  }));

  server.on('DELETE', '/v1.0/*', authed((request) => {
    const refused = lacks(request, 'threads_delete');
    if (refused) return refused;
    const id = request.path.split('/')[2];
    const post = posts.find((item) => item.id === id);
    if (!post) return metaError(`Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`, 100, { error_subcode: 33 });
    // Graph's permissions error (code 200), not "does not exist": a post of someone else is never taken for one already gone.
    if (post.username !== user.username) return metaError('(#200) Permissions error: only the author can delete a post', 200);
    posts.splice(posts.indexOf(post), 1);
    deleted.push(post);
    return { json: { success: true, deleted_id: id } };
  }));

  server.on('GET', '/v1.0/*/threads_insights', authed((request) => {
    if (!ownUser(request)) return metaError('Unsupported get request.', 100, { error_subcode: 33 });
    const metrics = (request.query.get('metric') ?? '').split(',');
    const known = ['views', 'likes', 'replies', 'reposts', 'quotes', 'clicks', 'followers_count'];
    const unknown = metrics.filter((metric) => !known.includes(metric));
    if (metrics.length === 0 || unknown.length > 0) return metaError(`(#100) metric[0] must be one of the following values: ${known.join(', ')}`, 100);
    const since = Number(request.query.get('since') ?? 0);
    if (request.query.has('since') && since < 1712991600) return metaError('(#100) since cannot be before 1712991600', 100);
    const sum = (key: keyof ThreadsFakePost['insights']) => posts.reduce((total, post) => total + post.insights[key], 0);
    const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10) + 'T07:00:00+0000';
    const data = metrics.map((name) =>
      name === 'views'
        ? { name, period: 'day', values: [{ value: 3, end_time: day(1) }, { value: sum('views'), end_time: day(0) }], title: 'views', id: `${user.id}/insights/views/day` }
        : { name, period: 'day', total_value: { value: name === 'followers_count' ? user.followers_count : name === 'clicks' ? 0 : sum(name as keyof ThreadsFakePost['insights']) }, title: name, id: `${user.id}/insights/${name}/day` },
    );
    return { json: { data, paging: {} } };
  }));

  server.on('GET', '/v1.0/*/insights', authed((request) => {
    const post = posts.find((item) => item.id === request.path.split('/')[2]);
    if (!post) return metaError('Object does not exist', 100, { error_subcode: 33 });
    const metrics = (request.query.get('metric') ?? '').split(',');
    const known = ['views', 'likes', 'replies', 'reposts', 'quotes', 'shares'];
    if (metrics.some((metric) => !known.includes(metric))) return metaError(`(#100) metric must be one of ${known.join(', ')}`, 100);
    return { json: { data: metrics.map((name) => ({ name, period: 'lifetime', values: [{ value: post.insights[name as keyof ThreadsFakePost['insights']] }], title: name, id: `${post.id}/insights/${name}/lifetime` })) } };
  }));

  return {
    server,
    url: server.url,
    oauth,
    user,
    containers,
    posts,
    deleted,
    downloads,
    setVideoChecks(n: number) {
      videoChecks = n;
    },
    failNextVideo(errorMessage: string) {
      videoErrors.push(errorMessage);
    },
    addReply(parentId: string, text: string, options: { username?: string; createdAt?: Date } = {}) {
      const parent = posts.find((item) => item.id === parentId);
      if (!parent) throw new Error(`no post ${parentId} to reply to`);
      const id = newId();
      const username = options.username ?? 'bob.threads';
      const reply: ThreadsFakePost = {
        id,
        container: 'none',
        media_type: 'TEXT_POST',
        text,
        reply_to_id: parentId,
        children: [],
        timestamp: nowStamp(options.createdAt),
        permalink: `https://www.threads.net/@${username}/post/${id.slice(-11)}`,
        username,
        hide_status: 'NOT_HUSHED',
        insights: { views: 0, likes: 0, replies: 0, reposts: 0, quotes: 0, shares: 0 },
      };
      posts.push(reply);
      return reply;
    },
    channelAuth(permissions?: string[]): ChannelAuth {
      return { accessToken: issueLongLived(permissions), expiresAt: new Date(Date.now() + 5183944_000), internalId: user.id, data: {} };
    },
    close: () => server.close(),
  };
}
