// listmonk: an HTML email campaign sent to one subscriber list of the user's listmonk server.
import { z } from 'zod';
import type { Provider } from './types.js';
import { noVideo, pickedId, tool } from './shared.js';

const listmonk: Provider = {
  identifier: 'listmonk',
  name: 'listmonk',
  editor: 'html',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'url', label: 'listmonk URL', type: 'url', required: true },
      { key: 'username', label: 'API user', type: 'text', required: true },
      { key: 'password', label: 'API token or password', type: 'password', required: true },
    ],
  },
  // The server is the user's own: its URL comes from the connect form.
  endpoints: {},
  maxLength: () => 100_000_000,
  rules:
    'An HTML email campaign sent at once to the chosen list (from list), with a required subject and preview text; ' +
    'pictures must be public URLs, no video. No comments.',
  settings: z.object({
    subject: z.string().min(1).describe('Email subject'),
    preview: z.string().describe('Preview text shown by mail clients after the subject'),
    list: pickedId('List id from list'),
  }),
  chain: 'none',
  validate: (items) => noVideo(items, 'listmonk'),
  tools: [tool('list', 'Lists the subscriber lists of the listmonk server.'), tool('templates', 'Lists the campaign templates of the listmonk server.')],
};

export default listmonk;
