import { z } from 'zod';
import { invalidInput, notSupported } from '../src/errors.js';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import { findProvider } from '../providers/index.js';
import { defineTool } from './types.js';
import { connectContext, connectedChannel, providerEndpoints, saveConnectedAccount, toIntegrationRecord } from './internal/integrations.js';
import { connectUrlValue } from './internal/channel-connect.js';
import { integrationRecordSchema } from './shapes.js';

export const connectChannel = defineTool({
  name: 'connectChannel',
  title: 'Connect a credential channel',
  description:
    "Connects a channel of a credential platform (bluesky, mastodon, telegram...) with the fields of the provider's connect form, checked against the platform. Connecting the same account again updates its credentials.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  mcp: false,
  scope: 'channels:manage',
  acceptsIdempotencyKey: true,
  input: z.object({ identifier: z.string().trim().min(1), fields: z.record(z.string(), z.string()) }),
  output: integrationRecordSchema.extend({
    updated: z.boolean().describe('True when this account was connected already: its channel was updated (new credentials), no second channel was made'),
    message: z.string().describe('What happened, in words for the person'),
  }),
  rest: {
    method: 'POST',
    path: '/integrations/:identifier/connect',
    toInput: ({ params, body }) => ({ identifier: params.identifier, fields: body }),
    body: z.record(z.string(), z.string()).describe("The fields of the platform's connect form (e.g. Bluesky: identifier, appPassword)"),
  },
  handler: async (input, { em, caller, services }) => {
    const provider = findProvider(input.identifier);
    if (!provider) throw invalidInput(`Unknown platform "${input.identifier}".`);
    if (provider.auth.kind !== 'credentials') {
      throw invalidInput(`${provider.name} connects through OAuth.`, { hint: `GET /social/${provider.identifier} gives the authorization URL.` });
    }
    if (!provider.connect) throw notSupported(`Connecting ${provider.name} channels is not built yet in this Herald.`);
    const fields = provider.auth.fields ?? [];
    const endpoints = providerEndpoints(services, provider);
    const values: Record<string, string> = {};
    for (const field of fields) {
      // A field backed by an endpoint stays empty when not typed: the provider then uses the deployment's endpoint.
      const value = input.fields[field.key]?.trim() || (field.endpoint ? undefined : field.defaultValue);
      if (field.required && !value && !(field.endpoint && endpoints[field.endpoint])) {
        throw invalidInput(`Missing field "${field.key}" (${field.label}).`, { hint: `${provider.name} needs: ${fields.map((item) => item.key).join(', ')}.` });
      }
      if (value) values[field.key] = field.type === 'url' ? connectUrlValue(provider, field, value) : value;
    }
    let account;
    try {
      account = await provider.connect(connectContext(services, provider), values);
    } catch (error) {
      if (error instanceof PlatformHttpError) {
        throw invalidInput(`${provider.name} refused the connection: ${error.message}`, { hint: 'Check the credentials and the instance or chat, then try again.' });
      }
      throw error;
    }
    const updated = (await connectedChannel(em, caller.organizationId, provider, account.internalId)) !== null;
    const integration = await saveConnectedAccount(em, services, caller.organizationId, provider, account);
    const message = updated
      ? `This ${provider.name} account was connected already: its channel "${integration.name}" now uses the new credentials (no second channel was made).`
      : `Connected the ${provider.name} account "${integration.name}" as a new channel.`;
    return { ...toIntegrationRecord(integration), updated, message };
  },
});
