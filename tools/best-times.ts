import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { bestTimes } from './internal/best-times.js';
import { idParam } from './shapes.js';

const slot = z.object({ weekday: z.string(), hour: z.string().describe('HH:00 in the channel\'s time zone'), posts: z.number(), medianEngagement: z.number() });

export const bestTimesSchema = z.object({
  integration: z.object({ id: z.string(), name: z.string(), platform: z.string() }),
  timeZone: z.string(),
  publishedPosts: z.number(),
  postsWithMetrics: z.number(),
  enoughData: z.boolean(),
  suggestions: z.array(slot),
  slots: z.array(slot),
  fallback: z.object({ postingTimes: z.array(z.string()) }).nullable(),
  explanation: z.string(),
  method: z.string(),
});

export const bestTimesTool = defineTool({
  name: 'bestTimesTool',
  title: 'Best posting times',
  description:
    "When to post on a channel from its own posts' engagement: weekday × hour slots in its zone, the best as suggestions. enoughData false: tell the user; fallback gives the posting times.",
  annotations: readOnly,
  mcp: true,
  input: z.object({ id: idParam.describe('Channel id from integrationList') }),
  output: z.object({ output: bestTimesSchema }),
  rest: { method: 'GET', path: '/best-times/:id', toResponse: (output) => output.output },
  handler: async (input, { em, caller, services }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    return { output: await bestTimes(em, integration, services.now(), services.config.defaultPostingTimes) };
  },
});
