import { z } from 'zod';
import { notFound, notSupported } from '../src/errors.js';
import { defineTool } from './types.js';
import { findIntegration, providerFailure, providerOf, withChannel } from './internal/integrations.js';
import { wrapped } from './shapes.js';

export const triggerTool = defineTool({
  name: 'triggerTool',
  title: 'Run a channel helper',
  description:
    "Runs a channel helper from integrationSchema's tools (e.g. listChannels on Discord, getFlairs on Reddit) to find ids for settings: dataSchema is its inputs as [{key, value}] ([] for none).",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: true,
  input: z.object({
    integrationId: z.string().min(1).describe('Channel id from integrationList'),
    methodName: z.string().min(1).describe("From integrationSchema's tools"),
    dataSchema: z.array(z.object({ key: z.string(), value: z.string() })),
  }),
  output: wrapped(z.unknown()),
  rest: {
    method: 'POST',
    path: '/integration-trigger/:id',
    toInput: ({ params, body }) => {
      const request = (body ?? {}) as { methodName?: unknown; data?: unknown };
      const data = request.data && typeof request.data === 'object' ? (request.data as Record<string, unknown>) : {};
      return { integrationId: params.id, methodName: request.methodName, dataSchema: Object.entries(data).map(([key, value]) => ({ key, value })) };
    },
    body: z.object({ methodName: z.string().describe('A methodName from the settings record\'s tools'), data: z.record(z.string(), z.string()).optional() }),
  },
  handler: async (input, { em, caller, services }) => {
    const integration = await findIntegration(em, caller.organizationId, input.integrationId);
    const provider = providerOf(integration);
    const tool = provider.tools.find((candidate) => candidate.methodName === input.methodName);
    if (!tool) {
      const known = provider.tools.map((candidate) => candidate.methodName);
      throw notFound(`Method "${input.methodName}" not found for this ${provider.name} channel.`, {
        hint: known.length ? `Available methods: ${known.join(', ')}.` : `${provider.name} has no helper methods.`,
      });
    }
    if (!tool.run) throw notSupported(`The ${provider.name} helper "${tool.methodName}" is not built yet in this Herald.`);
    const data = Object.fromEntries(input.dataSchema.map((pair) => [pair.key, pair.value]));
    try {
      return { output: await withChannel(services, em, integration, {}, (context) => tool.run!(context, data)) };
    } catch (error) {
      throw providerFailure(provider, error);
    }
  },
});
