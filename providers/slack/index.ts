// Slack: messages posted by the app's bot (OAuth v2, an xoxb token per workspace) in a public channel; later items are replies in
// the first message's thread; pictures and videos are uploaded to Slack and shared in that thread.
// References: https://docs.slack.dev/authentication/installing-with-oauth and https://docs.slack.dev/reference/methods/oauth.v2.access
// (bot token, `team`, token rotation's refresh_token/expires_in), .../methods/team.info, .../methods/conversations.list (cursor
// paging), .../methods/conversations.join, .../methods/chat.postMessage (blocks, thread_ts, metadata), .../methods/chat.getPermalink,
// .../methods/files.getUploadURLExternal and .../methods/files.completeUploadExternal (channel_id + thread_ts),
// .../methods/conversations.history and .../methods/conversations.replies (include_all_metadata, oldest, inclusive, cursor,
// has_more: read 2026-11). What the text may do (mentions, links) is ./blocks.ts's; the bodies are checked at type level against
// @slack/web-api (test/contracts/chat-bodies.ts), and every call the fake receives against Slack's published Web API
// description completed from those pages (test/contracts/slack/, scripts/contracts/slack.mjs).
import { z } from 'zod';
import type { EditItem, Provider, ProviderContext, PublishItem, PublishedRef, StepAttempt } from '../types.js';
import { couldNotConfirm, earliestCreation } from '../recovery.js';
import { authorizationUrl, basicAuth, blobOf, firstProblem, mediaFilename, pickedId, storedTokens } from '../shared.js';
import { slack, slackCode, type SlackContext } from './api.js';
import { BLOCK_LIMIT, escapeMrkdwn, sectionBlocks, splitText } from './blocks.js';

const scopes = ['channels:read', 'channels:join', 'channels:history', 'chat:write', 'files:write', 'team:read'];
const MAX_FILES = 10;
/** Our post id travels in the message's metadata, so an interrupted post can be found again instead of posted twice. */
const EVENT_TYPE = 'herald_post';

const tokenSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string().optional(),
  expires_in: z.number().optional(),
  bot_user_id: z.string().optional(),
  team: z.object({ id: z.string(), name: z.string() }).nullish(),
});
const teamSchema = z.object({ team: z.object({ id: z.string(), name: z.string(), domain: z.string().optional(), icon: z.record(z.string(), z.unknown()).optional() }) });
const postedSchema = z.object({ ts: z.string(), channel: z.string() });
const historySchema = z.object({
  messages: z.array(z.object({ ts: z.string(), metadata: z.object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()) }).optional() })),
  has_more: z.boolean().optional(),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});
/** Pages of 100 messages read when looking for an interrupted one; a busier channel stops the item with "could not confirm". */
const LOOKUP_PAGES = 10;
const channelsSchema = z.object({
  channels: z.array(z.object({ id: z.string(), name: z.string(), is_member: z.boolean().optional() })),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});
const uploadSchema = z.object({ upload_url: z.string(), file_id: z.string() });

const basic = (clientId: string, clientSecret = '') => ({ authorization: basicAuth(clientId, clientSecret) });

/**
 * The chat.postMessage arguments: the text as sections (and as the notification text), the post id in the metadata, and
 * neither `parse` nor `link_names`, so Slack finds no mention or link that the text does not spell in control syntax.
 */
export function postMessageArguments(channel: string, item: Pick<PublishItem, 'postId' | 'text'>, options: { threadTs?: string; notifyEveryone?: boolean } = {}) {
  return {
    channel,
    text: escapeMrkdwn(item.text, options),
    blocks: sectionBlocks(item.text, options),
    parse: 'none' as const,
    link_names: false,
    ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    metadata: { event_type: EVENT_TYPE, event_payload: { post_id: item.postId } },
  };
}

/** conversations.history (or .replies of a thread) from a moment on, with the messages' metadata. */
export function historyArguments(channel: string, oldest: number, options: { threadTs?: string; cursor?: string } = {}) {
  return {
    channel,
    oldest: (oldest / 1000).toFixed(6),
    inclusive: true,
    limit: 100,
    include_all_metadata: true,
    ...(options.threadTs ? { ts: options.threadTs } : {}),
    ...(options.cursor ? { cursor: options.cursor } : {}),
  };
}

