// Google Business Profile: local posts (updates and offers) on a location chosen after Google OAuth.
import { z } from 'zod';
import type { Provider } from './types.js';
import { firstProblem, googleAuthorizeUrl, googleEndpoints, googleScope, httpUrl } from './shared.js';

const scopes = ['userinfo.profile', 'userinfo.email', 'business.manage'].map(googleScope);

const gmb: Provider = {
  identifier: 'gmb',
  name: 'Google Business Profile',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: {
    ...googleEndpoints,
    gmbV4: 'https://mybusiness.googleapis.com',
    gmbAccounts: 'https://mybusinessaccountmanagement.googleapis.com',
    gmbInfo: 'https://mybusinessbusinessinformation.googleapis.com',
    gmbPerf: 'https://businessprofileperformance.googleapis.com',
  },
  maxLength: () => 1500,
  rules:
    'A local post of text with at most one picture (public URL), no video: a standard update or an offer, optionally with a ' +
    'call-to-action button (callToActionUrl required except for CALL). No comments.',
  settings: z.object({
    topicType: z.enum(['STANDARD', 'OFFER']).optional().describe('STANDARD update (default) or OFFER'),
    callToActionType: z
      .enum(['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'GET_OFFER', 'CALL'])
      .optional()
      .describe('Button shown on the post'),
    callToActionUrl: httpUrl().optional().describe('Where the button leads'),
    offerCouponCode: z.string().optional().describe('Coupon code of an offer'),
  }),
  chain: 'none',
  validate: (items, settings) =>
    firstProblem(
      items,
      ({ images, videos }) => (videos > 0 || images > 1 ? 'has more than one picture or a video; Google Business Profile takes one picture.' : undefined),
      'first',
    ) ??
    (settings.callToActionType && settings.callToActionType !== 'CALL' && !settings.callToActionUrl
      ? 'The call-to-action button needs callToActionUrl.'
      : settings.offerCouponCode && settings.topicType !== 'OFFER'
        ? 'offerCouponCode applies to offers only: set topicType to OFFER or remove the code.'
        : undefined),
  tools: [],
  authorizeUrl: (options) => googleAuthorizeUrl(options, scopes),
};

export default gmb;
