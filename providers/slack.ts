// Slack: messages posted by the app's bot in a channel; comments are replies in the message's thread.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, noVideo, pickedId, tool } from './shared.js';

const scopes = ['channels:read', 'chat:write', 'users:read', 'groups:read', 'channels:join', 'chat:write.customize'];

const slack: Provider = {
  identifier: 'slack',
  name: 'Slack',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { api: 'https://slack.com' },
  maxLength: () => 40000,
  rules:
    'A message in the chosen channel (from listChannels), with pictures reachable at a public URL; no video. ' +
    'Later items are replies in the message\'s thread.',
  settings: z.object({
    channel: pickedId('Channel id from listChannels'),
  }),
  chain: 'comments',
  validate: (items) => noVideo(items, 'Slack'),
  tools: [tool('listChannels', 'Lists the public and private channels of the Slack workspace.')],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.api, 'oauth/v2/authorize', {
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(','),
      state,
    }),
};

export default slack;
