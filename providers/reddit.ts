// Reddit: one submission per chosen subreddit, later items as flat comments.
import { z } from 'zod';
import type { Provider, ValidationItem } from './types.js';
import { authorizationUrl, countMedia, textOnlyComments, tool } from './shared.js';

const scopes = ['read', 'identity', 'submit', 'flair'];

const subredditEntry = z.object({
  value: z.object({
    subreddit: z.string().min(1).describe('Subreddit as /r/name, from the subreddits tool'),
    title: z.string().min(1).max(300).describe('Title of the submission'),
    type: z
      .enum(['self', 'text', 'link', 'image', 'video', 'videogif'])
      .describe('self (or text) for a text post, link (needs url), image, video or videogif (need one attachment of that kind)'),
    url: z.string().optional().describe('Link of a link post'),
    is_flair_required: z.boolean().describe('From getFlairs: whether the subreddit requires a flair'),
    flair: z
      .object({ id: z.string(), name: z.string() })
      .nullable()
      .optional()
      .describe('A flair from getFlairs; required when is_flair_required is true'),
  }),
});

type SubredditEntry = z.infer<typeof subredditEntry>['value'];

function entryProblem(entry: SubredditEntry, item: ValidationItem): string | undefined {
  const { images, videos, total } = countMedia(item);
  const where = `The post to ${entry.subreddit}`;
  if (entry.type === 'link' && !entry.url) return `${where} is a link post: set its url.`;
  if (entry.is_flair_required && !entry.flair) return `${where} needs a flair: pick one with getFlairs.`;
  if (entry.type === 'image' && (total !== 1 || images !== 1)) return `${where} is an image post: attach exactly one picture.`;
  if ((entry.type === 'video' || entry.type === 'videogif') && (total !== 1 || videos !== 1)) return `${where} is a video post: attach exactly one video.`;
  if (['self', 'text', 'link'].includes(entry.type) && total > 0) return `${where} has attachments: use type image or video to post media.`;
  return undefined;
}

const reddit: Provider = {
  identifier: 'reddit',
  name: 'Reddit',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { www: 'https://www.reddit.com', oauth: 'https://oauth.reddit.com' },
  maxLength: () => 10000,
  rules:
    'The post is submitted once to each chosen subreddit, each with a title (300 characters at most) and a type: a text post, a link (url ' +
    'required), or exactly one picture or video. Some subreddits require a flair (see getFlairs). Later items are comments on the post and take text only.',
  settings: z.object({
    subreddit: z.array(subredditEntry).min(1).describe('The subreddits to post to, at least one'),
  }),
  chain: 'comments',
  validate: (items, settings) => {
    const entries = (settings.subreddit ?? []) as { value: SubredditEntry }[];
    for (const { value } of entries) {
      const problem = entryProblem(value, items[0] ?? { text: '', media: [] });
      if (problem) return problem;
    }
    return textOnlyComments(items, 'Reddit');
  },
  tools: [
    tool('subreddits', 'Searches public subreddits by name.', [{ key: 'word', type: 'string', description: 'Part of the subreddit name' }]),
    tool('getFlairs', 'Tells which post types a subreddit allows, whether it requires a flair, and lists its flairs.', [
      { key: 'subreddit', type: 'string', description: 'Subreddit as /r/name' },
    ]),
  ],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.www, 'api/v1/authorize', {
      client_id: clientId,
      response_type: 'code',
      state,
      redirect_uri: redirectUri,
      duration: 'permanent',
      scope: scopes.join(' '),
    }),
};

export default reddit;
