import { z } from 'zod';
import { conflict, invalidInput } from '../src/errors.js';
import { instantOf, isoWithOffset, parseWallClock } from '../src/lib/time-zone.js';
import { defineTool, readOnly } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { findEngagementSlot, findFreeSlot } from './internal/find-slot.js';
import { bestTimes } from './internal/best-times.js';
import { channelZone, organizationZone, zoneInput } from './internal/time-zones.js';
import { idParam } from './shapes.js';

export const findSlot = defineTool({
  name: 'findSlotTool',
  title: 'Next free posting slot',
  description:
    "The channel's next free posting time: date (UTC, for schedulePostTool) and localDate in timeZone (yours, else the channel's). after: a local date or date-time to start from. strategy engagement: a best slot by engagement (note says why).",
  annotations: readOnly,
  mcp: true,
  input: z.object({
    id: idParam.describe('Channel id from integrationList'),
    timeZone: z.string().max(64).optional().describe('IANA zone for localDate and after'),
    after: z.string().max(40).optional().describe('YYYY-MM-DD or YYYY-MM-DDTHH:MM, local'),
    strategy: z
      .enum(['posting_times', 'engagement'], { message: 'must be "posting_times" (default) or "engagement"' })
      .default('posting_times')
      
  }),
  output: z.object({
    date: z.string(),
    timeZone: z.string(),
    localDate: z.string().describe('The slot as a wall-clock time of timeZone, ISO 8601 with its offset'),
    note: z.string().optional().describe('With strategy engagement: which slot and why, or why it fell back'),
  }),
  rest: { method: 'GET', path: '/find-slot/:id', toInput: ({ params, query }) => ({ id: params.id, timeZone: query.timeZone, after: query.after, strategy: query.strategy }) },
  handler: async (input, { em, caller, services }) => {
    const asked = input.timeZone === undefined ? undefined : zoneInput(input.timeZone);
    const integration = await findIntegration(em, caller.organizationId, input.id);
    // The channel's people's zone: the answer's zone unless one was asked.
    const local = channelZone(integration, await organizationZone(em, caller.organizationId));
    const zone = asked ?? local;
    let after: Date | undefined;
    if (input.after !== undefined) {
      const wall = parseWallClock(input.after);
      if (!wall) throw invalidInput(`after: "${input.after}" is not a date.`, { hint: 'Write a local date as 2026-12-01 or a local date-time as 2026-12-01T09:00 (no offset: timeZone says where).' });
      after = instantOf(wall, zone);
    }
    const now = services.now();
    const answer = (slot: Date, note?: string) => ({ date: slot.toISOString(), timeZone: zone, localDate: isoWithOffset(slot, zone), ...(note ? { note } : {}) });
    let note: string | undefined;
    if (input.strategy === 'engagement') {
      const best = await bestTimes(em, integration, now, services.config.defaultPostingTimes);
      const slot = await findEngagementSlot(em, integration, after && after > now ? after : now, best);
      if (slot) return answer(slot, `A best slot by engagement (${best.timeZone}). ${best.explanation}`);
      note = best.enoughData ? 'Every best slot by engagement is taken for the next 8 weeks: the next free posting time instead.' : best.explanation;
    }
    const slot = await findFreeSlot(em, integration, now, services.config.defaultPostingTimes, after);
    if (!slot) throw conflict('This channel has a post at every posting time for the next year.', { hint: 'Add posting times to the channel or pick a date yourself.' });
    return answer(slot, note);
  },
});
