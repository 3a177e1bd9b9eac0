// Discord: messages posted by the app's bot in a channel of the server (guild) the user installed it on; later items go into a
// thread started on the first message, every one of them (the anchor lost the thread after the first comment).
// References: https://discord.com/developers/docs/topics/oauth2#advanced-bot-authorization (bot install through the
// authorization code grant: the token response carries the chosen `guild`), https://discord.com/developers/docs/resources/message#create-message
// (content up to 2000 characters, `nonce` + `enforce_nonce`, files as multipart `payload_json` + `files[n]`, up to 10),
// https://discord.com/developers/docs/resources/channel#start-thread-from-message (the thread's id is the message's id),
// https://discord.com/developers/docs/reference#message-formatting (mentions `<@id>`, `<@&role>`, `<#channel>` pass as typed;
// only those notify, @everyone and @here only with notifyEveryone: see ./message.ts, which also builds the bodies),
// https://discord.com/developers/docs/resources/message#edit-message (PATCH: only the author edits its content; attachments not
// named in the body stay) and #delete-message (204; 404 10008 Unknown Message once it is gone) (read 2026-11-27). The fake checks
// every bot API request against Discord's OpenAPI description (github.com/discord/discord-api-spec, test/contracts/discord/).
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../../src/lib/platform-http.js';
import type { EditItem, Provider, ProviderContext, PublishItem, PublishedRef } from '../types.js';
import { basicAuth, blobOf, firstProblem, mediaFilename, oauth2AuthorizeUrl, permanent, pickedId } from '../shared.js';
import { DISCORD_CODES, discord, discordError } from './api.js';
import { listChannels } from './channels.js';
import { findMessage, messageBody, threadBody, withAttachments } from './message.js';

const scopes = ['bot', 'identify', 'guilds'];
const MAX_ATTACHMENTS = 10;
/**
 * What the bot needs, as the permissions integer of the install: View Channel, Send Messages, Embed Links, Attach Files,
 * Read Message History, Create Public Threads, Send Messages in Threads.
 */
const PERMISSIONS = [10n, 11n, 14n, 15n, 16n, 35n, 38n].reduce((sum, bit) => sum | (1n << bit), 0n).toString();

const tokenSchema = z.object({
  access_token: z.string(),
  guild: z.object({ id: z.string(), name: z.string(), icon: z.string().nullish() }).optional(),
});
const messageSchema = z.object({ id: z.string(), channel_id: z.string() });
const threadSchema = z.object({ id: z.string(), type: z.number() });

/** The OAuth server answers RFC 6749 bodies `{error, error_description}`. */
function classifyToken(status: number, body: string): Partial<PlatformHttpErrorInit> {
  try {
    const parsed = JSON.parse(body) as { error?: string; error_description?: string };
    if (parsed.error) return { message: `${parsed.error_description ?? parsed.error} (${parsed.error})` };
  } catch {
    /* not JSON */
  }
  return { message: `HTTP ${status}` };
}

/**
 * A thread is named after the post's first line as plain text (1-100 characters): the backslashes that escaped Markdown in
 * the message are undone, then the Markdown markers dropped.
 */
