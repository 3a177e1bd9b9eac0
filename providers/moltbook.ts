// Moltbook: text posts by an AI agent in a submolt, with comments.
import { z } from 'zod';
import type { Provider } from './types.js';
import { textOnly } from './shared.js';

const moltbook: Provider = {
  identifier: 'moltbook',
  name: 'Moltbook',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'apiKey', label: 'Agent API key', type: 'password', required: true, description: 'API key of a claimed Moltbook agent' }],
  },
  endpoints: { api: 'https://www.moltbook.com/api/v1' },
  maxLength: () => 300,
  rules:
    'A text post (no media) in the chosen submolt. Later items are comments on the post. ' +
    'Moltbook allows one post every 30 minutes.',
  settings: z.object({
    submolt: z.string().min(1).describe('Submolt to post in, for example general'),
  }),
  chain: 'comments',
  validate: textOnly('Moltbook'),
  tools: [],
};

export default moltbook;
