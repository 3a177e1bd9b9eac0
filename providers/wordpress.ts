// WordPress: HTML posts (or pages, or a custom post type) on the user's site, with an application password.
import { z } from 'zod';
import type { Provider } from './types.js';
import { noVideo, tool } from './shared.js';

const wordpress: Provider = {
  identifier: 'wordpress',
  name: 'WordPress',
  editor: 'html',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'siteUrl', label: 'Site URL', type: 'url', required: true },
      { key: 'username', label: 'Username', type: 'text', required: true },
      {
        key: 'applicationPassword',
        label: 'Application password',
        type: 'password',
        required: true,
        description: 'Created in Users, Profile, Application Passwords (not the login password).',
      },
    ],
  },
  // The site is the user's own: its URL comes from the connect form.
  endpoints: {},
  maxLength: () => 100000,
  rules: 'An HTML article with a required title and post type (from postTypes); the first picture becomes the featured image; no video. No comments.',
  settings: z.object({
    title: z.string().min(1).describe('Title of the post'),
    type: z.string().min(1).describe('Post type from postTypes (post, page or a custom type)'),
  }),
  chain: 'none',
  validate: (items) => noVideo(items, 'WordPress'),
  tools: [
    tool('postTypes', 'Lists the post types of the WordPress site.'),
    tool('categoriesList', 'Lists the categories of the WordPress site.'),
    tool('tagsList', 'Lists the tags of the WordPress site.'),
  ],
};

export default wordpress;
