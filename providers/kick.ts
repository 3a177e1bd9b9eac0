// Kick: chat messages in the connected broadcaster's own channel, sent as the user; text only.
// References: https://docs.kick.com/getting-started/generating-tokens-oauth2-flow (OAuth 2.1 with PKCE on id.kick.com, token and
// refresh as forms with the client secret), https://docs.kick.com/apis/users and https://docs.kick.com/apis/channels (the token's
// own user and channel), https://docs.kick.com/apis/chat and its OpenAPI (https://api.kick.com/swagger/v1/doc.json): POST
// /public/v1/chat {type, content, broadcaster_user_id, reply_to_message_id} → {data: {is_sent, message_id}, message} (read 2026-11).
// Chat shows text as typed (no Markdown or HTML to escape). No API reads chat history, so a message whose answer was lost
// cannot be looked up: the step has no recover and the item stops with "could not confirm".
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, Provider, ProviderContext, PublishItem, PublishedRef } from './types.js';
import { oauth2AuthorizeUrl, textOnly, tokenGrant } from './shared.js';

const scopes = ['chat:write', 'user:read', 'channel:read'];

const tokenSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
});
const usersSchema = z.object({ data: z.array(z.object({ user_id: z.number(), name: z.string(), profile_picture: z.string().nullish() })).min(1) });
const channelsSchema = z.object({ data: z.array(z.object({ slug: z.string() })) });
const chatSchema = z.object({ data: z.object({ is_sent: z.boolean(), message_id: z.string().nullish() }), message: z.string().optional() });

/** Kick answers `{message}` on the API and `{error, error_description}` on the OAuth server. */
function reasonOf(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: string; error?: string; error_description?: string };
    return parsed.error_description ?? parsed.message ?? parsed.error ?? `HTTP ${status}`;
  } catch {
    return `HTTP ${status}`;
  }
}

function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  const reason = reasonOf(status, body);
  if (status === 401) return { retryable: false, message: `Kick refused the token (${reason}); Herald refreshes it once, then asks for a reconnection` };
  if (status === 403) return { retryable: false, message: `${reason}: the account did not allow chat:write, or cannot chat in this channel; reconnect it and allow every permission` };
  if (status === 429) return { message: `Kick's rate limit was reached (${reason})` };
  return { message: reason };
}

async function token(context: Pick<ConnectContext, 'fetch' | 'endpoints'>, form: Record<string, string | undefined>) {
  return tokenGrant(context.fetch, `${context.endpoints.id}/oauth/token`, form, tokenSchema, classify);
}

const bearer = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` });

async function send(context: ProviderContext, item: PublishItem, replyTo?: string): Promise<PublishedRef> {
  const messageId = await context.step('message', async () => {
    const { data, text } = await context.fetch({
      method: 'POST',
      url: `${context.endpoints.api}/public/v1/chat`,
      headers: bearer(context.auth.accessToken),
      json: { type: 'user', broadcaster_user_id: Number(context.auth.internalId), content: item.text, ...(replyTo ? { reply_to_message_id: replyTo } : {}) },
      schema: chatSchema,
      classify,
    });
    if (!data.data.is_sent || !data.data.message_id) {
      throw new PlatformHttpError({ status: 422, retryable: false, bodyExcerpt: text.slice(0, 500), message: `Kick did not send the message${data.message ? ` (${data.message})` : ''}: check the channel's chat settings (followers-only, emote-only, slow mode)` });
    }
    return data.data.message_id;
  });
  const slug = context.auth.data.slug;
  return { id: messageId, url: slug ? `${context.endpoints.web}/${slug}` : undefined };
}

const kick: Provider = {
  identifier: 'kick',
  name: 'Kick',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { id: 'https://id.kick.com', api: 'https://api.kick.com', web: 'https://kick.com' },
  maxLength: () => 500,
  rules:
    "A chat message in the connected account's own Kick channel, sent as the account: text only (a post with pictures or videos is refused), " +
    '500 characters. Later items are replies to the previous message. Kick gives chat messages no link, so the post links to the channel.',
  settings: null,
  chain: 'thread',
  recordsSteps: true,
  validate: textOnly('Kick'),
  tools: [],
  authorizeUrl: oauth2AuthorizeUrl('id', 'oauth/authorize', scopes, { pkce: true }),

  async exchangeCode(context, options) {
    const tokens = await token(context, {
      grant_type: 'authorization_code',
      client_id: options.clientId,
      client_secret: options.clientSecret,
      redirect_uri: options.redirectUri,
      code_verifier: options.codeVerifier,
      code: options.code,
    });
    const headers = bearer(tokens.accessToken);
    const { data: users } = await context.fetch({ url: `${context.endpoints.api}/public/v1/users`, headers, schema: usersSchema, classify });
    const { data: channels } = await context.fetch({ url: `${context.endpoints.api}/public/v1/channels`, headers, schema: channelsSchema, classify });
    const user = users.data[0];
    const slug = channels.data[0]?.slug;
    return {
      ...tokens,
      internalId: String(user.user_id),
      name: user.name,
      profile: slug ?? user.name,
      picture: user.profile_picture ?? undefined,
      data: slug ? { slug } : ({} as Record<string, string>),
    };
  },

  // Kick issues a new refresh token with every refresh: the core stores it in place of the old one.
  async refresh(context) {
    if (!context.client) throw new Error('No Kick app is configured on this Herald (KICK_CLIENT_ID) to refresh the token with.');
    return token(context, { grant_type: 'refresh_token', client_id: context.client.clientId, client_secret: context.client.clientSecret, refresh_token: context.auth.refreshToken });
  },

  publish: (context, item) => send(context, item),
  comment: (context, item, { parent }) => send(context, item, parent.id),
};

export default kick;
