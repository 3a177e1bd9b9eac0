// LinkedIn personal profile: posts with up to 20 pictures, a video or a picture carousel (a PDF document), later items as
// comments. Connects through "Sign In with LinkedIn using OpenID Connect" + "Share on LinkedIn" (openid profile w_member_social).
// API reference: https://learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api (and the pages named in
// providers/linkedin/*.ts). Analytics: LinkedIn's member statistics (memberCreatorPostAnalytics, r_member_postAnalytics) come
// only with the Community Management API, which cannot share an app with OpenID Connect, so a personal channel has none ([]).
import { z } from 'zod';
import type { Provider } from './types.js';
import { exchangeCode, linkedinAuthorizeUrl, linkedinEndpoints, openIdProfile, refresh } from './linkedin/api.js';
import { carouselSetting, linkedinMediaRules, linkedinRules, publishComment, publishPost } from './linkedin/publish.js';
import { deleteOnLinkedin, editOnLinkedin, memberComments } from './linkedin/comments.js';

const scopes = ['openid', 'profile', 'w_member_social'];

const linkedin: Provider = {
  identifier: 'linkedin',
  name: 'LinkedIn',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: linkedinEndpoints,
  maxLength: () => 3000,
  rules: `${linkedinRules} Analytics are not available for personal profiles (LinkedIn reserves member statistics to Community Management apps).`,
  settings: z.object({
    post_as_images_carousel: carouselSetting,
  }),
  chain: 'comments',
  validate: linkedinMediaRules,
  tools: [],
  recordsSteps: true,
  authorizeUrl: linkedinAuthorizeUrl(scopes),

  async exchangeCode(context, options) {
    const tokens = await exchangeCode(context, options);
    const member = await openIdProfile({ ...context, auth: tokens });
    // OpenID Connect gives no vanity name: the display name is the handle.
    return { internalId: member.urn, name: member.name, profile: member.name, picture: member.picture, ...tokens };
  },

  refresh,

  // Members cannot read their own posts back (r_member_social is restricted), so an interrupted create is not looked up:
  // the core stops the item with "could not confirm" rather than risk a duplicate.
  publish: (context, item) => publishPost(context, item, { canRead: false }),
  comment: (context, item, { root }) => publishComment(context, item, root, { canRead: false }),
  // Reading comments needs r_member_social (approved partners only); the member's own posts can be edited and deleted.
  comments: () => memberComments(),
  editPublished: editOnLinkedin,
  deletePublished: deleteOnLinkedin,
};

export default linkedin;
