import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listIntegrations, recordsOf } from './internal/integrations.js';
import { channelHealthSchema, withHealth } from './internal/channel-health.js';
import { integrationRecordSchema, wrapped } from './shapes.js';

export const integrationList = defineTool({
  name: 'integrationList',
  title: 'List channels',
  description:
    "The organization's channels: id (for every other tool), name, platform, customer, timeZone (where its people read local times), health.state (active, token_expiring, needs_reconnection, disabled). Call it first.",
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
