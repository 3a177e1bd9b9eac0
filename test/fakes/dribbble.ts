// A fake Dribbble (API v2) on 127.0.0.1, from developer.dribbble.com/v2: OAuth on the web host (/web), the API on /api.
//
//   GET  /web/oauth/authorize    consent, approved at once (scope must include upload)
//   POST /web/oauth/token        form client_id, client_secret, code, redirect_uri → {access_token, token_type, scope}
//   GET  /api/v2/user            the user with its teams;  GET /api/v2/user/shots  processed shots, newest first
//   POST /api/v2/shots           multipart title + image (+ description, team_id of one of the user's teams): the image
//                                must be a PNG, JPG or GIF of exactly 400x300, 800x600 or 1600x1200 and 8 MB at most, else
//                                422 {message, errors: [{attribute, message}]}; answers 202 with `Location` and no body.
//                                A shot is listed only after `listingDelay` listings (Dribbble processes asynchronously).
//   GET  /img/*                  pictures the test put in `pictures` (for posts that use a client's URL)
// API routes answer 401 {message: 'Bad credentials.'} without a live bearer token; every response carries X-RateLimit-*.
// References (read 2026-11-27; Dribbble publishes no machine-readable contract): developer.dribbble.com/v2/ (rate limits),
// /v2/oauth/, /v2/user/, /v2/shots/ (create: multipart, 202 + Location, processed asynchronously; a shot's description is HTML,
// published_at is when it went up).
import sharp from 'sharp';
import { createOAuthAuthority, bearerOf, OAuthRefusal, type OAuthAuthority } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';

export interface DribbbleFakeShot {
  id: number;
  title: string;
  description?: string;
  team_id?: string;
  image: { bytes: Buffer; contentType: string; width: number; height: number };
  /** Listings of /user/shots still to go before the shot appears. */
  pendingListings: number;
  publishedAt: string;
}

export interface DribbbleFake {
  server: FakeServer;
  url: string;
  endpoints: { web: string; api: string };
  authority: OAuthAuthority;
  user: { id: number; name: string; login: string; avatar_url: string; teams: { id: number; name: string; login: string }[] };
  shots: DribbbleFakeShot[];
  /** Pictures served on /img/<name>. */
  pictures: Map<string, Buffer>;
  /** Shots created afterwards stay unlisted for this many listings. */
  setListingDelay(n: number): void;
  close(): Promise<void>;
}

const SIZES = ['400x300', '800x600', '1600x1200'];
const TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif' };

