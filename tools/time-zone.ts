// The organization's time zone for agents (DESIGN §10): read it to turn "tomorrow at 9:00" into UTC, set it when the user
// says where they are. The console's settings page changes the same value (tools/internal/time-zones.ts).
import { z } from 'zod';
import { isoWithOffset } from '../src/lib/time-zone.js';
import { defineTool } from './types.js';
import { organizationZone, setOrganizationZone } from './internal/time-zones.js';

export const timeZoneTool = defineTool({
  name: 'timeZoneTool',
  title: "The organization's time zone",
  description:
    "Reads the organization's time zone, or sets it (timeZone: IANA, e.g. Europe/Paris). Turn the user's local times into schedulePostTool's UTC dates with it (a channel may have its own: integrationList). Answers {timeZone, now, changed}.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: true,
  // Setting it changes where this organization's local times fall, as posting does: the posts:write an agent key holds.
  scope: 'posts:write',
  input: z.object({ timeZone: z.string().trim().min(1).max(64).optional().describe('IANA zone to set; omit to read') }),
  output: z.object({ timeZone: z.string(), now: z.string(), changed: z.boolean() }),
  rest: { method: 'PUT', path: '/time-zone' },
  handler: async (input, { em, caller, services }) => {
    const before = await organizationZone(em, caller.organizationId);
    const timeZone = input.timeZone === undefined ? before : await setOrganizationZone(em, caller.organizationId, input.timeZone);
    return { timeZone, now: isoWithOffset(services.now(), timeZone), changed: timeZone !== before };
  },
});
