import { z } from 'zod';
import { defineTool } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { channelZone, organizationZone, zoneInput } from './internal/time-zones.js';
import { idParam } from './shapes.js';
import { recordChange } from './internal/audit.js';

const minute = z.number().int().min(0).max(1439);

export const setPostingTimes = defineTool({
  name: 'setPostingTimes',
  title: 'Set posting times',
  description:
    'Sets the daily posting times of a channel used by find-slot, as minutes after midnight in `timeZone` (an IANA zone such as "America/New_York"; when omitted, the channel\'s zone, else the organization\'s): ' +
    '[{time: 540}] with timeZone "America/New_York" is 09:00 New York time every day, before and after daylight-saving changes. ' +
    "The channel's own zone is its `timeZone` in integrationList.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  scope: 'channels:manage',
  input: z.object({
    id: idParam,
    postingTimes: z.array(z.object({ time: minute })).min(1, 'needs at least one time').max(48),
    timeZone: z.string().max(64).optional().describe("IANA zone the times are wall-clock times of; the channel's (else the organization's) when omitted"),
  }),
  output: z.object({ id: z.string(), postingTimes: z.array(z.object({ time: z.number() })), timeZone: z.string() }),
  rest: { method: 'PUT', path: '/integrations/:id/posting-times' },
  handler: async (input, { em, caller }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    const zone = input.timeZone === undefined ? channelZone(integration, await organizationZone(em, caller.organizationId)) : zoneInput(input.timeZone);
    integration.postingTimes = [...new Set(input.postingTimes.map((item) => item.time))].sort((a, b) => a - b);
    integration.postingTimesZone = zone;
    await em.flush();
    await recordChange(em, caller.organizationId, {
      action: 'channel.posting_times_changed',
      target: { kind: 'channel', id: integration.id },
      integrationId: integration.id,
      did: `changed the posting times of the channel "${integration.name}"`,
      changes: { postingTimes: integration.postingTimes, timeZone: zone },
    });
    return { id: integration.id, postingTimes: integration.postingTimes.map((time) => ({ time })), timeZone: zone };
  },
});
