// A fake Mastodon instance for provider and end-to-end tests, built on startFakeServer (real HTTP on 127.0.0.1).
// Shaped after docs.joinmastodon.org (2026-08): methods/statuses, methods/media, methods/accounts, methods/instance#v2,
// entities/Instance, and Mastodon's PostStatusService (an Idempotency-Key answers the same status for one hour).
//
//   const fake = await startMastodonFake();            // or startMastodonFake({ token: 'my-token' })
//   const context = providerContext({ auth: fake.auth }); // fake.auth = { accessToken, internalId, data: { instance } }
//   ... publish through providers/mastodon.ts ...
//   fake.statuses  -> every status created: { id, status, in_reply_to_id, media_ids, idempotencyKey, visibility, ... }
//   fake.media     -> every upload: { id, bytes, mimeType, description, filename }
//   fake.server    -> the FakeServer: `requests`, `requestsTo(method, path)`, `failNext(...)` for error injection
//   await fake.close()
//
// Routes (every one answers 401 {error:'The access token is invalid'} unless `Authorization: Bearer <token>`):
//   GET  /api/v1/accounts/verify_credentials   the Account (`fake.account`, mutable: change counts for analytics tests)
//   GET  /api/v2/instance                      the Instance with `fake.configuration` (mutable: an instance's own limits)
//   POST /api/v2/media                         multipart `file` (+ `description`): 200 with url, or 202 with url null while
//                                              processing (see setProcessingPolls); 422 without a file
//   GET  /api/v1/media/:id                     206 (url null) while processing, then 200; 404 when unknown
//   POST /api/v1/statuses                      form or JSON: status, visibility, in_reply_to_id, media_ids[]. Honours the
//                                              `Idempotency-Key` header like Mastodon: a key seen in the last hour returns
//                                              the same status and creates nothing (forgetIdempotencyKeys() ends that hour).
//                                              422 for blank text without media, more than max_characters, more than
//                                              max_media_attachments, a video with other media, or media still processing;
//                                              404 when in_reply_to_id is unknown.
//   GET  /api/v1/statuses/:id/source           {id, text, spoiler_text}: the text as it was typed (own statuses)
//   GET  /api/v1/statuses/:id                  the Status (counts from the record: tests may bump favourites_count etc.)
//   PUT  /api/v1/statuses/:id                  edit (form or JSON: status, media_ids[]): the same 422s as create; the
//                                              attachments not sent are removed (as Mastodon's UpdateStatusService); sets
//                                              edited_at; 404 for an unknown status or another account's (`foreign`)
//   DELETE /api/v1/statuses/:id                answers the deleted Status with its `text`; 404 when unknown or another
//                                              account's; 429 after 30 deletions in 30 minutes (Mastodon's rate limit)
//   GET  /api/v1/statuses/:id/context          {ancestors, descendants}: the replies under the status at any depth, in tree order
//                                              (methods/statuses/#context, entities/Context); 404 when unknown
//   GET  /api/v1/accounts/:id/statuses         newest first; honours exclude_replies, max_id and limit (default 20, at most 40);
//                                              a Link header rel="next" when there is more
//
// setProcessingPolls(n): media uploaded afterwards answer 202 on upload and 206 on their first n GETs, then 200.
// Set `mastodonPolling.delayMs` (providers/mastodon.ts) to a few ms in tests that use it, so polling stays fast.
import type { ChannelAuth } from '../../providers/types.js';
import { startFakeServer, multipartOf, type FakeHandler, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';

export interface MastodonFakeStatus {
  id: string;
  status: string;
  in_reply_to_id: string | null;
  media_ids: string[];
  /** The Idempotency-Key header the create carried, or null. */
  idempotencyKey: string | null;
  visibility: string;
  created_at: string;
  favourites_count: number;
  reblogs_count: number;
  replies_count: number;
  /** Set by an edit (PUT). */
  edited_at?: string | null;
  /** A status of another account on the instance: edits and deletions of it are refused (404, as Mastodon does). */
  foreign?: boolean;
  /** Someone else's status (a reply left on the account's post, addReply); absent: the account's own. */
  author?: MastodonFakeAuthor;
}

/** Another account of the fediverse, as a reply's `account` shows it. */
export interface MastodonFakeAuthor {
  id: string;
  username: string;
  acct: string;
  display_name: string;
}

export interface MastodonFakeMedia {
  id: string;
  bytes: Buffer;
  mimeType: string;
  description: string | null;
  filename: string;
  /** GETs still answering 206 before the media is ready. */
  pendingPolls: number;
}

export interface MastodonFakeAccount {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  avatar: string;
  followers_count: number;
  following_count: number;
  statuses_count: number;
}

export interface MastodonFakeConfiguration {
  statuses: { max_characters: number; max_media_attachments: number; characters_reserved_per_url: number };
  media_attachments: { supported_mime_types: string[]; description_limit: number; image_size_limit: number; image_matrix_limit: number; video_size_limit: number; video_frame_rate_limit: number; video_matrix_limit: number };
}

export interface MastodonFake {
  server: FakeServer;
  /** The instance base URL (http://127.0.0.1:port), what the connect form's `instance` field takes. */
  url: string;
  token: string;
  account: MastodonFakeAccount;
  /** Channel auth for providerContext({ auth }): the fake's token, account id and instance URL. */
  auth: ChannelAuth;
  statuses: MastodonFakeStatus[];
  /** The statuses deleted through the API, in order. */
  deleted: MastodonFakeStatus[];
  media: MastodonFakeMedia[];
  /** The instance's configured limits, answered by GET /api/v2/instance and enforced on create. */
  configuration: MastodonFakeConfiguration;
  setProcessingPolls(n: number): void;
  /** The hour Mastodon keeps Idempotency-Keys has passed: a repeated key creates a new status. */
  forgetIdempotencyKeys(): void;
  /** Adds a status the account made earlier, outside the API under test. */
  seedStatus(text: string, options: { createdAt: Date; inReplyToId?: string }): MastodonFakeStatus;
  /** Someone else replies to a status (HTML-escaped into `content` as Mastodon renders it). */
  addReply(text: string, options: { inReplyToId: string; author?: Partial<MastodonFakeAuthor>; createdAt?: Date }): MastodonFakeStatus;
  close(): Promise<void>;
}


const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const mediaType = (mimeType: string) => (mimeType.startsWith('image/gif') ? 'gifv' : mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('video/') ? 'video' : mimeType.startsWith('audio/') ? 'audio' : 'unknown');
const error = (status: number, message: string): FakeReply => ({ status, json: { error: message } });

export async function startMastodonFake(options: { token?: string } = {}): Promise<MastodonFake> {
  const server = await startFakeServer();
  const { url } = server;
  const token = options.token ?? 'mastodon-fake-token';
  let nextId = 113_000_000_000_000_000n;
  const newId = () => String(++nextId);
  let processingPolls = 0;
  const statuses: MastodonFakeStatus[] = [];
  const media: MastodonFakeMedia[] = [];
  const deleted: MastodonFakeStatus[] = [];
  const byIdempotencyKey = new Map<string, MastodonFakeStatus>();
  // Mastodon's defaults (mastodon.social answers the same).
  const configuration: MastodonFakeConfiguration = {
    statuses: { max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23 },
    media_attachments: {
      supported_mime_types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4', 'video/quicktime', 'video/webm'],
      description_limit: 1500,
      image_size_limit: 16_777_216,
      image_matrix_limit: 33_177_600,
      video_size_limit: 103_809_024,
      video_frame_rate_limit: 120,
      video_matrix_limit: 8_294_400,
    },
  };
  const account: MastodonFakeAccount = {
    id: '109000000000000001',
    username: 'herald',
    acct: 'herald',
    display_name: 'Herald Test',
    avatar: `${url}/system/accounts/avatars/herald.png`,
    followers_count: 42,
    following_count: 7,
    statuses_count: 0,
  };

  const accountEntity = () => ({
    ...account,
    locked: false,
    bot: false,
    created_at: '2024-01-01T00:00:00.000Z',
    note: '',
    url: `${url}/@${account.username}`,
    avatar_static: account.avatar,
    header: `${url}/headers/original/missing.png`,
    emojis: [],
    fields: [],
  });

  const foreignAccount = (author: MastodonFakeAuthor) => ({
    ...author,
    locked: false,
    bot: false,
    created_at: '2023-05-01T00:00:00.000Z',
    note: '',
    url: `https://${author.acct.split('@')[1] ?? new URL(url).host}/@${author.username}`,
    avatar: `${url}/system/accounts/avatars/${author.username}.png`,
    avatar_static: `${url}/system/accounts/avatars/${author.username}.png`,
    header: `${url}/headers/original/missing.png`,
    emojis: [],
    fields: [],
    followers_count: 3,
    following_count: 5,
    statuses_count: 10,
  });

  const mediaEntity = (item: MastodonFakeMedia) => {
    const ready = item.pendingPolls === 0;
    const path = `${url}/system/media_attachments/files/${item.id}`;
    return {
      id: item.id,
      type: mediaType(item.mimeType),
      url: ready ? `${path}/original/${item.filename}` : null,
      preview_url: `${path}/small/${item.filename}`,
      remote_url: null,
      preview_remote_url: null,
      text_url: null,
      meta: {},
      description: item.description,
      blurhash: 'UFRx#?~q_3~q_3-;ofRjRjWBWBWB',
    };
  };

  const statusEntity = (item: MastodonFakeStatus) => {
    const parent = item.in_reply_to_id ? statuses.find((status) => status.id === item.in_reply_to_id) : undefined;
    return {
      id: item.id,
      created_at: item.created_at,
      in_reply_to_id: item.in_reply_to_id,
      in_reply_to_account_id: parent ? account.id : null,
      sensitive: false,
      spoiler_text: '',
      visibility: item.visibility,
      language: 'en',
      uri: `${url}/users/${account.username}/statuses/${item.id}`,
      url: `${url}/@${account.username}/${item.id}`,
      replies_count: item.replies_count,
      reblogs_count: item.reblogs_count,
      favourites_count: item.favourites_count,
      edited_at: item.edited_at ?? null,
      content: item.status ? `<p>${escapeHtml(item.status).replace(/\n/g, '<br />')}</p>` : '',
      reblog: null,
      application: item.author ? null : { name: 'Herald', website: null },
      account: item.author ? foreignAccount(item.author) : accountEntity(),
      media_attachments: item.media_ids.map((id) => mediaEntity(media.find((file) => file.id === id)!)),
      mentions: [],
      tags: [],
      emojis: [],
      card: null,
      poll: null,
    };
  };

  const authed =
    (handler: FakeHandler): FakeHandler =>
    (request) =>
      request.headers.authorization === `Bearer ${token}` ? handler(request) : error(401, 'The access token is invalid');

  server.on('GET', '/api/v1/accounts/verify_credentials', authed(() => ({ json: accountEntity() })));

  // Public, like Mastodon's: no token needed.
  server.on('GET', '/api/v2/instance', () => ({
    json: { domain: new URL(url).host, title: 'Fake Mastodon', version: '4.4.0', source_url: 'https://github.com/mastodon/mastodon', description: '', configuration: { urls: { streaming: url.replace(/^http/, 'ws') }, ...configuration }, registrations: { enabled: false, approval_required: false }, rules: [] },
  }));

  server.on(
    'GET',
    '/api/v1/statuses/*/source',
    authed((request) => {
      const status = statuses.find((item) => item.id === request.path.split('/')[4]);
      return status ? { json: { id: status.id, text: status.status, spoiler_text: '' } } : error(404, 'Record not found');
    }),
  );

  server.on(
    'POST',
    '/api/v2/media',
    authed(async (request) => {
      const form = await multipartOf(request);
      const file = form?.get('file');
      if (!form || !file || typeof file === 'string') return error(422, "Validation failed: File can't be blank");
      const description = form.get('description');
      const item: MastodonFakeMedia = {
        id: newId(),
        bytes: Buffer.from(await file.arrayBuffer()),
        mimeType: file.type,
        description: typeof description === 'string' ? description : null,
        filename: (file as File).name || 'file',
        pendingPolls: processingPolls,
      };
      media.push(item);
      return { status: item.pendingPolls > 0 ? 202 : 200, json: mediaEntity(item) };
    }),
  );

  server.on(
    'GET',
    '/api/v1/media/*',
    authed((request) => {
      const item = media.find((file) => file.id === request.path.split('/').pop());
      if (!item) return error(404, 'Record not found');
      if (item.pendingPolls > 0) {
        item.pendingPolls -= 1;
        return { status: 206, json: { ...mediaEntity(item), url: null } };
      }
      return { json: mediaEntity(item) };
    }),
  );

  const createStatus = (request: RecordedRequest): FakeReply => {
    const body = request.json as Record<string, unknown> | undefined;
    const param = (key: string) => (body ? (body[key] as string | undefined) : (request.form?.get(key) ?? undefined));
    const mediaIds = body ? ((body.media_ids as string[] | undefined) ?? []) : (request.form?.getAll('media_ids[]') ?? []);
    const key = request.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' && key.length > 0 ? key : null;
    const seen = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
    if (seen) return { json: statusEntity(seen) };
    const text = param('status') ?? '';
    const inReplyToId = param('in_reply_to_id') || null;
    const attached = mediaIds.map((id) => media.find((file) => file.id === id)).filter((file) => file !== undefined);
    if (inReplyToId && !statuses.some((status) => status.id === inReplyToId)) return error(404, 'Record not found');
    if (text.trim() === '' && attached.length === 0) return error(422, "Validation failed: Text can't be blank");
    const { max_characters: maxCharacters, max_media_attachments: maxMedia } = configuration.statuses;
    if ([...text].length > maxCharacters) return error(422, `Validation failed: Text character limit of ${maxCharacters} exceeded`);
    if (mediaIds.length > maxMedia) return error(422, `Validation failed: Cannot attach more than ${maxMedia} files`);
    if (attached.some((file) => mediaType(file.mimeType) === 'video') && attached.length > 1) return error(422, 'Cannot attach a video to a post that already contains images');
    if (attached.some((file) => file.pendingPolls > 0)) return error(422, 'Cannot attach files that have not finished processing. Try again in a moment!');
    const status: MastodonFakeStatus = {
      id: newId(),
      status: text,
      in_reply_to_id: inReplyToId,
      media_ids: attached.map((file) => file.id),
      idempotencyKey,
      visibility: param('visibility') || 'public',
      created_at: new Date().toISOString(),
      favourites_count: 0,
      reblogs_count: 0,
      replies_count: 0,
    };
    statuses.push(status);
    if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, status);
    const parent = statuses.find((item) => item.id === inReplyToId);
    if (parent) parent.replies_count += 1;
    account.statuses_count += 1;
    return { json: statusEntity(status) };
  };
  server.on('POST', '/api/v1/statuses', authed(createStatus));

  const ownStatus = (request: RecordedRequest) => statuses.find((item) => item.id === request.path.split('/')[4] && !item.foreign);
  server.on(
    'PUT',
    '/api/v1/statuses/*',
    authed((request) => {
      const status = ownStatus(request);
      if (!status) return error(404, 'Record not found');
      const body = request.json as Record<string, unknown> | undefined;
      const text = (body ? (body.status as string | undefined) : (request.form?.get('status') ?? undefined)) ?? '';
      const mediaIds = body ? ((body.media_ids as string[] | undefined) ?? []) : (request.form?.getAll('media_ids[]') ?? []);
      const attached = mediaIds.map((id) => media.find((file) => file.id === id)).filter((file) => file !== undefined);
      if (text.trim() === '' && attached.length === 0) return error(422, "Validation failed: Text can't be blank");
      const { max_characters: maxCharacters, max_media_attachments: maxMedia } = configuration.statuses;
      if ([...text].length > maxCharacters) return error(422, `Validation failed: Text character limit of ${maxCharacters} exceeded`);
      if (mediaIds.length > maxMedia) return error(422, `Validation failed: Cannot attach more than ${maxMedia} files`);
      status.status = text;
      status.media_ids = attached.map((file) => file.id);
      status.edited_at = new Date().toISOString();
      return { json: statusEntity(status) };
    }),
  );

  const deletions: number[] = [];
  server.on(
    'DELETE',
    '/api/v1/statuses/*',
    authed((request) => {
      const status = ownStatus(request);
      if (!status) return error(404, 'Record not found');
      const now = Date.now();
      while (deletions.length && deletions[0] < now - 30 * 60_000) deletions.shift();
      if (deletions.length >= 30) return { status: 429, headers: { 'x-ratelimit-remaining': '0' }, json: { error: 'Too many requests' } };
      deletions.push(now);
      statuses.splice(statuses.indexOf(status), 1);
      deleted.push(status);
      account.statuses_count -= 1;
      return { json: { ...statusEntity(status), text: status.status } };
    }),
  );

  // The replies under a status at any depth, depth first in the order they were made.
  const descendantsOf = (id: string): MastodonFakeStatus[] =>
    statuses.filter((status) => status.in_reply_to_id === id).flatMap((status) => [status, ...descendantsOf(status.id)]);
  server.on(
    'GET',
    '/api/v1/statuses/*/context',
    authed((request) => {
      const status = statuses.find((item) => item.id === request.path.split('/')[4]);
      if (!status) return error(404, 'Record not found');
      const ancestors: MastodonFakeStatus[] = [];
      for (let parent = statuses.find((item) => item.id === status.in_reply_to_id); parent; parent = statuses.find((item) => item.id === parent!.in_reply_to_id)) ancestors.unshift(parent);
      return { json: { ancestors: ancestors.map(statusEntity), descendants: descendantsOf(status.id).map(statusEntity) } };
    }),
  );

  server.on(
    'GET',
    '/api/v1/statuses/*',
    authed((request) => {
      const status = statuses.find((item) => item.id === request.path.split('/').pop());
      return status ? { json: statusEntity(status) } : error(404, 'Record not found');
    }),
  );

  server.on(
    'GET',
    '/api/v1/accounts/*/statuses',
    authed((request) => {
      if (request.path.split('/')[4] !== account.id) return error(404, 'Record not found');
      const excludeReplies = request.query.get('exclude_replies') === 'true';
      const limit = Math.min(Number(request.query.get('limit') ?? 20) || 20, 40);
      const maxId = request.query.get('max_id');
      const list = [...statuses]
        .reverse()
        .filter((status) => !status.author)
        .filter((status) => !(excludeReplies && status.in_reply_to_id))
        .filter((status) => maxId === null || BigInt(status.id) < BigInt(maxId));
      const page = list.slice(0, limit);
      // Mastodon pages with a Link header: rel="next" carries max_id of the page's last status.
      const next = list.length > limit ? { link: `<${url}${request.path}?max_id=${page.at(-1)!.id}>; rel="next"` } : undefined;
      return { json: page.map(statusEntity), ...(next ? { headers: next } : {}) };
    }),
  );

  return {
    server,
    url,
    token,
    account,
    auth: { accessToken: token, internalId: account.id, data: { instance: url } },
    statuses,
    deleted,
    media,
    configuration,
    setProcessingPolls(n: number) {
      processingPolls = Math.max(0, Math.floor(n));
    },
    forgetIdempotencyKeys() {
      byIdempotencyKey.clear();
    },
    seedStatus(text: string, options: { createdAt: Date; inReplyToId?: string }) {
      const status: MastodonFakeStatus = {
        id: newId(),
        status: text,
        in_reply_to_id: options.inReplyToId ?? null,
        media_ids: [],
        idempotencyKey: null,
        visibility: 'public',
        created_at: options.createdAt.toISOString(),
        favourites_count: 0,
        reblogs_count: 0,
        replies_count: 0,
      };
      statuses.push(status);
      // Newest last, as created: the listing answers newest first.
      statuses.sort((a, b) => a.created_at.localeCompare(b.created_at));
      return status;
    },
    addReply(text: string, options: { inReplyToId: string; author?: Partial<MastodonFakeAuthor>; createdAt?: Date }) {
      const parent = statuses.find((item) => item.id === options.inReplyToId);
      if (!parent) throw new Error(`addReply: no status ${options.inReplyToId}`);
      const author: MastodonFakeAuthor = { id: '110000000000000777', username: 'bob', acct: 'bob@example.social', display_name: 'Bob', ...options.author };
      const status: MastodonFakeStatus = {
        id: newId(),
        status: text,
        in_reply_to_id: parent.id,
        media_ids: [],
        idempotencyKey: null,
        visibility: 'public',
        created_at: (options.createdAt ?? new Date()).toISOString(),
        favourites_count: 0,
        reblogs_count: 0,
        replies_count: 0,
        author,
      };
      statuses.push(status);
      parent.replies_count += 1;
      return status;
    },
    close: () => server.close(),
  };
}
