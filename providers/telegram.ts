// Telegram: a bot posts to a channel or group through the Bot API (`/bot<token>/<method>`), text in HTML parse mode.
// Reference: https://core.telegram.org/bots/api (sendMessage, sendPhoto, sendVideo, sendMediaGroup, InputMediaPhoto,
// InputMediaVideo, "Sending files": multipart uploads up to 10 MB for photos and 50 MB for other files).
// What the text may do: HTML parse mode as https://core.telegram.org/bots/api#html-style has it (read 2026-11): only Telegram's
// tags, every other <, > and & escaped (src/lib/content.ts's toTelegramHtml), links only to web addresses (Telegram refuses
// other URL schemes, and shows mailto: as a web address, so a mail link is written out as text). The bodies are checked at
// type level against @grammyjs/types (test/contracts/chat-bodies.ts).
// Changing what went out (read 2026-11-27): editMessageText / editMessageCaption (a message with media carries its text as the
// caption; "message is not modified" when the text is already the same) and deleteMessage ("A message can only be deleted if
// it was sent less than 48 hours ago"; bots with can_post_messages delete their own messages in channels). An album is
// several messages: their ids are kept at publishing (`meta.albumIds`, comma-separated) so a deletion takes them all.
// Every call is checked by the fake against the Bot API's own method and type list (Bot API 10.1, 2026-06-11, vendored in
// test/contracts/telegram/bot-api.json from telegram-bot-api-spec 160fd99, 2026-06-18): the methods and parameters here are all in it.
// Recovery: the Bot API has no idempotency key and a bot cannot read a channel's history, so a send whose answer was lost cannot
// be looked up: the provider records no steps and the core stops such an item with "could not confirm".
// Stored credentials: accessToken = the bot token, data.chatId = the numeric chat id, data.username = the public @name if any.
// The token lives in every URL, so no error message built here or in platform-http ever carries the URL or the token.
import { z } from 'zod';
import type { PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import { invalidInput, notSupported } from '../src/errors.js';
import { toTelegramHtml } from '../src/lib/content.js';
import { decodeEntities } from '../src/lib/content-tree.js';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import type { ConnectContext, EditItem, MediaFile, Provider, ProviderContext, PublishedRef, PublishItem, ValidationItem } from './types.js';
import { blobOf, permanent } from './shared.js';

const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;
const ALBUM_LIMIT = 10;
/** Multipart upload limits of the Bot API: photos up to 10 MB, other files (videos) up to 50 MB. */
const PHOTO_BYTES = 10 * 1024 * 1024;
const VIDEO_BYTES = 50 * 1024 * 1024;
const endpoints = { api: 'https://api.telegram.org' };

const chatSchema = z.object({
  id: z.number(),
  type: z.string(),
  title: z.string().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
});
const messageSchema = z.object({ message_id: z.number(), chat: chatSchema.partial({ type: true }) });
const userSchema = z.object({ id: z.number(), is_bot: z.boolean(), username: z.string().optional() });
const envelopes = new WeakMap<z.ZodType, z.ZodType>();
/** `{ok: true, result}` around a result's schema, made once per result schema (making a zod schema costs more than parsing with it). */
const envelope = <R>(result: z.ZodType<R>) => {
  let made = envelopes.get(result);
  if (!made) envelopes.set(result, (made = z.object({ ok: z.literal(true), result })));
  return made as unknown as z.ZodType<{ ok: true; result: R }>;
};

/** Telegram's error envelope: `{ok:false, error_code, description, parameters?: {retry_after, migrate_to_chat_id}}`. */
const errorSchema = z.object({
  description: z.string().optional(),
  parameters: z.object({ retry_after: z.number().optional(), migrate_to_chat_id: z.number().optional() }).optional(),
});

const redact = (text: string, token: string) => (token ? text.split(token).join('<bot-token>') : text);

/** Turns a Bot API error body into a classification and a message that quotes Telegram's description, never the URL. */
function classifier(method: string, token: string) {
  return (status: number, body: string): Partial<PlatformHttpErrorInit> => {
    let parsed: z.infer<typeof errorSchema> = {};
    try {
      parsed = errorSchema.catch({}).parse(JSON.parse(body));
    } catch {
      /* not JSON (a proxy's HTML page): keep the status only */
    }
    const retryAfter = parsed.parameters?.retry_after;
    const description = parsed.description ? redact(parsed.description, token) : `HTTP ${status}`;
    const hint =
      status === 401
        ? ' (check the bot token from @BotFather)'
        : status === 403
          ? ' (add the bot to the chat again, as an administrator)'
          : parsed.parameters?.migrate_to_chat_id !== undefined
            ? ` (the group became a supergroup: reconnect with chat id ${parsed.parameters.migrate_to_chat_id})`
            : '';
    return {
      retryable: retryAfter !== undefined || status === 429 || status >= 500,
      ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
      bodyExcerpt: redact(body.slice(0, 500), token),
      message: `Telegram ${method} failed: ${description}${hint}`,
    };
  };
}

function botToken(raw: string): string {
  const token = raw.trim();
  if (!/^\d+:[A-Za-z0-9_-]+$/.test(token)) {
    throw permanent('Telegram bot token is malformed: paste the token @BotFather gave you (digits, a colon, then letters).', 401);
  }
  return token;
}

async function call<R>(
  context: ConnectContext,
  token: string,
  method: string,
  result: z.ZodType<R>,
  body: { json?: Record<string, unknown>; multipart?: FormData } = {},
): Promise<R> {
  const base = (context.endpoints.api ?? endpoints.api).replace(/\/+$/, '');
  const response = await context.fetch({
    method: body.json || body.multipart ? 'POST' : 'GET',
    url: `${base}/bot${token}/${method}`,
    ...body,
    schema: envelope(result),
    classify: classifier(method, token),
  });
  return response.data.result;
}

/** Telegram counts a caption after entity parsing: visible characters, tags dropped and entities decoded. */
function visibleLength(html: string): number {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(?:#\d+|#x[\da-f]+|[a-z]+);/gi, '_').length;
}

/** Accepts `@name`, `name`, `https://t.me/name` or a numeric id (`-100…` for channels and supergroups). */
function chatReference(input: string): string {
  const value = input.trim();
  const link = /^(?:https?:\/\/)?t\.me\/([A-Za-z0-9_]{4,})\/?$/i.exec(value);
  if (link) return `@${link[1]}`;
  if (/^-?\d+$/.test(value) || value.startsWith('@')) return value;
  return `@${value}`;
}

/** The file as a multipart part: a photo or a video, named with its extension. */
async function filePart(file: MediaFile): Promise<{ blob: Blob; name: string }> {
  const { bytes, mimeType } = await file.load();
  const extension = mimeType.split('/')[1]?.replace('jpeg', 'jpg') ?? 'bin';
  return { blob: blobOf(bytes, mimeType), name: `${file.kind === 'video' ? 'video' : 'photo'}.${extension}` };
}

/** The fields of a photo or video upload: Telegram streams a video as it plays when supports_streaming is set. */
const mediaType = (file: MediaFile) => (file.kind === 'video' ? 'video' : 'photo');
const videoFields = (file: MediaFile): Record<string, string> => (file.kind === 'video' ? { supports_streaming: 'true' } : {});

/** A mail link as the text it shows, with the address after it when the text is not the address. */
const MAIL_LINK = /<a href="mailto:([^"]*)">([\s\S]*?)<\/a>/g;

