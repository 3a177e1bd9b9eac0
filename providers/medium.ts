// Medium: Markdown articles (the Medium API is archived: only existing integration tokens still work).
import { z } from 'zod';
import type { Provider } from './types.js';
import { noVideo, tagsSchema, tool } from './shared.js';

const medium: Provider = {
  identifier: 'medium',
  name: 'Medium',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      {
        key: 'integrationToken',
        label: 'Integration token',
        type: 'password',
        required: true,
        description: 'From Medium settings, Security and apps; Medium no longer issues new tokens.',
      },
    ],
  },
  endpoints: { api: 'https://api.medium.com' },
  maxLength: () => 100000,
  rules: 'An article in Markdown with a required title and subtitle and up to 3 tags; pictures (public URLs) only, no video. No comments.',
  settings: z.object({
    title: z.string().min(1).describe('Article title'),
    subtitle: z.string().min(1).describe('Article subtitle'),
    tags: tagsSchema.max(3).optional().describe('Up to 3 tags (Medium ignores any beyond 3)'),
  }),
  chain: 'none',
  validate: (items) => noVideo(items, 'Medium'),
  tools: [tool('publications', 'Lists the Medium publications the account can post to.')],
};

export default medium;
