// Twitch: chat messages or announcements in the connected broadcaster's own chat; text only.
// References: https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/#authorization-code-grant-flow and
// .../refresh-tokens (id.twitch.tv, form bodies with the client secret), https://dev.twitch.tv/docs/api/reference/#get-users,
// https://dev.twitch.tv/docs/api/reference/#send-chat-message (POST /helix/chat/messages → data[0] {message_id, is_sent,
// drop_reason}), .../#send-chat-announcement (POST /helix/chat/announcements?broadcaster_id&moderator_id → 204, no id),
// .../#get-channel-followers (`total`), and https://dev.twitch.tv/docs/api/guide/#twitch-rate-limits (429 with Ratelimit-Reset),
// read 2026-11. Chat shows text as typed (no markup to escape). Helix cannot read chat history, so a message or announcement
// whose answer was lost cannot be looked up: the step has no recover and the item stops with "could not confirm".
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit, type PlatformRequest } from '../src/lib/platform-http.js';
import type { ConnectContext, Provider, ProviderContext, PublishItem, PublishedRef } from './types.js';
import { currentMetric, oauth2AuthorizeUrl, permanent, secondsUntilReset, textOnly, tokenGrant } from './shared.js';

// Sending as the broadcaster needs user:write:chat; announcements need moderator:manage:announcements (the broadcaster moderates its own chat).
const scopes = ['user:write:chat', 'moderator:manage:announcements'];

const tokenSchema = z.object({ access_token: z.string().min(1), refresh_token: z.string().optional(), expires_in: z.number().positive().optional() });
const usersSchema = z.object({ data: z.array(z.object({ id: z.string(), login: z.string(), display_name: z.string(), profile_image_url: z.string().nullish() })).min(1) });
const sentSchema = z.object({
  data: z.array(z.object({ message_id: z.string(), is_sent: z.boolean(), drop_reason: z.object({ code: z.string(), message: z.string() }).nullish() })).min(1),
});
const followersSchema = z.object({ total: z.number() });

