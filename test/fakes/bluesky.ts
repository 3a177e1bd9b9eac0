// A fake Bluesky PDS (AT Protocol XRPC over HTTP on 127.0.0.1) for provider and end-to-end tests.
// Its contract: the lexicons of @atproto/api 0.19.19 (2026-06-04), checked on every request and answer by
// ./atproto-lexicon.ts (fake.contractViolations); behaviour beyond the lexicons from docs.bsky.app (API reference pages of
// each method below, the video tutorial https://docs.bsky.app/docs/tutorials/video, read 2026-11-26) and from what a real
// PDS answered (issue 22: a PDS without AppView answers app.bsky.* reads 502; a revoked app password keeps its access JWTs).
//
//   const fake = await startBlueskyFake();              // one account: fake.handle / fake.password / fake.did
//   endpoints: { service: fake.url }                    // or auth.data.service = fake.url
//   auth: fake.channelAuth()                            // a stored channel with a fresh, valid session (no HTTP call)
//   fake.records / fake.blobs / fake.sessions           // what the PDS holds; fake.server.requests = every request received
//   fake.expireAccessTokens()                           // every issued access JWT now answers 400 ExpiredToken
//   fake.expireRefreshTokens()                          // every refresh JWT now answers 400 ExpiredToken on refreshSession
//   fake.setEngagement(uri, { likeCount: 3 })           // counts reported by getPosts / getAuthorFeed
//   fake.profile.followersCount = 10                    // counts reported by getProfile (postsCount adds fake.records.length)
//   fake.server.failNext('POST', '/xrpc/com.atproto.repo.createRecord', { status: 500, json: {...} })   // inject failures
//   await fake.close()
//
// Routes (bodies shaped like the real PDS/AppView, trimmed):
//   POST /xrpc/com.atproto.server.createSession   {identifier (handle, email or did), password} → session; else 401 AuthenticationRequired
//   POST /xrpc/com.atproto.server.refreshSession  Bearer refreshJwt → new session (the old refresh JWT is revoked)
//   GET  /xrpc/app.bsky.actor.getProfile?actor=   → profileViewDetailed
//   POST /xrpc/com.atproto.repo.uploadBlob        raw bytes + content-type → {blob: {$type:'blob', ref:{$link}, mimeType, size}}
//   POST /xrpc/com.atproto.repo.createRecord      {repo, collection, record} → {uri, cid, commit:{cid, rev}, validationStatus:'valid'}
//   POST /xrpc/com.atproto.repo.deleteRecord      {repo, collection, rkey} → {commit} (or {} when the record is already gone)
//   GET  /xrpc/app.bsky.feed.getPosts?uris=       → {posts: postView[]}
//   GET  /xrpc/app.bsky.feed.getAuthorFeed?actor=&limit=&cursor=&filter=   → {feed: [{post}], cursor?}, newest first
//   GET  /xrpc/com.atproto.server.getSession      → {handle, did, didDoc (its #atproto_pds is fake.pdsEndpoint), email, active}
//   GET  /xrpc/com.atproto.server.getServiceAuth?aud=&lxm=&exp=   → {token}: a JWT {iss: did, aud, lxm, exp} the video fake
//                                                  checks (exp more than an hour ahead → 400 BadExpiration); fake.serviceTokens
//   GET  /xrpc/com.atproto.repo.getRecord?repo=&collection=&rkey=  → {uri, cid, value}; 400 RecordNotFound
//   GET  /xrpc/app.bsky.feed.getPostThread?uri=&depth=&parentHeight=   → {thread: threadViewPost with `replies` (threadViewPost,
//                                                  or notFoundPost for a deleted reply), depth levels deep}; 400 NotFound
//                                                  (docs.bsky.app/docs/api/app-bsky-feed-get-post-thread); others' replies: fake.addReply
//   GET  /xrpc/com.atproto.identity.resolveHandle?handle=   (public) → {did} for the account or fake.handles; else 400 InvalidRequest
//   fake.revokeAppPassword()                        // the password stops logging in, refresh JWTs die, access JWTs keep working
// Every route but createSession needs `Authorization: Bearer <accessJwt>` of a live session: missing → 401 AuthenticationRequired,
// unknown → 400 InvalidToken, expired/revoked → 400 ExpiredToken "Token has expired", wrong kind of JWT → 400 InvalidToken "Bad token scope".
// createRecord checks the record like the PDS's lexicon validation: text ≤ 300 graphemes and ≤ 3000 bytes, createdAt, facet byte ranges
// inside the text, image and video blobs that the repo holds (a video blob is video/mp4), an rkey that is a TID (else 400 InvalidRequest).
//
// startBlueskyVideoFake(pds) is video.bsky.app: getUploadLimits and uploadVideo take only service tokens the PDS issued (audience the
// video service's did:web for the limits, the PDS's did:web with lxm com.atproto.repo.uploadBlob for the upload); a job is
// JOB_STATE_ENCODING for `encodingChecks` getJobStatus calls, then JOB_STATE_COMPLETED with a blob the PDS now holds; the same bytes
// uploaded again answer 409 already_exists with their job.
import { createHash, randomBytes } from 'node:crypto';
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { bearerOf } from './oauth-authority.js';
import { lexiconRoutes } from './atproto-lexicon.js';
import type { ChannelAuth } from '../../providers/types.js';

