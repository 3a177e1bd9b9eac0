// A fake Meta platform for the facebook, instagram and instagram-standalone providers, on one real HTTP server (127.0.0.1):
// the Facebook Login dialog and token exchanges, Instagram Login (instagram.com, api.instagram.com, graph.instagram.com token
// endpoints), and the Graph API for Pages and Instagram professional accounts. Every host of the three providers points here.
//
//   const fake = await startFacebookFake();
//   fake.endpoints.facebook / .instagram / ['instagram-standalone']   endpoint settings for a provider context or SOCIAL_ENDPOINTS
//   fake.pageAuth('101'), fake.instagramAuth(), fake.standaloneAuth()  ChannelAuth of a connected channel
//   fake.posts, photos, videos, comments, containers, media, fetches  what was created and which media URLs were downloaded
//
// Refused like Meta refuses them (Meta's error body {error: {message, type, code, error_subcode, fbtrace_id}}): any other Graph
// version than the fake's; a missing, unknown, expired (190/463) or revoked (190/460) token; a user token where a Page token is
// needed; POST on the code exchange (GET only), a wrong client secret, code or redirect_uri; fields that were not asked for are
// not answered; /feed without message, link or attachment, attached_media that is not an unpublished photo of the Page; a photo
// or video URL that cannot be downloaded (324 / video status error); an Instagram image that is not a JPEG (36001/2207005) or
// cannot be fetched (9004/2207052); a video container as media_type VIDEO outside a carousel; a carousel of fewer than 2 or more
// than 10 children, or with children not FINISHED; collaborators on a story or a carousel item, more than 3; trial_params off a
// Reel; audio_configuration off a Reel or on Instagram Login; media_publish of a container not FINISHED (9007/2207027) or already
// published, over the daily limit (9/2207042); deprecated insight metrics (page_impressions, page_fans, impressions, plays),
// account metrics without metric_type=total_value where Meta needs it, a range over 30 days for account insights; refresh of an
// Instagram token younger than 24 hours.
// Every Graph request (and Instagram Login's access_token/refresh_access_token) is first checked against Meta's own node and
// edge specs (test/contracts/meta/contract.ts, from facebook-business-sdk-codegen api_specs, Graph v25.0): an operation the
// node type lacks, an undeclared or mistyped parameter, a missing required one, or a `fields` name the answered type lacks is
// refused with Graph's 400 error and recorded in `contractViolations`. The Facebook Login OAuth endpoints are not in the specs.
// References (read 2026-11-27): developers.facebook.com/docs/graph-api/
// guides/error-handling, /docs/facebook-login/guides/access-tokens, /docs/pages-api/posts, /docs/graph-api/reference/page/feed/,
// /page/photos/, /page/videos/, /object/comments/ (order, created_time, from), /docs/instagram-platform/content-publishing,
// .../ig-user/media (STORIES with image_url or video_url), .../ig-container (status_code), .../ig-media (timestamp),
// .../ig-comment (timestamp, from), .../ig-user/content_publishing_limit, /docs/platforminsights/page.
import { randomBytes } from 'node:crypto';
import type { ChannelAuth } from '../../providers/types.js';
import { startFakeServer, type FakeHandler, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { createOAuthAuthority, OAuthRefusal, bearerOf } from './oauth-authority.js';
import { createGraphModel, type GraphModel } from './facebook-graph.js';
import { registerMetaComments } from './meta-comments.js';
import { isRootEdge, metaContractRefusal, type GraphRequestShape } from '../contracts/meta/contract.js';

export interface FakeInstagramAccount {
  id: string;
  username: string;
  name: string;
  profile_picture_url: string;
  followers_count: number;
}

export interface FakePage {
  id: string;
  name: string;
  username?: string;
  picture: string;
  tasks: string[];
  instagram?: FakeInstagramAccount;
}

export type TokenKind = 'user-short' | 'user' | 'page' | 'ig-short' | 'ig';

export interface FakeToken {
  kind: TokenKind;
  /** User id, Page id or Instagram user id. */
  subject: string;
  issuedAt: number;
  expiresAt: number;
  revoked: boolean;
  /** Permissions the user was asked for at login (Facebook user and Instagram Login tokens). */
  scopes: string[];
}

const DAY = 86_400_000;
const trace = () => `A${randomBytes(8).toString('base64url')}`;

/** Meta's error body. */
export function metaError(code: number, message: string, options: { subcode?: number; status?: number; headers?: Record<string, string>; type?: string } = {}): FakeReply {
  return {
    status: options.status ?? 400,
    headers: options.headers,
    json: { error: { message, type: options.type ?? 'OAuthException', code, ...(options.subcode ? { error_subcode: options.subcode } : {}), is_transient: false, fbtrace_id: trace() } },
  };
}

/** A business-use-case rate limit (80001) whose reset Meta gives only in X-Business-Use-Case-Usage, in minutes. */
export function rateLimited(minutes: number): FakeReply {
  return metaError(80001, 'There have been too many calls to this Page account. Wait a bit and try again.', {
    headers: { 'x-business-use-case-usage': JSON.stringify({ '101': [{ type: 'pages', call_count: 100, total_cputime: 30, total_time: 40, estimated_time_to_regain_access: minutes }] }) },
  });
}

export type FacebookFake = Awaited<ReturnType<typeof startFacebookFake>>;

export async function startFacebookFake(options: { version?: string } = {}) {
  const server: FakeServer = await startFakeServer();
  const { url } = server;
  const version = options.version ?? 'v25.0';
  const app = { id: 'fb-app-id', secret: 'fb-app-secret' };
  const igApp = { id: 'ig-app-id', secret: 'ig-app-secret' };
  const facebookLogin = createOAuthAuthority({ clientId: app.id, clientSecret: app.secret, noRefreshTokens: true });
  const instagramLogin = createOAuthAuthority({ clientId: igApp.id, clientSecret: igApp.secret, noRefreshTokens: true });
  const user = { id: '5550001', name: 'Fiona Fake', picture: `${url}/pictures/fiona.jpg` };
  const pages: FakePage[] = [
    {
      id: '101',
      name: 'Herald Bakery',
      username: 'heraldbakery',
      picture: `${url}/pictures/page-101.jpg`,
      tasks: ['ANALYZE', 'ADVERTISE', 'MODERATE', 'CREATE_CONTENT', 'MANAGE'],
      instagram: { id: '17841400000000101', username: 'herald.bakery', name: 'Herald Bakery', profile_picture_url: `${url}/pictures/ig-101.jpg`, followers_count: 1200 },
    },
    { id: '102', name: 'Herald Side Project', picture: `${url}/pictures/page-102.jpg`, tasks: ['ANALYZE', 'CREATE_CONTENT', 'MODERATE'] },
    { id: '103', name: 'Read-only Page', picture: `${url}/pictures/page-103.jpg`, tasks: ['ANALYZE'] },
  ];
  const solo = { appScopedId: '900', userId: '17841400000000900', username: 'herald.solo', name: 'Herald Solo', profile_picture_url: `${url}/pictures/solo.jpg`, followers_count: 310 };
  const declined = new Set<string>();
  const tokens = new Map<string, FakeToken>();
  const pageTokens = new Map<string, string>();

  const issue = (kind: TokenKind, subject: string, lifetimeMs: number, scopes: string[] = []) => {
    const value = `${kind}-${randomBytes(12).toString('hex')}`;
    tokens.set(value, { kind, subject, issuedAt: Date.now(), expiresAt: Date.now() + lifetimeMs, revoked: false, scopes });
    return value;
  };
  const scopesOf = (scope: string | undefined) => (scope ?? '').split(/[,\s]+/).filter(Boolean);
  const pageToken = (pageId: string) => {
    const current = pageTokens.get(pageId);
    if (current && !tokens.get(current)?.revoked) return current;
    // Page tokens that come from a long-lived user token do not expire.
    const fresh = issue('page', pageId, 3650 * DAY);
    pageTokens.set(pageId, fresh);
    return fresh;
  };

  const tokenOf = (request: RecordedRequest) => {
    return bearerOf(request.headers.authorization) ?? request.query.get('access_token') ?? undefined;
  };

  /** The caller's token, or Meta's refusal. */
  function authenticate(request: RecordedRequest): FakeToken | FakeReply {
    const value = tokenOf(request);
    if (!value) return metaError(2500, 'An active access token must be used to query information about the current user.');
    const entry = tokens.get(value);
    if (!entry) return metaError(190, 'Invalid OAuth access token - Cannot parse access token', { status: 400 });
    if (entry.revoked) return metaError(190, 'Error validating access token: The session has been invalidated because the user changed their password.', { subcode: 460 });
    if (entry.expiresAt < Date.now()) return metaError(190, `Error validating access token: Session has expired on ${new Date(entry.expiresAt).toUTCString()}.`, { subcode: 463 });
    return entry;
  }

  const isReply = (value: unknown): value is FakeReply => typeof value === 'object' && value !== null && !('kind' in value);

  /** Requests Meta's contract refuses (test/contracts/meta/contract.ts): each is a bug of Herald, so the tests require none. */
  const contractViolations: string[] = [];
  /** Checks one request against the contract; Graph's refusal when it does not fit. */
  const checkContract = (request: RecordedRequest, shape: GraphRequestShape): FakeReply | undefined => {
    const refused = metaContractRefusal(shape);
    if (!refused) return undefined;
    contractViolations.push(...refused.problems.map((problem) => `${request.method} ${request.path} (${shape.node}): ${problem}`));
    return metaError(100, refused.message, { subcode: refused.subcode, type: refused.type });
  };

  /** A versioned Graph route: `/<version>/...`; the token is checked unless `open`, then the request against the contract. */
  const versioned =
    (handler: (request: RecordedRequest, token: FakeToken) => FakeReply | Promise<FakeReply>, open = false): FakeHandler =>
    async (request) => {
      const used = request.path.split('/')[1];
      if (used !== version) return metaError(2635, `You are calling Graph API ${used}; this fake serves ${version} only (graphVersion must come from the endpoint settings).`);
      if (open) return handler(request, undefined as unknown as FakeToken);
      const token = authenticate(request);
      if (isReply(token)) return token;
      const [id, edge] = request.path.split('/').slice(2).map(decodeURIComponent);
      // A node the fake does not hold is answered "does not exist" by its route; the root edges (ig_audio) have no node.
      const node = model.typeOf(id, token) ?? (edge === undefined && isRootEdge(id) ? '(root)' : undefined);
      const shape = node === '(root)' ? { method: request.method, node, id: '', edge: id, params: model.internals.paramsOf(request) } : node ? { method: request.method, node, id, edge, params: model.internals.paramsOf(request) } : undefined;
      return (shape && checkContract(request, shape)) ?? handler(request, token);
    };

  const model: GraphModel = createGraphModel({ url, pages, solo, user, pageToken, versioned, metaError });

  /** A consent dialog that approves at once and sends the browser back with a code. */
  const consent = (authority: typeof facebookLogin, platform: string) => (request: RecordedRequest): FakeReply => {
    try {
      const location = authority.approveQuery(request.query);
      return { status: 302, headers: { location } };
    } catch (error) {
      return { status: 400, body: `${platform} refused: ${(error as Error).message}` };
    }
  };

  server.on('GET', '/*/dialog/oauth', versioned(consent(facebookLogin, 'Facebook Login'), true));

  server.on(
    'GET',
    '/*/oauth/access_token',
    versioned((request) => {
      const query = request.query;
      try {
        facebookLogin.checkClient(query.get('client_id') ?? undefined, query.get('client_secret') ?? undefined);
      } catch {
        return metaError(1, 'Error validating client secret.');
      }
      if (query.get('grant_type') === 'fb_exchange_token') {
        const exchanged = tokens.get(query.get('fb_exchange_token') ?? '');
        if (!exchanged || exchanged.expiresAt < Date.now() || !exchanged.kind.startsWith('user')) return metaError(190, 'Invalid OAuth access token - Cannot parse access token');
        return { json: { access_token: issue('user', exchanged.subject, 60 * DAY, exchanged.scopes), token_type: 'bearer', expires_in: 5_183_944 } };
      }
      let scope: string | undefined;
      try {
        ({ scope } = facebookLogin.redeemCode({ code: query.get('code') ?? undefined, redirectUri: query.get('redirect_uri') ?? undefined, clientId: query.get('client_id') ?? undefined }));
      } catch (error) {
        const refusal = error as OAuthRefusal;
        return metaError(100, refusal.description.includes('redirect_uri') ? 'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request' : 'This authorization code has been used.', { subcode: 36007 });
      }
      return { json: { access_token: issue('user-short', user.id, 2 * 3600_000, scopesOf(scope)), token_type: 'bearer', expires_in: 7200 } };
    }, true),
  );

  server.on(
    'GET',
    '/*/me/permissions',
    versioned((_request, token) => {
      if (!token.kind.startsWith('user')) return metaError(100, '(#100) Tried accessing nonexisting field (permissions)');
      return { json: { data: token.scopes.map((permission) => ({ permission, status: declined.has(permission) ? 'declined' : 'granted' })) } };
    }),
  );

  // Instagram Login: instagram.com dialog, api.instagram.com code exchange (form only), graph.instagram.com token endpoints.
  server.on('GET', '/oauth/authorize', consent(instagramLogin, 'Instagram Login'));

  const oauthError = (message: string): FakeReply => ({ status: 400, json: { error_type: 'OAuthException', code: 400, error_message: message } });

  server.on('POST', '/oauth/access_token', (request) => {
    const form = request.form;
    if (!form) return oauthError('Missing required parameter: client_id (send the parameters as a form)');
    try {
      instagramLogin.checkClient(form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined);
    } catch {
      return oauthError('Invalid platform app');
    }
    if (form.get('grant_type') !== 'authorization_code') return oauthError('Invalid grant_type');
    let scope: string | undefined;
    try {
      ({ scope } = instagramLogin.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, clientId: form.get('client_id') ?? undefined }));
    } catch {
      return oauthError('Matching code was not found or was already used');
    }
    const permissions = scopesOf(scope).filter((name) => !declined.has(name));
    return { json: { data: [{ access_token: issue('ig-short', solo.userId, 3600_000, permissions), user_id: solo.appScopedId, permissions: permissions.join(',') }] } };
  });

  server.on('GET', '/access_token', (request) => {
    const refused = checkContract(request, { method: 'GET', node: 'IGAccessTokenForIGOnlyAPI', id: 'access_token', params: Object.fromEntries(request.query) });
    if (refused) return refused;
    if (request.query.get('grant_type') !== 'ig_exchange_token') return metaError(100, 'Unsupported grant_type');
    if (request.query.get('client_secret') !== igApp.secret) return metaError(101, 'Error validating application. Invalid application secret.');
    const short = tokens.get(request.query.get('access_token') ?? '');
    if (!short || short.kind !== 'ig-short' || short.expiresAt < Date.now()) return metaError(190, 'Invalid OAuth access token - Cannot parse access token');
    return { json: { access_token: issue('ig', short.subject, 60 * DAY, short.scopes), token_type: 'bearer', expires_in: 5_184_000 } };
  });

  server.on('GET', '/refresh_access_token', (request) => {
    const refused = checkContract(request, { method: 'GET', node: 'IGRefreshAccessTokenForIGOnlyAPI', id: 'refresh_access_token', params: Object.fromEntries(request.query) });
    if (refused) return refused;
    if (request.query.get('grant_type') !== 'ig_refresh_token') return metaError(100, 'Unsupported grant_type');
    const current = tokens.get(request.query.get('access_token') ?? '');
    if (!current || current.kind !== 'ig') return metaError(190, 'Invalid OAuth access token - Cannot parse access token');
    if (current.revoked || current.expiresAt < Date.now()) return metaError(190, 'Error validating access token: Session has expired.', { subcode: 463 });
    if (Date.now() - current.issuedAt < DAY) return metaError(100, 'The access token must be at least 24 hours old to be refreshed.');
    return { json: { access_token: issue('ig', current.subject, 60 * DAY, current.scopes), token_type: 'bearer', expires_in: 5_184_000 } };
  });

  // Profile and Page pictures, so the console's picker shows them.
  server.on('GET', '/pictures/*', (request) => {
    const hue = [...request.path].reduce((sum, character) => (sum * 31 + character.charCodeAt(0)) % 360, 0);
    return {
      headers: { 'content-type': 'image/svg+xml' },
      body: `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="32" fill="hsl(${hue},60%,55%)"/></svg>`,
    };
  });

  model.register(server);
  const moderation = registerMetaComments(server, { model, pages, versioned, metaError });

  const endpoints = {
    facebook: { dialog: url, graph: url, web: url, graphVersion: version },
    instagram: { dialog: url, graph: url, graphVersion: version },
    'instagram-standalone': { authorize: url, token: url, graph: url, graphVersion: version },
  };

  return {
    server,
    url,
    version,
    app,
    igApp,
    user,
    pages,
    solo,
    endpoints,
    tokens,
    contractViolations,
    ...model.state,
    /** Comments by people, permissions of the Page tokens, and what was deleted (test/fakes/meta-comments.ts). */
    addComment: moderation.addComment,
    pageGrants: moderation.pageGrants,
    setCommentPageSize: moderation.setCommentPageSize,
    deletedNodes: moderation.deleted,
    /** Herald's environment for the three providers: client ids and secrets, SOCIAL_ENDPOINTS. */
    environment: (): Record<string, string> => ({
      FACEBOOK_CLIENT_ID: app.id,
      FACEBOOK_CLIENT_SECRET: app.secret,
      INSTAGRAM_CLIENT_ID: app.id,
      INSTAGRAM_CLIENT_SECRET: app.secret,
      INSTAGRAM_STANDALONE_CLIENT_ID: igApp.id,
      INSTAGRAM_STANDALONE_CLIENT_SECRET: igApp.secret,
      SOCIAL_ENDPOINTS: JSON.stringify(endpoints),
    }),
    pageToken,
    /** A long-lived Facebook user token, as the login leaves it. */
    userToken: () => issue('user', user.id, 60 * DAY),
    pageAuth: (pageId = '101'): ChannelAuth => ({ accessToken: pageToken(pageId), internalId: pageId, data: {} }),
    instagramAuth: (): ChannelAuth => ({ accessToken: pageToken('101'), internalId: pages[0].instagram!.id, data: { pageId: '101' } }),
    standaloneAuth: (): ChannelAuth => {
      const accessToken = issue('ig', solo.userId, 60 * DAY, ['instagram_business_basic', 'instagram_business_content_publish', 'instagram_business_manage_comments', 'instagram_business_manage_insights']);
      return { accessToken, internalId: solo.userId, data: {}, expiresAt: new Date(tokens.get(accessToken)!.expiresAt) };
    },
    /** Permissions the next logins do not grant (add to decline, delete to grant again). */
    declined,
    /** Moves every token's issue and expiry time `ms` into the past (a 60-day token becomes old enough to refresh, or expires). */
    ageTokens(ms: number) {
      for (const entry of tokens.values()) {
        entry.issuedAt -= ms;
        entry.expiresAt -= ms;
      }
    },
    revokeTokens() {
      for (const entry of tokens.values()) entry.revoked = true;
    },
    close: () => server.close(),
  };
}
