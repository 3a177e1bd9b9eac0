// A fake Discord (the bot install through OAuth2, and the bot's REST API v10: users/@me, a guild's channels, roles and member,
// channels, messages with multipart attachments, threads started on a message) on one real HTTP server. Shapes follow
// discord.com/developers/docs (read 2026-11): errors `{code, message, errors?}`, 429 `{message, retry_after, global}`, the token
// response of the bot scope carries the chosen `guild` (topics/oauth2#advanced-bot-authorization); message ids are snowflakes of
// their creation time (reference#snowflakes); Get Channel Messages answers newest first, `after` an id, `limit` 1-100
// (resources/message#get-channel-messages); an enforced nonce returns the author's message of the same nonce from the past few
// minutes (resources/message#create-message); mentions notify as allowed_mentions says (resources/message#allowed-mentions-object).
//
//   const fake = await startDiscordFake();
//   DISCORD_CLIENT_ID/_SECRET = fake.authority.clientId/clientSecret, DISCORD_BOT_TOKEN = fake.botToken,
//   SOCIAL_ENDPOINTS={"discord": fake.endpoints}
//   fake.messages  -> every message: { id, channelId, content, nonce, authorId, createdAt, notified: {everyone, users, roles},
//                     allowedMentions, attachments: [{ filename, contentType, description, bytes }] }
//   fake.postAs(channelId, content, {authorId?, at?}) -> a message someone (by default the bot, earlier) posted
//   fake.threads   -> threads started: { id, parentId, name, type, autoArchiveDuration }
//   fake.channels  -> the guild's channels; `botCan` says what the bot may do there (the provider must work it out from roles
//                     and overwrites); fake.removeBot() takes the bot off the server; fake.failNextThreadMessage(reply)
//
// Refuses what Discord refuses: an install without the bot scope or a permissions integer; a token request without Basic
// client credentials, a reused code or another redirect URI; any bot route without `Authorization: Bot <token>` (401); a guild
// route once the bot is off the server (403 Missing Access); posting where the bot cannot see (403 50001) or send (403 50013);
// an unknown channel (404 10003); content over 2000 characters or an empty message (400 50035); more than 10 files, files[n]
// without a matching `attachments` entry in payload_json, a file over 10 MiB (413 40005); a second thread on a message
// (400 160004); a thread name outside 1-100 characters or an auto_archive_duration Discord does not offer; an allowed_mentions
// with an unknown parse type, `parse: ["users"]` with a `users` list (or roles with roles), more than 100 ids (400 50035); a
// messages list with a limit outside 1-100; an edit of a message another user wrote (403 50005) or of an unknown one (404 10008);
// a deletion of another user's message without Manage Messages (403 50013) or of an unknown one (404 10008).
// Edit Message (PATCH .../messages/:id) and Delete Message (DELETE, 204) as resources/message (read 2026-11-27); `fake.deleted`.
//
// Behind all of that, every bot API request is first checked against Discord's own contract: its OpenAPI 3.1 description
// (github.com/discord/discord-api-spec specs/openapi.json, commit 74fda0f of 2026-07-18, vendored in
// test/contracts/discord/openapi.json, see ../contracts/discord/contract.ts): the operation exists, path and query parameters
// and the JSON (or multipart payload_json) body fit their schemas, with no field the schema does not declare. A request outside
// it is answered 400 50035 Invalid Form Body and recorded in `fake.contractViolations`, which the tests require to stay empty.
// The OAuth2 token endpoint is not in that description (topics/oauth2 documents it) and keeps the checks above.
import { createOAuthAuthority, OAuthRefusal, basicCredentials, refusalReply } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';
import { discordContractProblems } from '../contracts/discord/contract.js';

export interface FakeDiscordChannel {
  id: string;
  type: number;
  name: string;
  position: number;
  parent_id?: string | null;
  permission_overwrites: { id: string; type: 0 | 1; allow: string; deny: string }[];
  botCan: { view: boolean; send: boolean };
}

