// Threads (Meta): reply chains of text, pictures, videos and carousels, media pulled by Threads from our public URL.
// API reference: https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions (OAuth, no PKCE),
// https://developers.facebook.com/docs/threads/get-started/long-lived-tokens, https://developers.facebook.com/docs/threads/posts
// (containers, carousels, limits), https://developers.facebook.com/docs/threads/reference/publishing,
// https://developers.facebook.com/docs/threads/troubleshooting (container status), https://developers.facebook.com/docs/threads/insights,
// https://developers.facebook.com/docs/threads/threads-profiles, https://developers.facebook.com/docs/threads/overview (limits, hosts);
// replies, their hiding and the deletion of a post: see ./replies.ts (read 2026-11-27).
import { z } from 'zod';
import { convertContent } from '../../src/lib/content.js';
import type { AnalyticsMetric, Provider } from '../types.js';
import { currentMetric, firstProblem, oauth2AuthorizeUrl } from '../shared.js';
import { exchangeForLongLived, graph, refreshLongLived } from './api.js';
import { publishThread } from './publish.js';
import { deletePost, hideReply, repliesOf } from './replies.js';

// threads_read_replies reads the replies under the account's posts, threads_manage_replies hides them (and publishes replies),
// threads_delete deletes the account's own posts.
const scopes = ['threads_basic', 'threads_content_publish', 'threads_read_replies', 'threads_manage_replies', 'threads_manage_insights', 'threads_delete'];

const MAX_LENGTH = 500;
const MAX_CAROUSEL = 20;
const MAX_LINKS = 5;
/** The user insights' `since` cannot go before 2024-04-13 (Meta's documented limit). */
const INSIGHTS_START = 1712991600;

/** Threads counts characters, but each emoji as the number of its UTF-8 bytes. */
export function threadsLength(text: string): number {
  let length = 0;
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) {
    length += /\p{Extended_Pictographic}/u.test(segment) ? Buffer.byteLength(segment, 'utf8') : [...segment].length;
  }
  return length;
}

