// X (Twitter): posts and reply threads through the X API v2, connected with OAuth 2.0 Authorization Code + PKCE.
// API reference: https://docs.x.com/x-api/posts/create-post (POST /2/tweets),
// https://docs.x.com/x-api/media/quickstart/media-upload-chunked and https://docs.x.com/x-api/media/upload-media (media),
// https://docs.x.com/fundamentals/authentication/oauth-2-0/user-access-token (authorize, token, refresh),
// https://docs.x.com/x-api/users/get-my-user, https://docs.x.com/x-api/users/get-posts, https://docs.x.com/x-api/posts/get-post-by-id,
// https://docs.x.com/x-api/fundamentals/data-dictionary (2026-07-24: tweet.fields, referenced_tweets, subscription_type);
// requests checked by the fake against X's OpenAPI document 2.167 (https://api.x.com/2/openapi.json, retrieved 2026-08-22,
// test/contracts/x-openapi.json). Where that document says post.fields / referenced_posts, Herald keeps the documented
// tweet.fields / referenced_tweets, and the recovery lookup fails closed when the answer lacks what it needs.
// Replies, hiding and deleting (2026-11-27): see ./comments.ts.
import { z } from 'zod';
import { convertContent } from '../../src/lib/content.js';
import type { AnalyticsMetric, Provider, ProviderContext, PublishItem, PublishedRef, StepAttempt } from '../types.js';
import { currentMetric, firstProblem, oauth2AuthorizeUrl, picturesOrOneVideo } from '../shared.js';
import { accountFacts, largeAvatar, tokenRequest, USER_FIELDS, userSchema, xCall } from './api.js';
import { uploadMedia } from './media.js';
import { deletePost, deleteReply, hideReply, repliesOf } from './comments.js';
import { couldNotConfirm, identify, recoveryWindowStart } from '../recovery.js';

// tweet.moderate.write: hiding replies to the account's posts (PUT /2/tweets/:id/hidden).
const scopes = ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access', 'tweet.moderate.write'];

const settings = z.object({
  who_can_reply_post: z.enum(['everyone', 'followers']).optional().describe('Who may reply to the post; everyone when omitted'),
  community: z.string().optional().describe('URL of an X community to post into; leave empty for the main timeline'),
});

/** X's `reply_settings` takes following, mentionedUsers, subscribers or verified; it has no "followers only", so followers → following. */
const replySettings: Record<string, string | undefined> = { everyone: undefined, followers: 'following' };