/** Posts the message; a channel the bot is not in yet is joined (public channels) and the post made once more. */
async function postMessage(context: ProviderContext, channel: string, item: PublishItem, threadTs?: string): Promise<string> {
  const json = postMessageArguments(channel, item, { threadTs, notifyEveryone: context.settings.notifyEveryone === true });
  try {
    return (await slack(context, 'chat.postMessage', postedSchema, { json })).ts;
  } catch (error) {
    if (slackCode(error) !== 'not_in_channel') throw error;
    // A private channel cannot be joined, only invited to: say that, rather than the join's own refusal.
    await slack(context, 'conversations.join', z.object({}), { form: { channel } }).catch((joinError: unknown) => {
      throw slackCode(joinError) === 'method_not_supported_for_channel_type' ? error : joinError;
    });
    return (await slack(context, 'chat.postMessage', postedSchema, { json })).ts;
  }
}

/**
 * After an interrupted post: the message carrying our post id in its metadata, among every message of the channel (or thread)
 * since the attempt began (less the clock skew). Read to the end, no such message proves nothing was posted; a channel too busy
 * to read to the end stops the item with "could not confirm".
 */
async function findMessage(context: ProviderContext, channel: string, postId: string, attempt: StepAttempt, threadTs?: string): Promise<string | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const args = historyArguments(channel, earliestCreation(attempt.startedAt), { threadTs, cursor });
    // Reading methods take form arguments (the values as strings).
    const form = Object.fromEntries(Object.entries(args).map(([key, value]) => [key, String(value)]));
    const data = await slack(context, threadTs ? 'conversations.replies' : 'conversations.history', historySchema, { form });
    const found = data.messages.find((message) => message.metadata?.event_type === EVENT_TYPE && message.metadata.event_payload.post_id === postId);
    if (found) return found.ts;
    cursor = data.response_metadata?.next_cursor || undefined;
    if (!data.has_more || !cursor) return undefined;
  }
  throw couldNotConfirm('Slack', `more than ${LOOKUP_PAGES * 100} messages were posted in the channel since the attempt, and none of those read is this one`, 'the channel');
}

/** Uploads the item's files and shares them in the thread of `threadTs`, each upload and the share recorded. */
async function shareFiles(context: ProviderContext, channel: string, item: PublishItem, threadTs: string): Promise<void> {
  if (item.media.length === 0) return;
  const files: { id: string; title: string }[] = [];
  for (const [index, file] of item.media.entries()) {
    const uploaded = await context.step(`upload:${index}`, async () => {
      const { bytes, mimeType } = await file.load();
      const filename = mediaFilename(file, mimeType, index);
      const target = await slack(context, 'files.getUploadURLExternal', uploadSchema, { form: { filename, length: String(bytes.length), alt_txt: file.alt?.slice(0, 1000) } });
      const form = new FormData();
      form.append('filename', blobOf(bytes, mimeType), filename);
      await context.fetch({ method: 'POST', url: target.upload_url, multipart: form, timeoutMs: 120_000 });
      return { id: target.file_id, title: filename };
    });
    files.push(uploaded);
  }
  await context.step('files', async () => {
    await slack(context, 'files.completeUploadExternal', z.object({}), { json: { files, channel_id: channel, thread_ts: threadTs } });
    return true;
  });
}

/**
 * chat.update (read 2026-11-27, docs.slack.dev/reference/methods/chat.update): the message's text and blocks written again as
 * at publishing; a bot may update only its own messages (cant_update_message). The files shared in its thread stay. `parse` is
 * sent (left out, it would become `client`), `link_names` is not: left out it becomes `none`, which is what Herald wants, and
 * Slack's description types it as a string here ("1"), not the boolean chat.postMessage takes.
 */
async function updateMessage(context: ProviderContext, ref: PublishedRef, item: EditItem): Promise<PublishedRef> {
  const channel = ref.meta?.channel ?? String(context.settings.channel);
  const { text, blocks, parse, metadata } = postMessageArguments(channel, item, { notifyEveryone: context.settings.notifyEveryone === true });
  await context.step('edit', async () => {
    await slack(context, 'chat.update', z.object({ ts: z.string() }), { json: { channel, ts: ref.id, text, blocks, parse, metadata } });
    return true;
  });
  return { id: ref.id, url: ref.url, meta: ref.meta };
}

/** chat.delete (docs.slack.dev/reference/methods/chat.delete): a message already gone (message_not_found) counts as deleted. */
async function deleteMessage(context: ProviderContext, ref: PublishedRef): Promise<void> {
  const channel = ref.meta?.channel ?? String(context.settings.channel);
  await context.step('delete', async () => {
    try {
      await slack(context, 'chat.delete', z.object({}), { json: { channel, ts: ref.id } });
    } catch (error) {
      if (slackCode(error) !== 'message_not_found') throw error;
    }
    return true;
  });
}