export interface BlueskyFakeSession {
  accessJwt: string;
  refreshJwt: string;
  via: 'createSession' | 'refreshSession' | 'channelAuth';
  accessValid: boolean;
  refreshValid: boolean;
}

export interface BlueskyFakeRecord {
  uri: string;
  cid: string;
  rkey: string;
  /** The record exactly as the client sent it. */
  record: any;
  indexedAt: string;
}

export interface BlueskyFakeBlob {
  cid: string;
  mimeType: string;
  size: number;
  bytes: Buffer;
}

export interface BlueskyEngagement {
  likeCount: number;
  repostCount: number;
  replyCount: number;
  quoteCount: number;
}

export interface BlueskyFake {
  server: FakeServer;
  /** The PDS base URL (no trailing slash). */
  url: string;
  did: string;
  handle: string;
  email: string;
  password: string;
  /** What getProfile answers; postsCount is added to the number of records created. */
  profile: { displayName: string; description: string; avatar: string; followersCount: number; followsCount: number; postsCount: number };
  records: BlueskyFakeRecord[];
  /** Records deleted with com.atproto.repo.deleteRecord, in order. */
  deleted: BlueskyFakeRecord[];
  blobs: BlueskyFakeBlob[];
  /** Every session issued, oldest first. */
  sessions: BlueskyFakeSession[];
  /** Service-auth JWTs issued by getServiceAuth, with their claims. */
  serviceTokens: { token: string; aud: string; lxm: string; exp: number; iss: string }[];
  /** The account's PDS as its DID document names it (this fake's own URL). */
  pdsEndpoint: string;
  /** Requests (or answers of the fake) that do not match the AT Protocol lexicons (./atproto-lexicon.ts): tests assert it empty. */
  contractViolations: string[];
  /** Other accounts' handles that com.atproto.identity.resolveHandle resolves (handle → DID); the account's own always does. */
  handles: Map<string, string>;
  /**
   * The app password is revoked, as in Settings → App passwords: it no longer logs in and its refresh JWTs are revoked, while
   * the access JWTs already issued stay valid until they expire (they are not checked against the database).
   */
  revokeAppPassword(): void;
  /** Issues a live session without an HTTP call. */
  issueSession(via?: BlueskyFakeSession['via']): BlueskyFakeSession;
  /** Credentials of a connected channel for this account, with a fresh live session (what Herald stores after connect). */
  channelAuth(): ChannelAuth;
  expireAccessTokens(): void;
  expireRefreshTokens(): void;
  /** Replies other accounts left (held by the AppView, not the account's repo): addReply. */
  foreignRecords: (BlueskyFakeRecord & { author: { did: string; handle: string; displayName: string } })[];
  /** Someone else replies to a post (`parentUri`, the account's or another reply); root is the parent's thread root. */
  addReply(parentUri: string, text: string, author?: { did?: string; handle?: string; displayName?: string }): BlueskyFakeRecord;
  /** The reply is deleted by its author: getPostThread answers a notFoundPost in its place. */
  deleteReply(uri: string): void;
  /** Sets counts reported for a post; replyCount defaults to the number of records replying to it. */
  setEngagement(uri: string, counts: Partial<BlueskyEngagement>): void;
  close(): Promise<void>;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const xrpcError = (status: number, error: string, message: string): FakeReply => ({ status, json: { error, message } });

/** A real CIDv1 string (base32, sha2-256) of the bytes: codec 0x55 raw for blobs, 0x71 dag-cbor for records. */
function cidOf(bytes: Buffer, codec: 0x55 | 0x71): string {
  const data = Buffer.concat([Buffer.from([0x01, codec, 0x12, 0x20]), createHash('sha256').update(bytes).digest()]);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0;
  let value = 0;
  let out = 'b';
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** Record keys and revs are TIDs: 13 base32-sortable characters of microseconds since the epoch and a clock id. */
let lastTid = 0n;
function nextTid(): string {
  const alphabet = '234567abcdefghijklmnopqrstuvwxyz';
  let micros = BigInt(Date.now()) * 1000n;
  if (micros <= lastTid) micros = lastTid + 1n;
  lastTid = micros;
  let value = (micros << 10n) | 7n;
  let out = '';
  for (let index = 0; index < 13; index++) {
    out = alphabet[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

const graphemes = (text: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].length;

/**
 * `appView: false` is a bare self-hosted PDS with no AppView behind it: app.bsky.* reads (getProfile) are not served.
 * Records embedding an image blob over 1,000,000 bytes are refused as the PDS refuses them ("blob too big").
 */
export async function startBlueskyFake(options: { handle?: string; password?: string; appView?: boolean } = {}): Promise<BlueskyFake> {
  const server = await startFakeServer();
  const handle = options.handle ?? 'alice.bsky.social';
  const password = options.password ?? 'abcd-efgh-ijkl-mnop';
  const did = `did:plc:${createHash('sha256').update(handle).digest('hex').slice(0, 24)}`;
  const email = `${handle.split('.')[0]}@example.com`;
  const records: BlueskyFakeRecord[] = [];
  const deleted: BlueskyFakeRecord[] = [];
  const blobs: BlueskyFakeBlob[] = [];
  const sessions: BlueskyFakeSession[] = [];
  const serviceTokens: BlueskyFake['serviceTokens'] = [];
  const engagement = new Map<string, Partial<BlueskyEngagement>>();
  const profile = { displayName: 'Alice', description: 'Testing Herald', avatar: `${server.url}/img/avatar/plain/${did}/avatar@jpeg`, followersCount: 42, followsCount: 7, postsCount: 0 };
  const createdAt = '2024-01-15T10:00:00.000Z';
  const contractViolations: string[] = [];
  const xrpc = lexiconRoutes(server, contractViolations);
  const handles = new Map<string, string>();
  let currentPassword = password;
  /** A PDS with no AppView: its proxy of app.bsky.* reads fails (what a self-hosted PDS answered, issue 22). */
  const noAppView = () => xrpcError(502, 'UpstreamFailure', 'Upstream service unreachable');

  const jwt = (scope: string, lifetimeSeconds: number) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { scope, sub: did, aud: `did:web:${new URL(server.url).hostname}`, iat: now, exp: now + lifetimeSeconds, jti: randomBytes(8).toString('hex') };
    return `${b64url({ typ: scope === 'com.atproto.refresh' ? 'refresh+jwt' : 'at+jwt', alg: 'ES256K' })}.${b64url(payload)}.${randomBytes(32).toString('base64url')}`;
  };
  const issueSession = (via: BlueskyFakeSession['via'] = 'createSession'): BlueskyFakeSession => {
    const session = { accessJwt: jwt('com.atproto.access', 7200), refreshJwt: jwt('com.atproto.refresh', 90 * 86400), via, accessValid: true, refreshValid: true };
    sessions.push(session);
    return session;
  };
  const sessionBody = (session: BlueskyFakeSession) => ({
    accessJwt: session.accessJwt,
    refreshJwt: session.refreshJwt,
    handle,
    did,
    didDoc: {
      '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'],
      id: did,
      alsoKnownAs: [`at://${handle}`],
      service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: server.url }],
    },
    email,
    emailConfirmed: true,
    emailAuthFactor: false,
    active: true,
  });

  /** The live session whose access JWT the request carries, or the PDS's error reply. */
  const authorize = (request: RecordedRequest, kind: 'access' | 'refresh'): FakeReply | BlueskyFakeSession => {
    const token = bearerOf(request.headers.authorization);
    if (token === undefined) return xrpcError(401, 'AuthenticationRequired', 'Authentication Required');
    const session = sessions.find((item) => (kind === 'access' ? item.accessJwt : item.refreshJwt) === token);
    if (!session) {
      const wrongKind = sessions.some((item) => (kind === 'access' ? item.refreshJwt : item.accessJwt) === token);
      return xrpcError(400, 'InvalidToken', wrongKind ? 'Bad token scope' : 'Token could not be verified');
    }
    if (kind === 'access' && !session.accessValid) return xrpcError(400, 'ExpiredToken', 'Token has expired');
    if (kind === 'refresh' && !session.refreshValid) return xrpcError(400, 'ExpiredToken', 'Token has been revoked');
    return session;
  };
  const authorized = (handler: (request: RecordedRequest) => FakeReply) => (request: RecordedRequest) => {
    const session = authorize(request, 'access');
    return 'accessJwt' in session ? handler(request) : session;
  };

  const foreignRecords: BlueskyFake['foreignRecords'] = [];
  const deletedReplies = new Set<string>();
  const author = () => ({ did, handle, displayName: profile.displayName, avatar: profile.avatar, associated: { chat: { allowIncoming: 'following' } }, labels: [], createdAt });
  const postView = (entry: BlueskyFakeRecord) => {
    const counts = engagement.get(entry.uri) ?? {};
    const images = entry.record.embed?.$type === 'app.bsky.embed.images' ? (entry.record.embed.images as any[]) : undefined;
    return {
      uri: entry.uri,
      cid: entry.cid,
      author: author(),
      record: entry.record,
      ...(images && {
        embed: {
          $type: 'app.bsky.embed.images#view',
          images: images.map((image) => ({
            thumb: `${server.url}/img/feed_thumbnail/plain/${did}/${image.image.ref.$link}@jpeg`,
            fullsize: `${server.url}/img/feed_fullsize/plain/${did}/${image.image.ref.$link}@jpeg`,
            alt: image.alt,
            ...(image.aspectRatio && { aspectRatio: image.aspectRatio }),
          })),
        },
      }),
      replyCount: counts.replyCount ?? records.filter((other) => other.record.reply?.parent?.uri === entry.uri).length,
      repostCount: counts.repostCount ?? 0,
      likeCount: counts.likeCount ?? 0,
      quoteCount: counts.quoteCount ?? 0,
      indexedAt: entry.indexedAt,
      viewer: { threadMuted: false, embeddingDisabled: false },
      labels: [],
    };
  };

  /** The PDS's own checks on an app.bsky.feed.post record; undefined when it is valid. */
  const invalidPost = (record: any): string | undefined => {
    if (typeof record?.text !== 'string') return 'Record/text must be a string';
    if (graphemes(record.text) > 300) return 'Record/text must not be longer than 300 graphemes';
    if (Buffer.byteLength(record.text) > 3000) return 'Record/text must not be longer than 3000 characters';
    if (typeof record.createdAt !== 'string' || Number.isNaN(Date.parse(record.createdAt))) return 'Record/createdAt must be an valid atproto datetime';
    const length = Buffer.byteLength(record.text);
    for (const facet of record.facets ?? []) {
      const { byteStart, byteEnd } = facet?.index ?? {};
      if (!Number.isInteger(byteStart) || !Number.isInteger(byteEnd) || byteStart < 0 || byteEnd > length || byteStart >= byteEnd) return 'Record/facets has an invalid index';
    }
    if (record.embed?.$type === 'app.bsky.embed.video') {
      const ref = record.embed.video?.ref?.$link;
      const blob = blobs.find((item) => item.cid === ref);
      if (!blob) return `Could not find blob: ${ref}`;
      if (blob.mimeType !== 'video/mp4' || record.embed.video.mimeType !== 'video/mp4') return 'Record/embed/video/video has a wrong mimeType: expected video/mp4';
      const ratio = record.embed.aspectRatio;
      if (ratio !== undefined && !(Number.isInteger(ratio.width) && Number.isInteger(ratio.height) && ratio.width > 0 && ratio.height > 0)) return 'Record/embed/aspectRatio must have positive integer width and height';
    }
    if (record.embed?.$type === 'app.bsky.embed.images') {
      if (!Array.isArray(record.embed.images) || record.embed.images.length > 4) return 'Record/embed/images must not have more than 4 elements';
      for (const image of record.embed.images) {
        if (typeof image.alt !== 'string') return 'Record/embed/images/alt must be a string';
        if (!blobs.some((blob) => blob.cid === image.image?.ref?.$link)) return `Could not find blob: ${image.image?.ref?.$link}`;
      }
    }
    return undefined;
  };

  xrpc('com.atproto.server.createSession', (request) => {
    const identifier = String(request.json?.identifier ?? '').toLowerCase();
    if (typeof request.json?.password !== 'string' || !identifier) return xrpcError(400, 'InvalidRequest', 'Input must have the property "identifier"');
    if (![handle, email, did].includes(identifier) || request.json.password !== currentPassword) return xrpcError(401, 'AuthenticationRequired', 'Invalid identifier or password');
    return { json: sessionBody(issueSession('createSession')) };
  });

  xrpc('com.atproto.server.refreshSession', (request) => {
    const session = authorize(request, 'refresh');
    if (!('accessJwt' in session)) return session;
    session.refreshValid = false;
    return { json: sessionBody(issueSession('refreshSession')) };
  });

  xrpc('app.bsky.actor.getProfile', authorized((request) => {
    if (options.appView === false) return noAppView();
    const actor = request.query.get('actor');
    if (!actor) return xrpcError(400, 'InvalidRequest', 'Error: Params must have the property "actor"');
    if (actor !== did && actor !== handle) return xrpcError(400, 'InvalidRequest', 'Profile not found');
    return {
      json: {
        ...author(),
        ...profile,
        banner: `${server.url}/img/banner/plain/${did}/banner@jpeg`,
        postsCount: profile.postsCount + records.length,
        associated: { lists: 0, feedgens: 0, starterPacks: 0, labeler: false, chat: { allowIncoming: 'following' } },
        indexedAt: createdAt,
        viewer: { muted: false, blockedBy: false },
      },
    };
  }));

  xrpc('com.atproto.repo.uploadBlob', authorized((request) => {
    const mimeType = String(request.headers['content-type'] ?? '*/*').split(';')[0].trim();
    if (request.body.length === 0) return xrpcError(400, 'InvalidRequest', 'Request body is empty');
    if (request.body.length > 100_000_000) return xrpcError(413, 'PayloadTooLarge', 'request entity too large');
    const blob = { cid: cidOf(request.body, 0x55), mimeType, size: request.body.length, bytes: Buffer.from(request.body) };
    blobs.push(blob);
    return { json: { blob: { $type: 'blob', ref: { $link: blob.cid }, mimeType, size: blob.size } } };
  }));

  xrpc('com.atproto.repo.createRecord', authorized((request) => {
    const { repo, collection, record, rkey: wanted } = request.json ?? {};
    if (repo !== did && repo !== handle) return xrpcError(400, 'InvalidRequest', `Could not find repo: ${repo}`);
    if (collection !== 'app.bsky.feed.post') return xrpcError(400, 'InvalidRequest', `This fake only stores app.bsky.feed.post, not ${collection}`);
    if (record?.$type !== undefined && record.$type !== collection) return xrpcError(400, 'InvalidRequest', `Invalid $type: expected ${collection}, got ${record.$type}`);
    const problem = invalidPost(record);
    if (problem) return xrpcError(400, 'InvalidRequest', `Invalid app.bsky.feed.post record: ${problem}`);
    for (const image of (record?.embed?.images ?? []) as { image?: { size?: number } }[]) {
      const size = image.image?.size ?? 0;
      if (size > 1_000_000) return xrpcError(400, 'InvalidRequest', `Invalid app.bsky.feed.post record: blob too big (maximum 1000000, got ${size})`);
    }
    if (Buffer.byteLength(String(record?.text ?? ''), 'utf8') > 3000) return xrpcError(400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text must not be longer than 3000 characters');
    if (wanted !== undefined && (typeof wanted !== 'string' || !/^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/.test(wanted))) return xrpcError(400, 'InvalidRequest', `Invalid record key: ${String(wanted)} is not a TID`);
    const rkey = typeof wanted === 'string' ? wanted : nextTid();
    const uri = `at://${did}/${collection}/${rkey}`;
    if (records.some((entry) => entry.uri === uri)) return xrpcError(400, 'InvalidRequest', `Record already exists: ${uri}`);
    const cid = cidOf(Buffer.from(JSON.stringify(record)), 0x71);
    records.push({ uri, cid, rkey, record, indexedAt: new Date().toISOString() });
    return { json: { uri, cid, commit: { cid: cidOf(Buffer.from(`commit:${uri}`), 0x71), rev: nextTid() }, validationStatus: 'valid' } };
  }));

  // As the PDS: a record already gone is deleted "again" without error (200, no commit); another repo is refused.
  xrpc('com.atproto.repo.deleteRecord', authorized((request) => {
    const { repo, collection, rkey } = request.json ?? {};
    if (repo !== did && repo !== handle) return xrpcError(400, 'InvalidRequest', `Could not find repo: ${repo}`);
    const index = records.findIndex((entry) => entry.uri === `at://${did}/${collection}/${rkey}`);
    if (index < 0) return { json: {} };
    const [gone] = records.splice(index, 1);
    deleted.push(gone);
    return { json: { commit: { cid: cidOf(Buffer.from(`commit:delete:${gone.uri}`), 0x71), rev: nextTid() } } };
  }));

  xrpc('app.bsky.feed.getPosts', authorized((request) => {
    if (options.appView === false) return noAppView();
    const uris = request.query.getAll('uris');
    if (uris.length === 0) return xrpcError(400, 'InvalidRequest', 'Error: Params must have the property "uris"');
    if (uris.length > 25) return xrpcError(400, 'InvalidRequest', 'Error: uris must not have more than 25 elements');
    return { json: { posts: uris.flatMap((uri) => records.filter((entry) => entry.uri === uri).map(postView)) } };
  }));

  // Public, as on a real PDS: the account's own handle, or one of `handles`; anything else does not resolve.
  xrpc('com.atproto.identity.resolveHandle', (request) => {
    const wanted = String(request.query.get('handle')).toLowerCase();
    const found = wanted === handle ? did : handles.get(wanted);
    return found ? { json: { did: found } } : xrpcError(400, 'InvalidRequest', 'Unable to resolve handle');
  });

  xrpc('com.atproto.server.getSession', authorized(() => {
    const { accessJwt: _access, refreshJwt: _refresh, ...session } = sessionBody(sessions[0] ?? issueSession());
    return { json: session };
  }));

  xrpc('com.atproto.server.getServiceAuth', authorized((request) => {
    const aud = request.query.get('aud') ?? '';
    const lxm = request.query.get('lxm') ?? '';
    if (!aud.startsWith('did:')) return xrpcError(400, 'InvalidRequest', 'Error: Params must have the property "aud"');
    const now = Math.floor(Date.now() / 1000);
    const exp = Number(request.query.get('exp') ?? now + 60);
    if (!Number.isInteger(exp) || exp <= now) return xrpcError(400, 'BadExpiration', 'expiration is in past');
    if (exp - now > 3600) return xrpcError(400, 'BadExpiration', 'cannot request a token with an expiration more than an hour in the future');
    const token = `${b64url({ typ: 'JWT', alg: 'ES256K' })}.${b64url({ iss: did, aud, lxm, exp, iat: now, jti: randomBytes(8).toString('hex') })}.${randomBytes(32).toString('base64url')}`;
    serviceTokens.push({ token, aud, lxm, exp, iss: did });
    return { json: { token } };
  }));

  xrpc('com.atproto.repo.getRecord', authorized((request) => {
    const uri = `at://${request.query.get('repo')}/${request.query.get('collection')}/${request.query.get('rkey')}`;
    const found = records.find((entry) => entry.uri === uri || entry.uri === uri.replace(`at://${handle}/`, `at://${did}/`));
    return found ? { json: { uri: found.uri, cid: found.cid, value: found.record } } : xrpcError(400, 'RecordNotFound', `Could not locate record: ${uri}`);
  }));

  const threadNode = (entry: BlueskyFakeRecord, depth: number): any => {
    const foreign = foreignRecords.find((item) => item.uri === entry.uri);
    const view = foreign
      ? { ...postView(entry), author: { did: foreign.author.did, handle: foreign.author.handle, displayName: foreign.author.displayName, labels: [], createdAt } }
      : postView(entry);
    const children = [...records, ...foreignRecords].filter((other) => other.record.reply?.parent?.uri === entry.uri).sort((a, b) => a.indexedAt.localeCompare(b.indexedAt));
    return {
      $type: 'app.bsky.feed.defs#threadViewPost',
      post: view,
      ...(depth > 0 && {
        replies: children.map((child) =>
          deletedReplies.has(child.uri) ? { $type: 'app.bsky.feed.defs#notFoundPost', uri: child.uri, notFound: true } : threadNode(child, depth - 1),
        ),
      }),
    };
  };

  xrpc('app.bsky.feed.getPostThread', authorized((request) => {
    if (options.appView === false) return noAppView();
    const uri = request.query.get('uri');
    const entry = [...records, ...foreignRecords].find((item) => item.uri === uri);
    if (!entry || deletedReplies.has(entry.uri)) return xrpcError(400, 'NotFound', `Post not found: ${uri}`);
    return { json: { thread: threadNode(entry, Number(request.query.get('depth') ?? 6)) } };
  }));

  xrpc('app.bsky.feed.getAuthorFeed', authorized((request) => {
    if (options.appView === false) return noAppView();
    const filter = request.query.get('filter');
    if (filter !== null && !['posts_with_replies', 'posts_no_replies', 'posts_with_media', 'posts_and_author_threads', 'posts_with_video'].includes(filter)) {
      return xrpcError(400, 'InvalidRequest', 'Error: filter must be one of the known values');
    }
    const actor = request.query.get('actor');
    if (actor !== did && actor !== handle) return xrpcError(400, 'InvalidRequest', 'Profile not found');
    const limit = Number(request.query.get('limit') ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return xrpcError(400, 'InvalidRequest', 'Error: limit must be between 1 and 100');
    const start = Number(request.query.get('cursor') ?? 0);
    const newest = [...records].reverse();
    const page = newest.slice(start, start + limit);
    const cursor = start + limit < newest.length ? String(start + limit) : undefined;
    return { json: { feed: page.map((entry) => ({ post: postView(entry) })), ...(cursor && { cursor }) } };
  }));

  return {
    server,
    url: server.url,
    did,
    handle,
    email,
    password,
    profile,
    records,
    deleted,
    blobs,
    sessions,
    serviceTokens,
    pdsEndpoint: server.url,
    contractViolations,
    handles,
    revokeAppPassword() {
      currentPassword = randomBytes(12).toString('hex');
      for (const session of sessions) session.refreshValid = false;
    },
    issueSession,
    channelAuth() {
      const session = issueSession('channelAuth');
      return { accessToken: session.accessJwt, refreshToken: session.refreshJwt, internalId: did, data: { service: server.url, identifier: handle, appPassword: password } };
    },
    expireAccessTokens() {
      for (const session of sessions) session.accessValid = false;
    },
    expireRefreshTokens() {
      for (const session of sessions) session.refreshValid = false;
    },
    foreignRecords,
    addReply(parentUri, text, who = {}) {
      const parent = [...records, ...foreignRecords].find((item) => item.uri === parentUri);
      if (!parent) throw new Error(`addReply: no post ${parentUri}`);
      const replier = { did: who.did ?? 'did:plc:bobbobbobbobbobbobbobbob', handle: who.handle ?? 'bob.bsky.social', displayName: who.displayName ?? 'Bob' };
      const root = parent.record.reply?.root ?? { uri: parent.uri, cid: parent.cid };
      const record = { $type: 'app.bsky.feed.post', text, createdAt: new Date().toISOString(), reply: { root, parent: { uri: parent.uri, cid: parent.cid } } };
      const rkey = nextTid();
      const uri = `at://${replier.did}/app.bsky.feed.post/${rkey}`;
      const entry = { uri, cid: cidOf(Buffer.from(JSON.stringify(record)), 0x71), rkey, record, indexedAt: new Date().toISOString(), author: replier };
      foreignRecords.push(entry);
      return entry;
    },
    deleteReply(uri) {
      deletedReplies.add(uri);
    },
    setEngagement(uri, counts) {
      engagement.set(uri, { ...engagement.get(uri), ...counts });
    },
    close: () => server.close(),
  };
}

export interface BlueskyVideoFake {
  server: FakeServer;
  url: string;
  /** The service's DID (did:web of its host), the audience of getUploadLimits tokens. */
  did: string;
  /** getJobStatus calls that answer JOB_STATE_ENCODING before a new job completes. */
  encodingChecks: number;
  /** What getUploadLimits answers. */
  limits: { canUpload: boolean; remainingDailyVideos: number; remainingDailyBytes: number; message?: string };
  /** Makes the next uploaded job fail with this message instead of completing. */
  failNextJob?: string;
  jobs: { jobId: string; did: string; sha256: string; bytes: Buffer; name: string; checks: number; state: string; blobCid?: string; failure?: string }[];
  close(): Promise<void>;
}

export async function startBlueskyVideoFake(pds: BlueskyFake): Promise<BlueskyVideoFake> {
  const server = await startFakeServer();
  // The video service's requests are checked against the lexicons too, into the PDS fake's list.
  const xrpc = lexiconRoutes(server, pds.contractViolations);
  const didWebOf = (url: string) => `did:web:${new URL(url).host.replace(':', '%3A')}`;
  const fake: BlueskyVideoFake = {
    server,
    url: server.url,
    did: didWebOf(server.url),
    encodingChecks: 2,
    limits: { canUpload: true, remainingDailyVideos: 25, remainingDailyBytes: 10_000_000_000 },
    jobs: [],
    close: () => server.close(),
  };

  /** The service token the request carries, checked against what the PDS issued: audience, method, expiry. */
  const serviceToken = (request: RecordedRequest, aud: string, lxm: string): FakeReply | { iss: string } => {
    const token = bearerOf(request.headers.authorization);
    if (token === undefined) return xrpcError(401, 'AuthMissing', 'Authentication Required');
    const issued = pds.serviceTokens.find((item) => item.token === token);
    if (!issued) return xrpcError(401, 'InvalidToken', 'Token could not be verified');
    if (issued.aud !== aud) return xrpcError(401, 'BadJwtAudience', `jwt audience does not match service did: expected ${aud}, got ${issued.aud}`);
    if (issued.lxm !== lxm) return xrpcError(401, 'BadJwtLexiconMethod', `bad jwt lexicon method ("lxm"): must match: ${lxm}`);
    if (issued.exp < Date.now() / 1000) return xrpcError(401, 'JwtExpired', 'jwt expired');
    return { iss: issued.iss };
  };

  const status = (job: BlueskyVideoFake['jobs'][number]) => {
    const blob = job.blobCid ? pds.blobs.find((item) => item.cid === job.blobCid) : undefined;
    return {
      jobId: job.jobId,
      did: job.did,
      state: job.state,
      ...(job.state === 'JOB_STATE_ENCODING' ? { progress: Math.min(90, job.checks * 40) } : {}),
      ...(blob ? { blob: { $type: 'blob', ref: { $link: blob.cid }, mimeType: blob.mimeType, size: blob.size } } : {}),
      ...(job.failure ? { error: job.failure, message: job.failure } : {}),
    };
  };

  xrpc('app.bsky.video.getUploadLimits', (request) => {
    const auth = serviceToken(request, fake.did, 'app.bsky.video.getUploadLimits');
    return 'iss' in auth ? { json: fake.limits } : auth;
  });

  xrpc('app.bsky.video.uploadVideo', (request) => {
    const auth = serviceToken(request, didWebOf(pds.pdsEndpoint), 'com.atproto.repo.uploadBlob');
    if (!('iss' in auth)) return auth;
    const owner = request.query.get('did');
    const name = request.query.get('name');
    if (!owner || !name) return xrpcError(400, 'InvalidRequest', 'Error: Params must have the properties "did" and "name"');
    if (owner !== auth.iss) return xrpcError(401, 'InvalidToken', 'the token was not issued for this did');
    if (String(request.headers['content-type']) !== 'video/mp4') return xrpcError(400, 'InvalidMimeType', `unsupported content type ${String(request.headers['content-type'])}`);
    if (request.body.length === 0) return xrpcError(400, 'InvalidRequest', 'empty body');
    const sha256 = createHash('sha256').update(request.body).digest('hex');
    const existing = fake.jobs.find((job) => job.did === owner && job.sha256 === sha256);
    if (existing) return { status: 409, json: { ...status(existing), error: 'already_exists', message: 'Video already processed' } };
    const job = { jobId: randomBytes(8).toString('hex'), did: owner, sha256, bytes: Buffer.from(request.body), name, checks: 0, state: 'JOB_STATE_CREATED' as string, failure: fake.failNextJob };
    fake.failNextJob = undefined;
    fake.jobs.push(job);
    return { json: status(job) };
  }, { outputDiffers: 'video.bsky.app answers the job status itself, not {jobStatus} as the lexicon says (the tutorial reads jobId from the answer\'s top level)' });

  xrpc('app.bsky.video.getJobStatus', (request) => {
    const job = fake.jobs.find((item) => item.jobId === request.query.get('jobId'));
    if (!job) return xrpcError(404, 'NotFound', 'Job not found');
    job.checks += 1;
    if (job.state !== 'JOB_STATE_COMPLETED' && job.state !== 'JOB_STATE_FAILED') {
      if (job.failure) job.state = 'JOB_STATE_FAILED';
      else if (job.checks <= fake.encodingChecks) job.state = 'JOB_STATE_ENCODING';
      else {
        // The service stores the processed video on the user's PDS, then answers its blob.
        const processed = Buffer.concat([Buffer.from('processed:'), job.bytes]);
        const cid = cidOf(processed, 0x55);
        pds.blobs.push({ cid, mimeType: 'video/mp4', size: processed.length, bytes: processed });
        Object.assign(job, { state: 'JOB_STATE_COMPLETED', blobCid: cid });
      }
    }
    return { json: { jobStatus: status(job) } };
  });

  return fake;
}
