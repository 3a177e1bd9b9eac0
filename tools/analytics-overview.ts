import { z } from 'zod';
import { IntegrationSchema } from '../src/db/entities.js';
import { canSeeChannel, visibleChannelIds } from './internal/visibility.js';
import { defineTool, readOnly } from './types.js';
import { channelStatus, providerOf } from './internal/integrations.js';
import { channelAnalytics } from './internal/analytics.js';
import { analyticsMetricSchema } from './shapes.js';
import { days } from './channel-analytics.js';

export const analyticsOverview = defineTool({
  name: 'analyticsOverviewTool',
  title: 'Analytics of every channel',
  description:
    "channelAnalyticsTool for every active channel (or `channels`) at once, for 'how are my channels doing'; note says when a platform could not be asked.",
  annotations: { ...readOnly, openWorldHint: true },
  mcp: true,
  input: z.object({
    date: days.describe('A number of days to look back (7, 30, 90), not a date'),
    channels: z.array(z.string().trim().min(1)).max(100).optional().describe('Channel ids from integrationList; omit for every active channel'),
  }),
  output: z.object({
    output: z.array(
      z.object({
        integration: z.object({ id: z.string(), name: z.string(), platform: z.string() }),
        metrics: z.array(analyticsMetricSchema),
        /** Why there are no metrics, when there are none for a reason. */
        note: z.string().optional(),
      }),
    ),
  }),
  handler: async (input, { em, caller, services, progress, log }) => {
    const channels = await em.find(
      IntegrationSchema,
      { organizationId: caller.organizationId, deletedAt: null, ...(input.channels ? { id: { $in: input.channels.filter(canSeeChannel) } } : {}), ...(visibleChannelIds() ? { id: { $in: [...visibleChannelIds()!].filter((id) => !input.channels || input.channels.includes(id)) } } : {}) },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    const wanted = input.channels ? channels : channels.filter((channel) => channelStatus(channel) === 'active');
    const output = [];
    for (const [index, integration] of wanted.entries()) {
      const provider = providerOf(integration);
      const entry = { integration: { id: integration.id, name: integration.name, platform: integration.providerIdentifier } };
      const answer = await channelAnalytics(services, em, integration, input.date, { log });
      output.push({ ...entry, metrics: answer.metrics, ...(answer.note ? { note: answer.note } : {}) });
      await progress?.(index + 1, wanted.length, `Read ${integration.name} (${provider.name})`);
    }
    const missing = (input.channels ?? []).filter((id) => !channels.some((channel) => channel.id === id));
    if (missing.length > 0) log?.('warning', `Not channels of this organization: ${missing.join(', ')}.`);
    return { output };
  },
});
