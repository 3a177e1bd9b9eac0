import { z } from 'zod';
import { conflict } from '../src/errors.js';
import { defineTool, readOnly } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { findEngagementSlot, findFreeSlot } from './internal/find-slot.js';
import { bestTimes } from './internal/best-times.js';
import { idParam } from './shapes.js';

export const findSlot = defineTool({
  name: 'findSlotTool',
  title: 'Next free posting slot',
  description:
    "Answers {date}: the earliest future posting time of the channel (its daily posting times, UTC) at which it has no post yet. Use it as the date of schedulePostTool when the user says 'next free slot'. " +
    "With strategy 'engagement': the soonest free time at one of the channel's best slots by engagement (bestTimesTool), with `note` saying why; when there is too little data it falls back to the posting times and `note` says so.",
  annotations: readOnly,
  mcp: true,
  input: z.object({
    id: idParam.describe('Channel id from integrationList'),
    strategy: z
      .enum(['posting_times', 'engagement'], { message: 'must be "posting_times" (default) or "engagement"' })
      .default('posting_times')
      .describe('posting_times (default): the channel\'s posting times; engagement: its best weekday-hour slots from its own posts\' engagement'),
  }),
  output: z.object({ date: z.string(), note: z.string().optional().describe('With strategy engagement: which slot and why, or why it fell back') }),
  rest: { method: 'GET', path: '/find-slot/:id' },
  handler: async (input, { em, caller, services }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    const now = services.now();
    let note: string | undefined;
    if (input.strategy === 'engagement') {
      const best = await bestTimes(em, integration, now, services.config.defaultPostingTimes);
      const slot = await findEngagementSlot(em, integration, now, best);
      if (slot) return { date: slot.toISOString(), note: `A best slot by engagement (${best.timeZone}). ${best.explanation}` };
      note = best.enoughData ? 'Every best slot by engagement is taken for the next 8 weeks: the next free posting time instead.' : best.explanation;
    }
    const slot = await findFreeSlot(em, integration, now, services.config.defaultPostingTimes);
    if (!slot) throw conflict('This channel has a post at every posting time for the next year.', { hint: 'Add posting times to the channel or pick a date yourself.' });
    return { date: slot.toISOString(), ...(note ? { note } : {}) };
  },
});
