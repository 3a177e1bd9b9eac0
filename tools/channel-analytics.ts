import { z } from 'zod';
import { canSeeChannel } from './internal/visibility.js';
import { IntegrationSchema } from '../src/db/entities.js';
import { invalidInput, notFound } from '../src/errors.js';
import { findProvider } from '../providers/index.js';
import { defineTool, readOnly } from './types.js';
import { channelAnalytics as channelAnalyticsWithHistory } from './internal/analytics.js';
import { analyticsMetricSchema, wrapped } from './shapes.js';

export const days = z.coerce
  .number({ message: 'must be a number of days, e.g. 7, 30 or 90' })
  .int('must be a whole number of days')
  .min(1, 'must be at least 1 day')
  .max(365, 'must be at most 365 days');

export const channelAnalytics = defineTool({
  name: 'channelAnalyticsTool',
  title: 'Channel analytics',
  description:
    "A channel's account metrics (followers, impressions… per platform) as daily points over the last `date` days, from Herald's history and the live value. Empty: no analytics on this platform.",
  annotations: { ...readOnly, openWorldHint: true },
  mcp: true,
  input: z.object({ integration: z.string().trim().min(1).describe('Channel id from integrationList'), date: days.describe('A number of days to look back (7, 30, 90), not a date') }),
  output: wrapped(z.array(analyticsMetricSchema)),
  rest: { method: 'GET', path: '/analytics/:integration', toInput: ({ params, query }) => ({ integration: params.integration, date: query.date }), toResponse: (output) => output.output },
  handler: async (input, { em, caller, services, log }) => {
    const integration = canSeeChannel(input.integration) ? await em.findOne(IntegrationSchema, { id: input.integration, organizationId: caller.organizationId }) : null;
    if (!integration) {
      const byName = await em.count(IntegrationSchema, { organizationId: caller.organizationId, name: input.integration, deletedAt: null });
      if (findProvider(input.integration) || byName > 0) {
        throw invalidInput('Invalid integration', { hint: 'Pass the channel id from GET /integrations, not the platform identifier or the display name.' });
      }
      throw notFound('Channel not found', { hint: 'List the channels with GET /integrations.' });
    }
    if (integration.deletedAt) throw notFound('Channel not found', { hint: 'This channel was disconnected.' });
    const answer = await channelAnalyticsWithHistory(services, em, integration, input.date, { strict: true, log });
    return { output: answer.metrics };
  },
});
