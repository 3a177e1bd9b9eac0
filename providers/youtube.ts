// YouTube: one video per post, title and privacy in settings; the channel is chosen after Google OAuth.
import { z } from 'zod';
import type { Provider } from './types.js';
import { firstProblem, googleAuthorizeUrl, googleEndpoints, googleScope, tagsSchema, tool } from './shared.js';

const scopes = ['userinfo.profile', 'youtube.upload', 'youtube.force-ssl', 'yt-analytics.readonly'].map(googleScope);

const youtube: Provider = {
  identifier: 'youtube',
  name: 'YouTube',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { ...googleEndpoints, analytics: 'https://youtubeanalytics.googleapis.com' },
  maxLength: () => 5000,
  rules:
    'A post is exactly one video and nothing else; the content is the video description (no < or > characters). ' +
    'The title (2 to 100 characters) and privacy type are required settings. No comments or thread items.',
  settings: z.object({
    title: z.string().min(2).max(100).describe('Video title'),
    type: z.enum(['public', 'private', 'unlisted']).describe('Privacy of the video'),
    selfDeclaredMadeForKids: z.enum(['yes', 'no']).optional().describe('Whether the video is made for kids'),
    tags: tagsSchema.optional().describe('Video tags (500 characters in total at most)'),
  }),
  chain: 'none',
  validate: (items) =>
    firstProblem(items, ({ total, videos }) => (total !== 1 || videos !== 1 ? 'must have exactly one video and no other media.' : undefined), 'first'),
  tools: [tool('getPlaylists', 'Lists the playlists of the connected YouTube channel.')],
  authorizeUrl: (options) => googleAuthorizeUrl(options, scopes),
};

export default youtube;
