// Threads (Meta): reply chains of text, pictures and videos pulled by public URL.
import type { Provider } from './types.js';
import { authorizationUrl, firstProblem } from './shared.js';

const scopes = ['threads_basic', 'threads_content_publish', 'threads_manage_replies', 'threads_manage_insights'];

const threads: Provider = {
  identifier: 'threads',
  name: 'Threads',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { authorize: 'https://threads.net', graph: 'https://graph.threads.net' },
  maxLength: () => 500,
  rules:
    'Each post of the thread is text, with or without media: one picture or video, or a carousel of up to 10 pictures and videos. ' +
    'Media must be reachable at a public URL.',
  settings: null,
  chain: 'thread',
  mediaByUrl: true,
  validate: (items) => firstProblem(items, ({ total }) => (total > 10 ? `has ${total} attachments; a Threads carousel takes at most 10.` : undefined)),
  tools: [],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.authorize, 'oauth/authorize', {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: scopes.join(','),
      state,
    }),
};

export default threads;
