// LinkedIn company page: the personal profile's rules, posting as an organization chosen after OAuth.
import { z } from 'zod';
import type { Provider } from './types.js';
import { carouselSetting, linkedinAuthorizeUrl, linkedinEndpoints, linkedinMediaRules, linkedinRules } from './linkedin.js';
import { tool } from './shared.js';

const scopes = ['openid', 'profile', 'w_member_social', 'r_organization_social', 'w_organization_social', 'rw_organization_admin'];

const linkedinPage: Provider = {
  identifier: 'linkedin-page',
  name: 'LinkedIn Page',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { ...linkedinEndpoints },
  maxLength: () => 3000,
  rules: linkedinRules,
  settings: z.object({
    post_as_images_carousel: carouselSetting,
    carousel_name: z.string().optional().describe('Title of the carousel document'),
  }),
  chain: 'comments',
  validate: linkedinMediaRules,
  tools: [tool('getCompanies', 'Lists the LinkedIn pages (organizations) the connected member administers.')],
  authorizeUrl: linkedinAuthorizeUrl(scopes),
};

export default linkedinPage;
