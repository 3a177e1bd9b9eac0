// Twitch: chat messages or announcements in the broadcaster's channel; text only.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, textOnly } from './shared.js';

const scopes = ['user:write:chat', 'user:read:chat', 'moderator:manage:announcements'];

const twitch: Provider = {
  identifier: 'twitch',
  name: 'Twitch',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { id: 'https://id.twitch.tv', api: 'https://api.twitch.tv' },
  maxLength: () => 500,
  rules: 'A chat message or an announcement in the connected channel: text only, 500 characters. ' +
    'Later items are replies to the previous message; an announcement takes no replies.',
  settings: z.object({
    messageType: z.enum(['message', 'announcement']).optional().describe('A plain chat message (default) or a highlighted announcement'),
    announcementColor: z.enum(['primary', 'blue', 'green', 'orange', 'purple']).optional().describe('Colour of an announcement'),
  }),
  chain: 'thread',
  validate: (items, settings) =>
    settings.messageType === 'announcement' && items.length > 1
      ? 'An announcement gets no message id to reply to: post it alone, or use messageType message for a chain.'
      : textOnly('Twitch')(items),
  tools: [],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.id, 'oauth2/authorize', {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      state,
    }),
};

export default twitch;
