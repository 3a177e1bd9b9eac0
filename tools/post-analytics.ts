import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { days } from './channel-analytics.js';
import { findIntegration } from './internal/integrations.js';
import { postAnalytics as postAnalyticsWithHistory } from './internal/analytics.js';
import { findPost } from './internal/posts.js';
import { clicksMetric } from './internal/short-links.js';
import { analyticsMetricSchema, idParam, wrapped } from './shapes.js';

export const postAnalytics = defineTool({
  name: 'postAnalyticsTool',
  title: 'Post analytics',
  description:
    'Metrics of one published post (likes, reposts, replies... depending on the platform) as [{label, data, percentageChange}]: each counter as it grew since publication (Herald reads a post often in its first days, then rarely), one point a day, with the live value as today\'s. ' +
    'Empty for posts not published yet, posts without a release id, and platforms without post analytics. ' +
    'A post published with shortLink: true also has a "clicks" metric (daily clicks on its short links) on every platform.',
  annotations: { ...readOnly, openWorldHint: true },
  mcp: true,
  input: z.object({ postId: idParam.describe('Post id from postsListTool or schedulePostTool'), date: days.default(7).describe('Days to look back (default 7)') }),
  output: wrapped(z.array(analyticsMetricSchema)),
  rest: { method: 'GET', path: '/analytics/post/:postId', toInput: ({ params, query }) => ({ postId: params.postId, date: query.date }), toResponse: (output) => output.output },
  handler: async (input, { em, caller, services, log }) => {
    const post = await findPost(em, caller.organizationId, input.postId);
    if (post.state !== 'PUBLISHED' || !post.releaseId || post.releaseId === 'missing') return { output: [] };
    const integration = await findIntegration(em, caller.organizationId, post.integrationId);
    const clicks = await clicksMetric(services, em, post, input.date);
    const ours = clicks ? [clicks] : [];
    return { output: [...(await postAnalyticsWithHistory(services, em, post, integration, input.date, log)), ...ours] };
  },
});
