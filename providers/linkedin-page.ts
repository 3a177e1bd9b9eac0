// LinkedIn company page: the member connects, chooses an organization they administer, and the channel posts as it with the
// member's token. Needs an app with the Community Management API, which must be the app's only product: no OpenID Connect,
// so the member is read with r_basicprofile (GET /v2/me).
// API reference: https://learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api and
// https://learn.microsoft.com/linkedin/marketing/community-management/organizations/organization-access-control-by-role
// (and the pages named in providers/linkedin/*.ts).
import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import type { Provider } from './types.js';
import { basicProfile, exchangeCode, linkedinAuthorizeUrl, linkedinEndpoints, postUrl, refresh } from './linkedin/api.js';
import { administeredOrganizations, pageAnalytics, pagePostAnalytics } from './linkedin/organizations.js';
import { carouselSetting, linkedinMediaRules, linkedinRules, publishComment, publishPost, recentPosts } from './linkedin/publish.js';
import { deleteOnLinkedin, deletePageComment, editOnLinkedin, pageComments, replyToComment } from './linkedin/comments.js';

const scopes = ['r_basicprofile', 'w_member_social', 'r_organization_social', 'w_organization_social', 'rw_organization_admin'];

const linkedinPage: Provider = {
  identifier: 'linkedin-page',
  name: 'LinkedIn Page',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { ...linkedinEndpoints },
  maxLength: () => 3000,
  rules: `${linkedinRules} The carousel_name setting titles the carousel document. Analytics: followers and the page's impressions, clicks, likes, comments, shares and engagement per day.`,
  settings: z.object({
    post_as_images_carousel: carouselSetting,
    carousel_name: z.string().optional().describe('Title of the carousel document (default: the first line of the text)'),
  }),
  chain: 'comments',
  validate: linkedinMediaRules,
  tools: [
    {
      methodName: 'getCompanies',
      description: 'Lists the LinkedIn pages (organizations) the connected member administers: [{id (organization URN), name, vanityName, picture}].',
      dataSchema: [],
      run: (context) => administeredOrganizations(context),
    },
  ],
  recordsSteps: true,
  authorizeUrl: linkedinAuthorizeUrl(scopes),

  async exchangeCode(context, options) {
    const tokens = await exchangeCode(context, options);
    const member = await basicProfile({ ...context, auth: tokens });
    return { internalId: member.urn, name: member.name, profile: member.vanityName ?? member.name, ...tokens, inBetweenSteps: true };
  },

  async accounts(context) {
    return (await administeredOrganizations(context)).map(({ id, name, picture }) => ({ id, name, ...(picture ? { picture } : {}) }));
  },

  async selectAccount(context, id) {
    const chosen = (await administeredOrganizations(context)).find((organization) => organization.id === id || organization.id === `urn:li:organization:${id}`);
    if (!chosen) {
      throw invalidInput(`LinkedIn organization ${id} is not one this member administers.`, { hint: 'Choose one of GET /integrations/{id}/accounts.' });
    }
    // The page posts with the member's token (LinkedIn has no page tokens): its expiry and refresh token carry over.
    const { accessToken, refreshToken, expiresAt, data, internalId } = context.auth;
    const member = internalId.startsWith('urn:li:person:') ? internalId : data.member;
    return {
      internalId: chosen.id,
      name: chosen.name,
      profile: chosen.vanityName ?? chosen.name,
      picture: chosen.picture,
      accessToken,
      refreshToken,
      expiresAt,
      data: { ...data, ...(member ? { member } : {}) },
    };
  },

  refresh,

  // Organizations read their own posts and comments (r_organization_social): an interrupted create is looked up there.
  publish: (context, item) => publishPost(context, item, { canRead: true }),
  // A later item is a comment on the post; an answer to someone's comment is a reply under it (./linkedin/comments.ts).
  comment: (context, item, { root, parent, toComment }) => (toComment ? replyToComment(context, item, root, parent) : publishComment(context, item, root, { canRead: true })),
  comments: (context, post) => pageComments(context, post),
  deleteComment: deletePageComment,
  editPublished: editOnLinkedin,
  deletePublished: deleteOnLinkedin,
  analytics: pageAnalytics,
  postAnalytics: (context, post) => pagePostAnalytics(context, post),
  async recent(context) {
    return (await recentPosts(context)).map((post) => ({ id: post.id, url: postUrl(context, post.id) }));
  },
};

export default linkedinPage;