const COMMUNITY_URL = /^https?:\/\/(?:www\.)?(?:x|twitter)\.com\/i\/communities\/(\d{1,19})\/?(?:[?#].*)?$/i;
const communityId = (value: unknown) => (typeof value === 'string' ? COMMUNITY_URL.exec(value.trim())?.[1] : undefined);

const postMetrics = z.looseObject({
  impression_count: z.number().optional(),
  like_count: z.number().optional(),
  reply_count: z.number().optional(),
  // X renamed retweet_count to repost_count in its 2026 API description; both are read.
  repost_count: z.number().optional(),
  retweet_count: z.number().optional(),
  quote_count: z.number().optional(),
  bookmark_count: z.number().optional(),
});
const postSchema = z.looseObject({
  id: z.string(),
  text: z.string().default(''),
  created_at: z.string().optional(),
  public_metrics: postMetrics.optional(),
  referenced_tweets: z.array(z.object({ type: z.string(), id: z.string() })).optional(),
  attachments: z.looseObject({ media_keys: z.array(z.string()).optional() }).optional(),
});
const timelineSchema = z.object({
  data: z.array(postSchema).default([]),
  includes: z.looseObject({ media: z.array(z.looseObject({ media_key: z.string(), url: z.string().optional(), preview_image_url: z.string().optional() })).optional() }).optional(),
});
type Timeline = z.infer<typeof timelineSchema>;

const timeline = (context: ProviderContext, query: Record<string, string | number | undefined>) =>
  xCall(context, { path: `2/users/${encodeURIComponent(context.auth.internalId)}/tweets`, query, schema: timelineSchema });

const unescaped = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const spaced = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Text as X answers it (entities escaped, links shortened to t.co), reduced to what survives: words without links. */
const comparable = (text: string) => spaced(unescaped(text).replace(/https?:\/\/\S+/g, ''));

const linkSchema = z.looseObject({ url: z.string().nullish(), expanded_url: z.string().nullish(), media_key: z.string().nullish() });
// Fields left optional on purpose: the lookup decides what their absence means (it never guesses).
const lookupSchema = z.object({
  data: z
    .array(
      z.looseObject({
        id: z.string(),
        text: z.string().optional(),
        created_at: z.string().optional(),
        referenced_tweets: z.array(z.looseObject({ type: z.string(), id: z.string() })).optional(),
        entities: z.looseObject({ urls: z.array(linkSchema).nullish() }).optional(),
        attachments: z.looseObject({ media_keys: z.array(z.string()).optional() }).optional(),
      }),
    )
    .default([]),
  meta: z.looseObject({ next_token: z.string().optional() }).optional(),
});
type Looked = z.infer<typeof lookupSchema>['data'][number];

/**
 * The post's text as it was sent: X's escapes undone and each t.co link given back as the URL posted (`entities.urls`
 * expanded_url; the link X adds for attached media dropped). Undefined when X did not say what one of its links stands for.
 */
function asSent(post: Looked): string | undefined {
  let text = unescaped(post.text ?? '');
  for (const link of post.entities?.urls ?? []) {
    if (!link.url || !text.includes(link.url)) return undefined;
    if (!link.media_key && !link.expanded_url) return undefined;
    text = text.replace(link.url, link.media_key ? '' : link.expanded_url!);
  }
  return /https:\/\/t\.co\//.test(text) ? undefined : spaced(text);
}

const unconfirmed = (why: string) => couldNotConfirm('X', `the connection was lost before X answered (${why})`);

/**
 * The post an interrupted create made, if any: X keeps no marker of ours but the media we uploaded for it, so it is the post
 * with the same words, replying to the same post (or to none), created since the attempt began, identified by its media or
 * by its whole text with its links as posted (issue 31). X answers links as t.co links: words alone match a post with other
 * links, so inside the clock-skew allowance before the attempt only the whole text (or the media) is taken, else the item
 * stops with "could not confirm" (providers/recovery.ts identify). When X's answer lacks what tells them apart (created_at,
 * the documented referenced_tweets), or does not cover the whole period, the item stops with "could not confirm" too rather
 * than being posted again.
 */
async function findPosted(context: ProviderContext, text: string, inReplyTo: string | undefined, mediaIds: string[], attempt: StepAttempt): Promise<string | undefined> {
  const since = recoveryWindowStart(attempt.startedAt);
  const answer = await xCall(context, {
    path: `2/users/${encodeURIComponent(context.auth.internalId)}/tweets`,
    query: {
      max_results: 100,
      start_time: since.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      'tweet.fields': 'created_at,referenced_tweets,entities,attachments',
      exclude: inReplyTo ? 'retweets' : 'retweets,replies',
    },
    schema: lookupSchema,
  });
  const wanted = comparable(text);
  const candidates = [];
  for (const post of answer.data) {
    if (post.text === undefined) throw unconfirmed('X answered the lookup without the posts\' text');
    if (comparable(post.text) !== wanted) continue;
    if (!post.created_at) throw unconfirmed('X answered the lookup without created_at, so a new post cannot be told from an older one');
    const parent = post.referenced_tweets?.find((reference) => reference.type === 'replied_to')?.id;
    if (inReplyTo && !post.referenced_tweets) throw unconfirmed('X answered the lookup without referenced_tweets, so the reply cannot be told from another post');
    if (parent !== inReplyTo) continue;
    const keys = post.attachments?.media_keys ?? [];
    const carriesMedia = mediaIds.length > 0 && mediaIds.every((id) => keys.some((key) => key.endsWith(`_${id}`)));
    candidates.push({ item: post.id, created: post.created_at, whole: carriesMedia || asSent(post) === spaced(text) });
  }
  const found = identify(attempt, candidates, 'X', 'posts with these words');
  if (found) return found;
  if (answer.meta?.next_token) throw unconfirmed('the account posted more since the attempt than one page of the lookup holds');
  return undefined;
}

function refOf(context: ProviderContext, id: string): PublishedRef {
  const username = context.auth.data.username;
  return { id, url: `${context.endpoints.web}/${username ? encodeURIComponent(username) : 'i/web'}/status/${id}` };
}

/** The html editor hands over trimmed HTML (the anchor keeps it for articles); a post is its plain-text rendering. */
const postText = (converted: string) => convertContent(converted, 'plain');

async function createPost(context: ProviderContext, item: PublishItem, inReplyTo?: string): Promise<PublishedRef> {
  const mediaIds = await uploadMedia(context, item.media);
  const text = postText(item.text);
  const choice = settings.partial().safeParse(context.settings).data ?? {};
  const reply = replySettings[choice.who_can_reply_post ?? 'everyone'];
  const community = communityId(choice.community);
  const body = {
    text,
    ...(mediaIds.length > 0 ? { media: { media_ids: mediaIds } } : {}),
    // Who may reply and the community are properties of the first post; the replies of the thread follow it.
    ...(inReplyTo ? { reply: { in_reply_to_tweet_id: inReplyTo } } : { ...(reply ? { reply_settings: reply } : {}), ...(community ? { community_id: community } : {}) }),
  };
  const id = await context.step(
    'post',
    async () => (await xCall(context, { method: 'POST', path: '2/tweets', json: body, schema: z.object({ data: z.object({ id: z.string() }) }) })).data.id,
    (attempt) => findPosted(context, text, inReplyTo, mediaIds, attempt),
  );
  return refOf(context, id);
}

const me = (context: Pick<ProviderContext, 'fetch' | 'endpoints' | 'auth'>) =>
  xCall(context, { path: '2/users/me', query: { 'user.fields': USER_FIELDS }, schema: userSchema }).then(({ data }) => data);

const POST_LABELS = [
  ['Impressions', (m: z.infer<typeof postMetrics>) => m.impression_count],
  ['Likes', (m: z.infer<typeof postMetrics>) => m.like_count],
  ['Replies', (m: z.infer<typeof postMetrics>) => m.reply_count],
  ['Reposts', (m: z.infer<typeof postMetrics>) => m.repost_count ?? m.retweet_count],
  ['Quotes', (m: z.infer<typeof postMetrics>) => m.quote_count],
  ['Bookmarks', (m: z.infer<typeof postMetrics>) => m.bookmark_count],
] as const;

/** Per-day sums of the engagement of the account's own posts published in the period (one page: the latest 100). */
function dailyEngagement(posts: Timeline['data']): AnalyticsMetric[] {
  const metrics: AnalyticsMetric[] = [];
  for (const [label, read] of POST_LABELS) {
    const byDay = new Map<string, number>();
    for (const post of posts) {
      const value = post.public_metrics && read(post.public_metrics);
      if (value === undefined || !post.created_at) continue;
      const day = post.created_at.slice(0, 10);
      byDay.set(day, (byDay.get(day) ?? 0) + value);
    }
    if (byDay.size === 0) continue;
    const data = [...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([date, total]) => ({ total: String(total), date }));
    metrics.push({ label, data, percentageChange: 0 });
  }
  return metrics;
}

const x: Provider = {
  identifier: 'x',
  name: 'X',
  // The anchor's editor for X is html (for articles); posts are flattened to plain text at publish, and length is counted on that.
  editor: 'html',
  lengthMethod: 'twitter',
  auth: { kind: 'oauth2', scopes },
  endpoints: { web: 'https://x.com', api: 'https://api.x.com' },
  // A subscriber (read from users/me subscription_type at connect and refresh) or an MCP caller saying isPremium: 25,000.
  maxLength: ({ isPremium, settings: chosen, channel }) => (chosen?.post_type === 'article' ? 100_000 : isPremium || channel?.premium === true ? 25_000 : 280),
  rules:
    'X: each item of the thread is a post replying to the previous one. A post carries up to 4 pictures, or 1 GIF or 1 video alone, or no media. ' +
    "Length is X's weighted length (links count 23, CJK characters 2): 280, or 25,000 when the account has X Premium (any tier; Herald " +
    'reads it from X when the channel connects or refreshes, and isPremium says so for a channel not connected yet). ' +
    'who_can_reply_post (optional, everyone when omitted): everyone, or followers; X has no followers-only option, so followers is sent as X\'s closest, "following" ' +
    '(only accounts you follow and people you mention can reply). community: the URL of an X community you belong to ' +
    '(https://x.com/i/communities/<id>); the first post goes into it. Both settings apply to the first post, the replies follow it. ' +
    'X Articles are not supported. Re-posting exactly the same text is refused by X as a duplicate.',
  settings,
  render: (converted) => {
    const text = postText(converted);
    return { text, visible: text };
  },
  chain: 'thread',
  recordsSteps: true,
  tools: [],

  validate(items, chosen) {
    if (chosen.post_type === 'article') return 'X Articles are not supported by Herald: remove post_type and post a thread instead.';
    if (typeof chosen.community === 'string' && chosen.community.trim() !== '' && !communityId(chosen.community)) {
      return 'settings.community must be the URL of an X community, e.g. https://x.com/i/communities/1493446837214187523; leave it empty to post on the timeline.';
    }
    const gif = firstProblem(items, (_count, item) =>
      item.media.length > 1 && item.media.some((media) => /\.gif(?:[?#]|$)/i.test(media.url)) ? 'has a GIF with other media: X takes a GIF alone.' : undefined,
    );
    if (gif) return gif;
    return picturesOrOneVideo(items, 'X', { maxImages: 4 });
  },

  authorizeUrl: oauth2AuthorizeUrl('web', 'i/oauth2/authorize', scopes, { pkce: true }),

  async exchangeCode(context, { code, codeVerifier, redirectUri, clientId, clientSecret }) {
    const tokens = await tokenRequest(context.fetch, context.endpoints, { clientId, clientSecret }, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    });
    const user = await me({ ...context, auth: { ...tokens, internalId: '', data: {} } });
    return {
      internalId: user.id,
      name: user.name,
      profile: user.username,
      picture: largeAvatar(user.profile_image_url),
      ...tokens,
      data: { username: user.username },
      channelSettings: accountFacts(user),
    };
  },

  async refresh(context) {
    if (!context.client) throw new Error('X_CLIENT_ID is not configured: the X token cannot be refreshed.');
    if (!context.auth.refreshToken) throw new Error('This X channel has no refresh token: reconnect it.');
    // X refresh tokens are single use: the answer carries the next one, which replaces the stored one.
    const tokens = await tokenRequest(context.fetch, context.endpoints, context.client, { grant_type: 'refresh_token', refresh_token: context.auth.refreshToken });
    // The subscription may have changed since the connection; a failed look-up keeps the stored facts, it never fails the refresh.
    const user = await me({ ...context, auth: { ...context.auth, ...tokens } }).catch(() => undefined);
    return { ...tokens, ...(user ? { channelSettings: accountFacts(user) } : {}) };
  },

  publish: (context, item) => createPost(context, item),
  // A thread item, or a reply to someone's reply: both are posts in_reply_to the post they answer.
  comment: (context, item, { parent }) => createPost(context, item, parent.id),

  comments: (context, post, since) => repliesOf(context, post, since),
  hideComment: (context, comment, hidden) => hideReply(context, comment, hidden),
  deleteComment: () => deleteReply(),
  deletePublished: (context, ref) => deletePost(context, ref),
  unchangeable: {
    edit:
      "Herald does not edit X posts: X's API edits a post only within 30 minutes of posting and at most 5 times, each edit " +
      'making a new post (edit_options), and not for replies to others or community posts; delete the post and publish it again instead.',
  },

  async postAnalytics(context, post) {
    const answer = await xCall(context, {
      path: `2/tweets/${encodeURIComponent(post.id)}`,
      query: { 'tweet.fields': 'public_metrics' },
      schema: z.object({ data: postSchema.optional() }),
    });
    const metrics = answer.data?.public_metrics;
    if (!metrics) return [];
    return POST_LABELS.flatMap(([label, read]) => (read(metrics) === undefined ? [] : [currentMetric(label, read(metrics))]));
  },

  async analytics(context, days) {
    const user = await me(context);
    const counts = user.public_metrics;
    const account = counts
      ? [currentMetric('Followers', counts.followers_count), currentMetric('Following', counts.following_count), currentMetric('Posts', counts.post_count ?? counts.tweet_count)]
      : [];
    const since = new Date(Date.now() - Math.max(1, days) * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const { data } = await timeline(context, { max_results: 100, start_time: since, exclude: 'retweets,replies', 'tweet.fields': 'public_metrics,created_at' });
    return [...account, ...dailyEngagement(data)];
  },

  async recent(context) {
    const answer = await timeline(context, { max_results: 20, exclude: 'retweets', expansions: 'attachments.media_keys', 'media.fields': 'url,preview_image_url' });
    const media = new Map(answer.includes?.media?.map((item) => [item.media_key, item.preview_image_url ?? item.url]) ?? []);
    return answer.data.map((post) => {
      const key = post.attachments?.media_keys?.find((candidate) => media.get(candidate));
      return { id: post.id, url: (key && media.get(key)) || refOf(context, post.id).url! };
    });
  },
};

export default x;
