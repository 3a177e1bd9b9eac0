// A fake Neynar API v2 (Farcaster) on 127.0.0.1, for the warpcast provider's tests. Shapes from docs.neynar.com/reference
// (publish-cast, lookup-signer, fetch-bulk-users, lookup-cast-by-hash-or-url, fetch-casts-for-user, search-channels; read
// 2026-11-26) and Neynar's OpenAPI as typed by @neynar/nodejs-sdk 3.177.0, which Herald's bodies are checked against
// (test/types/neynar-contract.ts). Comments and deletion from …/lookup-cast-conversation and …/delete-cast and the OAS spec
// (github.com/neynarxyz/OAS src/api/spec.yaml at 4b9ecc6), read 2026-11-27; their bodies are in the same type check.
//
//   const fake = await startWarpcastFake();       // fake.apiKey, fake.clientId; one approved signer: fake.signerUuid for fake.fid
//   WARPCAST_CLIENT_ID=fake.clientId WARPCAST_CLIENT_SECRET=fake.apiKey SOCIAL_ENDPOINTS={"warpcast":{"api":fake.url,"web":...}}
//   fake.casts / fake.signers / fake.users / fake.embedFetches   // state; fake.server.requests = every request received
//   fake.addReply('text', { parent: hash, fid?, username? })       // someone's reply under a cast; fake.deleted = casts deleted
//   fake.server.failNext('POST', '/v2/farcaster/cast/', { status: 429, json: {...} })
//
// Routes (every one answers 401 {code:'Unauthorized', message} without the right `x-api-key` header):
//   GET  /v2/farcaster/signer/?signer_uuid=          Signer {object, signer_uuid, public_key, status, fid?, permissions}; 404 unknown
//   GET  /v2/farcaster/user/bulk/?fids=1,2           {users: User[]}
//   POST /v2/farcaster/cast/                         PostCastReqBody → {success, cast: {hash, author: {fid}, text}}. Refused like Neynar
//                                                    and the protocol: signer not approved (403), text over 1024 bytes, more than 2
//                                                    embeds, an embed that is not {url} or {cast_id}, an unknown channel or parent
//                                                    (400/404). `idem` seen before for the signer answers the cast it made. Each
//                                                    embed URL is fetched (GET) like Neynar's crawler, recorded in embedFetches.
//   GET  /v2/farcaster/cast/?identifier=&type=hash   {cast: Cast} with reactions.likes_count / recasts_count and replies.count
//   GET  /v2/farcaster/feed/user/casts/?fid=&limit=&include_replies=&cursor=   {casts, next: {cursor}} newest first
//   GET  /v2/farcaster/channel/search/?q=&limit=     {channels, next}
//   GET  /v2/farcaster/cast/conversation/?identifier=&type=hash&reply_depth=&limit=&cursor=
//                                                    Conversation {conversation: {cast: {…Cast, direct_replies: […, direct_replies]}},
//                                                    next: {cursor}}: the top level paged (limit 1–50, default 20), nested down to
//                                                    reply_depth (0–5, default 2), oldest first; 400 out of range, 404 unknown cast
//   DELETE /v2/farcaster/cast/ {signer_uuid, target_hash}   OperationResponse {success, message}. Refused: another field, a hash
//                                                    not matching ^(0x)?[a-fA-F0-9]{40}$ (400), unknown signer (404), a signer not
//                                                    approved or without WRITE_ALL/DELETE_CAST (403), a cast of another fid (403),
//                                                    a cast not found or already deleted (404)
import { createHash, randomUUID } from 'node:crypto';
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';

export interface WarpcastFakeCast {
  hash: string;
  fid: number;
  text: string;
  embeds: { url?: string; cast_id?: unknown }[];
  channel: string | null;
  parent: string | null;
  parentAuthorFid: number | null;
  idem: string | null;
  timestamp: string;
  likes: number;
  recasts: number;
}

export interface WarpcastFakeSigner {
  status: 'generated' | 'pending_approval' | 'approved' | 'revoked';
  fid?: number;
  permissions: string[];
}

export interface WarpcastFake {
  server: FakeServer;
  url: string;
  apiKey: string;
  clientId: string;
  signerUuid: string;
  fid: number;
  signers: Map<string, WarpcastFakeSigner>;
  users: Map<number, { fid: number; username: string; display_name: string; pfp_url: string; follower_count: number; following_count: number }>;
  casts: WarpcastFakeCast[];
  embedFetches: { url: string; status: number; contentType: string }[];
  deleted: WarpcastFakeCast[];
  addReply(text: string, options: { parent: string; fid?: number; username?: string; timestamp?: Date }): WarpcastFakeCast;
  close(): Promise<void>;
}