/** The post as Telegram HTML: its own tags only, every other character escaped, links only to web addresses. */
export function telegramHtml(html: string): string {
  return toTelegramHtml(html).replace(MAIL_LINK, (_link, address: string, text: string) => (text === address || !text ? address : `${text} (${address})`));
}

/** sendMessage: the text in HTML parse mode, a reply to `replyTo` when given. */
export function messageParams(chatId: string, html: string, replyTo?: number) {
  return { chat_id: chatId, text: html, parse_mode: 'HTML' as const, ...(replyTo === undefined ? {} : { reply_parameters: { message_id: replyTo } }) };
}

/** One item of an album: the file attached as `field`, the caption on the first; Telegram streams a video as it plays. */
export function inputMedia(kind: 'photo' | 'video', field: string, caption?: string) {
  const common = { media: `attach://${field}`, ...(caption ? { caption, parse_mode: 'HTML' as const } : {}) };
  return kind === 'video' ? { type: 'video' as const, ...common, supports_streaming: true } : { type: 'photo' as const, ...common };
}

async function send(context: ProviderContext, item: PublishItem, replyTo?: number): Promise<PublishedRef> {
  // The core hands trimmed HTML; Telegram's HTML mode accepts only its own small tag set.
  const text = telegramHtml(item.text);
  const token = botToken(context.auth.accessToken);
  const chatId = context.auth.data.chatId ?? context.auth.internalId;
  if (item.media.length > ALBUM_LIMIT) {
    throw notSupported(`Telegram takes at most ${ALBUM_LIMIT} pictures and videos in one album.`);
  }
  const reply = replyTo === undefined ? undefined : { message_id: replyTo };
  const caption = text ? { caption: text, parse_mode: 'HTML' } : {};
  let messageId: number;
  let albumIds: number[] | undefined;
  if (item.media.length === 0) {
    const message = await call(context, token, 'sendMessage', messageSchema, { json: messageParams(chatId, text, replyTo) });
    messageId = message.message_id;
  } else {
    const form = new FormData();
    form.append('chat_id', chatId);
    if (reply) form.append('reply_parameters', JSON.stringify(reply));
    if (item.media.length === 1) {
      // One photo (sendPhoto) or one video (sendVideo), the text as its caption.
      const [file] = item.media;
      const { blob, name } = await filePart(file);
      form.append(mediaType(file), blob, name);
      for (const [key, value] of Object.entries({ ...caption, ...videoFields(file) })) form.append(key, value);
      messageId = (await call(context, token, file.kind === 'video' ? 'sendVideo' : 'sendPhoto', messageSchema, { multipart: form })).message_id;
    } else {
      // An album: photos and videos may be mixed (documents may not, and Herald sends none); the caption goes on the first.
      const media: Record<string, unknown>[] = [];
      for (const [index, file] of item.media.entries()) {
        const { blob, name } = await filePart(file);
        form.append(`file${index}`, blob, name);
        media.push(inputMedia(mediaType(file), `file${index}`, index === 0 ? text : undefined));
      }
      form.append('media', JSON.stringify(media));
      const messages = await call(context, token, 'sendMediaGroup', z.array(messageSchema).min(1), { multipart: form });
      messageId = messages[0].message_id;
      albumIds = messages.map((message) => message.message_id);
    }
  }
  const username = context.auth.data.username;
  return { id: String(messageId), url: username ? `https://t.me/${username}/${messageId}` : undefined, ...(albumIds ? { meta: { albumIds: albumIds.join(',') } } : {}) };
}

