// LinkedIn personal profile: posts with comments, optional image carousel published as a document.
import { z } from 'zod';
import type { Provider, ValidationItem } from './types.js';
import { authorizationUrl, firstProblem, textOnlyComments } from './shared.js';

/** Media rules shared with linkedin-page. */
export function linkedinMediaRules(items: ValidationItem[], settings: Record<string, unknown>): string | undefined {
  const carousel = settings.post_as_images_carousel === true;
  return (
    firstProblem(
      items,
      ({ images, videos }) => {
        if (carousel && (videos > 0 || images < 2)) return 'is a carousel, which needs at least 2 pictures and no video.';
        if (videos > 1 || (videos === 1 && images > 0)) return 'has a video with other media; a LinkedIn video must be the only attachment.';
        if (images > 20) return `has ${images} pictures; LinkedIn takes at most 20.`;
        return undefined;
      },
      'first',
    ) ?? textOnlyComments(items, 'LinkedIn')
  );
}

export const linkedinRules =
  'A post takes text with up to 20 pictures, or one video as its only attachment. ' +
  'With post_as_images_carousel the pictures (at least 2, no video) are published as one swipeable document built from them. ' +
  'Later items are comments on the post and take text only.';

export const linkedinEndpoints = { oauth: 'https://www.linkedin.com', api: 'https://api.linkedin.com' };

export const carouselSetting = z.boolean().optional().describe('Publish the pictures as a carousel (a document built from them)');

const scopes = ['openid', 'profile', 'w_member_social'];

// LinkedIn offers PKCE to native apps only; a web app authenticates with its client secret.
export const linkedinAuthorizeUrl =
  (scopes: string[]): NonNullable<Provider['authorizeUrl']> =>
  ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.oauth, 'oauth/v2/authorization', {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      state,
      scope: scopes.join(' '),
    });

const linkedin: Provider = {
  identifier: 'linkedin',
  name: 'LinkedIn',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: linkedinEndpoints,
  maxLength: () => 3000,
  rules: linkedinRules,
  settings: z.object({
    post_as_images_carousel: carouselSetting,
  }),
  chain: 'comments',
  validate: linkedinMediaRules,
  tools: [],
  authorizeUrl: linkedinAuthorizeUrl(scopes),
};

export default linkedin;
