// A fake Pinterest (API v5) on 127.0.0.1, answering the documented shapes (github.com/pinterest/api-description) and
// refusing what Pinterest refuses. Every request to the API is first checked against Pinterest's OpenAPI description, vendored
// in test/contracts/pinterest/openapi.json (release 5.23.0, commit c05b189, retrieved 2026-11-27): a request outside the
// contract is answered 400 and recorded in `contractViolations`, which the tests require to stay empty. One server plays both hosts: `endpoints.web` (www.pinterest.com) under /web and
// `endpoints.api` (api.pinterest.com) under /api, so a call sent to the wrong host gets a 404.
//
//   GET  /web/oauth/                      consent, approved at once: 302 to redirect_uri with code and state
//   POST /api/v5/oauth/token              HTTP Basic client credentials only, form grant_type authorization_code (code,
//                                         redirect_uri) or refresh_token; refresh rotates the refresh token
//   GET  /api/v5/user_account             the account;  GET /api/v5/boards  paged by bookmark (page_size ≤ 250)
//   POST /api/v5/media                    {media_type: 'video'} → media_id, upload_url (the fake's S3 form), upload_parameters
//   POST /s3/pinterest-media-upload       multipart: every upload parameter unchanged, then `file`; no Authorization header
//   GET  /api/v5/media/{id}               registered → processing (processingPolls GETs) → succeeded
//   POST /api/v5/pins                     board of the account, title ≤ 100, description ≤ 800, link ≤ 2048, media_source:
//                                         image_url (the fake GETs it), image_base64, multiple_image_urls (GETs each),
//                                         multiple_image_base64, video_id (succeeded media, plus a cover: URL GET or base64)
//   GET  /api/v5/pins                     newest first;  GET /api/v5/user_account/analytics, /api/v5/pins/{id}/analytics
//   PATCH /api/v5/pins/{id}               pins/update (PinUpdate, same OpenAPI release, read 2026-11-27): a pin of the account
//                                         (404 code 50 when unknown or deleted, 403 code 29 when another account's), a board of
//                                         the account, null clears title/link/description/alt_text; 403 when the app has no
//                                         access to this beta endpoint (`pinUpdateBeta` false; the wording is the fake's)
//   DELETE /api/v5/pins/{id}              pins/delete: 204; 404 code 50 when already gone; 403 code 29 for another account's
// Every API route answers 401 {code: 2, message: 'Authentication failed.'} without a live bearer token.
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, basicCredentials, OAuthRefusal, type OAuthAuthority } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { contractProblems } from '../contracts/pinterest/contract.js';

export interface PinterestFakePin {
  id: string;
  board_id: string;
  title?: string;
  description?: string;
  link?: string;
  alt_text?: string;
  media_source: Record<string, any>;
  /** Bytes of each picture the fake fetched or decoded, in order (the cover last for a video pin). */
  images: { from: 'url' | 'base64'; bytes: Buffer; contentType: string }[];
  created_at: string;
  /** Each PATCH body the fake applied, in order. */
  updates: Record<string, unknown>[];
  deleted?: boolean;
  /** The pin belongs to another account (its update and delete are refused 403). */
  foreign?: boolean;
}

export interface PinterestFakeMedia {
  id: string;
  key: string;
  parameters: Record<string, string>;
  uploaded?: { bytes: Buffer; contentType: string };
  pendingPolls: number;
  failed?: boolean;
}

export interface PinterestFake {
  server: FakeServer;
  url: string;
  endpoints: { web: string; api: string };
  authority: OAuthAuthority;
  account: { id: string; username: string; business_name: string; profile_image: string; account_type: string };
  boards: { id: string; name: string; privacy: string }[];
  pins: PinterestFakePin[];
  media: PinterestFakeMedia[];
  /** Every media URL the fake fetched, with the status our server answered. */
  fetched: { url: string; status: number }[];
  /** Requests the OpenAPI contract refused, as "METHOD path: problem". */
  contractViolations: string[];
  /** Media registered afterwards stay "processing" for this many GETs after their upload. */
  setProcessingPolls(n: number): void;
  /** False: the app has no access to pins/update (a beta of the API), refused 403. */
  pinUpdateBeta: boolean;
  close(): Promise<void>;
}

