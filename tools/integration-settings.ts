import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { findIntegration, providerOf } from './internal/integrations.js';
import { settingsRecord, settingsRecordSchema } from './internal/settings-record.js';
import { idParam, wrapped } from './shapes.js';

export const integrationSettings = defineTool({
  name: 'integrationSettings',
  title: 'Channel rules and settings',
  description: "The integrationSchema record (rules, maxLength, settings schema, helper tools) of one connected channel, with the channel's own premium status.",
  annotations: readOnly,
  mcp: false,
  input: z.object({ id: idParam }),
  output: wrapped(settingsRecordSchema),
  rest: { method: 'GET', path: '/integration-settings/:id' },
  handler: async (input, { em, caller }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    return { output: settingsRecord(providerOf(integration), integration.additionalSettings.premium === true, integration.additionalSettings) };
  },
});
