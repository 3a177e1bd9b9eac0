import { z } from 'zod';
import { conflict } from '../src/errors.js';
import { defineTool, readOnly } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { findFreeSlot } from './internal/find-slot.js';
import { idParam } from './shapes.js';

export const findSlot = defineTool({
  name: 'findSlotTool',
  title: 'Next free posting slot',
  description:
    "Answers {date}: the earliest future posting time of the channel (its daily posting times, UTC) at which it has no post yet. Use it as the date of schedulePostTool when the user says 'next free slot'.",
  annotations: readOnly,
  mcp: true,
  input: z.object({ id: idParam.describe('Channel id from integrationList') }),
  output: z.object({ date: z.string() }),
  rest: { method: 'GET', path: '/find-slot/:id' },
  handler: async (input, { em, caller, services }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    const slot = await findFreeSlot(em, integration, services.now(), services.config.defaultPostingTimes);
    if (!slot) throw conflict('This channel has a post at every posting time for the next year.', { hint: 'Add posting times to the channel or pick a date yourself.' });
    return { date: slot.toISOString() };
  },
});