export interface FakeDiscordMessage {
  id: string;
  channelId: string;
  content: string;
  nonce?: string;
  authorId: string;
  createdAt: number;
  allowedMentions?: unknown;
  /** Who Discord would notify: @everyone/@here, and the users and roles mentioned, as allowed_mentions lets them. */
  notified: { everyone: boolean; users: string[]; roles: string[] };
  attachments: { filename: string; contentType: string; description?: string; bytes: Buffer }[];
  /** Set by an edit (PATCH). */
  editedAt?: number;
}

const DISCORD_EPOCH = 1_420_070_400_000n;
const NONCE_WINDOW_MS = 5 * 60_000;

/** Whom a message notifies: Discord parses every mention unless allowed_mentions says otherwise. */
function notifiedBy(content: string, allowed: { parse?: string[]; users?: string[]; roles?: string[] } | undefined): FakeDiscordMessage['notified'] {
  const users = [...content.matchAll(/<@!?(\d+)>/g)].map((match) => match[1]);
  const roles = [...content.matchAll(/<@&(\d+)>/g)].map((match) => match[1]);
  const everyone = /@(everyone|here)\b/.test(content);
  if (!allowed) return { everyone, users: [...new Set(users)], roles: [...new Set(roles)] };
  const parse = allowed.parse ?? [];
  return {
    everyone: everyone && parse.includes('everyone'),
    users: [...new Set(users.filter((id) => parse.includes('users') || (allowed.users ?? []).includes(id)))],
    roles: [...new Set(roles.filter((id) => parse.includes('roles') || (allowed.roles ?? []).includes(id)))],
  };
}

/** Discord's checks of an allowed_mentions object: the answer to send back when it is refused. */
function allowedMentionsProblem(allowed: unknown): string | undefined {
  if (allowed === undefined) return undefined;
  if (!allowed || typeof allowed !== 'object') return 'allowed_mentions must be an object';
  const { parse = [], users, roles, ...rest } = allowed as { parse?: unknown[]; users?: unknown[]; roles?: unknown[] } & Record<string, unknown>;
  if (Object.keys(rest).some((key) => key !== 'replied_user')) return `allowed_mentions has unknown fields ${Object.keys(rest).join(', ')}`;
  if (!Array.isArray(parse) || parse.some((type) => !['users', 'roles', 'everyone'].includes(String(type)))) return 'parse: Value must be one of {"roles", "users", "everyone"}';
  if (users && parse.includes('users')) return 'parse: parse:["users"] and users: [ids] are mutually exclusive.';
  if (roles && parse.includes('roles')) return 'parse: parse:["roles"] and roles: [ids] are mutually exclusive.';
  if ((users?.length ?? 0) > 100 || (roles?.length ?? 0) > 100) return 'users: Must be 100 or fewer in length.';
  return undefined;
}

