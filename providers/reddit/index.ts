// Reddit: one submission per chosen subreddit, later items as comments replying to the one before.
// API reference: https://www.reddit.com/dev/api/ (POST /api/submit, POST /api/comment, GET /api/info, GET /user/{name}/submitted
// and /comments, GET /subreddits/search, GET /r/{sr}/about, GET /api/v1/{sr}/post_requirements, GET /r/{sr}/api/link_flair_v2,
// GET /api/v1/me), https://github.com/reddit-archive/reddit/wiki/OAuth2 (authorize with duration=permanent, token endpoint with
// HTTP Basic, refresh), https://support.reddithelp.com/hc/en-us/articles/16160319875092-Reddit-Data-API-Wiki (User-Agent format,
// rate-limit headers). Comments, moderation, edits and deletion: see community.ts (edit and delete need the `edit` scope,
// removing a comment `modposts`, which only matters for an account that moderates the subreddit). The media lease (POST /api/media/asset.json → S3 form) is undocumented: it follows PRAW
// (praw/models/media.py, PostMedia._upload) and Postiz.
import { z } from 'zod';
import type { Provider, ValidationItem } from '../types.js';
import { countMedia, currentMetric, idsOf, oauth2AuthorizeUrl, textOnlyComments, tool } from '../shared.js';
import { listing, redditCall, tokenCall } from './api.js';
import { publishComments, publishSubmissions, subredditName, type SubredditEntry } from './submit.js';
import { deleteThings, editText, moderateComment, readComments, submissionProblem } from './community.js';

const scopes = ['read', 'identity', 'submit', 'flair', 'history', 'edit', 'modposts'];
const MAX_TITLE = 300;
/** Reddit's limit for a comment's text (a self post's body takes 40,000). */
const MAX_COMMENT = 10_000;

const subredditEntry = z.object({
  value: z.object({
    subreddit: z.string().min(1).describe('Subreddit as /r/name, from the subreddits tool'),
    title: z.string().min(1).max(MAX_TITLE).describe('Title of the submission'),
    type: z
      .enum(['self', 'text', 'link', 'image', 'video', 'videogif'])
      .describe('self (or text) for a text post, link (needs url), image (needs one picture); video and videogif are not posted by Herald yet'),
    url: z.string().optional().describe('Link of a link post'),
    is_flair_required: z.boolean().describe('From getFlairs: whether the subreddit requires a flair'),
    flair: z
      .object({ id: z.string(), name: z.string() })
      .nullable()
      .optional()
      .describe('A flair from getFlairs; required when is_flair_required is true'),
  }),
});

function entryProblem(entry: SubredditEntry, item: ValidationItem, pictureUsed: boolean): string | undefined {
  const { images, total } = countMedia(item);
  const where = `The post to ${entry.subreddit}`;
  if (entry.type === 'video' || entry.type === 'videogif') return `${where} is a ${entry.type} post, which Herald does not post on Reddit yet: use self, link or image.`;
  if (entry.type === 'link' && !/^https?:\/\/\S+$/i.test(entry.url ?? '')) return `${where} is a link post: set its url to an http(s) address.`;
  if (entry.is_flair_required && !entry.flair) return `${where} needs a flair: pick one with getFlairs.`;
  if (entry.type === 'image' && (total !== 1 || images !== 1)) return `${where} is an image post: attach exactly one picture.`;
  // A picture is for the image submissions of the post; text and link submissions in other subreddits go without it.
  if (['self', 'text', 'link'].includes(entry.type) && total > 0 && !pictureUsed) return `${where} has attachments: use type image to post a picture.`;
  return undefined;
}

const meSchema = z.looseObject({ id: z.string(), name: z.string(), icon_img: z.string().nullish(), snoovatar_img: z.string().nullish(), link_karma: z.number().optional(), comment_karma: z.number().optional() });
const aboutSchema = z.object({ data: z.looseObject({ display_name: z.string(), submission_type: z.string().nullish(), allow_images: z.boolean().nullish() }) });

