// A fake Telegram Bot API on a local HTTP server, for provider tests and end-to-end scheduler tests.
//
//   const tg = await startTelegramFake();                  // or startTelegramFake({ token, chat: { id, title, username, type } })
//   endpoints = { api: tg.url };                           // the telegram provider's `endpoints.api`
//   auth = { accessToken: tg.token, internalId: String(tg.chat.id), data: { chatId: String(tg.chat.id), username: tg.chat.username } }
//   ...publish...
//   tg.messages                                            // every message the bot posted, oldest first (see TelegramFakeMessage)
//   tg.failNext('sendMessage', telegramError(429, 'Too Many Requests: retry after 7', 7));   // inject a Bot API error
//   await tg.close();
//
// Routes: `GET|POST /bot<token>/<method>` for getMe, getChat, sendMessage, sendPhoto, sendVideo, sendMediaGroup, editMessageText,
// editMessageCaption (400 "message to edit not found", "there is no text/caption in the message to edit", "message is not
// modified" for the same content) and deleteMessage (400 "message to delete not found"; "message can't be deleted for everyone"
// once it is older than 48 hours: `tg.age(id, hours)`). Parameters are read from
// the query string, a JSON body, a form body or a multipart body (JSON-typed fields such as reply_parameters and media may be
// JSON strings, as in real multipart calls). Answers use the real envelopes: `{ok:true, result}` and
// `{ok:false, error_code, description, parameters?: {retry_after}}` with the HTTP status equal to error_code.
// Checked like the real API: the token (401 "Unauthorized"), the chat (400 "Bad Request: chat not found"; accepts the numeric id
// or "@username"), HTML parse mode as https://core.telegram.org/bots/api#html-style says (read 2026-11): only Telegram's tags
// (400 "can't parse entities: Unsupported start tag"), only their attributes (href on a, class on span and code, emoji-id on
// tg-emoji, expandable on blockquote), tags closed in order, every <, > and & outside a tag or entity escaped, only the named
// entities &lt; &gt; &amp; &quot; (numeric ones all), links only to http(s) and tg:// addresses ("Unsupported URL protocol";
// Telegram shows mailto: as a web address); text ≤ 4096 and caption ≤ 1024
// visible characters, the replied-to message existing in the chat, uploads being files (`attach://<field>` in albums), 2–10 album items,
// albums mixing only photos and videos (a document or audio only with its own kind), photos up to 10 MB and other files up to 50 MB.
// Every call is first checked against the Bot API's own contract (test/contracts/telegram/contract.ts: Bot API 10.1 of
// 2026-06-11 as core.telegram.org/bots/api states it, rendered to JSON by telegram-bot-api-spec 160fd99 of 2026-06-18): a
// parameter the method does not have, a required one missing or a value of the wrong type (inside JSON-serialized objects too)
// answers 400 "Bad Request: ..." in Telegram's envelope, a method the Bot API does not have 404 "Not Found" (registered as
// `/*/*` after the methods); each is recorded in `tg.contractViolations`, which tests expect to stay empty.
// `tg.messages` records what was SENT (text/caption as raw HTML, parse_mode, photo or video bytes); the `result` answered carries the
// text with tags stripped, as Telegram does. `tg.server` is the underlying FakeServer (recorded `requests`, `on`, `close`).
import { multipartOf, startFakeServer } from '../helpers/fake-server.js';
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { botApiProblems, isBotApiMethod } from '../contracts/telegram/contract.js';

export interface TelegramFakeChat {
  id: number;
  title: string;
  username?: string;
  /** 'channel' (default), 'supergroup', 'group' or 'private'. */
  type?: string;
}

/** One message the bot posted, as sent by the client. */
export interface TelegramFakeMessage {
  message_id: number;
  chat_id: number;
  /** sendMessage text, as sent (HTML source when parse_mode is HTML). */
  text?: string;
  /** sendPhoto / album caption, as sent. */
  caption?: string;
  photo?: { bytes: Buffer; mimeType: string };
  video?: { bytes: Buffer; mimeType: string };
  supports_streaming?: boolean;
  reply_to_message_id?: number;
  parse_mode?: string;
  /** Shared by the messages of one sendMediaGroup album. */
  media_group_id?: string;
}

