// X (Twitter): posts and reply threads, weighted length, OAuth 2.0 with PKCE.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, picturesOrOneVideo, pkce } from './shared.js';

const scopes = ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access'];

const x: Provider = {
  identifier: 'x',
  name: 'X',
  editor: 'html',
  lengthMethod: 'twitter',
  // OAuth 2.0 + PKCE rather than Postiz's OAuth 1.0a: no request signing, and the authorization URL needs no server round trip.
  auth: { kind: 'oauth2', scopes },
  endpoints: { web: 'https://x.com', api: 'https://api.x.com' },
  maxLength: ({ isPremium, settings }) => (settings?.post_type === 'article' ? 100_000 : isPremium ? 4000 : 280),
  rules:
    'Each post of the thread takes up to 4 pictures or 1 video, or none; text-only posts are fine. ' +
    'Length is X\'s weighted length (links count 23, CJK characters 2): 280, or 4000 for premium accounts.',
  settings: z.object({
    who_can_reply_post: z.enum(['everyone', 'followers']).describe('Who may reply to the post'),
    community: z.string().optional().describe('URL of an X community to post into; leave empty for the main timeline'),
  }),
  chain: 'thread',
  validate: (items) => picturesOrOneVideo(items, 'X', { maxImages: 4 }),
  tools: [],
  authorizeUrl: ({ clientId, redirectUri, state, codeChallenge, endpoints }) =>
    authorizationUrl(endpoints.web, 'i/oauth2/authorize', {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      state,
      ...pkce(codeChallenge),
    }),
};

export default x;