/** Helix answers `{error, status, message}`; the OAuth server `{status, message}`. */
function classify(status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> {
  let reason = `HTTP ${status}`;
  try {
    reason = (JSON.parse(body) as { message?: string }).message || reason;
  } catch {
    /* not JSON: keep the status */
  }
  if (status === 401) return { retryable: false, message: `Twitch refused the token (${reason})` };
  if (status === 429) {
    return { retryAfterSeconds: secondsUntilReset(headers, 'ratelimit-reset'), message: `Twitch's rate limit was reached (${reason})` };
  }
  if (status === 403) return { retryable: false, message: `${reason}: reconnect the channel and allow every permission (sending chat and announcements needs the broadcaster's own account)` };
  return { message: reason };
}

/** Every Helix call carries the app's Client-Id next to the user's token. */
function helix<T>(context: Pick<ProviderContext, 'fetch' | 'endpoints'>, clientId: string, accessToken: string, path: string, request: Omit<PlatformRequest<T>, 'url' | 'classify'> = {}) {
  return context.fetch<T>({ ...request, url: `${context.endpoints.api}/helix/${path}`, headers: { authorization: `Bearer ${accessToken}`, 'client-id': clientId }, classify });
}

function clientIdOf(context: ProviderContext): string {
  if (!context.client) throw permanent('no Twitch app is configured on this Herald (TWITCH_CLIENT_ID): every Twitch call needs its Client-Id');
  return context.client.clientId;
}

async function token(context: Pick<ConnectContext, 'fetch' | 'endpoints'>, form: Record<string, string | undefined>) {
  return tokenGrant(context.fetch, `${context.endpoints.id}/oauth2/token`, form, tokenSchema, classify);
}

async function send(context: ProviderContext, item: PublishItem, replyTo?: string): Promise<PublishedRef> {
  const clientId = clientIdOf(context);
  const broadcaster = context.auth.internalId;
  const url = context.auth.data.login ? `${context.endpoints.web}/${context.auth.data.login}` : undefined;
  if (context.settings.messageType === 'announcement') {
    await context.step('announcement', async () => {
      await helix(context, clientId, context.auth.accessToken, 'chat/announcements', {
        method: 'POST',
        query: { broadcaster_id: broadcaster, moderator_id: broadcaster },
        json: { message: item.text, color: context.settings.announcementColor ?? 'primary' },
      });
      return true;
    });
    // Twitch answers an announcement with 204 and no id: the post is published, its id "missing" (nothing can reply to it).
    return { id: 'missing', url };
  }
  const messageId = await context.step('message', async () => {
    const { data, text } = await helix(context, clientId, context.auth.accessToken, 'chat/messages', {
      method: 'POST',
      json: { broadcaster_id: broadcaster, sender_id: broadcaster, message: item.text, ...(replyTo ? { reply_parent_message_id: replyTo } : {}) },
      schema: sentSchema,
    });
    const [sent] = data.data;
    if (!sent.is_sent) {
      const drop = sent.drop_reason;
      // A message dropped for going too fast (slow mode, chat rate limit) may pass later; the chat's other rules will not.
      throw new PlatformHttpError({
        status: 422,
        retryable: /slow|rate|limit/i.test(drop?.code ?? ''),
        bodyExcerpt: text.slice(0, 500),
        message: `Twitch dropped the message: ${drop ? `${drop.message} (${drop.code})` : 'no reason given'}`,
      });
    }
    return sent.message_id;
  });
  return { id: messageId, url };
}

const twitch: Provider = {
  identifier: 'twitch',
  name: 'Twitch',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { id: 'https://id.twitch.tv', api: 'https://api.twitch.tv', web: 'https://www.twitch.tv' },
  maxLength: () => 500,
  rules:
    "A chat message (messageType message, the default) or a highlighted announcement (messageType announcement, in announcementColor) in the connected account's own Twitch chat: " +
    'text only (a post with pictures or videos is refused), 500 characters. Later items of a chat message are replies to the previous message. ' +
    'Twitch gives an announcement no id, so it cannot be replied to: an announcement is posted alone, its releaseId is "missing", and a chain is refused.',
  settings: z.object({
    messageType: z.enum(['message', 'announcement']).optional().describe('A plain chat message (default) or a highlighted announcement'),
    announcementColor: z.enum(['primary', 'blue', 'green', 'orange', 'purple']).optional().describe('Colour of an announcement (primary: the channel accent colour)'),
  }),
  chain: 'thread',
  recordsSteps: true,
  validate: (items, settings) =>
    textOnly('Twitch')(items) ??
    (settings.messageType === 'announcement' && items.length > 1
      ? 'An announcement gets no message id to reply to: post it alone, or use messageType message for a chain of replies.'
      : undefined),
  tools: [],
  authorizeUrl: oauth2AuthorizeUrl('id', 'oauth2/authorize', scopes),

  async exchangeCode(context, options) {
    const tokens = await token(context, {
      client_id: options.clientId,
      client_secret: options.clientSecret,
      code: options.code,
      grant_type: 'authorization_code',
      redirect_uri: options.redirectUri,
    });
    const { data } = await helix(context, options.clientId, tokens.accessToken, 'users', { schema: usersSchema });
    const user = data.data[0];
    return { ...tokens, internalId: user.id, name: user.display_name, profile: user.login, picture: user.profile_image_url ?? undefined, data: { login: user.login } };
  },

  async refresh(context) {
    if (!context.client) throw new Error('No Twitch app is configured on this Herald (TWITCH_CLIENT_ID) to refresh the token with.');
    return token(context, { grant_type: 'refresh_token', refresh_token: context.auth.refreshToken, client_id: context.client.clientId, client_secret: context.client.clientSecret });
  },

  publish: (context, item) => send(context, item),
  comment: (context, item, { parent }) => send(context, item, parent.id),

  // Without moderator:read:followers Twitch still answers the total, which is all Herald reads.
  async analytics(context) {
    const { data } = await helix(context, clientIdOf(context), context.auth.accessToken, 'channels/followers', {
      query: { broadcaster_id: context.auth.internalId, first: 1 },
      schema: followersSchema,
    });
    return [currentMetric('Followers', data.total)];
  },
};

export default twitch;
