// A fake LinkedIn (OAuth, OpenID userinfo, Profile, Posts, Images, Videos, Documents, Comments, organization ACLs and
// statistics) on 127.0.0.1, built from the documented request and response shapes, refusing what LinkedIn refuses.
// One file over 400 lines on purpose: both LinkedIn providers talk to this one API surface, and its parts share the token,
// permission and asset bookkeeping.
//
//   const fake = await startLinkedinFake();               // endpoints: fake.endpoints (oauth, api, web, linkedinVersion)
//   fake.channelAuth('member' | 'page')                    // a stored channel's auth with a fresh token (no HTTP call)
//   fake.posts / fake.comments / fake.images / fake.videos / fake.documents      // what LinkedIn holds
//   fake.issueRefreshTokens = true                          // token answers include refresh_token (apps in LinkedIn's program)
//   fake.setProcessingPolls(n)                              // videos finalized afterwards answer PROCESSING n times
//   fake.authority.expireAccessTokens() / revokeAll()       // the next call answers 401
//   fake.server.failNext('POST', '/rest/posts', { status: 429, json: {...} })   // error injection
//
// OAuth: GET /oauth/v2/authorization approves at once (redirect with code and state; a scope the app lacks redirects with
// error=unauthorized_scope_error); POST /oauth/v2/accessToken takes a form with client_id and client_secret in the body
// (authorization_code with redirect_uri, or refresh_token) and answers {access_token, expires_in: 60 days, scope,
// refresh_token?, refresh_token_expires_in?}; errors are {error, error_description} (400, 401 invalid_client).
// /v2/userinfo needs the openid scope, /v2/me r_basicprofile. Every /rest call needs `LinkedIn-Version` (six digits; a sunset
// version answers 426) and `X-Restli-Protocol-Version: 2.0.0`; URNs in paths must be URL-encoded. A dead token answers 401
// {status, serviceErrorCode: 65601, code: EXPIRED_ACCESS_TOKEN}; a missing permission 403 ACCESS_DENIED.
// POST /rest/posts checks the author's rights, escaped little text (an unescaped reserved character is refused), 3000
// characters, visibility/distribution/lifecycleState, and that media are uploaded, owned by the author and (videos)
// AVAILABLE; documents need a title, multiImage 2–20 pictures. An identical post answers 422 DUPLICATE_POST. 201 + x-restli-id.
// Video parts must have exactly the size given; finalize needs the upload token and every part's ETag in order.
// Comments, replies, edits and deletions: ./linkedin-comments.ts (fake.addComment(postUrn, text, { actor?, parentComment? })).
// References (read 2026-11-27; LinkedIn publishes no machine-readable contract): learn.microsoft.com/linkedin/shared/authentication/
// authorization-code-flow (OAuth), .../marketing/versioning (LinkedIn-Version, sunset 426), .../community-management/shares/
// posts-api (commentary, DUPLICATE_POST, x-restli-id), .../shares/little-text-format (reserved characters, also in comment
// text), .../shares/comments-api (message.text, created.time), .../shares/images-api, videos-api, documents-api,
// .../organizations/organization-access-control-by-role, .../shared/api-guide/concepts/error-handling.
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal, bearerOf, type OAuthAuthority, refusalReply } from './oauth-authority.js';
import { startFakeServer, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';
import type { ChannelAuth } from '../../providers/types.js';
import { addCommentRoutes } from './linkedin-comments.js';

export const SIXTY_DAYS = 60 * 86_400;
const RESERVED = new Set('\\|{}@[]()<>#*_~');
const DAY_MS = 86_400_000;

export interface FakePost {
  urn: string;
  activity: string;
  author: string;
  commentary: string;
  /** The commentary with little text undone: what readers see. */
  text: string;
  content?: any;
  createdAt: number;
}

export interface FakeComment {
  urn: string;
  id: string;
  object: string;
  actor: string;
  /** The message as sent (little text) and as readers see it. */
  message: string;
  text: string;
  createdAt: number;
  /** A reply: the URN of the top-level comment it answers. */
  parentComment?: string;
}

interface Upload {
  urn: string;
  owner: string;
  bytes?: Buffer;
  mimeType?: string;
}

export interface FakeVideo extends Upload {
  size: number;
  uploadToken: string;
  parts: { firstByte: number; lastByte: number; etag?: string; bytes?: Buffer }[];
  finalized: boolean;
  pendingPolls: number;
}

export interface FakeOrganization {
  id: number;
  localizedName: string;
  vanityName: string;
  logo: string;
  role: string;
  followers: number;
}

export type LinkedinFake = Awaited<ReturnType<typeof startLinkedinFake>>;

const restError = (status: number, code: string, message: string, serviceErrorCode = 0): FakeReply => ({ status, json: { status, serviceErrorCode, code, message } });

/** Little text back to plain text; undefined when a reserved character is not escaped (LinkedIn would drop the rest). */
export function unescapeLittleText(commentary: string): string | undefined {
  const hashtag = /\{hashtag\|\\#\|((?:\\.|[^\\{}|])+)\}/y;
  let text = '';
  for (let index = 0; index < commentary.length; index++) {
    hashtag.lastIndex = index;
    const template = hashtag.exec(commentary);
    if (template) {
      text += `#${template[1].replace(/\\(.)/g, '$1')}`;
      index += template[0].length - 1;
    } else if (commentary[index] === '\\') {
      text += commentary[++index] ?? '';
    } else if (RESERVED.has(commentary[index])) {
      return undefined;
    } else {
      text += commentary[index];
    }
  }
  return text;
}

/** Deterministic daily statistics of the fake's page, by day (ms at 00:00 UTC). */
export function dailyStatistics(day: number) {
  const n = Math.floor(day / DAY_MS);
  return {
    followerGains: { organicFollowerGain: n % 3, paidFollowerGain: n % 2 },
    totalShareStatistics: {
      impressionCount: 100 + (n % 10),
      uniqueImpressionsCount: 80 + (n % 10),
      clickCount: n % 7,
      likeCount: n % 5,
      commentCount: n % 4,
      shareCount: n % 2,
      engagement: 0.05,
    },
  };
}

export async function startLinkedinFake(options: { partSize?: number; appScopes?: string[] } = {}) {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ expiresIn: SIXTY_DAYS });
  const partSize = options.partSize ?? 4 * 1024 * 1024;
  const appScopes = new Set(options.appScopes ?? ['openid', 'profile', 'email', 'w_member_social', 'r_basicprofile', 'r_organization_social', 'w_organization_social', 'rw_organization_admin']);
  const member = { id: 'yrZCpj2Z12', given_name: 'Ada', family_name: 'Lovelace', name: 'Ada Lovelace', picture: `${url}/media/ada.jpg`, vanityName: 'ada-lovelace' };
  authority.setSubject(member.id);
  const personUrn = `urn:li:person:${member.id}`;
  const organizations: FakeOrganization[] = [
    { id: 101, localizedName: 'Herald Labs', vanityName: 'herald-labs', logo: `${url}/media/herald-400.png`, role: 'ADMINISTRATOR', followers: 5000 },
    { id: 202, localizedName: 'Second Page', vanityName: 'second-page', logo: `${url}/media/second-400.png`, role: 'ADMINISTRATOR', followers: 12 },
    { id: 303, localizedName: 'Watched Only', vanityName: 'watched-only', logo: `${url}/media/watched-400.png`, role: 'ANALYST', followers: 1 },
  ];
  const tokenScopes = new Map<string, string[]>();
  const posts: FakePost[] = [];
  const comments: FakeComment[] = [];
  const images = new Map<string, Upload>();
  const documents = new Map<string, Upload>();
  const videos = new Map<string, FakeVideo>();
  const postStatistics = new Map<string, ReturnType<typeof dailyStatistics>['totalShareStatistics']>();
  let nextId = 7_100_000_000_000_000_000n;
  const newId = () => String(++nextId);
  let processingPolls = 0;
  const state = { issueRefreshTokens: false, minimumVersion: '202511' };

  const issue = (scopes: string[]) => {
    const issued = authority.issue(member.id);
    tokenScopes.set(issued.accessToken, scopes);
    if (issued.refreshToken) tokenScopes.set(issued.refreshToken, scopes);
    return issued;
  };

  const tokenAnswer = (issued: { accessToken: string; refreshToken?: string; expiresIn: number }, scopes: string[]): FakeReply => {
    tokenScopes.set(issued.accessToken, scopes);
    if (issued.refreshToken) tokenScopes.set(issued.refreshToken, scopes);
    const json: Record<string, unknown> = { access_token: issued.accessToken, expires_in: issued.expiresIn, scope: scopes.join(',') };
    if (state.issueRefreshTokens && issued.refreshToken) Object.assign(json, { refresh_token: issued.refreshToken, refresh_token_expires_in: 365 * 86_400 });
    return { json };
  };

  // ---- OAuth ----
  server.on('GET', '/oauth/v2/authorization', (request) => {
    const query = Object.fromEntries(request.query);
    const redirect = new URL(query.redirect_uri ?? 'http://invalid.example/');
    const missing = (scope: string) => !appScopes.has(scope);
    if (query.response_type !== 'code') return { status: 400, body: 'response_type must be code' };
    const scopes = (query.scope ?? '').split(/[ ,]+/).filter(Boolean);
    if (scopes.length === 0 || scopes.some(missing)) {
      redirect.searchParams.set('error', 'unauthorized_scope_error');
      redirect.searchParams.set('error_description', `Scope "${scopes.find(missing) ?? ''}" is not authorized for your application`);
      redirect.searchParams.set('state', query.state ?? '');
      return { status: 302, headers: { location: redirect.toString() } };
    }
    try {
      const location = authority.approvalRedirect({ clientId: query.client_id ?? '', redirectUri: query.redirect_uri ?? '', state: query.state ?? '', scope: scopes.join(' ') });
      return { status: 302, headers: { location } };
    } catch (error) {
      return { status: 400, json: { error: (error as OAuthRefusal).error, error_description: (error as OAuthRefusal).description } };
    }
  });

  server.on('POST', '/oauth/v2/accessToken', (request) => {
    const form = request.form;
    if (!form) return { status: 400, json: { error: 'invalid_request', error_description: 'A form body (application/x-www-form-urlencoded) is required' } };
    try {
      authority.checkClient(form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined);
      if (form.get('grant_type') === 'authorization_code') {
        const issued = authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, clientId: form.get('client_id') ?? undefined });
        return tokenAnswer(issued, (issued.scope ?? '').split(' '));
      }
      if (form.get('grant_type') === 'refresh_token') {
        const refreshToken = form.get('refresh_token') ?? undefined;
        const scopes = tokenScopes.get(refreshToken ?? '') ?? [];
        return tokenAnswer(authority.redeemRefreshToken(refreshToken), scopes);
      }
      return { status: 400, json: { error: 'unsupported_grant_type', error_description: 'grant_type must be authorization_code or refresh_token' } };
    } catch (error) {
      if (!(error instanceof OAuthRefusal)) throw error;
      return refusalReply(error);
    }
  });

  // ---- Authentication of API calls ----
  type Handler = (request: RecordedRequest, scopes: Set<string>) => FakeReply | Promise<FakeReply>;
  const authed = (handler: Handler, versioned = true) => (request: RecordedRequest) => {
    const token = bearerOf(String(request.headers.authorization ?? ''));
    if (!token || !authority.subjectOf(token)) return restError(401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has been revoked or has expired', 65601);
    if (versioned) {
      const version = String(request.headers['linkedin-version'] ?? '');
      if (!/^\d{6}$/.test(version)) return restError(400, 'VERSION_MISSING', 'A version header (LinkedIn-Version: YYYYMM) is required');
      if (version < state.minimumVersion) return restError(426, 'NONEXISTENT_VERSION', `Requested version ${version} is not active`);
      if (request.headers['x-restli-protocol-version'] !== '2.0.0') return restError(400, 'INVALID_PROTOCOL_VERSION', 'X-Restli-Protocol-Version: 2.0.0 is required');
    }
    return handler(request, new Set(tokenScopes.get(token) ?? []));
  };
  const denied = (what: string) => restError(403, 'ACCESS_DENIED', `Not enough permissions to access: ${what}`, 100);
  const administers = (urn: string) => organizations.some((organization) => `urn:li:organization:${organization.id}` === urn && organization.role === 'ADMINISTRATOR');
  /** May the token write as `urn` (post, upload, comment)? */
  const canWriteAs = (urn: string, scopes: Set<string>) =>
    (urn === personUrn && scopes.has('w_member_social')) || (administers(urn) && scopes.has('w_organization_social'));
  const canReadAs = (urn: string, scopes: Set<string>) => administers(urn) && scopes.has('r_organization_social');
  /** A URN path segment: Rest.li 2.0 wants it URL-encoded. */
  const urnSegment = (request: RecordedRequest, index: number) => {
    const raw = request.path.split('/')[index] ?? '';
    return raw.includes('%3A') ? decodeURIComponent(raw) : undefined;
  };

  server.on('GET', '/v2/userinfo', authed((_, scopes) => (scopes.has('openid') ? { json: { sub: member.id, name: member.name, given_name: member.given_name, family_name: member.family_name, picture: member.picture, locale: { country: 'US', language: 'en' } } } : denied('userinfo.GET.NO_VERSION')), false));
  server.on('GET', '/v2/me', authed((_, scopes) => (scopes.has('r_basicprofile') ? { json: { id: member.id, localizedFirstName: member.given_name, localizedLastName: member.family_name, vanityName: member.vanityName } } : denied('me.GET.NO_VERSION')), false));

  server.on('GET', '/rest/organizationAcls', authed((request, scopes) => {
    if (!scopes.has('rw_organization_admin')) return denied('organizationAcls.FINDER-roleAssignee.20250101');
    if (request.query.get('q') !== 'roleAssignee') return restError(400, 'ILLEGAL_ARGUMENT', 'q must be roleAssignee');
    const role = request.query.get('role');
    const decorate = (request.query.get('projection') ?? '').includes('organization~');
    const elements = organizations
      .filter((organization) => !role || organization.role === role)
      .map((organization) => ({
        roleAssignee: personUrn,
        state: 'APPROVED',
        role: organization.role,
        organization: `urn:li:organization:${organization.id}`,
        ...(decorate
          ? {
              'organization~': {
                localizedName: organization.localizedName,
                vanityName: organization.vanityName,
                logoV2: {
                  original: `urn:li:digitalmediaAsset:logo${organization.id}`,
                  'original~': { elements: [{ identifiers: [{ identifier: organization.logo.replace('-400', '-100') }] }, { identifiers: [{ identifier: organization.logo }] }] },
                },
              },
            }
          : {}),
      }));
    return { json: { paging: { start: 0, count: 100, total: elements.length }, elements } };
  }));

  // ---- Uploads ----
  const initialize = (kind: 'image' | 'document') =>
    authed((request, scopes) => {
      if (request.query.get('action') !== 'initializeUpload') return restError(400, 'ILLEGAL_ARGUMENT', `unknown action ${request.query.get('action')}`);
      const owner = request.json?.initializeUploadRequest?.owner;
      if (typeof owner !== 'string') return restError(422, 'UNPROCESSABLE_ENTITY', '/initializeUploadRequest/owner :: field is required but not found');
      if (!canWriteAs(owner, scopes)) return denied(`${kind}s.ACTION-initializeUpload`);
      const id = `D4${newId()}`;
      const urn = `urn:li:${kind}:${id}`;
      (kind === 'image' ? images : documents).set(urn, { urn, owner });
      return { json: { value: { uploadUrlExpiresAt: Date.now() + 86_400_000, uploadUrl: `${url}/dms-uploads/${kind}/${id}`, [kind]: urn } } };
    });
  server.on('POST', '/rest/images', initialize('image'));
  server.on('POST', '/rest/documents', initialize('document'));

  const receive = (kind: 'image' | 'document') =>
    authed((request) => {
      const upload = (kind === 'image' ? images : documents).get(`urn:li:${kind}:${request.path.split('/').pop()}`);
      if (!upload) return { status: 404, body: 'unknown upload' };
      const magic = request.body.subarray(0, 4).toString('latin1');
      const fits = kind === 'document' ? magic === '%PDF' : /^(\x89PNG|\xff\xd8\xff|GIF8)/.test(magic);
      if (!fits) return { status: 400, body: `not a ${kind === 'document' ? 'PDF' : 'JPEG, PNG or GIF'}` };
      Object.assign(upload, { bytes: request.body, mimeType: String(request.headers['content-type'] ?? '') });
      return { status: 201 };
    }, false);
  server.on('PUT', '/dms-uploads/image/*', receive('image'));
  server.on('PUT', '/dms-uploads/document/*', receive('document'));

  server.on('POST', '/rest/videos', authed((request, scopes) => {
    const action = request.query.get('action');
    if (action === 'initializeUpload') {
      const { owner, fileSizeBytes } = request.json?.initializeUploadRequest ?? {};
      if (typeof owner !== 'string' || !Number.isInteger(fileSizeBytes) || fileSizeBytes <= 0) {
        return restError(422, 'UNPROCESSABLE_ENTITY', '/initializeUploadRequest :: owner and fileSizeBytes are required');
      }
      if (!canWriteAs(owner, scopes)) return denied('videos.ACTION-initializeUpload');
      const id = `D5${newId()}`;
      const parts = [];
      for (let first = 0; first < fileSizeBytes; first += partSize) parts.push({ firstByte: first, lastByte: Math.min(first + partSize, fileSizeBytes) - 1 });
      const video: FakeVideo = { urn: `urn:li:video:${id}`, owner, size: fileSizeBytes, uploadToken: parts.length > 1 ? `token-${randomBytes(6).toString('hex')}` : '', parts, finalized: false, pendingPolls: 0 };
      videos.set(video.urn, video);
      const uploadInstructions = parts.map((part, index) => ({ uploadUrl: `${url}/dms-uploads/video/${id}/${index}`, ...part }));
      return { json: { value: { uploadUrlsExpireAt: Date.now() + 86_400_000, video: video.urn, uploadInstructions, uploadToken: video.uploadToken } } };
    }
    if (action === 'finalizeUpload') {
      const { video: urn, uploadToken, uploadedPartIds } = request.json?.finalizeUploadRequest ?? {};
      const video = videos.get(urn);
      if (!video || !canWriteAs(video.owner, scopes)) return restError(404, 'NOT_FOUND', `video ${urn} not found`);
      if (uploadToken !== video.uploadToken) return restError(400, 'ILLEGAL_ARGUMENT', 'uploadToken does not match the upload');
      if (video.parts.some((part) => !part.etag)) return restError(400, 'ILLEGAL_ARGUMENT', 'Not all parts of the video were uploaded');
      if (JSON.stringify(uploadedPartIds) !== JSON.stringify(video.parts.map((part) => part.etag))) return restError(400, 'ILLEGAL_ARGUMENT', 'uploadedPartIds do not match the uploaded parts');
      Object.assign(video, { finalized: true, pendingPolls: processingPolls, bytes: Buffer.concat(video.parts.map((part) => part.bytes!)) });
      return { status: 200 };
    }
    return restError(400, 'ILLEGAL_ARGUMENT', `unknown action ${action}`);
  }));

  server.on('PUT', '/dms-uploads/video/*/*', (request) => {
    const [, , , id, index] = request.path.split('/');
    const part = videos.get(`urn:li:video:${id}`)?.parts[Number(index)];
    if (!part) return { status: 404, body: 'unknown upload' };
    if (request.body.length !== part.lastByte - part.firstByte + 1) return { status: 400, body: `part ${index} must be ${part.lastByte - part.firstByte + 1} bytes, got ${request.body.length}` };
    Object.assign(part, { bytes: request.body, etag: `"/${id}/${index}/${randomBytes(4).toString('hex')}"` });
    return { status: 200, headers: { etag: part.etag! } };
  });

  server.on('GET', '/rest/videos/*', authed((request) => {
    const video = videos.get(urnSegment(request, 3) ?? '');
    if (!video) return restError(404, 'NOT_FOUND', 'video not found (is its URN URL-encoded?)');
    let status = 'AVAILABLE';
    if (!video.finalized) status = 'WAITING_UPLOAD';
    else if (video.pendingPolls > 0) {
      video.pendingPolls -= 1;
      status = 'PROCESSING';
    }
    return { json: { id: video.urn, owner: video.owner, status, ...(status === 'AVAILABLE' ? { duration: 1000, aspectRatioWidth: 4, aspectRatioHeight: 3 } : {}) } };
  }));

  // ---- Posts and comments ----
  function contentProblem(author: string, content: any): string | undefined {
    if (content === undefined) return undefined;
    const owned = (urn: unknown) => {
      const upload = typeof urn === 'string' ? (images.get(urn) ?? documents.get(urn) ?? videos.get(urn)) : undefined;
      if (!upload || upload.owner !== author) return `${String(urn)} is not an asset of ${author}`;
      if (!upload.bytes) return `${String(urn)} was not uploaded (WAITING_UPLOAD)`;
      return undefined;
    };
    if (content.multiImage) {
      const list = content.multiImage.images ?? [];
      if (list.length < 2 || list.length > 20) return '/content/multiImage/images :: must hold 2 to 20 images';
      return list.map((image: any) => (String(image.id).startsWith('urn:li:image:') ? owned(image.id) : `${image.id} is not an image`)).find(Boolean);
    }
    const id = content.media?.id;
    if (typeof id !== 'string') return '/content/media/id :: field is required';
    const problem = owned(id);
    if (problem) return problem;
    if (id.startsWith('urn:li:video:') && (videos.get(id)!.pendingPolls > 0 || !videos.get(id)!.finalized)) return `${id} is not AVAILABLE yet`;
    if (id.startsWith('urn:li:document:') && !content.media.title) return '/content/media/title :: a document needs a title';
    return undefined;
  }

  server.on('POST', '/rest/posts', authed((request, scopes) => {
    const body = request.json ?? {};
    if (typeof body.author !== 'string' || !canWriteAs(body.author, scopes)) return denied('posts.CREATE.20250101');
    if (body.visibility !== 'PUBLIC' || body.distribution?.feedDistribution !== 'MAIN_FEED' || body.lifecycleState !== 'PUBLISHED') {
      return restError(422, 'UNPROCESSABLE_ENTITY', 'visibility, distribution.feedDistribution and lifecycleState are required');
    }
    const text = unescapeLittleText(String(body.commentary ?? ''));
    if (text === undefined) return restError(422, 'UNPROCESSABLE_ENTITY', '/commentary :: reserved characters must be escaped (little text format)');
    if (text.length > 3000) return restError(422, 'UNPROCESSABLE_ENTITY', `/commentary :: length ${text.length} exceeds 3000`);
    const problem = contentProblem(body.author, body.content);
    if (problem) return restError(422, 'UNPROCESSABLE_ENTITY', problem);
    // LinkedIn documents no window for its duplicate check; reports put it at a day or two, so older posts do not count here.
    const same = posts.find(
      (post) => post.author === body.author && post.commentary === body.commentary && JSON.stringify(post.content) === JSON.stringify(body.content) && post.createdAt > Date.now() - 2 * DAY_MS,
    );
    if (same) return restError(422, 'DUPLICATE_POST', `Content is a duplicate of ${same.urn}`);
    const id = newId();
    posts.push({ urn: `urn:li:share:${id}`, activity: `urn:li:activity:${id}`, author: body.author, commentary: body.commentary, text, content: body.content, createdAt: Date.now() });
    return { status: 201, headers: { 'x-restli-id': `urn:li:share:${id}` } };
  }));

  server.on('GET', '/rest/posts', authed((request, scopes) => {
    const author = request.query.get('author') ?? '';
    if (request.query.get('q') !== 'author') return restError(400, 'ILLEGAL_ARGUMENT', 'q must be author');
    if (!canReadAs(author, scopes)) return denied('posts.FINDER-author.20250101');
    const count = Number(request.query.get('count') ?? 10);
    const elements = posts.filter((post) => post.author === author).reverse().slice(0, count);
    return { json: { paging: { start: 0, count }, elements: elements.map((post) => ({ id: post.urn, author: post.author, commentary: post.commentary, content: post.content, createdAt: post.createdAt, lastModifiedAt: post.createdAt, lifecycleState: 'PUBLISHED', visibility: 'PUBLIC' })) } };
  }));

  // Comments, replies and post changes: ./linkedin-comments.ts.
  addCommentRoutes({ server, authed: (handler) => authed(handler), denied, restError, canWriteAs, canReadAs, urnSegment, unescape: unescapeLittleText, posts, comments, newId });

  // ---- Statistics ----
  const timeIntervals = (request: RecordedRequest) => {
    const match = /^\(timeRange:\(start:(\d+),end:(\d+)\),timeGranularityType:DAY\)$/.exec(request.query.get('timeIntervals') ?? '');
    return match ? { start: Number(match[1]), end: Number(match[2]) } : undefined;
  };
  const pageOf = (request: RecordedRequest, scopes: Set<string>) => {
    const urn = request.query.get('organizationalEntity') ?? '';
    return request.query.get('q') === 'organizationalEntity' && administers(urn) && scopes.has('rw_organization_admin') ? urn : undefined;
  };
  const days = ({ start, end }: { start: number; end: number }) => {
    const list = [];
    for (let day = start; day < end; day += DAY_MS) list.push(day);
    return list;
  };
  const rangeProblem = ({ start, end }: { start: number; end: number }) =>
    end > Date.now() || start < Date.now() - 366 * DAY_MS || start >= end ? 'timeRange must lie within the last 12 months' : undefined;

  server.on('GET', '/rest/organizationalEntityFollowerStatistics', authed((request, scopes) => {
    const urn = pageOf(request, scopes);
    if (!urn) return denied('organizationalEntityFollowerStatistics.FINDER-organizationalEntity');
    const range = timeIntervals(request);
    if (!range || rangeProblem(range)) return restError(400, 'ILLEGAL_ARGUMENT', rangeProblem(range ?? { start: 0, end: 0 }) ?? 'timeIntervals is malformed');
    return { json: { paging: { start: 0, count: 10 }, elements: days(range).map((day) => ({ organizationalEntity: urn, timeRange: { start: day, end: day + DAY_MS }, followerGains: dailyStatistics(day).followerGains })) } };
  }));

  server.on('GET', '/rest/networkSizes/*', authed((request, scopes) => {
    const urn = urnSegment(request, 3) ?? '';
    const organization = organizations.find((candidate) => `urn:li:organization:${candidate.id}` === urn);
    if (!organization || !scopes.has('rw_organization_admin')) return denied('networkSizes.GET');
    if (request.query.get('edgeType') !== 'COMPANY_FOLLOWED_BY_MEMBER') return restError(400, 'ILLEGAL_ARGUMENT', 'edgeType must be COMPANY_FOLLOWED_BY_MEMBER');
    return { json: { firstDegreeSize: organization.followers } };
  }));

  server.on('GET', '/rest/organizationalEntityShareStatistics', authed((request, scopes) => {
    const urn = pageOf(request, scopes);
    if (!urn) return denied('organizationalEntityShareStatistics.FINDER-organizationalEntity');
    const listed = /^List\((.*)\)$/.exec(request.query.get('shares') ?? request.query.get('ugcPosts') ?? '');
    if (listed) {
      const wanted = listed[1].split(',');
      const elements = posts
        .filter((post) => wanted.includes(post.urn) && post.author === urn && postStatistics.has(post.urn))
        .map((post) => ({ share: post.urn, organizationalEntity: urn, totalShareStatistics: postStatistics.get(post.urn) }));
      return { json: { paging: { start: 0, count: 10 }, elements } };
    }
    const range = timeIntervals(request);
    if (!range || rangeProblem(range)) return restError(400, 'ILLEGAL_ARGUMENT', 'timeIntervals is malformed or outside the last 12 months');
    return { json: { paging: { start: 0, count: 10 }, elements: days(range).map((day) => ({ organizationalEntity: urn, timeRange: { start: day, end: day + DAY_MS }, totalShareStatistics: dailyStatistics(day).totalShareStatistics })) } };
  }));

  const endpoints = { oauth: url, api: url, web: 'https://www.linkedin.com', linkedinVersion: '202608' };
  /** Herald's environment for both LinkedIn providers pointed at this fake (one app's credentials for both). */
  const heraldEnvironment = (extra: Record<string, string> = {}) => ({
    LINKEDIN_CLIENT_ID: authority.clientId,
    LINKEDIN_CLIENT_SECRET: authority.clientSecret,
    LINKEDIN_PAGE_CLIENT_ID: authority.clientId,
    LINKEDIN_PAGE_CLIENT_SECRET: authority.clientSecret,
    SOCIAL_ENDPOINTS: JSON.stringify({ linkedin: { oauth: url, api: url }, 'linkedin-page': { oauth: url, api: url } }),
    ...extra,
  });
  return {
    heraldEnvironment,
    server,
    url,
    endpoints,
    authority: authority as OAuthAuthority,
    member,
    personUrn,
    organizations,
    posts,
    comments,
    /** A comment someone left on a post (a reply when `parentComment` names a top-level comment). */
    addComment(postUrn: string, text: string, options: { actor?: string; parentComment?: string; createdAt?: number } = {}): FakeComment {
      const post = posts.find((candidate) => candidate.urn === postUrn);
      if (!post) throw new Error(`no post ${postUrn}`);
      const id = newId();
      const comment: FakeComment = { id, urn: `urn:li:comment:(${post.activity},${id})`, object: post.urn, actor: options.actor ?? 'urn:li:person:visitor42', message: text, text, createdAt: options.createdAt ?? Date.now(), ...(options.parentComment ? { parentComment: options.parentComment } : {}) };
      comments.push(comment);
      return comment;
    },
    images,
    documents,
    videos,
    postStatistics,
    state,
    get issueRefreshTokens() {
      return state.issueRefreshTokens;
    },
    set issueRefreshTokens(value: boolean) {
      state.issueRefreshTokens = value;
    },
    setProcessingPolls(n: number) {
      processingPolls = n;
    },
    /** A stored channel: the member (personal scopes) or the first page (page scopes), with a fresh token. */
    channelAuth(kind: 'member' | 'page', options: { refreshToken?: boolean } = {}): ChannelAuth {
      const scopes = kind === 'member' ? ['openid', 'profile', 'w_member_social'] : ['r_basicprofile', 'w_member_social', 'r_organization_social', 'w_organization_social', 'rw_organization_admin'];
      const issued = issue(scopes);
      return {
        accessToken: issued.accessToken,
        refreshToken: options.refreshToken ? issued.refreshToken : undefined,
        expiresAt: new Date(Date.now() + SIXTY_DAYS * 1000),
        internalId: kind === 'member' ? personUrn : 'urn:li:organization:101',
        data: {},
      };
    },
    close: () => server.close(),
  };
}
