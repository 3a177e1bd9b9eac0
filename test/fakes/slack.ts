// A fake Slack (OAuth v2 install, and the Web API methods Herald calls: team.info, conversations.list/join/history/replies,
// chat.postMessage, chat.getPermalink, files.getUploadURLExternal + the upload URL + files.completeUploadExternal) on one real
// HTTP server. Shapes follow docs.slack.dev (read 2026-11): every method answers HTTP 200 `{ok: true, ...}` or `{ok: false, error}`,
// bodies are forms or JSON, the token is a Bearer header; a message's ts is its creation time (seconds.micro);
// conversations.history answers newest first from `oldest` to `latest` (`inclusive`), `limit` a page, `has_more` and
// `response_metadata.next_cursor` for the next (reference/methods/conversations.history), conversations.replies the parent
// then the replies (reference/methods/conversations.replies); metadata is `{event_type, event_payload}` (messaging/message-metadata);
// mentions notify only in control syntax, <!here>/<!channel>/<!everyone> the whole channel (messaging/formatting-message-text).
//
//   const fake = await startSlackFake();
//   SLACK_CLIENT_ID/_SECRET = fake.authority.clientId/clientSecret, SOCIAL_ENDPOINTS={"slack": fake.endpoints}
//   fake.messages  -> every message: { ts, channel, user, text, blocks, threadTs, metadata, parse, linkNames,
//                     notified: {channel (here/channel/everyone), users} }
//   fake.postAs(channel, text, {user?, at?, threadTs?}) -> a message someone else (or the bot, earlier) posted
//   fake.uploads   -> every upload URL handed out: { id, filename, length, altText, bytes }
//   fake.shares    -> every files.completeUploadExternal: { files, channelId, threadTs }
//   fake.channels  -> the workspace's channels (members: whether the bot is in); fake.setRotation(true) makes the next
//                     installs rotate tokens (refresh_token + expires_in); fake.authority expires or revokes them
//
// Refuses what Slack refuses: an install without chat:write or with space-separated scopes; oauth.v2.access without the
// client credentials, with a used code or another redirect URI, a used refresh token; a method without a valid token
// (invalid_auth); posting to an unknown (channel_not_found), archived (is_archived) or not joined (not_in_channel) channel;
// joining a private channel (method_not_supported_for_channel_type); more than 50 blocks, a section without text or over 3000
// characters or a text object whose verbatim is not a boolean (invalid_blocks); metadata without an event_type or an object
// event_payload (invalid_metadata_format); a thread_ts that is not a top-level message of the channel (thread_not_found); an upload URL
// asked without filename or length, bytes of another length than announced, completing an upload whose bytes never came
// (file_not_found); chat.update and chat.delete (read 2026-11-27) of an unknown message (message_not_found) or of someone
// else's (cant_update_message, cant_delete_message). `fake.deleted` lists the messages deleted.
//
// Before all of that, every Web API call is checked against Slack's own contract (../contracts/slack/contract.ts): the methods
// of Slack's published description (github.com/slackapi/slack-api-specs web-api, Swagger 2, last updated 2020-10-06, commit
// bc08db4 of 2021-09-07) converted to OpenAPI 3 and completed from the docs.slack.dev method pages (read 2026-11-27) for what
// is newer (files.getUploadURLExternal, files.completeUploadExternal, metadata, include_all_metadata, token rotation's
// grant_type/refresh_token). A call with an argument the method does not take, without a required one, with a value of another
// type, or as JSON to a method that takes forms only is answered `{ok: false, error: "invalid_arguments", response_metadata:
// {messages}}` and recorded in `fake.contractViolations`, which the tests require to stay empty.
import { randomBytes } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal, basicCredentials, bearerOf } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';
import { slackContractProblems } from '../contracts/slack/contract.js';

export interface FakeSlackChannel {
  id: string;
  name: string;
  isPrivate: boolean;
  isArchived: boolean;
  botIsMember: boolean;
}

export interface FakeSlackMessage {
  ts: string;
  channel: string;
  text?: string;
  blocks?: { type: string; text?: { type: string; text: string } }[];
  threadTs?: string;
  user: string;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  parse?: string;
  linkNames?: unknown;
  /** Who Slack would notify: the whole channel (<!here>, <!channel>, <!everyone>) and the users mentioned (<@U…>). */
  notified: { channel: boolean; users: string[] };
  /** Set by chat.update. */
  edited?: boolean;
}

