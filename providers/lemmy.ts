// Lemmy: one post per chosen community on the user's instance, later items as comments.
import { z } from 'zod';
import type { Provider } from './types.js';
import { firstProblem, textOnlyComments, tool } from './shared.js';

const endpoints = { instance: 'https://lemmy.world' };

const lemmy: Provider = {
  identifier: 'lemmy',
  name: 'Lemmy',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'instanceUrl', label: 'Instance URL', type: 'url', required: true, defaultValue: endpoints.instance },
      { key: 'username', label: 'Username or email', type: 'text', required: true },
      { key: 'password', label: 'Password', type: 'password', required: true, description: 'Accounts with two-factor authentication are not supported yet.' },
    ],
  },
  endpoints,
  maxLength: () => 10000,
  rules:
    'The post is made once in each chosen community, with the title set there. It takes at most one picture (the cover), no video. ' +
    'Later items are comments on the post and take text only.',
  settings: z.object({
    subreddit: z
      .array(
        z.object({
          value: z.object({
            subreddit: z.string().min(1).describe('Community name, from the subreddits tool'),
            id: z.string().min(1).describe('Community id, from the subreddits tool'),
            title: z.string().min(1).describe('Title of the post in this community'),
            url: z.string().optional().describe('Link attached to the post'),
          }),
        }),
      )
      .min(1)
      .describe('The communities to post to, at least one'),
  }),
  chain: 'comments',
  validate: (items) =>
    firstProblem(
      items,
      ({ images, videos }) => (videos > 0 || images > 1 ? 'has more than one picture or a video; Lemmy takes one picture as the cover.' : undefined),
      'first',
    ) ?? textOnlyComments(items, 'Lemmy'),
  tools: [tool('subreddits', 'Searches communities of the instance by name.', [{ key: 'word', type: 'string', description: 'Part of the community name' }])],
};

export default lemmy;
