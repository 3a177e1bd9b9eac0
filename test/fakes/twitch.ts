// A fake Twitch (id.twitch.tv OAuth, and Helix: users, chat messages, chat announcements, channel followers) on one real HTTP
// server. Shapes follow dev.twitch.tv (read 2026-11: authentication/getting-tokens-oauth, api/reference#get-users,
// #send-chat-message, #send-chat-announcement, #get-channel-followers; Twitch publishes no machine-readable contract): tokens `{access_token, expires_in, refresh_token, scope: [], token_type}`, Helix
// `{data: [...]}`, errors `{error, status, message}` (Helix) or `{status, message}` (OAuth).
//
//   const fake = await startTwitchFake();
//   SOCIAL_ENDPOINTS={"twitch": fake.endpoints}; TWITCH_CLIENT_ID/_SECRET = fake.authority.clientId/clientSecret
//   fake.messages       -> chat messages sent: { id, broadcasterId, senderId, message, replyTo }
//   fake.announcements  -> announcements: { broadcasterId, moderatorId, message, color }
//   fake.user, fake.followers (mutable); fake.dropNext(code, message) makes the next message answer is_sent false
//
// Refuses what Twitch refuses: an authorization without response_type=code or without user:write:chat; a token request
// without client_id/client_secret in the form; a Helix call without the app's Client-Id or with an unknown token (401); a
// sender or moderator who is not the token's user; a message empty or over 500 characters; a reply to an unknown message;
// an announcement colour outside blue, green, orange, purple, primary.
import { randomUUID } from 'node:crypto';
import { createOAuthAuthority, OAuthRefusal, bearerOf } from './oauth-authority.js';
import { startFakeServer, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

export interface FakeTwitchMessage {
  id: string;
  broadcasterId: string;
  senderId: string;
  message: string;
  replyTo?: string;
}

const helixError = (status: number, message: string): FakeReply => ({
  status,
  json: { error: status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Bad Request', status, message },
});
const COLORS = ['blue', 'green', 'orange', 'purple', 'primary'];

export async function startTwitchFake() {
  const server = await startFakeServer();
  const { url } = server;
  const authority = createOAuthAuthority({ clientId: 'twitch-client', clientSecret: 'twitch-secret', expiresIn: 14_400 });
  const user = { id: '141981764', login: 'heraldtv', display_name: 'HeraldTV', type: '', broadcaster_type: 'affiliate', profile_image_url: `${url}/jtv_user_pictures/heraldtv.png`, created_at: '2019-11-18T00:47:34Z' };
  authority.setSubject(user.id);
  const messages: FakeTwitchMessage[] = [];
  const announcements: { broadcasterId: string; moderatorId: string; message: string; color?: string }[] = [];
  const state = { followers: 1234, drop: undefined as { code: string; message: string } | undefined };

  const helix =
    (handler: (request: RecordedRequest, subject: string) => FakeReply | Promise<FakeReply>): FakeHandler =>
    (request) => {
      if (request.headers['client-id'] !== authority.clientId) return helixError(401, 'Client ID and OAuth token do not match');
      const subject = authority.subjectOf(bearerOf(request.headers.authorization as string | undefined));
      return subject ? handler(request, subject) : helixError(401, 'Invalid OAuth token');
    };

  server.on('GET', '/oauth2/authorize', (request) => {
    const query = request.query;
    if (query.get('response_type') !== 'code') return { status: 400, json: { status: 400, message: 'response_type must be code' } };
    if (!(query.get('scope') ?? '').split(' ').includes('user:write:chat')) return { status: 400, json: { status: 400, message: 'scope is space-separated and must include user:write:chat' } };
    try {
      const location = authority.approveQuery(query);
      return { status: 302, headers: { location } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, json: { status: 400, message: error.description } };
      throw error;
    }
  });

  server.on('POST', '/oauth2/token', (request) => {
    const form = request.form;
    if (!form) return { status: 400, json: { status: 400, message: 'missing client id' } };
    try {
      authority.checkClient(form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined);
      const grant = form.get('grant_type');
      const issued =
        grant === 'authorization_code'
          ? authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, clientId: form.get('client_id') ?? undefined })
          : grant === 'refresh_token'
            ? authority.redeemRefreshToken(form.get('refresh_token') ?? undefined)
            : undefined;
      if (!issued) return { status: 400, json: { status: 400, message: 'unsupported grant type' } };
      return { json: { access_token: issued.accessToken, expires_in: issued.expiresIn, refresh_token: issued.refreshToken, scope: ['moderator:manage:announcements', 'user:write:chat'], token_type: 'bearer' } };
    } catch (error) {
      if (!(error instanceof OAuthRefusal)) throw error;
      const message = error.error === 'invalid_client' ? 'invalid client secret' : grantMessage(form.get('grant_type'));
      return { status: error.error === 'invalid_client' ? 403 : 400, json: { status: error.error === 'invalid_client' ? 403 : 400, message } };
    }
  });
  const grantMessage = (grant: string | null) => (grant === 'refresh_token' ? 'Invalid refresh token' : 'Invalid authorization code');

  server.on('GET', '/helix/users', helix((_request, subject) => ({ json: { data: subject === user.id ? [user] : [] } })));

  server.on(
    'POST',
    '/helix/chat/messages',
    helix((request, subject) => {
      const body = request.json ?? {};
      if (!body.broadcaster_id || !body.sender_id) return helixError(400, 'Missing required parameter broadcaster_id or sender_id');
      if (body.sender_id !== subject) return helixError(403, 'The sender_id must match the user ID in the user access token');
      if (typeof body.message !== 'string' || body.message.length === 0 || [...body.message].length > 500) return helixError(400, 'The message must be 1 to 500 characters');
      if (body.reply_parent_message_id !== undefined && !messages.some((message) => message.id === body.reply_parent_message_id)) {
        return helixError(400, 'The reply_parent_message_id is not a message in this chat');
      }
      if (state.drop) {
        const drop = state.drop;
        state.drop = undefined;
        return { json: { data: [{ message_id: '', is_sent: false, drop_reason: drop }] } };
      }
      const message: FakeTwitchMessage = { id: randomUUID(), broadcasterId: body.broadcaster_id, senderId: body.sender_id, message: body.message, replyTo: body.reply_parent_message_id };
      messages.push(message);
      return { json: { data: [{ message_id: message.id, is_sent: true, drop_reason: null }] } };
    }),
  );

  server.on(
    'POST',
    '/helix/chat/announcements',
    helix((request, subject) => {
      const broadcasterId = request.query.get('broadcaster_id');
      const moderatorId = request.query.get('moderator_id');
      if (!broadcasterId || !moderatorId) return helixError(400, 'Missing required parameter broadcaster_id or moderator_id');
      if (moderatorId !== subject) return helixError(403, 'The moderator_id must match the user ID in the user access token');
      const body = request.json ?? {};
      if (typeof body.message !== 'string' || body.message.length === 0 || [...body.message].length > 500) return helixError(400, 'The message must be 1 to 500 characters');
      if (body.color !== undefined && !COLORS.includes(body.color)) return helixError(400, 'The color field is not valid');
      announcements.push({ broadcasterId, moderatorId, message: body.message, color: body.color });
      return { status: 204 };
    }),
  );

  server.on(
    'GET',
    '/helix/channels/followers',
    helix((request) => (request.query.get('broadcaster_id') ? { json: { total: state.followers, data: [], pagination: {} } } : helixError(400, 'Missing required parameter broadcaster_id'))),
  );

  return {
    server,
    url,
    authority,
    user,
    messages,
    announcements,
    state,
    endpoints: { id: url, api: url, web: 'https://www.twitch.tv' },
    dropNext(code: string, message: string) {
      state.drop = { code, message };
    },
    close: () => server.close(),
  };
}

export type TwitchFake = Awaited<ReturnType<typeof startTwitchFake>>;
