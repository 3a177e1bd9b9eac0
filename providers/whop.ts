// Whop: Markdown forum posts in a company's experience, with comments; OAuth 2.1 with PKCE and OpenID Connect.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, pickedId, pkce, tool } from './shared.js';

const scopes = ['openid', 'profile', 'email', 'forum:post:create', 'forum:read', 'company:basic:read'];

const whop: Provider = {
  identifier: 'whop',
  name: 'Whop',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { api: 'https://api.whop.com' },
  maxLength: () => 50000,
  rules:
    'A forum post in Markdown, with an optional title and attachments, in the chosen company and forum experience (from getCompanies and experiences). ' +
    'Later items are comments on the post.',
  settings: z.object({
    company: pickedId('Company id from getCompanies'),
    experience: pickedId('Forum experience id from experiences'),
    title: z.string().optional().describe('Title of the post'),
  }),
  chain: 'comments',
  tools: [
    tool('getCompanies', 'Lists the Whop companies the account can post for.'),
    tool('experiences', 'Lists the forum experiences of a Whop company.', [{ key: 'company', type: 'string', description: 'Company id from getCompanies' }]),
  ],
  // The state doubles as the OpenID nonce: both are single-use random values of this authorization, checked at the callback.
  authorizeUrl: ({ clientId, redirectUri, state, codeChallenge, endpoints }) =>
    authorizationUrl(endpoints.api, 'oauth/authorize', {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      state,
      nonce: state,
      ...pkce(codeChallenge),
    }),
};

export default whop;