function threadName(text: string): string {
  const plain = (part: string) => part.replace(/\\([\\`*[\]<_#>+=\-.)])/g, '$1').replace(/[*_~`>#|]/g, '').trim();
  const line = text.split('\n').map(plain).find(Boolean) ?? '';
  if (line.length <= 100) return line || 'Comments';
  return `${line.slice(0, 99).replace(/\s+\S*$/, '') || line.slice(0, 99)}…`;
}

const messageUrl = (context: ProviderContext, channelId: string, messageId: string) => `${context.endpoints.web}/channels/${context.auth.internalId}/${channelId}/${messageId}`;

const notifiesEveryone = (context: ProviderContext) => context.settings.notifyEveryone === true;

/** Posts the message; with media, as multipart. The post id is the nonce Discord deduplicates on for a few minutes. */
async function createMessage(context: ProviderContext, channelId: string, item: PublishItem): Promise<string> {
  const payload = messageBody(item, notifiesEveryone(context));
  const path = `channels/${encodeURIComponent(channelId)}/messages`;
  if (item.media.length === 0) return (await discord(context, path, { method: 'POST', json: payload, schema: messageSchema })).data.id;
  const form = new FormData();
  const attachments: { id: number; filename: string; description?: string }[] = [];
  const files: [string, Blob, string][] = [];
  for (const [index, file] of item.media.entries()) {
    const { bytes, mimeType } = await file.load();
    const filename = mediaFilename(file, mimeType, index);
    attachments.push({ id: index, filename, description: file.alt });
    files.push([`files[${index}]`, blobOf(bytes, mimeType), filename]);
  }
  form.append('payload_json', JSON.stringify(withAttachments(payload, attachments)));
  for (const [name, blob, filename] of files) form.append(name, blob, filename);
  return (await discord(context, path, { method: 'POST', multipart: form, schema: messageSchema, timeoutMs: 120_000 })).data.id;
}

/** Starts the thread on the first message; one that already exists (a lost answer) has the message's id. */
async function startThread(context: ProviderContext, root: PublishedRef): Promise<string> {
  const channelId = root.meta?.channelId ?? String(context.settings.channel);
  try {
    const { data } = await discord(context, `channels/${encodeURIComponent(channelId)}/messages/${encodeURIComponent(root.id)}/threads`, {
      method: 'POST',
      json: threadBody(root.meta?.threadName || 'Comments'),
      schema: threadSchema,
    });
    return data.id;
  } catch (error) {
    if (error instanceof PlatformHttpError && discordError(error.bodyExcerpt).code === DISCORD_CODES.threadAlreadyCreated) return root.id;
    throw error;
  }
}

/** After an interrupted start: the thread exists when its channel (the message's id) answers. */
async function existingThread(context: ProviderContext, messageId: string): Promise<string | undefined> {
  try {
    return (await discord(context, `channels/${encodeURIComponent(messageId)}`, { schema: threadSchema })).data.id;
  } catch (error) {
    if (error instanceof PlatformHttpError && error.status === 404) return undefined;
    throw error;
  }
}

const messagePath = (context: ProviderContext, ref: PublishedRef) =>
  `channels/${encodeURIComponent(ref.meta?.channelId ?? String(context.settings.channel))}/messages/${encodeURIComponent(ref.id)}`;

/** Edits the bot's message: its content and the mentions it may notify; the attachments stay. Setting it again is harmless. */
async function editMessage(context: ProviderContext, ref: PublishedRef, item: EditItem): Promise<PublishedRef> {
  const { content, allowed_mentions } = messageBody(item, notifiesEveryone(context));
  await context.step('edit', async () => {
    await discord(context, messagePath(context, ref), { method: 'PATCH', json: { content, allowed_mentions }, schema: messageSchema });
    return true;
  });
  return { id: ref.id, url: ref.url, meta: ref.meta };
}

/** Deletes the bot's message; one already gone (Unknown Message) counts as deleted. */
async function deleteMessage(context: ProviderContext, ref: PublishedRef): Promise<void> {
  await context.step('delete', async () => {
    try {
      await discord(context, messagePath(context, ref), { method: 'DELETE' });
    } catch (error) {
      if (!(error instanceof PlatformHttpError && error.status === 404 && discordError(error.bodyExcerpt).code === DISCORD_CODES.unknownMessage)) throw error;
    }
    return true;
  });
}

const discordProvider: Provider = {
  identifier: 'discord',
  name: 'Discord',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { api: 'https://discord.com', apiVersion: 'v10', web: 'https://discord.com', cdn: 'https://cdn.discordapp.com' },
  maxLength: () => 2000,
  rules:
    'A message of up to 2000 characters in Discord Markdown, posted by the bot in the chosen channel (channel: an id from listChannels, a text or ' +
    'announcement channel the bot can post in), with up to 10 attachments (pictures or videos, 10 MiB each unless the server is boosted). ' +
    'Mentions written in Discord syntax (<@userId>, <@&roleId>, <#channelId>) are kept and notify those named; @everyone and @here notify the whole server ' +
    'only with notifyEveryone: true (otherwise they show as text). Links lead only to http(s) and mailto addresses. Later items are posted in a thread started on the first message.',
  settings: z.object({
    channel: pickedId('Channel id from listChannels'),
    notifyEveryone: z.boolean().optional().describe('Let @everyone and @here in the text notify the whole server (off by default: they show as text)'),
  }),
  chain: 'comments',
  recordsSteps: true,
  validate: (items) =>
    firstProblem(items, ({ total }) => (total > MAX_ATTACHMENTS ? `has ${total} attachments; a Discord message takes at most ${MAX_ATTACHMENTS}: split them across items.` : undefined)),
  tools: [
    {
      methodName: 'listChannels',
      description: 'Lists the text and announcement channels of the Discord server that the bot can post in, as [{id, name, type}]. Use an id as the channel setting.',
      dataSchema: [],
      run: (context) => listChannels(context),
    },
  ],
  // Installs the bot on a server the user picks on Discord's page; the code grant then names that server.
  authorizeUrl: oauth2AuthorizeUrl('api', 'oauth2/authorize', scopes, { extra: { permissions: PERMISSIONS, integration_type: '0' } }),

  // Posting uses the bot token, which does not expire: the user's token is not kept fresh (no refresh), only the server is.
  async exchangeCode(context, options) {
    const { data } = await context.fetch({
      method: 'POST',
      url: `${context.endpoints.api}/api/${context.endpoints.apiVersion}/oauth2/token`,
      headers: { authorization: basicAuth(options.clientId, options.clientSecret ?? '') },
      form: { grant_type: 'authorization_code', code: options.code, redirect_uri: options.redirectUri },
      schema: tokenSchema,
      classify: classifyToken,
    });
    const guild = data.guild;
    if (!guild) throw permanent('Discord named no server: add the bot to a server on the authorization page');
    return {
      internalId: guild.id,
      name: guild.name,
      profile: guild.name,
      picture: guild.icon ? `${context.endpoints.cdn}/icons/${guild.id}/${guild.icon}.png` : undefined,
      accessToken: data.access_token,
    };
  },

  async publish(context, item) {
    const channelId = String(context.settings.channel);
    const id = await context.step('message', () => createMessage(context, channelId, item), (attempt) => findMessage(context, channelId, item, attempt));
    return { id, url: messageUrl(context, channelId, id), meta: { channelId, threadName: threadName(item.text) } };
  },

  // Every later item goes into the one thread: the first comment starts it, the next ones find its id on their parent.
  async comment(context, item, { root, parent }) {
    const threadId = parent.meta?.threadId ?? (await context.step('thread', () => startThread(context, root), () => existingThread(context, root.id)));
    const id = await context.step('message', () => createMessage(context, threadId, item), (attempt) => findMessage(context, threadId, item, attempt));
    return { id, url: messageUrl(context, threadId, id), meta: { channelId: threadId, threadId } };
  },

  editPublished: (context, ref, item) => editMessage(context, ref, item),
  deletePublished: (context, ref) => deleteMessage(context, ref),
};

export default discordProvider;
