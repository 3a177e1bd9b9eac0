// DEV (dev.to): Markdown articles published with the user's API key.
import { z } from 'zod';
import type { Provider } from './types.js';
import { noVideo, tagsSchema, tool } from './shared.js';

const devto: Provider = {
  identifier: 'devto',
  name: 'DEV',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'apiKey', label: 'API key', type: 'password', required: true, description: 'From dev.to Settings, Extensions, DEV Community API Keys.' }],
  },
  endpoints: { api: 'https://dev.to' },
  maxLength: () => 100000,
  rules: 'An article in Markdown with a required title and up to 4 tags (from the tags tool); pictures (public URLs) only, no video. No comments.',
  settings: z.object({
    title: z.string().min(1).describe('Article title'),
    tags: tagsSchema.max(4).optional().describe('Up to 4 tags from the tags tool'),
  }),
  chain: 'none',
  validate: (items) => noVideo(items, 'DEV'),
  tools: [
    tool('tags', 'Lists the DEV tags an article can use.'),
    tool('organizations', 'Lists the DEV organizations the account belongs to.'),
  ],
};

export default devto;
