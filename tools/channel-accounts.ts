import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { channelAccounts as listAccounts, chooseChannelAccount as choose } from './internal/channel-connect.js';
import { toIntegrationRecord } from './internal/integrations.js';
import { idParam, integrationRecordSchema, wrapped } from './shapes.js';

export const channelAccounts = defineTool({
  name: 'channelAccounts',
  title: 'Pages or accounts a channel can publish as',
  description:
    'For a channel waiting for a page/account choice after OAuth (Facebook page, Instagram business account, LinkedIn organization...), lists the choices [{id, name, picture}]. Choose one with POST /integrations/{id}/accounts.',
  annotations: { ...readOnly, openWorldHint: true },
  mcp: false,
  input: z.object({ id: idParam }),
  output: wrapped(z.array(z.object({ id: z.string(), name: z.string(), picture: z.string().optional() }))),
  rest: { method: 'GET', path: '/integrations/:id/accounts', toResponse: (output) => output.output },
  handler: async (input, { em, caller, services }) => ({ output: await listAccounts(services, em, caller.organizationId, input.id) }),
});

export const chooseChannelAccount = defineTool({
  name: 'chooseChannelAccount',
  title: 'Choose the page or account of a channel',
  description: "Makes the channel publish as the chosen page/account (an id from GET /integrations/{id}/accounts) with that page's own token; the channel becomes active.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  mcp: false,
  scope: 'channels:manage',
  acceptsIdempotencyKey: true,
  input: z.object({ id: idParam, account: idParam.describe('An id from GET /integrations/{id}/accounts') }),
  output: integrationRecordSchema,
  rest: {
    method: 'POST',
    path: '/integrations/:id/accounts',
    toInput: ({ params, body }) => ({ id: params.id, account: (body as { id?: unknown } | undefined)?.id }),
    body: z.object({ id: z.string().describe('An id from GET /integrations/{id}/accounts') }),
  },
  handler: async (input, { em, caller, services }) => toIntegrationRecord(await choose(services, em, caller.organizationId, input.id, input.account)),
});