async function send(context: ProviderContext, item: PublishItem, channel: string, threadTs?: string): Promise<PublishedRef> {
  const ts = await context.step('message', () => postMessage(context, channel, item, threadTs), (attempt) => findMessage(context, channel, item.postId, attempt, threadTs));
  // Slack threads are one level deep: the files of a reply go to the first message's thread too.
  await shareFiles(context, channel, item, threadTs ?? ts);
  const { permalink } = await slack(context, 'chat.getPermalink', z.object({ permalink: z.string() }), { form: { channel, message_ts: ts } });
  return { id: ts, url: permalink, meta: { channel } };
}

async function listChannels(context: SlackContext): Promise<{ id: string; name: string; isMember: boolean }[]> {
  const found: { id: string; name: string; isMember: boolean }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const data = await slack(context, 'conversations.list', channelsSchema, { form: { types: 'public_channel', exclude_archived: 'true', limit: '200', cursor } });
    found.push(...data.channels.map((channel) => ({ id: channel.id, name: channel.name, isMember: channel.is_member ?? false })));
    cursor = data.response_metadata?.next_cursor || undefined;
    if (!cursor) break;
  }
  return found;
}

const slackProvider: Provider = {
  identifier: 'slack',
  name: 'Slack',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { api: 'https://slack.com' },
  maxLength: () => 40000,
  rules:
    'A message posted by the app in a public channel (channel: an id from listChannels; the app joins it when needed). Up to 40000 characters: ' +
    'long text is split into several sections of at most 3000 characters between paragraphs, lines or words, never cut. Every item needs text. ' +
    "Pictures and videos (up to 10 an item) are uploaded to Slack and shared in the message's thread. Later items are replies in the first message's thread. " +
    'Mentions in Slack syntax (<@U123>, <#C123>, <!subteam^S123>) are kept and notify; <!here>, <!channel> and <!everyone> notify only with ' +
    'notifyEveryone: true (otherwise they show as @here). Links in Slack syntax (<url|text>) show as typed; web addresses are linked as they are.',
  settings: z.object({
    channel: pickedId('Channel id from listChannels'),
    notifyEveryone: z.boolean().optional().describe('Let <!here>, <!channel> and <!everyone> in the text notify the channel (off by default: they show as @here)'),
  }),
  chain: 'comments',
  recordsSteps: true,
  validate: (items) =>
    firstProblem(items, ({ total }, item) => {
      if (!item.text.trim()) return 'has no text: every Slack item is a message with text, its files shared under it. Add a line of text.';
      if (total > MAX_FILES) return `has ${total} files; Herald shares at most ${MAX_FILES} under one Slack message: split them across items.`;
      if (splitText(item.text).length > BLOCK_LIMIT) return `needs more than ${BLOCK_LIMIT} Slack sections: shorten it or split it across items.`;
      return undefined;
    }),
  tools: [
    {
      methodName: 'listChannels',
      description: 'Lists the public channels of the Slack workspace as [{id, name, isMember}] (the app joins a channel when it first posts there). Use an id as the channel setting.',
      dataSchema: [],
      run: (context) => listChannels(context),
    },
  ],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.api, 'oauth/v2/authorize', {
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(','),
      state,
    }),

  async exchangeCode(context, options) {
    const data = await slack({ ...context, auth: { accessToken: '' } }, 'oauth.v2.access', tokenSchema, {
      headers: basic(options.clientId, options.clientSecret),
      form: { code: options.code, redirect_uri: options.redirectUri },
    });
    const { team } = await slack({ ...context, auth: { accessToken: data.access_token } }, 'team.info', teamSchema);
    const icon = team.icon?.image_132 ?? team.icon?.image_default;
    return {
      ...storedTokens(data),
      internalId: team.id,
      name: team.name,
      profile: team.domain ?? team.name,
      picture: typeof icon === 'string' ? icon : undefined,
      data: data.bot_user_id ? { botUserId: data.bot_user_id } : ({} as Record<string, string>),
    };
  },

  // Only apps with token rotation get a refresh token; without one a refused token means the app was removed: reconnect.
  async refresh(context) {
    if (!context.auth.refreshToken) throw new Error('Slack gave this channel no refresh token (token rotation is off): reconnect it.');
    if (!context.client) throw new Error('No Slack app is configured on this Herald (SLACK_CLIENT_ID) to refresh the token with.');
    const data = await slack(context, 'oauth.v2.access', tokenSchema, {
      headers: basic(context.client.clientId, context.client.clientSecret),
      form: { grant_type: 'refresh_token', refresh_token: context.auth.refreshToken },
    });
    return storedTokens(data);
  },

  publish: (context, item) => send(context, item, String(context.settings.channel)),
  comment: (context, item, { root }) => send(context, item, root.meta?.channel ?? String(context.settings.channel), root.id),
  editPublished: (context, ref, item) => updateMessage(context, ref, item),
  deletePublished: (context, ref) => deleteMessage(context, ref),
};

export default slackProvider;
