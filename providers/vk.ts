// VK: wall posts with photos and videos, later items as comments; VK ID OAuth 2.1 with PKCE.
import type { Provider } from './types.js';
import { authorizationUrl, firstProblem, pkce } from './shared.js';

const scopes = ['vkid.personal_info', 'email', 'wall', 'status', 'docs', 'photos', 'video'];

const vk: Provider = {
  identifier: 'vk',
  name: 'VK',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { id: 'https://id.vk.com', api: 'https://api.vk.com' },
  maxLength: () => 2048,
  rules: 'A wall post of text with up to 10 pictures and videos. Later items are comments on the post, with up to 10 attachments each.',
  settings: null,
  chain: 'comments',
  validate: (items) => firstProblem(items, ({ total }) => (total > 10 ? `has ${total} attachments; VK takes at most 10.` : undefined)),
  tools: [],
  authorizeUrl: ({ clientId, redirectUri, state, codeChallenge, endpoints }) =>
    authorizationUrl(endpoints.id, 'authorize', {
      response_type: 'code',
      client_id: clientId,
      ...pkce(codeChallenge),
      redirect_uri: redirectUri,
      state,
      scope: scopes.join(' '),
    }),
};

export default vk;