/** Telegram's answer to a change that is already made (the same text, a message already gone): the repeat is harmless. */
const alreadyDone = (error: unknown, pattern: RegExp) => error instanceof PlatformHttpError && error.status === 400 && pattern.test(error.message);

/** Edits the message's text, or its caption when it carries media; the same text again counts as done. */
async function editMessage(context: ProviderContext, ref: PublishedRef, item: EditItem): Promise<PublishedRef> {
  const token = botToken(context.auth.accessToken);
  const chatId = context.auth.data.chatId ?? context.auth.internalId;
  const html = telegramHtml(item.text);
  const [method, body] =
    item.media.length > 0
      ? (['editMessageCaption', { chat_id: chatId, message_id: Number(ref.id), caption: html, parse_mode: 'HTML' }] as const)
      : (['editMessageText', { chat_id: chatId, message_id: Number(ref.id), text: html, parse_mode: 'HTML' }] as const);
  await context.step('edit', async () => {
    try {
      await call(context, token, method, z.union([messageSchema, z.literal(true)]), { json: body });
    } catch (error) {
      if (!alreadyDone(error, /message is not modified/i)) throw error;
    }
    return true;
  });
  return { id: ref.id, url: ref.url, meta: ref.meta };
}

/** Deletes the message (every message of an album); one already gone counts as deleted. */
async function deleteMessage(context: ProviderContext, ref: PublishedRef): Promise<void> {
  const token = botToken(context.auth.accessToken);
  const chatId = context.auth.data.chatId ?? context.auth.internalId;
  const albumIds = ref.meta?.albumIds ? ref.meta.albumIds.split(',').map(Number) : [Number(ref.id)];
  for (const messageId of albumIds) {
    await context.step(`delete:${messageId}`, async () => {
      try {
        await call(context, token, 'deleteMessage', z.literal(true), { json: { chat_id: chatId, message_id: messageId } });
      } catch (error) {
        if (alreadyDone(error, /message to delete not found/i)) return true;
        if (error instanceof PlatformHttpError && error.status === 400 && /can't be deleted/i.test(error.message)) {
          throw permanent(`${error.message} (Telegram lets a bot delete its messages only within 48 hours of sending them: delete it in Telegram by hand)`);
        }
        throw error;
      }
      return true;
    });
  }
}

const megabytes = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;

