// Dribbble: a shot of exactly one picture with a title.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, firstProblem, tool } from './shared.js';

const scopes = ['public', 'upload'];

const dribbble: Provider = {
  identifier: 'dribbble',
  name: 'Dribbble',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { web: 'https://dribbble.com', api: 'https://api.dribbble.com' },
  maxLength: () => 40000,
  rules: 'A shot is exactly one picture (no video) with a required title; the content is its description. No comments.',
  settings: z.object({
    title: z.string().min(1).describe('Title of the shot'),
  }),
  chain: 'none',
  validate: (items) =>
    firstProblem(items, ({ images, total }) => (total !== 1 || images !== 1 ? 'must have exactly one picture and no video.' : undefined), 'first'),
  tools: [tool('teams', 'Lists the Dribbble teams of the connected account.')],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.web, 'oauth/authorize', {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: scopes.join(' '),
      state,
    }),
};

export default dribbble;