export async function startDribbbleFake(): Promise<DribbbleFake> {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ noRefreshTokens: true, expiresIn: 10 * 365 * 86_400 });
  const user = { id: 1, name: 'Herald Designs', login: 'herald', avatar_url: `${url}/img/avatar.png`, teams: [{ id: 39, name: 'Herald Studio', login: 'heraldstudio' }] };
  const shots: DribbbleFakeShot[] = [];
  const pictures = new Map<string, Buffer>();
  let listingDelay = 0;
  let nextId = 471_756;
  const limits = { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59' };

  const authed = (handler: (request: RecordedRequest) => FakeReply | Promise<FakeReply>) => async (request: RecordedRequest): Promise<FakeReply> => {
    if (!authority.subjectOf(bearerOf(request.headers.authorization))) return { status: 401, headers: limits, json: { message: 'Bad credentials.' } };
    const reply = await handler(request);
    return { ...reply, headers: { ...limits, ...reply.headers } };
  };
  const invalid = (attribute: string, message: string): FakeReply => ({ status: 422, json: { message: 'Validation failed.', errors: [{ attribute, message }] } });

  server.on('GET', '/web/oauth/authorize', (request) => {
    const scope = request.query.get('scope') ?? '';
    if (!scope.split(' ').includes('upload')) return { status: 400, body: 'the upload scope is needed to create shots' };
    try {
      return { status: 302, headers: { location: authority.approveQuery(request.query) } };
    } catch (refusal) {
      return { status: 400, body: (refusal as Error).message };
    }
  });

  server.on('POST', '/web/oauth/token', (request) => {
    const form = request.form ?? new URLSearchParams();
    try {
      authority.checkClient(form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined);
      const issued = authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, clientId: form.get('client_id') ?? undefined });
      return { json: { access_token: issued.accessToken, token_type: 'bearer', scope: 'public upload', created_at: Math.floor(Date.now() / 1000) } };
    } catch (refusal) {
      const error = refusal instanceof OAuthRefusal ? refusal.error : 'invalid_request';
      return { status: error === 'invalid_client' ? 401 : 400, json: { error, error_description: (refusal as Error).message } };
    }
  });

  server.on('GET', '/api/v2/user', authed(() => ({ json: { ...user, html_url: `${url}/herald`, bio: '', can_upload_shot: true, pro: false, followers_count: 5, type: 'Player' } })));

  const shotEntity = (shot: DribbbleFakeShot) => ({
    id: shot.id,
    title: shot.title,
    // Dribbble answers the description as HTML.
    description: shot.description ? `<p>${shot.description}</p>` : null,
    width: shot.image.width,
    height: shot.image.height,
    images: { hidpi: null, normal: `${url}/img/shots/${shot.id}/normal.png`, teaser: `${url}/img/shots/${shot.id}/teaser.png` },
    html_url: `${url}/web/shots/${shot.id}`,
    published_at: shot.publishedAt,
    updated_at: shot.publishedAt,
    tags: [],
  });

  server.on('GET', '/api/v2/user/shots', authed(() => {
    const listed = shots.filter((shot) => shot.pendingListings-- <= 0);
    return { json: [...listed].reverse().map(shotEntity) };
  }));

  server.on('POST', '/api/v2/shots', authed(async (request) => {
    const form = await multipartOf(request);
    if (!form) return { status: 400, json: { message: 'Problems parsing the multipart body.' } };
    const title = form.get('title');
    if (typeof title !== 'string' || !title.trim()) return invalid('title', "can't be blank");
    const image = form.get('image');
    if (!(image instanceof Blob)) return invalid('image', "can't be blank");
    const bytes = Buffer.from(await image.arrayBuffer());
    const metadata = await sharp(bytes).metadata().catch(() => undefined);
    if (!metadata?.format || !TYPES[metadata.format]) return invalid('image', 'must be a GIF, JPG, or PNG');
    if (bytes.length > 8 * 1024 * 1024) return invalid('image', 'must be no larger than eight megabytes');
    if (!SIZES.includes(`${metadata.width}x${metadata.height}`)) return invalid('image', 'must be exactly 400x300, 800x600, or 1600x1200');
    const team = form.get('team_id');
    if (team !== null && !user.teams.some((candidate) => String(candidate.id) === team)) return invalid('team_id', 'is not a team of the authenticated user');
    const description = form.get('description');
    const shot: DribbbleFakeShot = {
      id: nextId++,
      title,
      ...(typeof description === 'string' ? { description } : {}),
      ...(typeof team === 'string' ? { team_id: team } : {}),
      image: { bytes, contentType: image.type, width: metadata.width!, height: metadata.height! },
      pendingListings: listingDelay,
      publishedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    shots.push(shot);
    return { status: 202, headers: { location: `${url}/api/v2/shots/${shot.id}` } };
  }));

  server.on('GET', '/img/*', (request) => {
    const picture = pictures.get(request.path.split('/').pop()!);
    return picture ? { headers: { 'content-type': 'image/png' }, body: picture } : { status: 404, body: 'not found' };
  });

  return {
    server,
    url,
    endpoints: { web: `${url}/web`, api: `${url}/api` },
    authority,
    user,
    shots,
    pictures,
    setListingDelay(n) {
      listingDelay = n;
    },
    close: () => server.close(),
  };
}
