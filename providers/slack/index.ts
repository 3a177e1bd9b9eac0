// Slack: messages posted by the app's bot (OAuth v2, an xoxb token per workspace) in a public channel; later items are replies in
// the first message's thread; pictures and videos are uploaded to Slack and shared in that thread.
// References: https://docs.slack.dev/authentication/installing-with-oauth and https://docs.slack.dev/reference/methods/oauth.v2.access
// (bot token, `team`, token rotation's refresh_token/expires_in), .../methods/team.info, .../methods/conversations.list (cursor
// paging), .../methods/conversations.join, .../methods/chat.postMessage (blocks, thread_ts, metadata), .../methods/chat.getPermalink,
// .../methods/files.getUploadURLExternal and .../methods/files.completeUploadExternal (channel_id + thread_ts),
// .../methods/conversations.history and .../methods/conversations.replies (include_all_metadata).
import { z } from 'zod';
import type { Provider, ProviderContext, PublishItem, PublishedRef } from '../types.js';
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
});
const channelsSchema = z.object({
  channels: z.array(z.object({ id: z.string(), name: z.string(), is_member: z.boolean().optional() })),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});
const uploadSchema = z.object({ upload_url: z.string(), file_id: z.string() });

const basic = (clientId: string, clientSecret = '') => ({ authorization: basicAuth(clientId, clientSecret) });

/** Posts the message; a channel the bot is not in yet is joined (public channels) and the post made once more. */
async function postMessage(context: ProviderContext, channel: string, item: PublishItem, threadTs?: string): Promise<string> {
  const json = {
    channel,
    text: escapeMrkdwn(item.text),
    blocks: sectionBlocks(item.text),
    ...(threadTs ? { thread_ts: threadTs } : {}),
    metadata: { event_type: EVENT_TYPE, event_payload: { post_id: item.postId } },
  };
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

/** After an interrupted post: the message carrying our post id in its metadata, among the channel's (or thread's) latest. */
async function findMessage(context: ProviderContext, channel: string, postId: string, threadTs?: string): Promise<string | undefined> {
  const form = { channel, limit: '100', include_all_metadata: 'true', ...(threadTs ? { ts: threadTs } : {}) };
  const { messages } = await slack(context, threadTs ? 'conversations.replies' : 'conversations.history', historySchema, { form });
  return messages.find((message) => message.metadata?.event_type === EVENT_TYPE && message.metadata.event_payload.post_id === postId)?.ts;
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

async function send(context: ProviderContext, item: PublishItem, channel: string, threadTs?: string): Promise<PublishedRef> {
  const ts = await context.step('message', () => postMessage(context, channel, item, threadTs), () => findMessage(context, channel, item.postId, threadTs));
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
    'Mentions in Slack syntax (<@U123>, <#C123>, <!here>) are kept.',
  settings: z.object({
    channel: pickedId('Channel id from listChannels'),
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
};

export default slackProvider;
