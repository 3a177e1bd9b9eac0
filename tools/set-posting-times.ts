import { z } from 'zod';
import { defineTool } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { idParam } from './shapes.js';

const minute = z.number().int().min(0).max(1439);

export const setPostingTimes = defineTool({
  name: 'setPostingTimes',
  title: 'Set posting times',
  description: 'Sets the daily posting times of a channel used by find-slot, as minutes after midnight UTC ([{time: 540}] is 09:00 UTC).',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  scope: 'channels:manage',
  input: z.object({ id: idParam, postingTimes: z.array(z.object({ time: minute })).min(1, 'needs at least one time').max(48) }),
  output: z.object({ id: z.string(), postingTimes: z.array(z.object({ time: z.number() })) }),
  rest: { method: 'PUT', path: '/integrations/:id/posting-times' },
  handler: async (input, { em, caller }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    integration.postingTimes = [...new Set(input.postingTimes.map((item) => item.time))].sort((a, b) => a - b);
    await em.flush();
    return { id: integration.id, postingTimes: integration.postingTimes.map((time) => ({ time })) };
  },
});