function validate(items: ValidationItem[]): string | undefined {
  for (const [index, item] of items.entries()) {
    const where = items.length > 1 ? ` (item ${index + 1})` : '';
    if (item.media.length > ALBUM_LIMIT) {
      return `Telegram takes at most ${ALBUM_LIMIT} pictures and videos in one message${where}: it has ${item.media.length}, remove some or split them across items.`;
    }
    const length = visibleLength(item.text);
    if (item.media.length > 0 && length > CAPTION_LIMIT) {
      return `A Telegram message with pictures or a video has a caption limit of ${CAPTION_LIMIT} characters${where}: it has ${length}, shorten the text or move it to a text-only item.`;
    }
    for (const file of item.media) {
      if (file.kind === 'video' && file.size !== undefined && file.size > VIDEO_BYTES) {
        return `Telegram bots upload videos of at most 50 MB${where}: this one is ${megabytes(file.size)}, shorten or compress it.`;
      }
      if (file.kind === 'image' && file.size !== undefined && file.size > PHOTO_BYTES) {
        return `Telegram bots upload pictures of at most 10 MB${where}: this one is ${megabytes(file.size)}, make it smaller.`;
      }
      if (file.kind === 'image' && file.width && file.height && (file.width + file.height > 10_000 || Math.max(file.width, file.height) / Math.min(file.width, file.height) > 20)) {
        return `Telegram takes pictures whose width and height add up to at most 10000 pixels with a ratio of at most 20${where}: this one is ${file.width}x${file.height}, resize or crop it.`;
      }
    }
  }
  return undefined;
}

const telegram: Provider = {
  identifier: 'telegram',
  name: 'Telegram',
  editor: 'html',
  lengthMethod: 'characters',
  maxLength: () => TEXT_LIMIT,
  rules:
    `Posts to a Telegram channel or group as its bot. Text up to ${TEXT_LIMIT} characters; when the message has pictures or a video the text becomes ` +
    `their caption, limited to ${CAPTION_LIMIT} characters. One picture or one video (MP4, up to 50 MB; pictures up to 10 MB) is sent as it is; ` +
    `2 to ${ALBUM_LIMIT} pictures and videos, mixed as you like, make one album (caption on the first). ` +
    'Bold, underline and links are kept (Telegram HTML); other formatting becomes plain text. ' +
    'Each later item of the chain is posted as a reply to the previous message.',
  settings: null,
  // Telegram asks a bot not to send more than about one message a second to one chat (core.telegram.org/bots/faq, "My bot
  // is hitting limits, how do I avoid this?"): a few sends at once per chat at most. Its limit across chats (about 30
  // messages a second) is a rate, not a number in flight: its 429s with retry_after are waited out like any other.
  concurrency: { perAccount: 4 },
  // What the bot sends (Telegram HTML) and what readers see once Telegram applied it: bold is bold, not Unicode letters.
  render: (converted) => {
    const text = telegramHtml(converted);
    return { text, visible: decodeEntities(text.replace(/<[^>]*>/g, '')) };
  },
  chain: 'thread',
  tools: [],
  validate,
  endpoints,
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'botToken', label: 'Bot token', type: 'password', required: true, description: 'The token from @BotFather.' },
      {
        key: 'chatId',
        label: 'Chat',
        type: 'text',
        required: true,
        description: '@channelusername or the numeric chat id; add the bot to the channel or group as an administrator first.',
      },
    ],
  },

  async connect(context, fields) {
    const token = botToken(fields.botToken ?? '');
    if (!fields.chatId?.trim()) throw invalidInput('Telegram needs the chat to post to.', { hint: 'Give @channelusername or the numeric chat id.' });
    await call(context, token, 'getMe', userSchema);
    const chat = await call(context, token, 'getChat', chatSchema, { json: { chat_id: chatReference(fields.chatId ?? '') } });
    const chatId = String(chat.id);
    const data: Record<string, string> = chat.username ? { chatId, username: chat.username } : { chatId };
    return {
      internalId: chatId,
      name: chat.title ?? chat.username ?? chat.first_name ?? chatId,
      profile: chat.username ? `@${chat.username}` : chatId,
      accessToken: token,
      data,
    };
  },

  publish: (context, item) => send(context, item),

  comment: (context, item, { parent }) => send(context, item, Number(parent.id)),

  editPublished: (context, ref, item) => editMessage(context, ref, item),
  deletePublished: (context, ref) => deleteMessage(context, ref),
};

export default telegram;
