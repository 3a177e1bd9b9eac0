// Skool (no public API): posts in a community group, with comments; connected with the browser session cookies.
import { z } from 'zod';
import type { Provider } from './types.js';
import { pickedId, tool } from './shared.js';

const skool: Provider = {
  identifier: 'skool',
  name: 'Skool',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'authToken', label: 'auth_token cookie', type: 'password', required: true, description: 'Value of the auth_token cookie of skool.com' },
      { key: 'clientId', label: 'client_id cookie', type: 'password', required: true, description: 'Value of the client_id cookie of skool.com' },
    ],
  },
  endpoints: { api: 'https://api2.skool.com' },
  maxLength: () => 5000,
  rules:
    'A post with a required title in the chosen group and category label (from groups and label), with pictures or videos. ' +
    'Later items are comments on the post. The connection ends when the Skool session does.',
  settings: z.object({
    group: pickedId('Group id from groups'),
    label: pickedId('Label (category) id from label'),
    title: z.string().min(1).describe('Title of the post'),
  }),
  chain: 'comments',
  tools: [
    tool('groups', 'Lists the Skool groups of the account.'),
    tool('label', 'Lists the category labels of a Skool group.', [{ key: 'group', type: 'string', description: 'Group id from groups' }]),
  ],
};

export default skool;