export interface TelegramFake {
  server: FakeServer;
  /** Base URL: the provider's `endpoints.api`. */
  url: string;
  /** The only bot token accepted. */
  token: string;
  chat: TelegramFakeChat & { type: string };
  messages: TelegramFakeMessage[];
  /** Messages deleted with deleteMessage, in order. */
  deleted: TelegramFakeMessage[];
  /** Calls the Bot API contract refused (answered 400, or 404 for a method it does not have), as "method: problem". */
  contractViolations: string[];
  /** Makes a message older (its `date`), e.g. past the 48 hours after which a bot can no longer delete it. */
  age(messageId: number, hours: number): void;
  /** Makes the next `times` calls of a Bot API method (any HTTP verb) answer `reply` (e.g. from `telegramError`). */
  failNext(method: string, reply: FakeReply, times?: number): void;
  close(): Promise<void>;
}

/** A Bot API error reply: HTTP status = error_code, body `{ok:false, error_code, description, parameters?}`. */
export function telegramError(errorCode: number, description: string, retryAfter?: number): FakeReply {
  return {
    status: errorCode,
    json: { ok: false, error_code: errorCode, description, ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } }) },
  };
}

const JSON_FIELDS = ['reply_parameters', 'media', 'link_preview_options'];

class BotError extends Error {
  constructor(
    readonly code: number,
    description: string,
  ) {
    super(description);
  }
}
const badRequest = (what: string) => new BotError(400, `Bad Request: ${what}`);