const MiB = 1024 * 1024;
const VIEW = String(1 << 10);
const SEND = String(1 << 11);
const error = (status: number, code: number, message: string, errors?: unknown): FakeReply => ({ status, json: { message, code, ...(errors ? { errors } : {}) } });
const tooLong = (field: string, limit: number) =>
  error(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${limit} or fewer in length.` }] } });

export async function startDiscordFake() {
  const server = await startFakeServer();
  const { url } = server;
  // The bot API's routes are registered behind the contract check (the token endpoint is not in the description).
  const contractViolations = server.underContract(
    (_method, path) => (path.startsWith('/api/v10/') && path !== '/api/v10/oauth2/token' ? (request) => discordContractProblems(request, request.path.slice('/api/v10'.length)) : undefined),
    (problems) => error(400, 50035, 'Invalid Form Body', { _errors: problems.map((message) => ({ code: 'CONTRACT_MISMATCH', message })) }),
  );
  const authority = createOAuthAuthority({ clientId: '1199000000000000001', clientSecret: 'discord-secret', expiresIn: 604_800 });
  const botToken = 'MTE5OTAwMDAwMDAwMDAwMDAwMQ.GfakeX.bot-token';
  let sequence = 0n;
  const nextId = (at = Date.now()) => String(((BigInt(at) - DISCORD_EPOCH) << 22n) + (++sequence % 4096n));
  const guild = { id: '1100000000000000001', name: 'Herald Community', icon: 'a1b2c3d4e5f6' };
  const bot = { id: '1199000000000000001', username: 'Herald', discriminator: '0', bot: true };
  const botRole = '1100000000000000002';
  const roles = [
    { id: guild.id, name: '@everyone', permissions: String((1 << 10) | (1 << 11) | (1 << 16)) },
    { id: botRole, name: 'Herald', permissions: String((1 << 14) | (1 << 15)) },
    { id: '1100000000000000003', name: 'Staff', permissions: '8' },
  ];
  const member = { user: bot, roles: [botRole], joined_at: '2026-01-01T00:00:00.000Z' };
  const everyone = (allow: string, deny: string) => ({ id: guild.id, type: 0 as const, allow, deny });
  const channels: FakeDiscordChannel[] = [
    { id: '1100000000000000010', type: 0, name: 'general', position: 1, permission_overwrites: [], botCan: { view: true, send: true } },
    { id: '1100000000000000011', type: 5, name: 'announcements', position: 0, permission_overwrites: [everyone('0', SEND), { id: botRole, type: 0, allow: SEND, deny: '0' }], botCan: { view: true, send: true } },
    { id: '1100000000000000012', type: 0, name: 'staff-only', position: 2, permission_overwrites: [everyone('0', VIEW)], botCan: { view: false, send: false } },
    { id: '1100000000000000013', type: 0, name: 'read-only', position: 3, permission_overwrites: [{ id: botRole, type: 0, allow: '0', deny: SEND }], botCan: { view: true, send: false } },
    { id: '1100000000000000014', type: 0, name: 'bots', position: 4, permission_overwrites: [everyone('0', VIEW), { id: bot.id, type: 1, allow: VIEW, deny: '0' }], botCan: { view: true, send: true } },
    { id: '1100000000000000015', type: 2, name: 'Voice', position: 5, permission_overwrites: [], botCan: { view: true, send: true } },
    { id: '1100000000000000016', type: 15, name: 'forum', position: 6, permission_overwrites: [], botCan: { view: true, send: true } },
  ];
  const messages: FakeDiscordMessage[] = [];
  const threads: { id: string; parentId: string; name: string; type: number; autoArchiveDuration: number }[] = [];
  const state = { botInGuild: true, failThreadMessage: undefined as FakeReply | undefined };

  const asBot =
    (handler: FakeHandler): FakeHandler =>
    (request) =>
      request.headers.authorization === `Bot ${botToken}` ? handler(request) : error(401, 0, '401: Unauthorized');
  const inGuild =
    (handler: FakeHandler): FakeHandler =>
    (request) =>
      request.path.split('/')[4] !== guild.id || !state.botInGuild ? error(403, 50001, 'Missing Access') : handler(request);

  const channelObject = (channel: FakeDiscordChannel) => ({ id: channel.id, type: channel.type, guild_id: guild.id, name: channel.name, position: channel.position, parent_id: channel.parent_id ?? null, permission_overwrites: channel.permission_overwrites, nsfw: false });
  const threadChannel = (id: string) => {
    const thread = threads.find((item) => item.id === id);
    return thread && { id: thread.id, type: thread.type, guild_id: guild.id, parent_id: thread.parentId, name: thread.name, thread_metadata: { archived: false, auto_archive_duration: thread.autoArchiveDuration, locked: false } };
  };
  const messageObject = (message: FakeDiscordMessage) => ({
    id: message.id,
    channel_id: message.channelId,
    type: 0,
    content: message.content,
    author: message.authorId === bot.id ? bot : { id: message.authorId, username: 'someone', discriminator: '0' },
    nonce: message.nonce,
    mention_everyone: message.notified.everyone,
    mentions: message.notified.users.map((id) => ({ id, username: 'someone', discriminator: '0' })),
    mention_roles: message.notified.roles,
    attachments: message.attachments.map((file, index) => ({ id: `${message.id}${index}`, filename: file.filename, size: file.bytes.length, content_type: file.contentType, url: `${url}/attachments/${message.channelId}/${message.id}/${file.filename}` })),
    timestamp: new Date(message.createdAt).toISOString(),
  });

  server.on('GET', '/oauth2/authorize', (request) => {
    const query = request.query;
    const scope = (query.get('scope') ?? '').split(' ');
    if (!scope.includes('bot')) return { status: 400, body: 'scope must include bot to install the bot' };
    if (!/^\d+$/.test(query.get('permissions') ?? '')) return { status: 400, body: 'permissions must be an integer' };
    if (query.get('response_type') !== 'code') return { status: 400, body: 'response_type=code is required with scopes beyond bot' };
    try {
      const location = new URL(authority.approveQuery(query));
      location.searchParams.set('guild_id', guild.id);
      location.searchParams.set('permissions', query.get('permissions')!);
      return { status: 302, headers: { location: location.toString() } };
    } catch (refusal) {
      if (refusal instanceof OAuthRefusal) return { status: 400, json: { error: refusal.error, error_description: refusal.description } };
      throw refusal;
    }
  });

  server.on('POST', '/api/v10/oauth2/token', (request) => {
    const form = request.form ?? new URLSearchParams();
    const client = basicCredentials(request.headers.authorization as string | undefined);
    try {
      authority.checkClient(client.id, client.secret);
      if (form.get('grant_type') !== 'authorization_code') return { status: 400, json: { error: 'unsupported_grant_type' } };
      const issued = authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, clientId: client.id });
      const withBot = (issued.scope ?? '').split(' ').includes('bot');
      return {
        json: {
          token_type: 'Bearer',
          access_token: issued.accessToken,
          expires_in: issued.expiresIn,
          refresh_token: issued.refreshToken,
          scope: issued.scope,
          ...(withBot ? { guild: { ...guild, owner_id: '1100000000000000099', roles, features: [], description: null } } : {}),
        },
      };
    } catch (refusal) {
      if (refusal instanceof OAuthRefusal) return refusalReply(refusal);
      throw refusal;
    }
  });

  server.on('GET', '/api/v10/users/@me', asBot(() => ({ json: bot })));
  server.on('GET', '/api/v10/guilds/*/channels', asBot(inGuild(() => ({ json: channels.map(channelObject) }))));
  server.on('GET', '/api/v10/guilds/*/roles', asBot(inGuild(() => ({ json: roles }))));
  server.on('GET', '/api/v10/guilds/*/members/*', asBot(inGuild((request) => (request.path.split('/')[6] === bot.id ? { json: member } : error(404, 10007, 'Unknown Member')))));
  server.on(
    'GET',
    '/api/v10/channels/*',
    asBot((request) => {
      const id = request.path.split('/')[4];
      const channel = channels.find((item) => item.id === id);
      const found = channel ? channelObject(channel) : threadChannel(id);
      return found ? { json: found } : error(404, 10003, 'Unknown Channel');
    }),
  );

  /** Where the bot may post: a guild channel it can see and send in, or a thread of one. */
  const postable = (channelId: string): FakeReply | { ok: true; thread: boolean } => {
    const thread = threads.find((item) => item.id === channelId);
    const channel = channels.find((item) => item.id === (thread?.parentId ?? channelId));
    if (!channel || (!thread && ![0, 5].includes(channel.type))) return error(404, 10003, 'Unknown Channel');
    if (!channel.botCan.view || !state.botInGuild) return error(403, 50001, 'Missing Access');
    if (!channel.botCan.send) return error(403, 50013, 'Missing Permissions');
    return { ok: true, thread: Boolean(thread) };
  };

  async function readMessage(request: RecordedRequest): Promise<{ payload: any; files: { field: string; file: File }[] } | FakeReply> {
    if (request.json) return { payload: request.json, files: [] };
    if (!String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) return error(400, 50109, 'The request body contains invalid JSON.');
    const form = await multipartOf(request);
    if (!form) throw new Error('the multipart body cannot be parsed');
    const files: { field: string; file: File }[] = [];
    let payload: any = {};
    for (const [field, value] of form.entries()) {
      if (field === 'payload_json' && typeof value === 'string') payload = JSON.parse(value);
      else if (/^files\[\d+\]$/.test(field) && typeof value !== 'string') files.push({ field, file: value as File });
      else return error(400, 50035, `Invalid Form Body: unexpected field ${field}`);
    }
    return { payload, files };
  }

  server.on(
    'POST',
    '/api/v10/channels/*/messages',
    asBot(async (request) => {
      const channelId = request.path.split('/')[4];
      const where = postable(channelId);
      if (!('ok' in where)) return where;
      if (where.thread && state.failThreadMessage) {
        const reply = state.failThreadMessage;
        state.failThreadMessage = undefined;
        return reply;
      }
      const read = await readMessage(request);
      if (!('payload' in read)) return read;
      const { payload, files } = read;
      const content: string = payload.content ?? '';
      if ([...content].length > 2000) return tooLong('content', 2000);
      if (files.length > 10) return error(400, 50035, 'Invalid Form Body', { files: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }] } });
      if (!content && files.length === 0) return error(400, 50006, 'Cannot send an empty message');
      const attachments: FakeDiscordMessage['attachments'] = [];
      for (const { field, file } of files) {
        const index = Number(/\d+/.exec(field)![0]);
        const meta = (payload.attachments ?? []).find((item: { id: number | string }) => String(item.id) === String(index));
        if (!meta || meta.filename !== file.name) return error(400, 50035, `Invalid Form Body: ${field} has no attachments entry with id ${index} and filename ${file.name}`);
        if (file.size > 10 * MiB) return error(413, 40005, 'Request entity too large');
        attachments.push({ filename: file.name, contentType: file.type, description: meta.description, bytes: Buffer.from(await file.arrayBuffer()) });
      }
      const nonce = payload.nonce === undefined ? undefined : String(payload.nonce);
      if (nonce && nonce.length > 25) return tooLong('nonce', 25);
      const refused = allowedMentionsProblem(payload.allowed_mentions);
      if (refused) return error(400, 50035, 'Invalid Form Body', { allowed_mentions: { _errors: [{ code: 'ALLOWED_MENTIONS_INVALID', message: refused }] } });
      const seen = payload.enforce_nonce && nonce ? messages.find((message) => message.nonce === nonce && message.authorId === bot.id && Date.now() - message.createdAt < NONCE_WINDOW_MS) : undefined;
      if (seen) return { json: messageObject(seen) };
      const createdAt = Date.now();
      const message: FakeDiscordMessage = { id: nextId(createdAt), channelId, content, nonce, authorId: bot.id, createdAt, allowedMentions: payload.allowed_mentions, notified: notifiedBy(content, payload.allowed_mentions), attachments };
      messages.push(message);
      return { json: messageObject(message) };
    }),
  );

  server.on(
    'GET',
    '/api/v10/channels/*/messages',
    asBot((request) => {
      const channelId = request.path.split('/')[4];
      const where = postable(channelId);
      if (!('ok' in where) && where.status !== 403) return where;
      const limit = Number(request.query.get('limit') ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) return error(400, 50035, 'Invalid Form Body', { limit: { _errors: [{ code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 100.' }] } });
      const after = request.query.get('after');
      const before = request.query.get('before');
      const listed = messages
        .filter((message) => message.channelId === channelId && (!after || BigInt(message.id) > BigInt(after)) && (!before || BigInt(message.id) < BigInt(before)))
        .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
      // `after` reads forward from that id; otherwise the newest. Either way the page is answered newest first.
      const page = after ? listed.slice(0, limit) : listed.slice(-limit);
      return { json: page.reverse().map(messageObject) };
    }),
  );

  server.on(
    'POST',
    '/api/v10/channels/*/messages/*/threads',
    asBot((request) => {
      const [channelId, messageId] = [request.path.split('/')[4], request.path.split('/')[6]];
      const channel = channels.find((item) => item.id === channelId);
      if (!channel || ![0, 5].includes(channel.type)) return error(404, 10003, 'Unknown Channel');
      if (!messages.some((message) => message.id === messageId && message.channelId === channelId)) return error(404, 10008, 'Unknown Message');
      if (threads.some((thread) => thread.id === messageId)) return error(400, 160004, 'A thread has already been created for this message');
      const { name, auto_archive_duration: duration = 4320 } = request.json ?? {};
      if (typeof name !== 'string' || name.length < 1 || name.length > 100) return tooLong('name', 100);
      if (![60, 1440, 4320, 10080].includes(duration)) return error(400, 50035, 'Invalid Form Body', { auto_archive_duration: { _errors: [{ code: 'BASE_TYPE_CHOICES', message: 'Value must be one of {60, 1440, 4320, 10080}.' }] } });
      threads.push({ id: messageId, parentId: channelId, name, type: channel.type === 5 ? 10 : 11, autoArchiveDuration: duration });
      return { status: 201, json: threadChannel(messageId) };
    }),
  );

  const findMessage = (request: RecordedRequest) => {
    const [channelId, messageId] = [request.path.split('/')[4], request.path.split('/')[6]];
    return messages.find((message) => message.id === messageId && message.channelId === channelId);
  };
  server.on(
    'PATCH',
    '/api/v10/channels/*/messages/*',
    asBot((request) => {
      const message = findMessage(request);
      if (!message) return error(404, 10008, 'Unknown Message');
      if (message.authorId !== bot.id) return error(403, 50005, 'Cannot edit a message authored by another user');
      const payload = request.json ?? {};
      const content: string = payload.content ?? message.content;
      if ([...content].length > 2000) return tooLong('content', 2000);
      if (!content && message.attachments.length === 0) return error(400, 50006, 'Cannot send an empty message');
      const refused = allowedMentionsProblem(payload.allowed_mentions);
      if (refused) return error(400, 50035, 'Invalid Form Body', { allowed_mentions: { _errors: [{ code: 'ALLOWED_MENTIONS_INVALID', message: refused }] } });
      Object.assign(message, { content, allowedMentions: payload.allowed_mentions, notified: notifiedBy(content, payload.allowed_mentions), editedAt: Date.now() });
      return { json: messageObject(message) };
    }),
  );
  const deleted: FakeDiscordMessage[] = [];
  server.on(
    'DELETE',
    '/api/v10/channels/*/messages/*',
    asBot((request) => {
      const message = findMessage(request);
      if (!message) return error(404, 10008, 'Unknown Message');
      if (message.authorId !== bot.id) return error(403, 50013, 'Missing Permissions');
      messages.splice(messages.indexOf(message), 1);
      deleted.push(message);
      return { status: 204 };
    }),
  );

  return {
    server,
    url,
    authority,
    deleted,
    /** Requests Discord's OpenAPI description refused, as "METHOD path: problem"; the tests expect none. */
    contractViolations,
    botToken,
    guild,
    bot,
    channels,
    messages,
    threads,
    endpoints: { api: url, web: 'https://discord.com', cdn: 'https://cdn.discordapp.com' },
    channel: (name: string) => channels.find((channel) => channel.name === name)!,
    /** A message someone posted in a channel (by default the bot itself, `at` ms since the epoch: earlier). */
    postAs(channelId: string, content: string, options: { authorId?: string; at?: number } = {}) {
      const createdAt = options.at ?? Date.now();
      const message: FakeDiscordMessage = { id: nextId(createdAt), channelId, content, authorId: options.authorId ?? bot.id, createdAt, notified: notifiedBy(content, undefined), attachments: [] };
      messages.push(message);
      return message;
    },
    removeBot() {
      state.botInGuild = false;
    },
    failNextThreadMessage(reply: FakeReply) {
      state.failThreadMessage = reply;
    },
    close: () => server.close(),
  };
}

export type DiscordFake = Awaited<ReturnType<typeof startDiscordFake>>;
