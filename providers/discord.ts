// Discord: messages posted by the bot into a channel of the server it was installed on; comments go into a thread on the message.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, firstProblem, pickedId, tool } from './shared.js';

const scopes = ['bot', 'identify', 'guilds'];

const discord: Provider = {
  identifier: 'discord',
  name: 'Discord',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { api: 'https://discord.com' },
  maxLength: () => 1980,
  rules:
    'A message in Markdown with up to 10 attachments, posted by the bot in the chosen channel (from listChannels). ' +
    'Later items are posted in a thread opened on the message.',
  settings: z.object({
    channel: pickedId('Channel id from listChannels'),
  }),
  chain: 'comments',
  validate: (items) => firstProblem(items, ({ total }) => (total > 10 ? `has ${total} attachments; a Discord message takes at most 10.` : undefined)),
  tools: [tool('listChannels', 'Lists the text, announcement and forum channels of the Discord server.')],
  // Installs the bot on a server: the permissions integer is what posting and threads need.
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.api, 'oauth2/authorize', {
      client_id: clientId,
      permissions: '377957124096',
      response_type: 'code',
      redirect_uri: redirectUri,
      integration_type: '0',
      scope: scopes.join(' '),
      state,
    }),
};

export default discord;
