import { z } from 'zod';
import { CustomerSchema } from '../src/db/entities.js';
import { defineTool, readOnly } from './types.js';
import { wrapped } from './shapes.js';
import { visibleChannelIds } from './internal/visibility.js';
import { listIntegrations } from './internal/integrations.js';

export const groupList = defineTool({
  name: 'groupList',
  title: 'List groups',
  description:
    "The groups (customers) channels belong to, as {id, name}; pass an id to integrationList to see that group's channels.",
  annotations: readOnly,
  mcp: true,
  input: z.object({}),
  output: wrapped(z.array(z.object({ id: z.string(), name: z.string() }))),
  rest: { method: 'GET', path: '/groups', toInput: () => ({}), toResponse: (output) => output.output },
  handler: async (_input, { em, caller }) => {
    const customers = await em.find(CustomerSchema, { organizationId: caller.organizationId }, { orderBy: { name: 'asc', id: 'asc' } });
    // A key limited to channels sees only the groups of its channels.
    const visible = visibleChannelIds();
    if (visible) {
      const mine = new Set((await listIntegrations(em, caller.organizationId)).map((integration) => integration.customerId));
      return { output: customers.filter((customer) => mine.has(customer.id)).map((customer) => ({ id: customer.id, name: customer.name })) };
    }
    return { output: customers.map((customer) => ({ id: customer.id, name: customer.name })) };
  },
});
