// A fake Kick (id.kick.com OAuth 2.1 with PKCE, and the public API's users, channels and chat) on one real HTTP server.
// Shapes follow docs.kick.com (read 2026-11: getting-started/generating-tokens-oauth2-flow, apis/users, apis/channels, apis/chat
// and its OpenAPI at api.kick.com/swagger/v1/doc.json, which cannot be fetched here, so it is not vendored; no SDK types
// exist): token answers `{access_token, token_type, refresh_token, expires_in, scope}`, API answers the
// `{data, message}` envelope, errors `{message}` (API) or `{error, error_description}` (OAuth).
//
//   const fake = await startKickFake();
//   SOCIAL_ENDPOINTS={"kick": fake.endpoints}; KICK_CLIENT_ID/_SECRET = fake.authority.clientId/clientSecret
//   fake.messages   -> every chat message sent: { id, type, broadcasterUserId, content, replyTo }
//   fake.user       -> the account (mutable); fake.dropNext(n) makes the next n messages answer is_sent false
//   fake.authority  -> expire / revoke tokens; refresh tokens rotate (a used one is refused)
//
// Refuses what Kick refuses: an authorization without PKCE or without chat:write, a token request with the client in a Basic
// header instead of the form, a wrong PKCE verifier, a used refresh token, an unknown bearer (401 Unauthorized); a chat message
// whose type is not user/bot, a user message without an integer broadcaster_user_id, content empty or over 500 characters, a
// reply to a message that does not exist.
import { randomUUID } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal, refusalReply } from './oauth-authority.js';
import { startFakeServer, type FakeReply } from '../helpers/fake-server.js';

export interface FakeKickMessage {
  id: string;
  type: string;
  broadcasterUserId: number;
  content: string;
  replyTo?: string;
}

const apiError = (status: number, message: string): FakeReply => ({ status, json: { data: {}, message } });
const oauthError = (error: string, description: string): FakeReply => ({ status: 400, json: { error, error_description: description } });

export async function startKickFake() {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ clientId: 'kick-client', clientSecret: 'kick-secret', requirePkce: true, rotateRefreshTokens: true, expiresIn: 7200 });
  const user = { user_id: 4_213_377, name: 'HeraldLive', email: 'live@herald.example', profile_picture: `${url}/images/user/4213377/profile.webp` };
  const channel = { broadcaster_user_id: user.user_id, slug: 'heraldlive', stream_title: 'Building Herald', channel_description: '' };
  const messages: FakeKickMessage[] = [];
  let drops = 0;

  const authed = authority.guard(() => apiError(401, 'Unauthorized'));

  server.on('GET', '/oauth/authorize', (request) => {
    const query = request.query;
    if (query.get('response_type') !== 'code') return { status: 400, json: { error: 'Invalid request' } };
    if (!(query.get('scope') ?? '').split(' ').includes('chat:write')) return { status: 400, json: { error: 'Invalid request', error_description: 'scope must be space-separated and include chat:write' } };
    try {
      const location = authority.approveQuery(query);
      return { status: 302, headers: { location } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, json: { error: error.error, error_description: error.description } };
      throw error;
    }
  });

  server.on('POST', '/oauth/token', (request) => {
    const form = request.form;
    if (!form) return oauthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
    if (request.headers.authorization) return oauthError('invalid_request', 'client credentials go in the form body');
    try {
      authority.checkClient(form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined);
      const grant = form.get('grant_type');
      const issued =
        grant === 'authorization_code'
          ? authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, codeVerifier: form.get('code_verifier') ?? undefined, clientId: form.get('client_id') ?? undefined })
          : grant === 'refresh_token'
            ? authority.redeemRefreshToken(form.get('refresh_token') ?? undefined)
            : undefined;
      if (!issued) return oauthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
      return { json: { access_token: issued.accessToken, token_type: 'Bearer', refresh_token: issued.refreshToken, expires_in: issued.expiresIn, scope: 'chat:write user:read channel:read' } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return refusalReply(error);
      throw error;
    }
  });

  server.on('GET', '/public/v1/users', authed(() => ({ json: { data: [user], message: 'OK' } })));
  server.on('GET', '/public/v1/channels', authed(() => ({ json: { data: [channel], message: 'OK' } })));

  server.on(
    'POST',
    '/public/v1/chat',
    authed((request) => {
      const body = request.json;
      if (!body) return apiError(400, 'the body must be JSON');
      if (body.type !== 'user' && body.type !== 'bot') return apiError(400, 'type must be user or bot');
      if (body.type === 'user' && !Number.isInteger(body.broadcaster_user_id)) return apiError(400, 'broadcaster_user_id (integer) is required for user messages');
      if (typeof body.content !== 'string' || body.content.length === 0 || [...body.content].length > 500) return apiError(400, 'content must be 1 to 500 characters');
      if (body.reply_to_message_id !== undefined && !messages.some((message) => message.id === body.reply_to_message_id)) return apiError(400, 'reply_to_message_id is not a message of this chat');
      if (drops > 0) {
        drops -= 1;
        return { json: { data: { is_sent: false, message_id: '' }, message: 'Message not sent: the chat is in followers-only mode' } };
      }
      const message: FakeKickMessage = { id: randomUUID(), type: body.type, broadcasterUserId: body.broadcaster_user_id, content: body.content, replyTo: body.reply_to_message_id };
      messages.push(message);
      return { json: { data: { is_sent: true, message_id: message.id }, message: 'OK' } };
    }),
  );

  return {
    server,
    url,
    authority,
    user,
    channel,
    messages,
    endpoints: { id: url, api: url, web: 'https://kick.com' },
    dropNext(n = 1) {
      drops = n;
    },
    close: () => server.close(),
  };
}

export type KickFake = Awaited<ReturnType<typeof startKickFake>>;
