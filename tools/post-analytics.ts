import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PostSchema, type Post } from '../src/db/entities.js';
import type { AnalyticsMetric, Provider } from '../providers/types.js';
import { defineTool, readOnly } from './types.js';
import { days } from './channel-analytics.js';
import { findIntegration, providerOf } from './internal/integrations.js';
import { postAnalytics as postAnalyticsWithHistory } from './internal/analytics.js';
import { findPost } from './internal/posts.js';
import { clicksMetric } from './internal/short-links.js';
import { analyticsMetricSchema, idParam, wrapped } from './shapes.js';

/**
 * The post's own thread item the platform counts among its replies: a thread's next item replies to the post (the items
 * after it reply to each other). Published ones only. Comment-style chains (a comment count summed over a post's
 * submissions, comments the platform may count apart) keep the platform's count as it is.
 */
async function ownReplies(em: EntityManager, post: Post, chain: Provider['chain']): Promise<number> {
  // A post sent to several places at once (Warpcast's channels, in settings.subreddit) has its reply under each copy: its
  // count is left as the platform answers it.
  if (chain !== 'thread' || (Array.isArray(post.settings.subreddit) && post.settings.subreddit.length > 1)) return 0;
  return em.count(PostSchema, { organizationId: post.organizationId, rootPostId: post.id, deletedAt: null, releaseId: { $ne: null }, position: 1 });
}

/** Replies and comments as people wrote them: the platform's count less the post's own items. */
function withoutOwnReplies(metrics: AnalyticsMetric[], own: number): AnalyticsMetric[] {
  if (own === 0) return metrics;
  return metrics.map((metric) =>
    /^(replies|comments)$/i.test(metric.label)
      ? { ...metric, data: metric.data.map((point) => ({ ...point, total: String(Math.max(0, Number(point.total) - own)) })) }
      : metric,
  );
}

export const postAnalytics = defineTool({
  name: 'postAnalyticsTool',
  title: 'Post analytics',
  description:
    "A published post's metrics (likes, reposts, replies… per platform) as daily points; replies leave out its own thread reply. Empty before it is published; shortLink posts add clicks.",
  annotations: { ...readOnly, openWorldHint: true },
  mcp: true,
  input: z.object({ postId: idParam.describe('Post id from postsListTool or schedulePostTool'), date: days.default(7).describe('A number of days to look back (default 7), not a date') }),
  output: wrapped(z.array(analyticsMetricSchema)),
  rest: { method: 'GET', path: '/analytics/post/:postId', toInput: ({ params, query }) => ({ postId: params.postId, date: query.date }), toResponse: (output) => output.output },
  handler: async (input, { em, caller, services, log }) => {
    const post = await findPost(em, caller.organizationId, input.postId);
    if (post.state !== 'PUBLISHED' || !post.releaseId || post.releaseId === 'missing') return { output: [] };
    const integration = await findIntegration(em, caller.organizationId, post.integrationId);
    const clicks = await clicksMetric(services, em, post, input.date);
    const ours = clicks ? [clicks] : [];
    const metrics = await postAnalyticsWithHistory(services, em, post, integration, input.date, log);
    return { output: [...withoutOwnReplies(metrics, await ownReplies(em, post, providerOf(integration).chain)), ...ours] };
  },
});
