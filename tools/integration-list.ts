import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listIntegrations, recordsOf } from './internal/integrations.js';
import { channelHealthSchema, withHealth } from './internal/channel-health.js';
import { integrationRecordSchema, wrapped } from './shapes.js';

export const integrationList = defineTool({
  name: 'integrationList',
  title: 'List channels',
  description:
    'Lists the connected social channels (integrations) of this organization: id, name, picture, platform identifier, group (customer) when set, and timeZone ' +
    "(the channel's IANA zone: where a person means 'Tuesday 9:00 in the client's time'; pass it to findSlotTool and setPostingTimes). " +
    'Call this first: every other channel tool needs an id from here. Pass `group` (an id from groupList) to see only the channels of one group. ' +
    '`health.state` says whether a channel can publish: active, token_expiring (reconnect it before health.tokenExpiresAt), needs_reconnection (health.reason says why), or disabled.',
  annotations: readOnly,
  mcp: true,
  input: z.object({ group: z.string().optional().describe('Group (customer) id from groupList; omit for all channels') }),
  output: wrapped(z.array(integrationRecordSchema.extend({ health: channelHealthSchema }))),
  rest: { method: 'GET', path: '/integrations', toInput: ({ query }) => ({ group: query.group }), toResponse: (output) => output.output },
  handler: async (input, { em, caller, services }) => {
    const integrations = await listIntegrations(em, caller.organizationId, input.group);
    return { output: await withHealth(services, em, integrations, await recordsOf(em, caller.organizationId, integrations)) };
  },
});
