// CSV exports of the analytics history (issue 24): a channel's metrics per day, a post's snapshots since publication.
// REST only (a file to download, linked from the console); agents read the same numbers as JSON with the analytics tools.
import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { days } from './channel-analytics.js';
import { findIntegration } from './internal/integrations.js';
import { findPost } from './internal/posts.js';
import { channelAnalytics } from './internal/analytics.js';
import { csvOf, metricKey, storedPostSnapshots } from './internal/metrics-history.js';
import { idParam } from './shapes.js';

const csvOutput = z.object({ output: z.object({ filename: z.string(), csv: z.string() }) });
const asFile = { contentType: 'text/csv; charset=utf-8', of: (output: z.output<typeof csvOutput>) => ({ filename: output.output.filename, body: output.output.csv }) };
const safeName = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'channel';

export const exportChannelAnalytics = defineTool({
  name: 'exportChannelAnalytics',
  title: 'Export channel analytics (CSV)',
  description:
    "A channel's metrics over the last `date` days as CSV (date,metric,label,value: one row per metric and day), the same numbers as GET /analytics/{integration}: " +
    "Herald's recorded history plus the platform's live value (the history alone when the platform cannot be asked).",
  annotations: { ...readOnly, openWorldHint: true },
  mcp: false,
  input: z.object({ integration: z.string().trim().min(1).describe('Channel id from GET /integrations'), date: days.default(90).describe('Days to look back (default 90)') }),
  output: csvOutput,
  rest: { method: 'GET', path: '/analytics/:integration/export', file: asFile, toInput: ({ params, query }) => ({ integration: params.integration, date: query.date }) },
  handler: async (input, { em, caller, services, log }) => {
    const integration = await findIntegration(em, caller.organizationId, input.integration);
    const answer = await channelAnalytics(services, em, integration, input.date, { log });
    const rows = answer.metrics.flatMap((metric) => metric.data.map((point) => [point.date.slice(0, 10), metricKey(metric.label), metric.label, point.total]));
    rows.sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));
    return { output: { filename: `${safeName(integration.name)}-analytics-${input.date}d.csv`, csv: csvOf(['date', 'metric', 'label', 'value'], rows) } };
  },
});

export const exportPostAnalytics = defineTool({
  name: 'exportPostAnalytics',
  title: 'Export post analytics (CSV)',
  description:
    "Every snapshot Herald took of a published post's metrics, as CSV (taken_at,metric,label,value): how each counter grew since publication. " +
    'Only the header when no snapshot was taken yet (a post is first read an hour after publication) or the platform has no post analytics.',
  annotations: readOnly,
  mcp: false,
  input: z.object({ postId: idParam.describe('Post id from GET /posts') }),
  output: csvOutput,
  rest: { method: 'GET', path: '/analytics/post/:postId/export', file: asFile, toInput: ({ params }) => ({ postId: params.postId }) },
  handler: async (input, { em, caller }) => {
    const post = await findPost(em, caller.organizationId, input.postId);
    const snapshots = await storedPostSnapshots(em, caller.organizationId, [post.id]);
    const rows = snapshots.map((snapshot) => [snapshot.takenAt.toISOString(), snapshot.metric, snapshot.label, snapshot.value]);
    rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1])));
    return { output: { filename: `post-${safeName(post.id)}-analytics.csv`, csv: csvOf(['taken_at', 'metric', 'label', 'value'], rows) } };
  },
});
