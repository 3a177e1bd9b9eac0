// Instagram through Instagram Login (no Facebook Page): the same posting rules, without the audio setting.
import { z } from 'zod';
import type { Provider } from './types.js';
import { instagramMediaRules, instagramRules, instagramSettings } from './instagram.js';
import { authorizationUrl } from './shared.js';

const scopes = [
  'instagram_business_basic',
  'instagram_business_content_publish',
  'instagram_business_manage_comments',
  'instagram_business_manage_insights',
];

const instagramStandalone: Provider = {
  identifier: 'instagram-standalone',
  name: 'Instagram (Standalone)',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { authorize: 'https://www.instagram.com', token: 'https://api.instagram.com', graph: 'https://graph.instagram.com' },
  maxLength: () => 2200,
  rules: `${instagramRules} Added audio is not available on this connection.`,
  settings: z.object(instagramSettings),
  chain: 'comments',
  mediaByUrl: true,
  validate: (items, settings) =>
    settings.audio !== undefined
      ? 'The audio setting works only on Instagram channels connected through the Facebook business login: remove it.'
      : instagramMediaRules(items, settings),
  tools: [],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.authorize, 'oauth/authorize', {
      enable_fb_login: '0',
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: scopes.join(','),
      state,
    }),
};

export default instagramStandalone;
