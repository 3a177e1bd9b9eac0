// Kick: chat messages in the connected channel; text only.
import type { Provider } from './types.js';
import { authorizationUrl, pkce, textOnly } from './shared.js';

const scopes = ['chat:write', 'user:read', 'channel:read'];

const kick: Provider = {
  identifier: 'kick',
  name: 'Kick',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { id: 'https://id.kick.com', api: 'https://api.kick.com' },
  maxLength: () => 500,
  rules: 'A chat message in the connected channel: text only, 500 characters. Later items are replies to the previous message.',
  settings: null,
  chain: 'thread',
  validate: textOnly('Kick'),
  tools: [],
  authorizeUrl: ({ clientId, redirectUri, state, codeChallenge, endpoints }) =>
    authorizationUrl(endpoints.id, 'oauth/authorize', {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      state,
      ...pkce(codeChallenge),
    }),
};

export default kick;