const reddit: Provider = {
  identifier: 'reddit',
  name: 'Reddit',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { www: 'https://www.reddit.com', oauth: 'https://oauth.reddit.com' },
  // A self post's body takes 40,000 characters (Reddit's limit for text posts; comments take 10,000).
  maxLength: () => 40_000,
  rules:
    'The post is submitted once to each chosen subreddit, each with its own title (300 characters at most) and type: a text post (self), a link ' +
    '(url required, the text goes with it) or exactly one picture (image); in a post to several subreddits the picture goes to the image ' +
    'submissions and the text and link ones go without it. Herald does not post Reddit videos yet. Some subreddits require a flair ' +
    '(see getFlairs). The text takes up to 40,000 characters in a post, 10,000 in a comment. Later items are comments in every subreddit, ' +
    'each replying to the one before, and take text only.',
  settings: z.object({
    subreddit: z.array(subredditEntry).min(1).describe('The subreddits to post to, at least one'),
  }),
  chain: 'comments',
  recordsSteps: true,
  validate: (items, settings) => {
    const entries = (settings.subreddit ?? []) as { value: SubredditEntry }[];
    const pictureUsed = entries.some(({ value }) => value.type === 'image');
    for (const { value } of entries) {
      const problem = entryProblem(value, items[0] ?? { text: '', media: [] }, pictureUsed);
      if (problem) return problem;
    }
    const long = items.findIndex((item, index) => index > 0 && [...item.text].length > MAX_COMMENT);
    if (long > 0) return `Item ${long + 1} is a Reddit comment of ${[...items[long].text].length} characters; a comment takes at most ${MAX_COMMENT}: shorten it or split it.`;
    return textOnlyComments(items, 'Reddit');
  },
  tools: [
    {
      ...tool('subreddits', 'Searches public subreddits by name: {subreddit, title, postTypes} items; use subreddit in the subreddit setting.', [
        { key: 'word', type: 'string', description: 'Part of the subreddit name' },
      ]),
      async run(context, data) {
        const found = await redditCall(context, {
          path: 'subreddits/search',
          query: { q: data.word ?? '', show: 'public', sort: 'activity', limit: 10 },
          schema: listing(z.looseObject({ display_name: z.string(), title: z.string().nullish(), submission_type: z.string().nullish() })),
        });
        return found.data.children.map(({ data: sub }) => ({ subreddit: `/r/${sub.display_name}`, title: sub.title ?? '', postTypes: sub.submission_type ?? 'any' }));
      },
    },
    {
      ...tool('getFlairs', 'Tells which post types a subreddit allows, whether it requires a flair, and lists its flairs ({id, name}).', [
        { key: 'subreddit', type: 'string', description: 'Subreddit as /r/name' },
      ]),
      async run(context, data) {
        const name = subredditName(data.subreddit ?? '');
        const about = await redditCall(context, { path: `r/${encodeURIComponent(name)}/about`, schema: aboutSchema });
        const requirements = await redditCall(context, { path: `api/v1/${encodeURIComponent(name)}/post_requirements`, schema: z.looseObject({ is_flair_required: z.boolean().nullish() }) });
        // A subreddit without link flairs (or that hides them from the account) answers 403: no flairs to choose.
        const flairs = await redditCall(context, { path: `r/${encodeURIComponent(name)}/api/link_flair_v2`, schema: z.array(z.looseObject({ id: z.string(), text: z.string().nullish() })) }).catch(
          (error: unknown) => {
            if ((error as { status?: number }).status === 403) return [];
            throw error;
          },
        );
        return {
          subreddit: `/r/${about.data.display_name}`,
          postTypes: about.data.submission_type ?? 'any',
          allowImages: about.data.allow_images ?? false,
          isFlairRequired: requirements.is_flair_required ?? false,
          flairs: flairs.map((flair) => ({ id: flair.id, name: flair.text ?? '' })),
        };
      },
    },
  ],
  authorizeUrl: oauth2AuthorizeUrl('www', 'api/v1/authorize', scopes, { extra: { duration: 'permanent' } }),

  async exchangeCode(context, options) {
    const client = { clientId: options.clientId, clientSecret: options.clientSecret };
    const tokens = await tokenCall(context.fetch, context.endpoints, client, { grant_type: 'authorization_code', code: options.code, redirect_uri: options.redirectUri });
    const me = await redditCall({ ...context, client, auth: { accessToken: tokens.accessToken, data: {} } }, { path: 'api/v1/me', schema: meSchema });
    const picture = (me.snoovatar_img || me.icon_img || '').replace(/&amp;/g, '&') || undefined;
    return { internalId: me.id, name: me.name, profile: me.name, picture, ...tokens, data: { username: me.name } };
  },

  // duration=permanent: the refresh token stays the same and is kept; each refresh gives a new one-hour access token.
  async refresh(context) {
    if (!context.client) throw new Error('REDDIT_CLIENT_ID is not set: Reddit tokens cannot be refreshed.');
    const tokens = await tokenCall(context.fetch, context.endpoints, context.client, { grant_type: 'refresh_token', refresh_token: context.auth.refreshToken ?? '' }, context.auth.data.username);
    return { accessToken: tokens.accessToken, expiresAt: tokens.expiresAt };
  },

  publish: (context, item) => publishSubmissions(context, item),
  // A later item, or a reply to someone's comment (`parent` is then that comment: the reply's thing_id is its t1_ fullname).
  comment: (context, item, { root, parent }) => publishComments(context, item, root, parent),
  comments: (context, post) => readComments(context, post),
  hideComment: (context, comment, hidden) => moderateComment(context, comment, hidden),
  editPublished: (context, ref, item, thread) => editText(context, ref, item, thread),
  deletePublished: (context, ref, thread) => deleteThings(context, ref, thread),
  editProblem: submissionProblem,

  async postAnalytics(context, post) {
    const info = await redditCall(context, {
      path: 'api/info',
      query: { id: idsOf(post).map((id) => `t3_${id}`).join(',') },
      schema: listing(z.looseObject({ score: z.number().optional(), num_comments: z.number().optional() })),
    });
    const posts = info.data.children.map((child) => child.data);
    const sum = (pick: (post: (typeof posts)[number]) => number | undefined) => posts.reduce((total, post) => total + (pick(post) ?? 0), 0);
    return [currentMetric('Score', sum((post) => post.score)), currentMetric('Comments', sum((post) => post.num_comments))];
  },

  async analytics(context) {
    const me = await redditCall(context, { path: 'api/v1/me', schema: meSchema });
    return [currentMetric('Post karma', me.link_karma), currentMetric('Comment karma', me.comment_karma)];
  },

  async recent(context) {
    const submitted = await redditCall(context, {
      path: `user/${encodeURIComponent(context.auth.data.username ?? '')}/submitted`,
      query: { limit: 20, sort: 'new' },
      schema: listing(z.looseObject({ id: z.string(), permalink: z.string() })),
    });
    return submitted.data.children.map(({ data: post }) => ({ id: post.id, url: `${context.endpoints.www}${post.permalink}` }));
  },
};

export default reddit;
