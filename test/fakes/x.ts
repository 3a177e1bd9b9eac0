// A fake X API v2 (and its OAuth 2.0 authorization server) on 127.0.0.1. Every API request is first checked against X's own
// contract (test/contracts/x-openapi.ts: the OpenAPI document of https://api.x.com/2/openapi.json, version 2.167 retrieved
// 2026-08-22, with the documentation's `tweet.fields`/`referenced_tweets` where the pages and the document disagree): a request
// that does not match is answered 400 like X and recorded in `contractViolations`, which the tests assert stays empty.
// Behaviour beyond the schemas follows https://docs.x.com/x-api/posts/create-post, /x-api/users/get-posts,
// /x-api/users/get-my-user, /x-api/media/quickstart/media-upload-chunked and /x-api/fundamentals/data-dictionary (2026-07-24).
//
//   const fake = await startXFake();                    // endpoints: { web: fake.url, api: fake.url }
//   auth: fake.channelAuth()                             // a connected channel's tokens (no HTTP call)
//   fake.posts / fake.media / fake.oauth                 // what X holds; fake.server.requests = every request received
//   fake.setProcessingChecks(n)                          // videos/GIFs finalized afterwards answer in_progress on their first n STATUS checks
//   fake.communities.add('1493446837214187523')          // communities the user belongs to
//   fake.subscriptionType = 'Premium'                    // users/me subscription_type; anything but None posts 25,000 weighted characters
//   fake.seedPost('text', { createdAt })                 // a post the account made earlier (not through the API under test)
//   fake.answerAsOpenApi = true                          // post views name the reply link referenced_posts, as the OpenAPI document does
//
// OAuth: GET /i/oauth2/authorize approves at once (302 to redirect_uri with code and state; PKCE S256 required).
//   POST /2/oauth2/token (form) needs the app in HTTP Basic (a client_secret in the body is refused: X's confidential
//   clients authenticate with Basic); authorization_code checks redirect_uri and code_verifier; refresh_token rotates
//   (a refresh token works once). Errors: 400/401 {error, error_description}.
// API (Bearer access token, else 401 problem+json): GET /2/users/me; POST /2/media/upload (multipart media +
//   media_category; pictures only, ≤ 5 MB); POST /2/media/upload/initialize (JSON) → /{id}/append (multipart media +
//   segment_index, ≤ 5 MB a segment, not after finalize) → /{id}/finalize (segments 0..n-1 adding up to total_bytes);
//   GET /2/media/upload?command=STATUS&media_id; POST /2/media/metadata (alt text); POST /2/tweets (201; refuses unknown
//   fields, text over 280 weighted characters (25,000 for a subscriber), unknown/unfinished media, a video with other media,
//   an unknown reply target, a community the user is not in, and text the account posted in the last 24 hours with 403 like X:
//   X does not document how far back it compares, 24 hours is assumed); GET /2/tweets/:id;
//   GET /2/users/:id/tweets (newest first; text escaped and links shortened to t.co, as X answers, with tweet.fields=entities
//   each t.co link in entities.urls with its expanded_url).
// Replies and changes (2026-11-27; https://docs.x.com/x-api/posts/search/introduction, /x-api/posts/hide-replies/introduction,
//   developer.x.com …/manage-tweets/api-reference/delete-tweets-id, and the OpenAPI operations searchPostsRecent,
//   hidePostsReply, deletePosts): GET /2/tweets/search/recent (query `conversation_id:<id>` only; the last 7 days; newest
//   first, next_token paging; an app on the Free access level is answered 403 client-forbidden like X);
//   PUT /2/tweets/:id/hidden (needs tweet.moderate.write, else 403; only a reply in a conversation the account started);
//   DELETE /2/tweets/:id (the account's own posts only, 403 otherwise; an unknown id 404 resource-not-found).
//   fake.accessLevel = 'free'                            // recent search refused as on X's Free tier
//   fake.addReply(text, { inReplyTo, author? })         // someone else's reply (author: fake.others[n])
import { fileTypeFromBuffer } from 'file-type';
import twitterText from 'twitter-text';
import type { ChannelAuth } from '../../providers/types.js';
import { startFakeServer, multipartOf, type FakeHandler, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { contractProblems } from '../contracts/x-openapi.js';
import { addReplyRoutes } from './x-replies.js';
import { basicCredentials, createOAuthAuthority, OAuthRefusal, type OAuthAuthority, refusalReply } from './oauth-authority.js';

export interface XFakeMedia {
  id: string;
  kind: 'picture' | 'chunked';
  category: string;
  mediaType: string;
  totalBytes: number;
  segments: Map<number, Buffer>;
  finalized: boolean;
  /** STATUS checks still answering in_progress. */
  pendingChecks: number;
  failed?: string;
  alt?: string;
}

export interface XFakePost {
  id: string;
  text: string;
  media_ids: string[];
  in_reply_to: string | null;
  reply_settings: string | null;
  community_id: string | null;
  created_at: string;
  author_id: string;
  conversation_id: string;
  hidden: boolean;
  public_metrics: { impression_count: number; like_count: number; reply_count: number; repost_count: number; quote_count: number; bookmark_count: number };
}

export interface XFake {
  server: FakeServer;
  url: string;
  oauth: OAuthAuthority;
  user: { id: string; name: string; username: string; profile_image_url: string; followers_count: number; following_count: number };
  posts: XFakePost[];
  media: XFakeMedia[];
  communities: Set<string>;
  /** users/me `subscription_type`: None posts 280 weighted characters, a subscriber (Basic, Premium, PremiumPlus) 25,000. */
  subscriptionType: 'None' | 'Basic' | 'Premium' | 'PremiumPlus';
  /** Answers post views with the OpenAPI document's `referenced_posts` instead of the documented `referenced_tweets`. */
  answerAsOpenApi: boolean;
  /** The developer app's access level: 'free' has no recent search (403 client-forbidden), as on X. */
  accessLevel: 'free' | 'basic';
  /** Accounts other than the connected user, who reply to its posts. */
  others: { id: string; name: string; username: string }[];
  /** Someone else's reply (or the user's own, with author: fake.user) to a post. */
  addReply(text: string, options: { inReplyTo: string; author?: { id: string; name: string; username: string }; createdAt?: Date }): XFakePost;
  /** Requests that did not match X's contract (answered 400): a test expects none. */
  contractViolations: string[];
  /** Adds a post the account made earlier, outside the API under test. */
  seedPost(text: string, options: { createdAt: Date; inReplyTo?: string }): XFakePost;
  setProcessingChecks(n: number): void;
  /** Makes the processing of a finalized media fail with this message. */
  failProcessing(id: string, message: string): void;
  channelAuth(): ChannelAuth;
  /** Takes a scope back from every token issued so far (a channel connected before Herald asked for it). */
  dropScope(scope: string): void;
  /** Bytes of a chunked upload, segments in order. */
  bytesOf(id: string): Buffer;
  close(): Promise<void>;
}

const SEGMENT_LIMIT = 5 * 1024 * 1024;
const POST_FIELDS = new Set(['text', 'media', 'reply', 'reply_settings', 'community_id', 'share_with_followers', 'quote_tweet_id', 'poll', 'made_with_ai', 'paid_partnership', 'nullcast', 'for_super_followers_only', 'geo', 'card_uri', 'direct_message_deep_link', 'edit_options']);
const CATEGORIES = ['tweet_image', 'tweet_video', 'tweet_gif', 'dm_image', 'dm_video', 'dm_gif', 'subtitles'];
export const problem = (status: number, title: string, detail: string, type = 'about:blank'): FakeReply => ({ status, json: { title, detail, type, status } });
export const invalid = (detail: string) => ({ status: 400, json: { errors: [{ message: detail }], title: 'Invalid Request', detail: 'One or more parameters to your request was invalid.', type: 'https://api.twitter.com/2/problems/invalid-request' } });

async function multipart(request: RecordedRequest): Promise<FormData | undefined> {
  if (!String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) return undefined;
  return multipartOf(request);
}

/**
 * How X answers a post's text: entities escaped, every link shortened to a t.co link, each listed in `entities.urls` with the
 * URL as posted (`expanded_url`) and where it stands in the answered text (data dictionary: entities.urls start, end, url,
 * expanded_url, display_url).
 */
function asX(posted: string): { text: string; urls: { start: number; end: number; url: string; expanded_url: string; display_url: string }[] } {
  const urls: { start: number; end: number; url: string; expanded_url: string; display_url: string }[] = [];
  let text = '';
  let rest = posted.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  for (let link = /https?:\/\/\S+/.exec(rest); link; link = /https?:\/\/\S+/.exec(rest)) {
    text += rest.slice(0, link.index);
    const url = `https://t.co/${Math.random().toString(36).slice(2, 12)}`;
    const expanded = link[0].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
    urls.push({ start: [...text].length, end: [...text].length + url.length, url, expanded_url: expanded, display_url: expanded.replace(/^https?:\/\//, '').slice(0, 25) });
    text += url;
    rest = rest.slice(link.index + link[0].length);
  }
  return { text: text + rest, urls };
}

export async function startXFake(options: { clientId?: string; clientSecret?: string } = {}): Promise<XFake> {
  const server = await startFakeServer();
  const oauth = createOAuthAuthority({ clientId: options.clientId ?? 'x-client-id', clientSecret: options.clientSecret ?? 'x-client-secret', requirePkce: true, rotateRefreshTokens: true, expiresIn: 7200 });
  const user = { id: '1467726470533754880', name: 'Herald Test', username: 'heraldtest', profile_image_url: `${server.url}/profile_images/1/avatar_normal.jpg`, followers_count: 321, following_count: 12 };
  oauth.setSubject(user.id);
  const posts: XFakePost[] = [];
  const media: XFakeMedia[] = [];
  const communities = new Set<string>();
  let processingChecks = 0;
  let nextId = 1880000000000000000n;
  const newId = () => String(++nextId);
  const fake: { subscriptionType: XFake['subscriptionType']; answerAsOpenApi: boolean; accessLevel: XFake['accessLevel'] } = { subscriptionType: 'None', answerAsOpenApi: false, accessLevel: 'basic' };
  const others = [
    { id: '2244994945', name: 'Bob Builder', username: 'bob' },
    { id: '783214', name: 'Carol', username: 'carol' },
  ];
  // Scopes granted to each access token (and carried by its refresh token), for the endpoints that need one more than posting.
  const ALL_SCOPES = 'tweet.read tweet.write users.read media.write offline.access tweet.moderate.write';
  const tokenScopes = new Map<string, string>();
  const refreshScopes = new Map<string, string>();
  const grant = (issued: { accessToken: string; refreshToken?: string }, scope: string) => {
    tokenScopes.set(issued.accessToken, scope);
    if (issued.refreshToken) refreshScopes.set(issued.refreshToken, scope);
  };
  const scopesOf = (request: RecordedRequest) => (tokenScopes.get(String(request.headers.authorization ?? '').replace(/^Bearer /, '')) ?? '').split(' ');

  const contractViolations: string[] = [];
  // The OAuth pages document these two; X's OpenAPI document does not describe them.
  const outsideDocument = new Set(['GET /i/oauth2/authorize', 'POST /2/oauth2/token']);
  const route = (method: string, path: string, handler: FakeHandler): void =>
    server.on(method, path, async (request) => {
      if (outsideDocument.has(`${method} ${path}`)) return handler(request);

      const contentType = request.body.length > 0 ? String(request.headers['content-type'] ?? '') : '';
      const form = contentType.startsWith('multipart/form-data') ? await multipartOf(request) : undefined;
      const problems = contractProblems({ method, path: request.path, query: request.query, contentType, json: request.json, form });
      if (problems.length === 0) return handler(request);
      contractViolations.push(...problems);
      return invalid(problems.join('; '));
    });

  const authed = oauth.guard(() => problem(401, 'Unauthorized', 'Unauthorized'));
  const mediaOf = (id: string | undefined) => media.find((item) => item.id === id);
  const processingInfo = (item: XFakeMedia) => {
    if (item.failed) return { state: 'failed', progress_percent: 100, error: { code: 1, name: 'InvalidMedia', message: item.failed } };
    if (item.pendingChecks > 0) return { state: 'in_progress', check_after_secs: 1, progress_percent: 50 };
    return { state: 'succeeded', progress_percent: 100 };
  };
  const ready = (item: XFakeMedia) => item.finalized && !item.failed && (item.kind === 'picture' || item.pendingChecks === 0);

  route('GET', '/i/oauth2/authorize', (request) => {
    const query = request.query;
    try {
      if (query.get('response_type') !== 'code') throw new OAuthRefusal('invalid_request', 'response_type must be code');
      const scope = (query.get('scope') ?? '').split(' ');
      for (const needed of ['tweet.read', 'tweet.write', 'users.read', 'offline.access']) if (!scope.includes(needed)) throw new OAuthRefusal('invalid_request', `scope ${needed} missing`);
      const location = oauth.approveQuery(query);
      return { status: 302, headers: { location } };
    } catch (error) {
      return error instanceof OAuthRefusal ? refusalReply(error) : { status: 500 };
    }
  });

  route('POST', '/2/oauth2/token', (request) => {
    try {
      const form = request.form;
      if (!form) throw new OAuthRefusal('invalid_request', 'the body must be application/x-www-form-urlencoded');
      if (form.has('client_secret')) throw new OAuthRefusal('invalid_client', 'confidential clients authenticate with HTTP Basic, not client_secret in the body');
      const basic = basicCredentials(request.headers.authorization);
      oauth.checkClient(basic.id, basic.secret);
      let scope = '';
      const issued =
        form.get('grant_type') === 'authorization_code'
          ? (() => {
              if (!form.get('code_verifier')) throw new OAuthRefusal('invalid_request', 'code_verifier is required');
              const redeemed = oauth.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, codeVerifier: form.get('code_verifier') ?? undefined, clientId: basic.id });
              scope = redeemed.scope ?? '';
              return redeemed;
            })()
          : form.get('grant_type') === 'refresh_token'
            ? (() => {
                scope = refreshScopes.get(form.get('refresh_token') ?? '') ?? '';
                return oauth.redeemRefreshToken(form.get('refresh_token') ?? undefined);
              })()
            : (() => {
                throw new OAuthRefusal('unsupported_grant_type', `grant_type ${form.get('grant_type')} is not supported`);
              })();
      grant(issued, scope);
      return { json: { token_type: 'bearer', expires_in: issued.expiresIn, access_token: issued.accessToken, scope, refresh_token: issued.refreshToken } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return refusalReply(error);
      throw error;
    }
  });

  route('GET', '/2/users/me', authed((request) => {
    const fields = (request.query.get('user.fields') ?? '').split(',');
    return {
      json: {
        data: {
          id: user.id,
          name: user.name,
          username: user.username,
          ...(fields.includes('subscription_type') ? { subscription_type: fake.subscriptionType } : {}),
          ...(fields.includes('profile_image_url') ? { profile_image_url: user.profile_image_url } : {}),
          ...(fields.includes('public_metrics')
            ? { public_metrics: { followers_count: user.followers_count, following_count: user.following_count, post_count: posts.length, listed_count: 1, like_count: 0, media_count: 0 } }
            : {}),
        },
      },
    };
  }));

  route('POST', '/2/media/upload', authed(async (request) => {
    const form = await multipart(request);
    if (!form) return invalid('the body must be multipart/form-data (or JSON)');
    const unknown = [...form.keys()].filter((key) => !['media', 'media_category', 'additional_owners'].includes(key));
    if (unknown.length > 0) return invalid(`unknown field(s): ${unknown.join(', ')}`);
    const file = form.get('media');
    const category = String(form.get('media_category') ?? '');
    if (!file || typeof file === 'string') return invalid('media is required');
    if (!CATEGORIES.includes(category)) return invalid(`media_category must be one of ${CATEGORIES.join(', ')}`);
    const bytes = Buffer.from(await file.arrayBuffer());
    const type = (await fileTypeFromBuffer(bytes))?.mime ?? 'unknown';
    if (!['image/jpeg', 'image/png', 'image/webp', 'image/bmp', 'image/tiff'].includes(type)) return invalid(`one-shot upload takes pictures only (got ${type}); use the chunked upload`);
    if (bytes.length > SEGMENT_LIMIT) return invalid('pictures are limited to 5 MB');
    const item: XFakeMedia = { id: newId(), kind: 'picture', category, mediaType: type, totalBytes: bytes.length, segments: new Map([[0, bytes]]), finalized: true, pendingChecks: 0 };
    media.push(item);
    return { json: { data: { id: item.id, media_key: `3_${item.id}`, size: bytes.length, expires_after_secs: 86400, image: { image_type: type, w: 1, h: 1 } } } };
  }));

  route('POST', '/2/media/upload/initialize', authed((request) => {
    const body = request.json;
    if (!body) return invalid('the body must be JSON');
    const unknown = Object.keys(body).filter((key) => !['media_type', 'total_bytes', 'media_category', 'additional_owners', 'shared'].includes(key));
    if (unknown.length > 0 || 'command' in body) return invalid(`unknown field(s): ${unknown.join(', ')}`);
    if (!['video/mp4', 'video/quicktime', 'video/webm', 'image/gif', 'image/jpeg', 'image/png', 'image/webp'].includes(body.media_type)) return invalid(`media_type ${body.media_type} is not supported`);
    if (!Number.isInteger(body.total_bytes) || body.total_bytes <= 0) return invalid('total_bytes must be a positive integer');
    if (!['tweet_video', 'tweet_gif', 'tweet_image', 'amplify_video'].includes(body.media_category)) return invalid('media_category is invalid');
    const item: XFakeMedia = { id: newId(), kind: 'chunked', category: body.media_category, mediaType: body.media_type, totalBytes: body.total_bytes, segments: new Map(), finalized: false, pendingChecks: 0 };
    media.push(item);
    return { json: { data: { id: item.id, media_key: `7_${item.id}`, expires_after_secs: 86399 } } };
  }));

  route('POST', '/2/media/upload/*/append', authed(async (request) => {
    const item = mediaOf(request.path.split('/')[4]);
    if (!item || item.kind !== 'chunked') return problem(404, 'Not Found Error', 'media id not found', 'https://api.twitter.com/2/problems/resource-not-found');
    if (item.finalized) return invalid('the upload was already finalized');
    const form = await multipart(request);
    const file = form?.get('media');
    const index = Number(form?.get('segment_index'));
    if (!form || !file || typeof file === 'string') return invalid('media is required');
    if (!Number.isInteger(index) || index < 0 || index > 999) return invalid('segment_index must be an integer from 0 to 999');
    const bytes = Buffer.from(await file.arrayBuffer());
    if (bytes.length > SEGMENT_LIMIT) return invalid('a segment is limited to 5 MB');
    item.segments.set(index, bytes);
    return { json: { data: { expires_at: Math.floor(Date.now() / 1000) + 86400 } } };
  }));

  route('POST', '/2/media/upload/*/finalize', authed((request) => {
    const item = mediaOf(request.path.split('/')[4]);
    if (!item || item.kind !== 'chunked') return problem(404, 'Not Found Error', 'media id not found', 'https://api.twitter.com/2/problems/resource-not-found');
    if (item.finalized) return invalid('the upload was already finalized');
    const indexes = [...item.segments.keys()].sort((a, b) => a - b);
    if (indexes.length === 0 || indexes.some((value, position) => value !== position)) return invalid('segments are missing: send segment_index 0..n-1');
    const size = [...item.segments.values()].reduce((sum, bytes) => sum + bytes.length, 0);
    if (size !== item.totalBytes) return invalid(`Segments do not add up to provided total file size (${size} of ${item.totalBytes})`);
    item.finalized = true;
    item.pendingChecks = item.category === 'tweet_image' ? 0 : processingChecks;
    const processing = item.category === 'tweet_image' ? {} : { processing_info: { state: 'pending', check_after_secs: 1 } };
    return { json: { data: { id: item.id, media_key: `7_${item.id}`, size, expires_after_secs: 86400, ...processing } } };
  }));

  route('GET', '/2/media/upload', authed((request) => {
    if (request.query.get('command') !== 'STATUS') return invalid('command must be STATUS');
    const item = mediaOf(request.query.get('media_id') ?? undefined);
    if (!item) return problem(404, 'Not Found Error', 'media id not found', 'https://api.twitter.com/2/problems/resource-not-found');
    if (!item.finalized) return invalid('the upload is not finalized');
    const processing_info = processingInfo(item);
    if (item.pendingChecks > 0) item.pendingChecks -= 1;
    return { json: { data: { id: item.id, media_key: `7_${item.id}`, processing_info } } };
  }));

  route('POST', '/2/media/metadata', authed((request) => {
    const item = mediaOf(request.json?.id);
    const text = request.json?.metadata?.alt_text?.text;
    if (!item) return invalid('id must be a media id you uploaded');
    if (typeof text !== 'string' || text.length > 1000) return invalid('metadata.alt_text.text must be a string of at most 1000 characters');
    item.alt = text;
    return { json: { data: { id: item.id, associated_metadata: { alt_text: { text } } } } };
  }));

  route('POST', '/2/tweets', authed((request) => {
    const body = request.json;
    if (!body || typeof body !== 'object') return invalid('the body must be JSON');
    const unknown = Object.keys(body).filter((key) => !POST_FIELDS.has(key));
    if (unknown.length > 0) return invalid(`The request body contains unknown field(s): ${unknown.join(', ')}`);
    const text = typeof body.text === 'string' ? body.text : '';
    const mediaIds: string[] = body.media?.media_ids ?? [];
    if (text.trim() === '' && mediaIds.length === 0) return invalid('text is required unless media is attached');
    const limit = fake.subscriptionType === 'None' ? 280 : 25_000;
    if (twitterText.parseTweet(text).weightedLength > limit) return problem(403, 'Forbidden', 'You are not permitted to perform this action.');
    if (mediaIds.length > 4) return invalid('media.media_ids must have at most 4 items');
    const attached = mediaIds.map(mediaOf);
    if (attached.some((item) => !item)) return invalid('Your media IDs are invalid.');
    if (attached.some((item) => !ready(item!))) return invalid('Your media IDs are invalid: the media is not finished processing.');
    if (attached.length > 1 && attached.some((item) => item!.category !== 'tweet_image')) return invalid('a video or GIF must be the only media of a post');
    if (body.reply_settings !== undefined && !['following', 'mentionedUsers', 'subscribers', 'verified'].includes(body.reply_settings)) return invalid(`reply_settings ${body.reply_settings} is invalid`);
    const inReplyTo = body.reply?.in_reply_to_tweet_id ?? null;
    if (inReplyTo && !posts.some((post) => post.id === inReplyTo)) return invalid('The post you are replying to does not exist or is not visible to you.');
    if (body.community_id !== undefined && (!/^\d{1,19}$/.test(body.community_id) || !communities.has(body.community_id))) return problem(403, 'Forbidden', 'You are not permitted to perform this action.');
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
    if (text.trim() !== '' && posts.some((post) => post.author_id === user.id && post.text === text && post.created_at > dayAgo)) return problem(403, 'Forbidden', 'You are not allowed to create a Tweet with duplicate content.');
    const id = newId();
    const post: XFakePost = {
      id,
      text,
      media_ids: mediaIds,
      in_reply_to: inReplyTo,
      reply_settings: body.reply_settings ?? null,
      community_id: body.community_id ?? null,
      created_at: new Date().toISOString(),
      author_id: user.id,
      conversation_id: inReplyTo ? posts.find((item) => item.id === inReplyTo)!.conversation_id : id,
      hidden: false,
      public_metrics: { impression_count: 0, like_count: 0, reply_count: 0, repost_count: 0, quote_count: 0, bookmark_count: 0 },
    };
    posts.push(post);
    const parent = posts.find((item) => item.id === inReplyTo);
    if (parent) parent.public_metrics.reply_count += 1;
    return { status: 201, json: { data: { id: post.id, text, edit_history_tweet_ids: [post.id] } } };
  }));

  const postView = (post: XFakePost, fields: string[]) => {
    const shown = asX(post.text);
    return {
      id: post.id,
      text: shown.text,
      edit_history_tweet_ids: [post.id],
      ...(fields.includes('entities') && shown.urls.length > 0 ? { entities: { urls: shown.urls } } : {}),
      ...(fields.includes('created_at') ? { created_at: post.created_at } : {}),
      ...(fields.includes('public_metrics') ? { public_metrics: post.public_metrics } : {}),
      ...(fields.includes('referenced_tweets') && post.in_reply_to ? { [fake.answerAsOpenApi ? 'referenced_posts' : 'referenced_tweets']: [{ type: 'replied_to', id: post.in_reply_to }] } : {}),
      ...(post.media_ids.length > 0 ? { attachments: { media_keys: post.media_ids.map((id) => `3_${id}`) } } : {}),
      ...(fields.includes('author_id') ? { author_id: post.author_id } : {}),
      ...(fields.includes('conversation_id') ? { conversation_id: post.conversation_id } : {}),
    };
  };

  route('GET', '/2/tweets/*', authed((request) => {
    const post = posts.find((item) => item.id === request.path.split('/')[3]);
    const fields = (request.query.get('tweet.fields') ?? '').split(',');
    if (!post) return { json: { errors: [{ value: request.path.split('/')[3], detail: 'Could not find tweet.', title: 'Not Found Error', type: 'https://api.twitter.com/2/problems/resource-not-found' }] } };
    return { json: { data: postView(post, fields) } };
  }));

  route('GET', '/2/users/*/tweets', authed((request) => {
    if (request.path.split('/')[3] !== user.id) return problem(404, 'Not Found Error', 'Could not find user');
    const max = Number(request.query.get('max_results') ?? 10);
    if (!Number.isInteger(max) || max < 5 || max > 100) return invalid('max_results must be between 5 and 100');
    const exclude = (request.query.get('exclude') ?? '').split(',');
    const since = request.query.get('start_time');
    const fields = (request.query.get('tweet.fields') ?? '').split(',');
    const matching = [...posts].reverse().filter((post) => post.author_id === user.id && !(exclude.includes('replies') && post.in_reply_to) && !(since && Date.parse(post.created_at) < Date.parse(since)));
    const list = matching.slice(0, max);
    const withMedia = (request.query.get('expansions') ?? '').includes('attachments.media_keys');
    const includes = withMedia ? { media: list.flatMap((post) => post.media_ids.map((id) => ({ media_key: `3_${id}`, type: 'photo', url: `${server.url}/media/${id}.jpg` }))) } : undefined;
    // One page only: a longer answer says there is more with a next_token, as X does.
    const meta = { result_count: list.length, ...(list.length > 0 ? { newest_id: list[0].id, oldest_id: list.at(-1)!.id } : {}), ...(matching.length > max ? { next_token: 'fake-next-page' } : {}) };
    return { json: { data: list.map((post) => postView(post, fields)), ...(includes ? { includes } : {}), meta } };
  }));

  // Replies (recent search), hiding and deleting: ./x-replies.ts.
  addReplyRoutes({ route, authed, problem, invalid, posts, user, others, serverUrl: server.url, postView, accessLevel: () => fake.accessLevel, scopesOf });

  return Object.assign(fake, {
    server,
    url: server.url,
    oauth,
    user,
    posts,
    media,
    communities,
    contractViolations,
    others,
    seedPost(text: string, options: { createdAt: Date; inReplyTo?: string }) {
      const post: XFakePost = {
        id: newId(),
        text,
        media_ids: [],
        in_reply_to: options.inReplyTo ?? null,
        reply_settings: null,
        community_id: null,
        created_at: options.createdAt.toISOString(),
        author_id: user.id,
        conversation_id: '',
        hidden: false,
        public_metrics: { impression_count: 0, like_count: 0, reply_count: 0, repost_count: 0, quote_count: 0, bookmark_count: 0 },
      };
      post.conversation_id = (options.inReplyTo && posts.find((item) => item.id === options.inReplyTo)?.conversation_id) || post.id;
      posts.push(post);
      posts.sort((a, b) => a.created_at.localeCompare(b.created_at));
      return post;
    },
    addReply(text: string, options: { inReplyTo: string; author?: { id: string; name: string; username: string }; createdAt?: Date }) {
      const parent = posts.find((item) => item.id === options.inReplyTo);
      if (!parent) throw new Error(`no post ${options.inReplyTo} to reply to`);
      const author = options.author ?? others[0];
      const post: XFakePost = {
        id: newId(),
        text,
        media_ids: [],
        in_reply_to: parent.id,
        reply_settings: null,
        community_id: null,
        created_at: (options.createdAt ?? new Date()).toISOString(),
        author_id: author.id,
        conversation_id: parent.conversation_id,
        hidden: false,
        public_metrics: { impression_count: 0, like_count: 0, reply_count: 0, repost_count: 0, quote_count: 0, bookmark_count: 0 },
      };
      posts.push(post);
      posts.sort((a, b) => a.created_at.localeCompare(b.created_at));
      parent.public_metrics.reply_count += 1;
      return post;
    },

    setProcessingChecks(n: number) {
      processingChecks = n;
    },
    failProcessing(id: string, message: string) {
      const item = mediaOf(id);
      if (item) item.failed = message;
    },
    dropScope(scope: string) {
      for (const map of [tokenScopes, refreshScopes]) for (const [token, scopes] of map) map.set(token, scopes.split(' ').filter((item) => item !== scope).join(' '));
    },
    channelAuth(): ChannelAuth {
      const issued = oauth.issue(user.id);
      grant(issued, ALL_SCOPES);
      return { accessToken: issued.accessToken, refreshToken: issued.refreshToken, expiresAt: new Date(Date.now() + issued.expiresIn * 1000), internalId: user.id, data: { username: user.username } };
    },
    bytesOf(id: string) {
      const item = mediaOf(id);
      return Buffer.concat([...(item?.segments ?? new Map()).entries()].sort(([a], [b]) => a - b).map(([, bytes]) => bytes));
    },
    close: () => server.close(),
  });
}