/** Telegram's HTML tags and the attributes each may carry. */
const TELEGRAM_ATTRIBUTES: Record<string, string[]> = {
  b: [], strong: [], i: [], em: [], u: [], ins: [], s: [], strike: [], del: [], 'tg-spoiler': [], pre: [],
  span: ['class'], a: ['href'], code: ['class'], 'tg-emoji': ['emoji-id'], blockquote: ['expandable'],
};
const ENTITY = /^&(?:(lt|gt|amp|quot)|#(\d+)|#x([\da-f]+));/i;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

function decodeAttribute(value: string, offset: number): string {
  return value.replace(/&[^;]*;?/g, (entity) => {
    const match = ENTITY.exec(entity);
    if (!match) throw badRequest(`can't parse entities: unsupported HTML entity at byte offset ${offset}`);
    return match[1] ? NAMED[match[1].toLowerCase()] : String.fromCodePoint(match[2] ? Number(match[2]) : parseInt(match[3], 16));
  });
}

/** What Telegram would display, HTML checked as the Bot API parses it; the text as is without parse mode. */
function visibleText(text: string, parseMode: unknown): string {
  if (parseMode !== 'HTML') return text;
  let visible = '';
  const open: string[] = [];
  const offset = (index: number) => Buffer.byteLength(text.slice(0, index));
  for (let index = 0; index < text.length; ) {
    const character = text[index];
    if (character === '&') {
      const entity = ENTITY.exec(text.slice(index));
      if (!entity) throw badRequest(`can't parse entities: character '&' at byte offset ${offset(index)} must be escaped as &amp;`);
      visible += entity[1] ? NAMED[entity[1].toLowerCase()] : String.fromCodePoint(entity[2] ? Number(entity[2]) : parseInt(entity[3], 16));
      index += entity[0].length;
      continue;
    }
    if (character === '>') throw badRequest(`can't parse entities: character '>' at byte offset ${offset(index)} must be escaped as &gt;`);
    if (character !== '<') {
      visible += character;
      index += 1;
      continue;
    }
    const tag = /^<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*>/.exec(text.slice(index));
    if (!tag) throw badRequest(`can't parse entities: unsupported start tag at byte offset ${offset(index)}: escape < as &lt;`);
    const [whole, closing, rawName, attributes] = tag;
    const name = rawName.toLowerCase();
    const allowed = TELEGRAM_ATTRIBUTES[name];
    if (!allowed) throw badRequest(`can't parse entities: Unsupported start tag "${name}" at byte offset ${offset(index)}`);
    if (closing) {
      if (open.pop() !== name) throw badRequest(`can't parse entities: Unexpected end tag at byte offset ${offset(index)}`);
    } else {
      for (const attribute of attributes.matchAll(/([\w-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g)) {
        const key = attribute[1].toLowerCase();
        if (!allowed.includes(key)) throw badRequest(`can't parse entities: unsupported attribute "${key}" of tag "${name}" at byte offset ${offset(index)}`);
        const value = decodeAttribute(attribute[2] ?? attribute[3] ?? attribute[4] ?? '', offset(index));
        if (name === 'a' && key === 'href' && !/^(https?:\/\/[^\s/?#]+|tg:\/\/)/i.test(value)) throw badRequest('Unsupported URL protocol');
      }
      open.push(name);
    }
    index += whole.length;
  }
  if (open.length > 0) throw badRequest(`can't parse entities: Can't find end tag corresponding to start tag "${open.at(-1)}"`);
  return visible;
}

/** The parameters as they came: `typed` from a JSON body, `strings` from the query string and form or multipart bodies. */
async function rawParams(request: RecordedRequest): Promise<{ typed: Record<string, unknown>; strings: Record<string, unknown> }> {
  const strings: Record<string, unknown> = Object.fromEntries(request.query);
  let typed: Record<string, unknown> = {};
  const contentType = String(request.headers['content-type'] ?? '');
  if (request.json && typeof request.json === 'object') typed = { ...request.json };
  else if (request.form) Object.assign(strings, Object.fromEntries(request.form));
  else if (contentType.startsWith('multipart/form-data')) {
    const form = await multipartOf(request);
    if (!form) throw new Error('the multipart body cannot be parsed');
    for (const [key, value] of form.entries()) strings[key] = value;
  }
  return { typed, strings };
}

/** One set of parameters for the methods, JSON-typed fields sent as JSON strings (as in real multipart calls) parsed. */
function readParams({ typed, strings }: { typed: Record<string, unknown>; strings: Record<string, unknown> }): Record<string, unknown> {
  const params: Record<string, unknown> = { ...strings, ...typed };
  for (const key of JSON_FIELDS) {
    if (typeof params[key] !== 'string') continue;
    try {
      params[key] = JSON.parse(params[key] as string);
    } catch {
      throw badRequest(`can't parse ${key.replace('_', ' ')} JSON object`);
    }
  }
  return params;
}

export async function startTelegramFake(options: { token?: string; chat?: TelegramFakeChat } = {}): Promise<TelegramFake> {
  const server = await startFakeServer();
  const token = options.token ?? '123456789:AAFakeTelegramBotTokenForHeraldTests';
  const given = options.chat ?? { id: -1001234567890, title: 'Herald Test Channel', username: 'herald_test' };
  const chat = { ...given, type: given.type ?? 'channel' };
  const messages: TelegramFakeMessage[] = [];
  const deleted: TelegramFakeMessage[] = [];
  const contractViolations: string[] = [];
  const results = new Map<number, Record<string, unknown>>();
  const failures: { method: string; reply: FakeReply; times: number }[] = [];
  let nextMessageId = 1;
  let nextGroupId = 1;

  const chatObject = () => ({ id: chat.id, type: chat.type, title: chat.title, ...(chat.username ? { username: chat.username } : {}) });

  function resolveChat(value: unknown): void {
    const wanted = String(value ?? '');
    const byUsername = chat.username !== undefined && wanted.toLowerCase() === `@${chat.username.toLowerCase()}`;
    if (wanted !== String(chat.id) && !byUsername) throw badRequest('chat not found');
  }

  function replyTarget(params: Record<string, unknown>): number | undefined {
    const reply = params.reply_parameters as { message_id?: unknown } | undefined;
    const raw = reply?.message_id ?? params.reply_to_message_id;
    if (raw === undefined) return undefined;
    const id = Number(raw);
    if (!results.has(id)) throw badRequest('message to be replied not found');
    return id;
  }

  function checkLength(visible: string, kind: 'text' | 'caption'): void {
    if (kind === 'text' && visible.trim().length === 0) throw badRequest('message text is empty');
    if (kind === 'text' && visible.length > 4096) throw badRequest('message is too long');
    if (kind === 'caption' && visible.length > 1024) throw badRequest('message caption is too long');
  }

  function record(sent: Omit<TelegramFakeMessage, 'message_id' | 'chat_id'>, visible: string | undefined): Record<string, unknown> {
    const message: TelegramFakeMessage = { message_id: nextMessageId++, chat_id: chat.id, ...sent };
    messages.push(message);
    const result: Record<string, unknown> = {
      message_id: message.message_id,
      date: Math.floor(Date.now() / 1000),
      chat: chatObject(),
      ...(chat.type === 'channel' ? { sender_chat: chatObject() } : {}),
    };
    if (sent.text !== undefined) result.text = visible;
    if (sent.caption !== undefined) result.caption = visible;
    if (sent.photo) {
      const fileId = `fake-photo-${message.message_id}`;
      result.photo = [
        { file_id: `${fileId}-s`, file_unique_id: `${fileId}-s`, width: 90, height: 90, file_size: Math.min(sent.photo.bytes.length, 1500) },
        { file_id: fileId, file_unique_id: fileId, width: 800, height: 800, file_size: sent.photo.bytes.length },
      ];
    }
    if (sent.video) {
      const fileId = `fake-video-${message.message_id}`;
      result.video = { file_id: fileId, file_unique_id: fileId, width: 320, height: 240, duration: 1, mime_type: sent.video.mimeType, file_size: sent.video.bytes.length };
    }
    if (sent.media_group_id) result.media_group_id = sent.media_group_id;
    if (sent.reply_to_message_id !== undefined) result.reply_to_message = results.get(sent.reply_to_message_id);
    results.set(message.message_id, result);
    return result;
  }

  async function upload(value: unknown, kind: 'photo' | 'video' = 'photo'): Promise<{ bytes: Buffer; mimeType: string }> {
    if (value === undefined) throw badRequest(`there is no ${kind} in the request`);
    if (!(value instanceof Blob)) throw badRequest('wrong file identifier/HTTP URL specified');
    if (value.size === 0) throw badRequest(`there is no ${kind} in the request`);
    if (kind === 'photo' && value.size > 10 * 1024 * 1024) throw badRequest('PHOTO_SAVE_FILE_INVALID');
    if (value.size > 50 * 1024 * 1024) throw new BotError(413, 'Request Entity Too Large');
    return { bytes: Buffer.from(await value.arrayBuffer()), mimeType: value.type || 'application/octet-stream' };
  }

  /** The message to edit or delete: in the chat and not deleted. */
  function target(params: Record<string, unknown>, what: 'edit' | 'delete'): { message: TelegramFakeMessage; result: Record<string, unknown> } {
    resolveChat(params.chat_id);
    const id = Number(params.message_id);
    const message = messages.find((entry) => entry.message_id === id);
    const result = results.get(id);
    if (!message || !result) throw badRequest(`message to ${what} not found`);
    return { message, result };
  }

  /** editMessageText / editMessageCaption: the same checks as sending, and Telegram's "not modified" for the same content. */
  function edit(params: Record<string, unknown>, kind: 'text' | 'caption'): Record<string, unknown> {
    const { message, result } = target(params, 'edit');
    const hasMedia = Boolean(message.photo || message.video);
    if (kind === 'text' && hasMedia) throw badRequest('there is no text in the message to edit');
    if (kind === 'caption' && !hasMedia) throw badRequest('there is no caption in the message to edit');
    const value = String(params[kind] ?? '');
    const visible = visibleText(value, params.parse_mode);
    checkLength(visible, kind);
    if (message[kind] === value) throw badRequest('message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
    message[kind] = value;
    message.parse_mode = params.parse_mode as string | undefined;
    result[kind] = visible;
    result.edit_date = Math.floor(Date.now() / 1000);
    return result;
  }

  const streaming = (value: unknown) => (value === undefined ? undefined : value === true || value === 'true');

  const methods: Record<string, (params: Record<string, unknown>) => Promise<unknown>> = {
    editMessageText: async (params) => edit(params, 'text'),
    editMessageCaption: async (params) => edit(params, 'caption'),
    deleteMessage: async (params) => {
      const { message, result } = target(params, 'delete');
      if (Date.now() / 1000 - Number(result.date) > 48 * 3600) throw badRequest("message can't be deleted for everyone");
      messages.splice(messages.indexOf(message), 1);
      results.delete(message.message_id);
      deleted.push(message);
      return true;
    },
    getMe: async () => ({
      id: Number(token.split(':')[0]),
      is_bot: true,
      first_name: 'Herald Test Bot',
      username: 'herald_test_bot',
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    }),
    getChat: async (params) => {
      resolveChat(params.chat_id);
      return { ...chatObject(), accent_color_id: 0, max_reaction_count: 11 };
    },
    sendMessage: async (params) => {
      resolveChat(params.chat_id);
      const text = String(params.text ?? '');
      const visible = visibleText(text, params.parse_mode);
      checkLength(visible, 'text');
      const reply = replyTarget(params);
      return record({ text, parse_mode: params.parse_mode as string | undefined, reply_to_message_id: reply }, visible);
    },
    sendPhoto: async (params) => {
      resolveChat(params.chat_id);
      const photo = await upload(params.photo);
      const caption = params.caption === undefined ? undefined : String(params.caption);
      const visible = caption === undefined ? undefined : visibleText(caption, params.parse_mode);
      if (visible !== undefined) checkLength(visible, 'caption');
      const reply = replyTarget(params);
      return record({ caption, photo, parse_mode: params.parse_mode as string | undefined, reply_to_message_id: reply }, visible);
    },
    sendVideo: async (params) => {
      resolveChat(params.chat_id);
      const video = await upload(params.video, 'video');
      const caption = params.caption === undefined ? undefined : String(params.caption);
      const visible = caption === undefined ? undefined : visibleText(caption, params.parse_mode);
      if (visible !== undefined) checkLength(visible, 'caption');
      const reply = replyTarget(params);
      return record({ caption, video, supports_streaming: streaming(params.supports_streaming), parse_mode: params.parse_mode as string | undefined, reply_to_message_id: reply }, visible);
    },
    sendMediaGroup: async (params) => {
      resolveChat(params.chat_id);
      const media = params.media;
      if (!Array.isArray(media) || media.length === 0) throw badRequest('parameter "media" is required');
      if (media.length < 2 || media.length > 10) throw badRequest('media group must include 2-10 items');
      const reply = replyTarget(params);
      const prepared: { sent: Omit<TelegramFakeMessage, 'message_id' | 'chat_id'>; visible?: string }[] = [];
      const groupId = `fake-group-${nextGroupId++}`;
      const types = new Set((media as Record<string, unknown>[]).map((item) => item.type));
      for (const lone of ['document', 'audio']) {
        if (types.has(lone) && types.size > 1) throw badRequest(`${lone} can't be mixed with other media types`);
      }
      for (const item of media as Record<string, unknown>[]) {
        if (item.type !== 'photo' && item.type !== 'video') throw badRequest(`unsupported media type "${String(item.type)}" in this fake`);
        const attach = /^attach:\/\/(.+)$/.exec(String(item.media ?? ''));
        const file = await upload(attach ? params[attach[1]] : null, item.type);
        const caption = item.caption === undefined ? undefined : String(item.caption);
        const visible = caption === undefined ? undefined : visibleText(caption, item.parse_mode);
        if (visible !== undefined) checkLength(visible, 'caption');
        const kind = item.type === 'video' ? { video: file, supports_streaming: streaming(item.supports_streaming) } : { photo: file };
        prepared.push({ sent: { caption, ...kind, parse_mode: item.parse_mode as string | undefined, reply_to_message_id: reply, media_group_id: groupId }, visible });
      }
      return prepared.map(({ sent, visible }) => record(sent, visible));
    },
  };

  for (const [name, run] of Object.entries(methods)) {
    const handler = async (request: RecordedRequest): Promise<FakeReply> => {
      const failure = failures.find((item) => item.method === name && item.times > 0);
      if (failure) {
        failure.times -= 1;
        return failure.reply;
      }
      if (request.path.split('/')[1] !== `bot${token}`) return telegramError(401, 'Unauthorized');
      try {
        const raw = await rawParams(request);
        const problems = botApiProblems(name, raw.typed, raw.strings);
        if (problems.length > 0) {
          contractViolations.push(...problems.map((problem) => `${name}: ${problem}`));
          return telegramError(400, `Bad Request: ${problems.join('; ')}`);
        }
        return { json: { ok: true, result: await run(readParams(raw)) } };
      } catch (error) {
        if (error instanceof BotError) return telegramError(error.code, error.message);
        throw error;
      }
    };
    server.on('GET', `/*/${name}`, handler);
    server.on('POST', `/*/${name}`, handler);
  }
  // Any other method: Telegram answers 404 "Not Found" for a method it does not have; one it has but the fake does not play
  // is a gap of the fake, named as such. Registered last: the routes above match first.
  const unknownMethod = (request: RecordedRequest): FakeReply => {
    const method = request.path.split('/')[2] ?? '';
    if (request.path.split('/')[1] !== `bot${token}`) return telegramError(401, 'Unauthorized');
    contractViolations.push(`${method}: ${isBotApiMethod(method) ? 'a Bot API method this fake does not play' : 'not a Bot API method'}`);
    return telegramError(404, 'Not Found');
  };
  server.on('GET', '/*/*', unknownMethod);
  server.on('POST', '/*/*', unknownMethod);

  return {
    server,
    url: server.url,
    token,
    chat,
    messages,
    deleted,
    contractViolations,
    age(messageId, hours) {
      const result = results.get(messageId);
      if (result) result.date = Number(result.date) - hours * 3600;
    },
    failNext(method, reply, times = 1) {
      failures.push({ method, reply, times });
    },
    close: () => server.close(),
  };
}