const neynarError = (status: number, message: string, property?: string): FakeReply => ({ status, json: { code: status === 404 ? 'NotFound' : 'InvalidField', message, ...(property ? { property } : {}), status } });

const CHANNELS = [
  { id: 'farcaster', name: 'Farcaster', description: 'Talk about Farcaster', follower_count: 90000, image_url: 'https://imagedelivery.example/farcaster.png' },
  { id: 'photography', name: 'Photography', description: 'Pictures', follower_count: 21000, image_url: 'https://imagedelivery.example/photo.png' },
  { id: 'photo-walks', name: 'Photo walks', description: 'Walks with a camera', follower_count: 300, image_url: 'https://imagedelivery.example/walks.png' },
];

export async function startWarpcastFake(): Promise<WarpcastFake> {
  const server = await startFakeServer();
  const apiKey = 'NEYNAR-FAKE-API-KEY';
  const fid = 4242;
  const signerUuid = randomUUID();
  const signers = new Map<string, WarpcastFakeSigner>([[signerUuid, { status: 'approved', fid, permissions: ['WRITE_ALL'] }]]);
  const users = new Map([[fid, { fid, username: 'herald', display_name: 'Herald Test', pfp_url: 'https://imagedelivery.example/herald.png', follower_count: 120, following_count: 35 }]]);
  const casts: WarpcastFakeCast[] = [];
  const embedFetches: WarpcastFake['embedFetches'] = [];
  const deleted: WarpcastFakeCast[] = [];
  const newHash = (seed: string) => `0x${createHash('sha1').update(`${seed}:${casts.length}:${Math.random()}`).digest('hex')}`;

  const userView = (id: number) => {
    const user = users.get(id) ?? { fid: id, username: `fid${id}`, display_name: '', pfp_url: '', follower_count: 0, following_count: 0 };
    return { object: 'user', ...user, custody_address: '0x0000000000000000000000000000000000000001', registered_at: '2024-01-01T00:00:00.000Z', profile: { bio: { text: '' } }, verifications: [], auth_addresses: [], verified_addresses: { eth_addresses: [], sol_addresses: [] }, verified_accounts: [] };
  };
  const castView = (entry: WarpcastFakeCast) => ({
    object: 'cast',
    hash: entry.hash,
    parent_hash: entry.parent,
    parent_url: entry.channel ? `https://farcaster.example/~/channel/${entry.channel}` : null,
    root_parent_url: entry.channel ? `https://farcaster.example/~/channel/${entry.channel}` : null,
    parent_author: { fid: entry.parentAuthorFid },
    author: userView(entry.fid),
    text: entry.text,
    timestamp: entry.timestamp,
    embeds: entry.embeds.map((embed) => (embed.url ? { url: embed.url, metadata: { content_type: 'image/png' } } : embed)),
    reactions: { likes: [], recasts: [], likes_count: entry.likes, recasts_count: entry.recasts },
    replies: { count: casts.filter((other) => other.parent === entry.hash).length },
    thread_hash: entry.hash,
    mentioned_profiles: [],
    mentioned_profiles_ranges: [],
    mentioned_channels: [],
    mentioned_channels_ranges: [],
    channel: entry.channel ? { object: 'channel_dehydrated', id: entry.channel, name: entry.channel } : null,
  });

  const authorized = (handler: (request: RecordedRequest) => FakeReply | Promise<FakeReply>) => (request: RecordedRequest) =>
    request.headers['x-api-key'] === apiKey ? handler(request) : { status: 401, json: { code: 'Unauthorized', message: 'Unauthorized: the API key is missing or invalid', status: 401 } };

  server.on('GET', '/v2/farcaster/signer/', authorized((request) => {
    const uuid = request.query.get('signer_uuid');
    if (!uuid) return neynarError(400, 'signer_uuid is required', 'signer_uuid');
    const signer = signers.get(uuid);
    if (!signer) return neynarError(404, 'Signer not found');
    return { json: { object: 'signer', signer_uuid: uuid, public_key: `0x${createHash('sha256').update(uuid).digest('hex')}`, status: signer.status, ...(signer.fid === undefined ? {} : { fid: signer.fid }), permissions: signer.permissions } };
  }));

  server.on('GET', '/v2/farcaster/user/bulk/', authorized((request) => {
    const fids = (request.query.get('fids') ?? '').split(',').map((value) => Number(value.trim()));
    if (fids.length === 0 || fids.some((value) => !Number.isInteger(value) || value < 1)) return neynarError(400, 'fids must be comma-separated integers', 'fids');
    return { json: { users: fids.filter((value) => users.has(value)).map(userView) } };
  }));

  server.on('POST', '/v2/farcaster/cast/', authorized(async (request) => {
    const body = request.json ?? {};
    const allowed = new Set(['signer_uuid', 'text', 'embeds', 'channel_id', 'parent', 'parent_author_fid', 'idem']);
    const unknown = Object.keys(body).find((key) => !allowed.has(key));
    if (unknown) return neynarError(400, `Unknown field ${unknown}`, unknown);
    const signer = signers.get(String(body.signer_uuid ?? ''));
    if (!signer) return neynarError(404, 'Signer not found', 'signer_uuid');
    if (signer.status !== 'approved') return neynarError(403, `Signer is ${signer.status}: it cannot publish`, 'signer_uuid');
    const previous = body.idem ? casts.find((entry) => entry.idem === body.idem && entry.fid === signer.fid) : undefined;
    if (previous) return { json: { success: true, cast: { hash: previous.hash, author: { fid: previous.fid }, text: previous.text } } };
    const text = typeof body.text === 'string' ? body.text : '';
    const embeds = (body.embeds ?? []) as WarpcastFakeCast['embeds'];
    if (Buffer.byteLength(text) > 1024) return neynarError(400, 'Text is too long: casts take at most 1024 bytes', 'text');
    if (!Array.isArray(embeds) || embeds.length > 2) return neynarError(400, 'embeds must not have more than 2 items', 'embeds');
    if (!embeds.every((embed) => embed && Object.keys(embed).length === 1 && (typeof embed.url === 'string' || embed.cast_id))) return neynarError(400, 'Each embed is {url} or {cast_id}', 'embeds');
    if (!text && embeds.length === 0) return neynarError(400, 'A cast needs text or an embed', 'text');
    if (body.channel_id !== undefined && !CHANNELS.some((channel) => channel.id === body.channel_id)) return neynarError(404, `Channel ${body.channel_id} not found`, 'channel_id');
    if (body.parent !== undefined && !casts.some((entry) => entry.hash === body.parent)) return neynarError(404, 'Parent cast not found', 'parent');
    for (const embed of embeds) {
      if (!embed.url) continue;
      const fetched = await fetch(embed.url).catch(() => undefined);
      embedFetches.push({ url: embed.url, status: fetched?.status ?? 0, contentType: fetched?.headers.get('content-type') ?? '' });
    }
    const hash = newHash(`${signer.fid}:${text}`);
    casts.push({ hash, fid: signer.fid!, text, embeds, channel: body.channel_id ?? null, parent: body.parent ?? null, parentAuthorFid: body.parent_author_fid ?? null, idem: body.idem ?? null, timestamp: new Date().toISOString(), likes: 0, recasts: 0 });
    return { json: { success: true, cast: { hash, author: { fid: signer.fid }, text } } };
  }));

  server.on('GET', '/v2/farcaster/cast/', authorized((request) => {
    if (request.query.get('type') !== 'hash' && request.query.get('type') !== 'url') return neynarError(400, 'type must be url or hash', 'type');
    const found = casts.find((entry) => entry.hash === request.query.get('identifier'));
    return found ? { json: { cast: castView(found) } } : neynarError(404, 'Cast not found');
  }));

  server.on('GET', '/v2/farcaster/feed/user/casts/', authorized((request) => {
    const owner = Number(request.query.get('fid'));
    const limit = Number(request.query.get('limit') ?? 25);
    if (!Number.isInteger(owner) || owner < 1) return neynarError(400, 'fid is required', 'fid');
    if (!Number.isInteger(limit) || limit < 1 || limit > 150) return neynarError(400, 'limit must be between 1 and 150', 'limit');
    const replies = request.query.get('include_replies') !== 'false';
    const own = casts.filter((entry) => entry.fid === owner && (replies || entry.parent === null)).reverse();
    const start = Number(request.query.get('cursor') ?? 0);
    const page = own.slice(start, start + limit);
    return { json: { casts: page.map(castView), next: { cursor: start + limit < own.length ? String(start + limit) : null } } };
  }));

  server.on('GET', '/v2/farcaster/channel/search/', authorized((request) => {
    const q = (request.query.get('q') ?? '').toLowerCase();
    if (!q) return neynarError(400, 'q is required', 'q');
    const matching = CHANNELS.filter((channel) => channel.id.includes(q) || channel.name.toLowerCase().includes(q));
    return { json: { channels: matching.map((channel) => ({ object: 'channel', ...channel, url: `https://farcaster.example/~/channel/${channel.id}`, created_at: '2023-10-01T00:00:00.000Z' })), next: { cursor: null } } };
  }));

  const childrenOf = (hash: string) => casts.filter((entry) => entry.parent === hash).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  const withReplies = (entry: WarpcastFakeCast, depth: number): Record<string, unknown> => ({
    ...castView(entry),
    direct_replies: depth > 0 ? childrenOf(entry.hash).map((child) => withReplies(child, depth - 1)) : [],
  });
  const intIn = (value: string | null, fallback: number, min: number, max: number) => {
    const number = value === null ? fallback : Number(value);
    return Number.isInteger(number) && number >= min && number <= max ? number : undefined;
  };

  server.on('GET', '/v2/farcaster/cast/conversation/', authorized((request) => {
    if (request.query.get('type') !== 'hash' && request.query.get('type') !== 'url') return neynarError(400, 'type must be url or hash', 'type');
    const depth = intIn(request.query.get('reply_depth'), 2, 0, 5);
    if (depth === undefined) return neynarError(400, 'reply_depth must be an integer between 0 and 5', 'reply_depth');
    const limit = intIn(request.query.get('limit'), 20, 1, 50);
    if (limit === undefined) return neynarError(400, 'limit must be an integer between 1 and 50', 'limit');
    const found = casts.find((entry) => entry.hash === request.query.get('identifier'));
    if (!found) return neynarError(404, 'Cast not found');
    const start = Number(request.query.get('cursor') ?? 0);
    const top = childrenOf(found.hash);
    const page = depth > 0 ? top.slice(start, start + limit).map((child) => withReplies(child, depth - 1)) : [];
    return { json: { conversation: { cast: { ...castView(found), direct_replies: page } }, next: { cursor: depth > 0 && start + limit < top.length ? String(start + limit) : null } } };
  }));

  server.on('DELETE', '/v2/farcaster/cast/', authorized((request) => {
    const body = request.json ?? {};
    const unknown = Object.keys(body).find((key) => key !== 'signer_uuid' && key !== 'target_hash');
    if (unknown) return neynarError(400, `Unknown field ${unknown}`, unknown);
    if (typeof body.target_hash !== 'string' || !/^(0x)?[a-fA-F0-9]{40}$/.test(body.target_hash)) return neynarError(400, 'target_hash must be a cast hash', 'target_hash');
    const signer = signers.get(String(body.signer_uuid ?? ''));
    if (!signer) return neynarError(404, 'Signer not found', 'signer_uuid');
    if (signer.status !== 'approved') return neynarError(403, `Signer is ${signer.status}: it cannot delete`, 'signer_uuid');
    if (!signer.permissions.some((permission) => permission === 'WRITE_ALL' || permission === 'DELETE_CAST')) return neynarError(403, 'Signer has no permission to delete casts', 'signer_uuid');
    const hash = body.target_hash.startsWith('0x') ? body.target_hash : `0x${body.target_hash}`;
    const index = casts.findIndex((entry) => entry.hash === hash);
    if (index < 0) return neynarError(404, 'Cast not found', 'target_hash');
    if (casts[index].fid !== signer.fid) return neynarError(403, 'A signer can only delete casts of its own fid', 'target_hash');
    deleted.push(...casts.splice(index, 1));
    return { json: { success: true, message: 'Cast deleted' } };
  }));

  const addReply: WarpcastFake['addReply'] = (text, options) => {
    const author = options.fid ?? 777;
    if (!users.has(author)) users.set(author, { fid: author, username: options.username ?? `fid${author}`, display_name: options.username ? options.username[0].toUpperCase() + options.username.slice(1) : '', pfp_url: `https://imagedelivery.example/${author}.png`, follower_count: 1, following_count: 1 });
    const parent = casts.find((entry) => entry.hash === options.parent);
    if (!parent) throw new Error(`no cast ${options.parent} to reply to`);
    const reply: WarpcastFakeCast = { hash: newHash(`${author}:${text}`), fid: author, text, embeds: [], channel: parent.channel, parent: parent.hash, parentAuthorFid: parent.fid, idem: null, timestamp: (options.timestamp ?? new Date()).toISOString(), likes: 0, recasts: 0 };
    casts.push(reply);
    return reply;
  };

  return { server, url: server.url, apiKey, clientId: randomUUID(), signerUuid, fid, signers, users, casts, embedFetches, deleted, addReply, close: () => server.close() };
}