const error = (status: number, code: number, message: string): FakeReply => ({ status, json: { code, message } });
const isImage = (bytes: Buffer) =>
  (bytes[0] === 0xff && bytes[1] === 0xd8) || bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])) || bytes.toString('ascii', 0, 3) === 'GIF';

export async function startPinterestFake(options: { boardCount?: number } = {}): Promise<PinterestFake> {
  const server = await startFakeServer();
  const { url } = server;
  // Routes of the API host are registered behind the contract check.
  const contractViolations = server.underContract(
    (_method, path) => (path.startsWith('/api/v5/') ? (request) => contractProblems(request, request.path.slice('/api/v5'.length)) : undefined),
    (problems) => error(400, 1, `Invalid request: ${problems.join('; ')}`),
  );
  const authority = createOAuthAuthority({ rotateRefreshTokens: true, expiresIn: 2_592_000 });
  const account = { id: '549755885175', username: 'heraldpins', business_name: 'Herald Pins', profile_image: `${url}/img/avatar.jpg`, account_type: 'BUSINESS' };
  const boards = Array.from({ length: options.boardCount ?? 3 }, (_, index) => ({ id: String(900_000 + index), name: `Board ${index + 1}`, privacy: 'PUBLIC' }));
  const pins: PinterestFakePin[] = [];
  const media: PinterestFakeMedia[] = [];
  const fetched: { url: string; status: number }[] = [];
  let processingPolls = 0;
  let nextId = 1_000_000;

  const authed = authority.guard(() => error(401, 2, 'Authentication failed.'));

  async function pull(target: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
    const response = await fetch(target).catch(() => undefined);
    fetched.push({ url: target, status: response?.status ?? 0 });
    if (!response?.ok) return undefined;
    const bytes = Buffer.from(await response.arrayBuffer());
    return isImage(bytes) ? { bytes, contentType: response.headers.get('content-type') ?? '' } : undefined;
  }
  const decode = (item: { content_type?: string; data?: string }) => {
    if (item.content_type !== 'image/jpeg' && item.content_type !== 'image/png') return undefined;
    if (!item.data || !/^[a-zA-Z0-9+/=]+$/.test(item.data)) return undefined;
    const bytes = Buffer.from(item.data, 'base64');
    return isImage(bytes) ? { from: 'base64' as const, bytes, contentType: item.content_type } : undefined;
  };

  server.on('GET', '/web/oauth/', (request) => {
    if (request.query.get('response_type') !== 'code') return { status: 400, body: 'response_type must be code' };
    const scope = request.query.get('scope') ?? '';
    for (const needed of ['boards:read', 'pins:write', 'user_accounts:read']) if (!scope.split(',').includes(needed)) return { status: 400, body: `scope ${needed} missing` };
    try {
      const location = authority.approveQuery(request.query);
      return { status: 302, headers: { location } };
    } catch (refusal) {
      return { status: 400, body: (refusal as Error).message };
    }
  });

  server.on('POST', '/api/v5/oauth/token', (request) => {
    const { id, secret } = basicCredentials(request.headers.authorization);
    if (!request.form) return error(400, 1, 'The request body must be application/x-www-form-urlencoded.');
    try {
      if (request.form.has('client_id') || request.form.has('client_secret')) throw new OAuthRefusal('invalid_client', 'client credentials go in the Authorization header (HTTP Basic)');
      authority.checkClient(id, secret);
      const grant = request.form.get('grant_type');
      const issued =
        grant === 'authorization_code'
          ? authority.redeemCode({ code: request.form.get('code') ?? undefined, redirectUri: request.form.get('redirect_uri') ?? undefined, clientId: id })
          : grant === 'refresh_token'
            ? authority.redeemRefreshToken(request.form.get('refresh_token') ?? undefined)
            : undefined;
      if (!issued) throw new OAuthRefusal('unsupported_grant_type', `grant_type ${grant} is not supported`);
      return {
        json: {
          access_token: issued.accessToken,
          refresh_token: issued.refreshToken,
          response_type: grant,
          token_type: 'bearer',
          expires_in: issued.expiresIn,
          refresh_token_expires_in: 31_536_000,
          refresh_token_expires_at: Math.floor(Date.now() / 1000) + 31_536_000,
          scope: 'boards:read,boards:write,pins:read,pins:write,user_accounts:read',
        },
      };
    } catch (refusal) {
      const status = refusal instanceof OAuthRefusal && refusal.error === 'invalid_client' ? 401 : 400;
      return error(status, status === 401 ? 2 : 1, (refusal as Error).message);
    }
  });

  server.on('GET', '/api/v5/user_account', authed(() => ({ json: { ...account, follower_count: 120, following_count: 3, pin_count: pins.length, monthly_views: 4200 } })));

  server.on('GET', '/api/v5/boards', authed((request) => {
    const size = Number(request.query.get('page_size') ?? 25);
    if (!Number.isInteger(size) || size < 1 || size > 250) return error(400, 1, 'page_size must be between 1 and 250.');
    const start = Number(request.query.get('bookmark') ?? 0);
    const items = boards.slice(start, start + size).map((board) => ({ ...board, description: '', owner: { username: account.username } }));
    return { json: { items, bookmark: start + size < boards.length ? String(start + size) : null } };
  }));

  server.on('POST', '/api/v5/media', authed((request) => {
    if (request.json?.media_type !== 'video') return error(400, 1, "media_type must be 'video'.");
    const id = String(nextId++);
    const key = `uploads/${randomBytes(6).toString('hex')}/${id}`;
    const parameters = { 'x-amz-date': '20260101T000000Z', 'x-amz-signature': randomBytes(16).toString('hex'), 'x-amz-security-token': 'token', 'x-amz-algorithm': 'AWS4-HMAC-SHA256', key, policy: randomBytes(24).toString('base64'), 'x-amz-credential': 'credential', 'Content-Type': 'multipart/form-data' };
    media.push({ id, key, parameters, pendingPolls: processingPolls });
    return { status: 201, json: { media_id: id, media_type: 'video', upload_url: `${url}/s3/pinterest-media-upload`, upload_parameters: parameters } };
  }));

  const s3Error = (status: number, code: string, message: string): FakeReply => ({ status, headers: { 'content-type': 'application/xml' }, body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>` });
  server.on('POST', '/s3/pinterest-media-upload', async (request) => {
    if (request.headers.authorization) return s3Error(400, 'InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified');
    const form = await multipartOf(request);
    if (!form) return s3Error(400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');
    const target = media.find((item) => item.key === form.get('key'));
    if (!target) return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed: ["eq", "$key", ...]');
    for (const [name, value] of Object.entries(target.parameters)) {
      if (form.get(name) !== value) return s3Error(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: ["eq", "$${name}", "${value}"]`);
    }
    const names = [...form.keys()];
    if (names.at(-1) !== 'file') return s3Error(400, 'InvalidArgument', 'Bucket POST must contain a field named \'file\', and it must be the last field.');
    const file = form.get('file') as File;
    target.uploaded = { bytes: Buffer.from(await file.arrayBuffer()), contentType: file.type };
    return { status: 204 };
  });

  server.on('GET', '/api/v5/media/*', authed((request) => {
    const target = media.find((item) => item.id === request.path.split('/').pop());
    if (!target) return error(404, 404, 'Media not found.');
    let status = 'registered';
    if (target.uploaded) {
      if (target.failed) status = 'failed';
      else if (target.pendingPolls > 0) {
        target.pendingPolls -= 1;
        status = 'processing';
      } else status = 'succeeded';
    }
    return { json: { media_id: target.id, media_type: 'video', status } };
  }));

  server.on('POST', '/api/v5/pins', authed(async (request) => {
    const body = request.json ?? {};
    if (!boards.some((board) => board.id === body.board_id)) return error(404, 4001, 'Board not found.');
    if (body.title !== undefined && String(body.title).length > 100) return error(400, 1, 'Invalid request: title is longer than 100 characters.');
    if (body.description !== undefined && String(body.description).length > 800) return error(400, 1, 'Invalid request: description is longer than 800 characters.');
    if (body.link !== undefined && String(body.link).length > 2048) return error(400, 1, 'Invalid request: link is too long.');
    const source = body.media_source ?? {};
    const images: PinterestFakePin['images'] = [];
    const fetchImage = async (target: unknown) => {
      const pulled = typeof target === 'string' ? await pull(target) : undefined;
      if (pulled) images.push({ from: 'url', ...pulled });
      return pulled;
    };
    switch (source.source_type) {
      case 'image_url':
        if (!(await fetchImage(source.url))) return error(400, 1, 'Sorry we could not fetch the image.');
        break;
      case 'image_base64': {
        const image = decode(source);
        if (!image) return error(400, 1, 'Invalid request: media_source.data must be a base64 JPEG or PNG matching content_type.');
        images.push(image);
        break;
      }
      case 'multiple_image_urls':
      case 'multiple_image_base64': {
        const items = Array.isArray(source.items) ? source.items : [];
        if (items.length < 2 || items.length > 5) return error(400, 1, 'Invalid request: media_source.items must have 2 to 5 images.');
        for (const item of items) {
          const image = source.source_type === 'multiple_image_urls' ? await fetchImage(item.url) : decode(item);
          if (!image) return error(400, 1, 'Sorry we could not fetch the image.');
          if (source.source_type === 'multiple_image_base64') images.push(image as PinterestFakePin['images'][number]);
        }
        break;
      }
      case 'video_id': {
        const target = media.find((item) => item.id === source.media_id);
        if (!target?.uploaded) return error(400, 1, 'Invalid request: the media upload was not found or not uploaded.');
        if (target.pendingPolls > 0 || target.failed) return error(400, 1, 'Invalid request: the video is not processed yet.');
        if (source.cover_image_url !== undefined) {
          if (!(await fetchImage(source.cover_image_url))) return error(400, 1, 'Sorry we could not fetch the cover image.');
        } else if (source.cover_image_data !== undefined) {
          const image = decode({ content_type: source.cover_image_content_type, data: source.cover_image_data });
          if (!image) return error(400, 1, 'Invalid request: cover_image_data must be a base64 JPEG or PNG matching cover_image_content_type.');
          images.push(image);
        } else if (source.cover_image_key_frame_time === undefined) {
          return error(400, 1, 'Invalid request: a video pin needs cover_image_url, cover_image_data or cover_image_key_frame_time.');
        }
        break;
      }
      default:
        return error(400, 1, `Invalid request: media_source.source_type ${source.source_type} is not supported.`);
    }
    const pin: PinterestFakePin = { id: String(nextId++), board_id: body.board_id, title: body.title, description: body.description, link: body.link, alt_text: body.alt_text, media_source: source, images, created_at: new Date().toISOString(), updates: [] };
    pins.push(pin);
    return { status: 201, json: pinEntity(pin) };
  }));

  const pinEntity = (pin: PinterestFakePin) => ({
    id: pin.id,
    board_id: pin.board_id,
    title: pin.title ?? null,
    description: pin.description ?? null,
    link: pin.link ?? null,
    created_at: pin.created_at,
    media: pin.media_source.source_type === 'video_id'
      ? { media_type: 'video', cover_image_url: `${url}/img/${pin.id}-cover.jpg` }
      : { media_type: 'image', images: { '600x': { url: `${url}/img/${pin.id}-600.jpg`, width: 600, height: 450 } } },
  });

  server.on('GET', '/api/v5/pins', authed((request) => {
    const size = Number(request.query.get('page_size') ?? 25);
    return { json: { items: [...pins].filter((pin) => !pin.deleted).reverse().slice(0, size).map(pinEntity), bookmark: null } };
  }));

  const notFound = () => error(404, 50, 'Pin not found.');
  const notPermitted = () => error(403, 29, 'You are not permitted to access that resource.');
  const pinOf = (request: RecordedRequest) => pins.find((pin) => pin.id === request.path.split('/')[4] && !pin.deleted);

  server.on('PATCH', '/api/v5/pins/*', authed((request) => {
    if (!fake.pinUpdateBeta) return error(403, 3, 'Your application does not have access to this beta endpoint (pins/update).');
    const pin = pinOf(request);
    if (!pin) return notFound();
    if (pin.foreign) return notPermitted();
    const body = (request.json ?? {}) as Record<string, any>;
    if (body.board_id !== undefined && !boards.some((board) => board.id === body.board_id)) return error(404, 4001, 'Board not found.');
    pin.updates.push(body);
    for (const field of ['board_id', 'title', 'description', 'link', 'alt_text'] as const) {
      if (field in body) (pin as unknown as Record<string, unknown>)[field] = body[field] ?? undefined;
    }
    return { json: pinEntity(pin) };
  }));

  server.on('DELETE', '/api/v5/pins/*', authed((request) => {
    const pin = pinOf(request);
    if (!pin) return notFound();
    if (pin.foreign) return notPermitted();
    pin.deleted = true;
    return { status: 204 };
  }));

  /** Daily points of the requested period: metric value = day of month × a per-metric factor. */
  const report = (request: RecordedRequest, required: boolean): FakeReply => {
    const start = request.query.get('start_date');
    const end = request.query.get('end_date');
    if (!start || !end || !/^\d{4}-\d{2}-\d{2}$/.test(start) || !/^\d{4}-\d{2}-\d{2}$/.test(end)) return error(400, 1, 'start_date and end_date (YYYY-MM-DD) are required.');
    if (Date.parse(start) < Date.now() - 91 * 86_400_000) return error(400, 1, 'start_date cannot be more than 90 days back from today.');
    const types = request.query.get('metric_types')?.split(',');
    if (required && !types) return error(400, 1, 'metric_types is required.');
    const factors: Record<string, number> = { IMPRESSION: 10, SAVE: 2, PIN_CLICK: 3, OUTBOUND_CLICK: 1, ENGAGEMENT: 5 };
    const daily = [];
    for (let day = Date.parse(start); day <= Date.parse(end); day += 86_400_000) {
      const date = new Date(day).toISOString().slice(0, 10);
      const metrics = Object.fromEntries((types ?? Object.keys(factors)).map((type) => [type, (factors[type] ?? 1) * new Date(day).getUTCDate()]));
      daily.push({ date, data_status: 'READY', metrics });
    }
    return { json: { all: { daily_metrics: daily, summary_metrics: {} } } };
  };
  server.on('GET', '/api/v5/user_account/analytics', authed((request) => report(request, false)));
  server.on('GET', '/api/v5/pins/*/analytics', authed((request) => {
    if (!pinOf(request)) return notFound();
    return report(request, true);
  }));

  const fake: PinterestFake = {
    server,
    url,
    endpoints: { web: `${url}/web`, api: `${url}/api` },
    authority,
    account,
    boards,
    pins,
    media,
    fetched,
    contractViolations,
    setProcessingPolls(n) {
      processingPolls = n;
    },
    pinUpdateBeta: true,
    close: () => server.close(),
  };
  return fake;
}
