// Instagram through Instagram Login (no Facebook Page): the same container publishing on graph.instagram.com, without the
// audio setting (the Audio API exists only with the Facebook login). The code is traded on api.instagram.com for a one-hour
// token, that for a 60-day one, which the daily job refreshes with ig_refresh_token before it expires. References:
//   https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login
//   https://developers.facebook.com/docs/instagram-platform/reference/access_token (ig_exchange_token)
//   https://developers.facebook.com/docs/instagram-platform/reference/refresh_access_token (ig_refresh_token)
//   https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started (GET /me fields)
import { z } from 'zod';
import type { Provider } from './types.js';
import { META_GRAPH_VERSION, oauth2AuthorizeUrl, permanent } from './shared.js';
import { graph } from './meta/graph.js';
import { instagramProvider, instagramSettings } from './meta/instagram.js';

const scopes = [
  'instagram_business_basic',
  'instagram_business_content_publish',
  'instagram_business_manage_comments',
  'instagram_business_manage_insights',
];

const grant = z.object({ access_token: z.string(), user_id: z.union([z.string(), z.number()]).optional(), permissions: z.union([z.string(), z.array(z.string())]).optional() });
// The documented answer wraps the grant in `data`; older apps get it bare.
const codeGrantSchema = z.union([z.object({ data: z.array(grant).min(1) }).transform((answer) => answer.data[0]), grant]);
const longLivedSchema = z.object({ access_token: z.string(), token_type: z.string().optional(), expires_in: z.number() });
const meSchema = z.object({
  user_id: z.union([z.string(), z.number()]).transform(String),
  username: z.string(),
  name: z.string().optional(),
  profile_picture_url: z.string().optional(),
});

const expiry = (seconds: number) => new Date(Date.now() + seconds * 1000);

const shared = instagramProvider({ audio: false });

const instagramStandalone: Provider = {
  ...shared,
  identifier: 'instagram-standalone',
  name: 'Instagram (Standalone)',
  auth: { kind: 'oauth2', scopes },
  endpoints: { authorize: 'https://www.instagram.com', token: 'https://api.instagram.com', graph: 'https://graph.instagram.com', graphVersion: META_GRAPH_VERSION },
  rules: `${shared.rules} Added audio is not available on this connection (Instagram's Audio API needs the Facebook business login).`,
  settings: z.object(instagramSettings),
  refreshDaysBeforeExpiry: 15,
  validate: (items, settings) =>
    settings.audio !== undefined
      ? 'The audio setting works only on Instagram channels connected through the Facebook business login: remove it.'
      : shared.validate(items, settings),
  tools: [],
  authorizeUrl: oauth2AuthorizeUrl('authorize', 'oauth/authorize', scopes, { separator: ',', extra: { enable_fb_login: '0' } }),

  async exchangeCode(context, options) {
    const short = await graph(context, 'oauth/access_token', {
      host: 'token',
      unversioned: true,
      token: null,
      form: { client_id: options.clientId, client_secret: options.clientSecret ?? '', grant_type: 'authorization_code', redirect_uri: options.redirectUri, code: options.code },
      schema: codeGrantSchema,
    });
    const granted = typeof short.permissions === 'string' ? short.permissions.split(',') : (short.permissions ?? scopes);
    const missing = scopes.filter((scope) => !granted.includes(scope));
    if (missing.length > 0) {
      throw permanent(`${missing.join(', ')} not granted: connect again and allow every permission asked`, 403);
    }
    const long = await graph(context, 'access_token', {
      unversioned: true,
      token: null,
      query: { grant_type: 'ig_exchange_token', client_secret: options.clientSecret, access_token: short.access_token },
      schema: longLivedSchema,
    });
    const me = await graph({ ...context, auth: { accessToken: long.access_token } }, 'me', { query: { fields: 'user_id,username,name,profile_picture_url' }, schema: meSchema });
    return {
      internalId: me.user_id,
      name: me.name || me.username,
      profile: me.username,
      picture: me.profile_picture_url,
      accessToken: long.access_token,
      expiresAt: expiry(long.expires_in),
    };
  },

  /** A long-lived token at least a day old and not expired becomes a new 60-day one; an expired one is dead for good. */
  async refresh(context) {
    const renewed = await graph(context, 'refresh_access_token', {
      unversioned: true,
      token: null,
      query: { grant_type: 'ig_refresh_token', access_token: context.auth.accessToken },
      schema: longLivedSchema,
    });
    return { accessToken: renewed.access_token, expiresAt: expiry(renewed.expires_in) };
  },
};

export default instagramStandalone;
