// Hashnode: Markdown articles in one of the user's publications (GraphQL API, personal access token).
import { z } from 'zod';
import type { Provider } from './types.js';
import { noVideo, pickedId, tagsSchema, tool } from './shared.js';

const hashnode: Provider = {
  identifier: 'hashnode',
  name: 'Hashnode',
  editor: 'markdown',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'accessToken', label: 'Personal access token', type: 'password', required: true, description: 'From Hashnode Settings, Developer.' }],
  },
  endpoints: { gql: 'https://gql.hashnode.com' },
  maxLength: () => 10000,
  rules:
    'An article in Markdown with a title (at least 6 characters), a publication (from publications) and at least one tag (from tagsList); ' +
    'pictures (public URLs) only, no video. No comments.',
  settings: z.object({
    title: z.string().min(6).describe('Article title, at least 6 characters'),
    subtitle: z.string().optional().describe('Article subtitle'),
    publication: pickedId('Publication id from publications'),
    tags: tagsSchema.min(1).describe('At least one tag from tagsList'),
  }),
  chain: 'none',
  validate: (items) => noVideo(items, 'Hashnode'),
  tools: [
    tool('publications', 'Lists the Hashnode publications of the account.'),
    tool('tagsList', 'Lists the Hashnode tags an article can use.'),
  ],
};

export default hashnode;
