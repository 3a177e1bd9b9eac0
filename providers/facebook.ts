// Facebook Pages: text, pictures or a video, with comments; the Page is chosen after OAuth.
import { z } from 'zod';
import type { Provider } from './types.js';
import { facebookDialogUrl, firstProblem, httpUrl, picturesOrOneVideo } from './shared.js';

const scopes = ['pages_show_list', 'business_management', 'pages_manage_posts', 'pages_manage_engagement', 'pages_read_engagement', 'read_insights'];

const facebook: Provider = {
  identifier: 'facebook',
  name: 'Facebook Page',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { dialog: 'https://www.facebook.com', graph: 'https://graph.facebook.com' },
  maxLength: () => 63206,
  rules:
    'A post is text, text with pictures, or text with one video (not both); media must be reachable at a public URL. ' +
    'Later items are comments on the post and take at most one picture each.',
  settings: z.object({
    url: httpUrl().optional().describe('Link attached to the post'),
  }),
  chain: 'comments',
  validate: (items) =>
    picturesOrOneVideo(items, 'Facebook', { which: 'first' }) ??
    firstProblem(items, ({ images, videos }) => (videos > 0 || images > 1 ? 'is a comment, which takes at most one picture and no video.' : undefined), 'rest'),
  tools: [],
  authorizeUrl: (options) => facebookDialogUrl(options, scopes),
};

export default facebook;