const links = (text: string) => new Set(text.match(/https?:\/\/[^\s<>"]+/g) ?? []).size;
const UNSUPPORTED_PICTURE = /\.(webp|gif|avif|bmp|tiff?)(?:[?#]|$)/i;

const profileSchema = z.object({ id: z.string(), username: z.string(), name: z.string().optional(), threads_profile_picture_url: z.string().optional() });
const insightSchema = z.looseObject({
  name: z.string(),
  values: z.array(z.looseObject({ value: z.number(), end_time: z.string().optional() })).optional(),
  total_value: z.looseObject({ value: z.number() }).optional(),
});
const insightsSchema = z.object({ data: z.array(insightSchema).default([]) });
const LABELS: Record<string, string> = { views: 'Views', likes: 'Likes', replies: 'Replies', reposts: 'Reposts', quotes: 'Quotes', shares: 'Shares', followers_count: 'Followers' };

/** Meta answers a time series (`values` with end_time) for some metrics and a period total (`total_value`) for others. */
function metricOf(insight: z.infer<typeof insightSchema>, today: string): AnalyticsMetric | undefined {
  const label = LABELS[insight.name] ?? insight.name;
  if (insight.total_value) return currentMetric(label, insight.total_value.value);
  if (!insight.values?.length) return undefined;
  return { label, data: insight.values.map((point) => ({ total: String(point.value), date: (point.end_time ?? today).slice(0, 10) })), percentageChange: 0 };
}

const threads: Provider = {
  identifier: 'threads',
  name: 'Threads',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  // Meta serves the API on graph.threads.net and graph.threads.com alike; its current login dialog is on threads.com.
  endpoints: { authorize: 'https://threads.com', graph: 'https://graph.threads.net', graphVersion: 'v1.0' },
  maxLength: () => MAX_LENGTH,
  rules:
    'Threads: each item of the thread is a post replying to the previous one. A post is up to 500 characters (Threads counts each emoji ' +
    'as its UTF-8 bytes, up to 4) with at most 5 links, and may carry one picture (JPEG or PNG) or one video (MP4/MOV, H.264, up to 5 minutes), ' +
    'or a carousel of 2 to 20 pictures and videos. Threads downloads the media from Herald\'s public URL, so PUBLIC_URL must be reachable ' +
    'from the internet over https; a video is processed by Threads before it is published, which can take a few minutes. ' +
    'Threads allows 250 posts a day per account.',
  settings: null,
  chain: 'thread',
  mediaByUrl: true,
  recordsSteps: true,
  // Long-lived tokens last 60 days and cannot be revived once expired: the daily job refreshes them from day 30 on.
  refreshDaysBeforeExpiry: 30,
  tools: [],

  validate: (items) =>
    firstProblem(items, ({ total }, item) => {
      const text = convertContent(item.text, 'plain');
      const length = threadsLength(text);
      if (length > MAX_LENGTH) return `is ${length} characters as Threads counts them (each emoji as its UTF-8 bytes); Threads takes ${MAX_LENGTH}: shorten it.`;
      if (links(text) > MAX_LINKS) return `has ${links(text)} links; Threads takes at most ${MAX_LINKS}: remove some.`;
      if (total > MAX_CAROUSEL) return `has ${total} attachments; a Threads carousel takes at most ${MAX_CAROUSEL}.`;
      const picture = item.media.find((media) => media.kind === 'image' && UNSUPPORTED_PICTURE.test(media.url));
      if (picture) return `has a ${UNSUPPORTED_PICTURE.exec(picture.url)![1].toUpperCase()} picture; Threads takes JPEG or PNG pictures: convert it.`;
      return undefined;
    }),

  authorizeUrl: oauth2AuthorizeUrl('authorize', 'oauth/authorize', scopes, { separator: ',' }),

  async exchangeCode(context, options) {
    const token = await exchangeForLongLived(context.fetch, context.endpoints, options);
    const profile = await graph({ ...context, auth: token }, { path: 'me', params: { fields: 'id,username,name,threads_profile_picture_url' }, schema: profileSchema });
    return { internalId: profile.id, name: profile.name || profile.username, profile: profile.username, picture: profile.threads_profile_picture_url, ...token };
  },

  refresh: (context) => refreshLongLived(context.fetch, context.endpoints, context.auth.accessToken),

  publish: (context, item) => publishThread(context, item),
  // A thread item, or a reply to someone's reply: both are posts with reply_to_id the post (or reply) they answer.
  comment: (context, item, { parent }) => publishThread(context, item, parent.id),

  comments: (context, post, since) => repliesOf(context, post, since),
  hideComment: (context, reply, hidden, post) => hideReply(context, reply, hidden, post),
  deletePublished: (context, ref) => deletePost(context, ref),
  unchangeable: {
    edit: 'The Threads API cannot edit a published post (Threads lets people edit a post only in its app, for 15 minutes after posting).',
  },

  async analytics(context, days) {
    const until = Math.floor(Date.now() / 1000);
    const since = Math.max(INSIGHTS_START, until - Math.max(1, days) * 86_400);
    const { data } = await graph(context, {
      path: `${encodeURIComponent(context.auth.internalId)}/threads_insights`,
      params: { metric: 'views,likes,replies,reposts,quotes,followers_count', since, until },
      schema: insightsSchema,
    });
    const today = new Date().toISOString().slice(0, 10);
    return data.flatMap((insight) => metricOf(insight, today) ?? []);
  },

  async postAnalytics(context, post) {
    const { data } = await graph(context, { path: `${encodeURIComponent(post.id)}/insights`, params: { metric: 'views,likes,replies,reposts,quotes,shares' }, schema: insightsSchema });
    return data.flatMap((insight) => {
      const value = insight.total_value?.value ?? insight.values?.[0]?.value;
      return value === undefined ? [] : [currentMetric(LABELS[insight.name] ?? insight.name, value)];
    });
  },

  async recent(context) {
    const { data } = await graph(context, {
      path: `${encodeURIComponent(context.auth.internalId)}/threads`,
      params: { fields: 'id,permalink,media_type,media_url,thumbnail_url', limit: 20 },
      schema: z.object({ data: z.array(z.looseObject({ id: z.string(), permalink: z.string().optional(), media_type: z.string().optional(), media_url: z.string().optional(), thumbnail_url: z.string().optional() })) }),
    });
    return data.map((post) => ({ id: post.id, url: post.thumbnail_url ?? (post.media_type === 'IMAGE' ? post.media_url : undefined) ?? post.permalink ?? '' }));
  },
};

export default threads;