/** Mentions Slack acts on: control sequences only (the request's text and its sections). */
function notifiedBy(texts: string[]): FakeSlackMessage['notified'] {
  const all = texts.join('\n');
  return { channel: /<!(here|channel|everyone)(\|[^>]*)?>/.test(all), users: [...new Set([...all.matchAll(/<@([UW][A-Z0-9]+)(\|[^>]*)?>/g)].map((match) => match[1]))] };
}

const fail = (error: string, extra: Record<string, unknown> = {}): FakeReply => ({ json: { ok: false, error, ...extra } });
const ok = (body: Record<string, unknown> = {}): FakeReply => ({ json: { ok: true, ...body } });
const JSON_FIELDS = new Set(['blocks', 'files', 'metadata']);

/** A method's arguments, from a JSON body or a form (whose array and object arguments are JSON strings). */
function argumentsOf(request: RecordedRequest): Record<string, any> {
  if (request.json) return request.json;
  const form = request.form ?? new URLSearchParams();
  return Object.fromEntries([...form.entries()].map(([key, value]) => [key, JSON_FIELDS.has(key) ? JSON.parse(value) : value]));
}

export async function startSlackFake() {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ clientId: '1234567890.0987654321', clientSecret: 'slack-secret', rotateRefreshTokens: true, expiresIn: 43_200 });
  const team = { id: 'T0HERALD1', name: 'Herald Labs', domain: 'heraldlabs', icon: { image_34: `${url}/icons/34.png`, image_132: `${url}/icons/132.png`, image_default: false } };
  const botUserId = 'U0BOT0001';
  const channels: FakeSlackChannel[] = [
    { id: 'C0GENERAL1', name: 'general', isPrivate: false, isArchived: false, botIsMember: false },
    { id: 'C0RANDOM01', name: 'random', isPrivate: false, isArchived: false, botIsMember: true },
    { id: 'C0RELEASE1', name: 'releases', isPrivate: false, isArchived: false, botIsMember: true },
    { id: 'C0OLDNEWS1', name: 'old-news', isPrivate: false, isArchived: true, botIsMember: true },
    { id: 'C0DESIGN01', name: 'design', isPrivate: false, isArchived: false, botIsMember: false },
    { id: 'G0SECRET01', name: 'secret', isPrivate: true, isArchived: false, botIsMember: false },
  ];
  const messages: FakeSlackMessage[] = [];
  const deleted: FakeSlackMessage[] = [];
  const uploads: { id: string; key: string; filename: string; length: number; altText?: string; bytes?: Buffer }[] = [];
  const shares: { files: { id: string; title?: string }[]; channelId?: string; threadTs?: string }[] = [];
  const state = { rotation: false, pageSize: 2 };
  let lastTs = 0;
  // A ts is the creation time to the microsecond, unique in the channel: the next microsecond when two fall in the same one.
  const nextTs = (at?: number) => {
    let micros = (at ?? Date.now()) * 1000;
    if (at === undefined) micros = lastTs = Math.max(micros, lastTs + 1);
    return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
  };
  const tsValue = (ts: string) => Number(ts);
  const channelById = (id: unknown) => channels.find((channel) => channel.id === id);
  const topLevel = (channel: string, ts: unknown) => messages.find((message) => message.channel === channel && message.ts === ts && !message.threadTs);

  const contractViolations: string[] = [];
  /** The contract's refusal of a call, or undefined when it fits. */
  const refusedByContract = (name: string, request: RecordedRequest): FakeReply | undefined => {
    const problems = slackContractProblems(request, name);
    if (problems.length === 0) return undefined;
    contractViolations.push(...problems.map((problem) => `${name}: ${problem}`));
    return fail('invalid_arguments', { response_metadata: { messages: problems.map((problem) => `[ERROR] ${problem}`) } });
  };
  const method = (name: string, handler: (args: Record<string, any>, request: RecordedRequest) => FakeReply | Promise<FakeReply>) =>
    server.on('POST', `/api/${name}`, (request) => {
      const refused = refusedByContract(name, request);
      if (refused) return refused;
      const token = bearerOf(request.headers.authorization as string | undefined)?.replace(/^(xoxe\.)?xoxb-(1-)?/, '');
      return authority.subjectOf(token) ? handler(argumentsOf(request), request) : fail('invalid_auth');
    });

  server.on('GET', '/oauth/v2/authorize', (request) => {
    const query = request.query;
    const scope = query.get('scope') ?? '';
    if (scope.includes(' ') || !scope.split(',').includes('chat:write')) return { status: 400, body: 'scope is a comma-separated list and must include chat:write' };
    try {
      const location = authority.approveQuery(query);
      return { status: 302, headers: { location } };
    } catch (refusal) {
      if (refusal instanceof OAuthRefusal) return { status: 400, body: refusal.description };
      throw refusal;
    }
  });

  server.on('POST', '/api/oauth.v2.access', (request) => {
    const refused = refusedByContract('oauth.v2.access', request);
    if (refused) return refused;
    const args = argumentsOf(request);
    const basic = basicCredentials(request.headers.authorization as string | undefined);
    const [clientId, clientSecret] = basic.id ? [basic.id, basic.secret] : [args.client_id, args.client_secret];
    if (clientId !== authority.clientId) return fail('invalid_client_id');
    if (clientSecret !== authority.clientSecret) return fail('bad_client_secret');
    try {
      const refreshing = args.grant_type === 'refresh_token';
      const issued = refreshing ? authority.redeemRefreshToken(args.refresh_token) : authority.redeemCode({ code: args.code, redirectUri: args.redirect_uri, clientId });
      const rotating = refreshing || state.rotation;
      return ok({
        app_id: 'A0HERALD01',
        authed_user: { id: 'U0OWNER001' },
        scope: 'channels:read,channels:join,channels:history,chat:write,files:write,team:read',
        token_type: 'bot',
        access_token: rotating ? `xoxe.xoxb-1-${issued.accessToken}` : `xoxb-${issued.accessToken}`,
        bot_user_id: botUserId,
        team: { id: team.id, name: team.name },
        enterprise: null,
        is_enterprise_install: false,
        ...(rotating ? { refresh_token: `xoxe-1-${issued.refreshToken}`, expires_in: issued.expiresIn } : {}),
      });
    } catch (refusal) {
      if (!(refusal instanceof OAuthRefusal)) throw refusal;
      return fail(args.grant_type === 'refresh_token' ? 'invalid_refresh_token' : /redirect_uri/.test(refusal.description) ? 'bad_redirect_uri' : 'invalid_code');
    }
  });
  // Refresh tokens travel with their Slack prefix; the authority knows them without it.
  const redeem = authority.redeemRefreshToken.bind(authority);
  authority.redeemRefreshToken = (value: string | undefined) => redeem(value?.replace(/^xoxe-1-/, ''));

  method('team.info', () => ok({ team }));

  method('conversations.list', (args) => {
    if (!String(args.types ?? 'public_channel').split(',').includes('public_channel')) return fail('invalid_types');
    const listed = channels.filter((channel) => !channel.isPrivate && !(args.exclude_archived === 'true' && channel.isArchived));
    const start = args.cursor ? Number(Buffer.from(args.cursor, 'base64').toString().replace('offset:', '')) : 0;
    const size = Math.min(Number(args.limit ?? 100), state.pageSize);
    const page = listed.slice(start, start + size);
    const next = start + size < listed.length ? Buffer.from(`offset:${start + size}`).toString('base64') : '';
    return ok({
      channels: page.map((channel) => ({ id: channel.id, name: channel.name, is_channel: true, is_private: false, is_archived: channel.isArchived, is_member: channel.botIsMember })),
      response_metadata: { next_cursor: next },
    });
  });

  method('conversations.join', (args) => {
    const channel = channelById(args.channel);
    if (!channel) return fail('channel_not_found');
    if (channel.isPrivate) return fail('method_not_supported_for_channel_type');
    if (channel.isArchived) return fail('is_archived');
    const already = channel.botIsMember;
    channel.botIsMember = true;
    return ok({ channel: { id: channel.id, name: channel.name, is_member: true }, ...(already ? { warning: 'already_in_channel' } : {}) });
  });

  /** Where the bot may write: a channel it is in, and a thread that is a top-level message of it. */
  const writable = (channelId: unknown, threadTs: unknown): FakeReply | undefined => {
    const channel = channelById(channelId);
    if (!channel) return fail('channel_not_found');
    if (channel.isArchived) return fail('is_archived');
    if (!channel.botIsMember) return fail('not_in_channel');
    if (threadTs !== undefined && !topLevel(channel.id, threadTs)) return fail('thread_not_found');
    return undefined;
  };

  method('chat.postMessage', (args) => {
    const refused = writable(args.channel, args.thread_ts);
    if (refused) return refused;
    const blocks = args.blocks as FakeSlackMessage['blocks'];
    if (!args.text && !blocks?.length) return fail('no_text');
    if (blocks) {
      if (blocks.length > 50) return fail('invalid_blocks', { response_metadata: { messages: ['[ERROR] no more than 50 items allowed [json-pointer:/blocks]'] } });
      const bad = blocks.findIndex((block) => block.type === 'section' && (!block.text?.text || block.text.text.length > 3000));
      if (bad >= 0) return fail('invalid_blocks', { response_metadata: { messages: [`[ERROR] must be between 1 and 3000 characters [json-pointer:/blocks/${bad}/text/text]`] } });
      const verbatim = blocks.findIndex((block) => block.text && 'verbatim' in block.text && typeof (block.text as { verbatim?: unknown }).verbatim !== 'boolean');
      if (verbatim >= 0) return fail('invalid_blocks', { response_metadata: { messages: [`[ERROR] expected boolean [json-pointer:/blocks/${verbatim}/text/verbatim]`] } });
    }
    const metadata = args.metadata;
    if (metadata !== undefined && (typeof metadata?.event_type !== 'string' || !metadata.event_type || typeof metadata.event_payload !== 'object' || Array.isArray(metadata.event_payload))) return fail('invalid_metadata_format');
    const message: FakeSlackMessage = {
      ts: nextTs(),
      channel: args.channel,
      user: botUserId,
      text: args.text,
      blocks,
      threadTs: args.thread_ts,
      metadata,
      parse: args.parse,
      linkNames: args.link_names,
      notified: notifiedBy([args.text ?? '', ...(blocks ?? []).map((block) => block.text?.text ?? '')]),
    };
    messages.push(message);
    return ok({ channel: message.channel, ts: message.ts, message: { type: 'message', text: message.text, user: botUserId, ts: message.ts, blocks, thread_ts: message.threadTs } });
  });

  const own = (args: Record<string, any>, refusal: string): FakeSlackMessage | FakeReply => {
    const message = messages.find((item) => item.channel === args.channel && item.ts === args.ts);
    if (!message) return fail('message_not_found');
    if (message.user !== botUserId) return fail(refusal);
    return message;
  };
  method('chat.update', (args) => {
    const message = own(args, 'cant_update_message');
    if (!('ts' in message)) return message;
    const blocks = args.blocks as FakeSlackMessage['blocks'];
    if (!args.text && !blocks?.length) return fail('no_text');
    const bad = (blocks ?? []).findIndex((block) => block.type === 'section' && (!block.text?.text || block.text.text.length > 3000));
    if (bad >= 0) return fail('invalid_blocks', { response_metadata: { messages: [`[ERROR] must be between 1 and 3000 characters [json-pointer:/blocks/${bad}/text/text]`] } });
    Object.assign(message, { text: args.text, blocks, notified: notifiedBy([args.text ?? '', ...(blocks ?? []).map((block) => block.text?.text ?? '')]), edited: true });
    return ok({ channel: message.channel, ts: message.ts, text: message.text, message: { type: 'message', text: message.text, user: botUserId, ts: message.ts, blocks } });
  });
  method('chat.delete', (args) => {
    const message = own(args, 'cant_delete_message');
    if (!('ts' in message)) return message;
    messages.splice(messages.indexOf(message), 1);
    deleted.push(message);
    return ok({ channel: message.channel, ts: message.ts });
  });

  method('chat.getPermalink', (args) => {
    const message = messages.find((item) => item.channel === args.channel && item.ts === args.message_ts);
    if (!message) return fail('message_not_found');
    const thread = message.threadTs ? `?thread_ts=${message.threadTs}&cid=${message.channel}` : '';
    return ok({ channel: message.channel, permalink: `https://${team.domain}.slack.com/archives/${message.channel}/p${message.ts.replace('.', '')}${thread}` });
  });

  /** One page of `items` (already in the method's order) between oldest and latest, from the cursor on. */
  const page = (items: FakeSlackMessage[], args: Record<string, any>) => {
    const inclusive = args.inclusive === 'true' || args.inclusive === true;
    const inRange = (ts: string) => {
      const value = tsValue(ts);
      const oldest = args.oldest === undefined ? -Infinity : Number(args.oldest);
      const latest = args.latest === undefined ? Infinity : Number(args.latest);
      return (inclusive ? value >= oldest : value > oldest) && (inclusive ? value <= latest : value < latest);
    };
    const range = items.filter((message) => inRange(message.ts));
    const start = args.cursor ? Number(Buffer.from(String(args.cursor), 'base64').toString().replace('next_ts:', '')) : 0;
    const limit = Math.min(Number(args.limit ?? 100), 999);
    const slice = range.slice(start, start + limit);
    const more = start + limit < range.length;
    return ok({
      messages: slice.map((message) => ({ type: 'message', ts: message.ts, text: message.text, user: message.user, ...(message.threadTs ? { thread_ts: message.threadTs } : {}), ...(String(args.include_all_metadata) === 'true' && message.metadata ? { metadata: message.metadata } : {}) })),
      has_more: more,
      ...(more ? { response_metadata: { next_cursor: Buffer.from(`next_ts:${start + limit}`).toString('base64') } } : {}),
    });
  };
  method('conversations.history', (args) => {
    const channel = channelById(args.channel);
    if (!channel) return fail('channel_not_found');
    if (!channel.botIsMember) return fail('not_in_channel');
    return page(messages.filter((message) => message.channel === channel.id && !message.threadTs).sort((a, b) => tsValue(b.ts) - tsValue(a.ts)), args);
  });
  method('conversations.replies', (args) => {
    const parent = topLevel(args.channel, args.ts);
    if (!parent) return fail('thread_not_found');
    const replies = messages.filter((message) => message.channel === parent.channel && message.threadTs === parent.ts).sort((a, b) => tsValue(a.ts) - tsValue(b.ts));
    return page([parent, ...replies], args);
  });

  method('files.getUploadURLExternal', (args) => {
    const length = Number(args.length);
    if (!args.filename || !Number.isInteger(length) || length <= 0) return fail('invalid_arguments');
    if (args.alt_txt && String(args.alt_txt).length > 1000) return fail('alt_txt_too_large');
    const upload = { id: `F0${randomBytes(5).toString('hex').toUpperCase()}`, key: randomBytes(8).toString('hex'), filename: args.filename, length, altText: args.alt_txt };
    uploads.push(upload);
    return ok({ upload_url: `${url}/upload/v1/${upload.key}`, file_id: upload.id });
  });

  server.on('POST', '/upload/v1/*', async (request) => {
    const upload = uploads.find((item) => item.key === request.path.split('/').pop());
    if (!upload) return { status: 404, body: 'upload not found' };
    let bytes = request.body;
    if (String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      const form = await multipartOf(request);
      if (!form) throw new Error('the multipart body cannot be parsed');
      const file = [...form.values()].find((value) => typeof value !== 'string') as File | undefined;
      if (!file) return { status: 400, body: 'no file in the form' };
      bytes = Buffer.from(await file.arrayBuffer());
    }
    if (bytes.length !== upload.length) return { status: 400, body: `expected ${upload.length} bytes, got ${bytes.length}` };
    upload.bytes = bytes;
    return { status: 200, body: `OK - ${bytes.length}` };
  });

  method('files.completeUploadExternal', (args) => {
    const files = args.files as { id: string; title?: string }[] | undefined;
    if (!Array.isArray(files) || files.length === 0) return fail('invalid_arguments');
    if (files.some((file) => !uploads.find((upload) => upload.id === file.id)?.bytes)) return fail('file_not_found');
    if (args.channel_id !== undefined) {
      const refused = writable(args.channel_id, args.thread_ts);
      if (refused) return refused;
    } else if (args.thread_ts !== undefined) return fail('invalid_arguments');
    shares.push({ files, channelId: args.channel_id, threadTs: args.thread_ts });
    return ok({ files: files.map((file) => ({ id: file.id, title: file.title ?? '' })) });
  });

  return {
    server,
    url,
    authority,
    team,
    botUserId,
    channels,
    messages,
    deleted,
    /** Calls Slack's contract refused, as "method: problem"; the tests expect none. */
    contractViolations,
    uploads,
    shares,
    state,
    endpoints: { api: url },
    channel: (name: string) => channels.find((channel) => channel.name === name)!,
    /** A message someone posted (another member by default; `at`: when, ms since the epoch), outside Herald. */
    postAs(channel: string, text: string, options: { user?: string; at?: number; threadTs?: string; metadata?: FakeSlackMessage['metadata'] } = {}) {
      const message: FakeSlackMessage = { ts: nextTs(options.at ?? Date.now()), channel, user: options.user ?? 'U0MEMBER01', text, threadTs: options.threadTs, metadata: options.metadata, notified: notifiedBy([text]) };
      messages.push(message);
      return message;
    },
    setRotation(on: boolean) {
      state.rotation = on;
    },
    close: () => server.close(),
  };
}

export type SlackFake = Awaited<ReturnType<typeof startSlackFake>>;
