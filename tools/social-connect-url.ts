import { createHash } from 'node:crypto';
import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { randomToken } from '../src/lib/crypto.js';
import { findProvider } from '../providers/index.js';
import { defineTool } from './types.js';
import { findIntegration, providerEndpoints } from './internal/integrations.js';
import { redirectUri, type ConnectState } from './internal/channel-connect.js';


export const socialConnectUrl = defineTool({
  name: 'socialConnectUrl',
  title: 'OAuth URL to connect a channel',
  description: 'Answers {url}: the platform authorization page to send the user to. Only OAuth platforms that are configured on this Herald; credential platforms connect with POST /integrations/{identifier}/connect.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  mcp: false,
  scope: 'channels:manage',
  input: z.object({ integration: z.string().trim().min(1), refresh: z.string().optional() }),
  output: z.object({ url: z.string() }),
  rest: { method: 'GET', path: '/social/:integration', toInput: ({ params, query }) => ({ integration: params.integration, refresh: query.refresh }) },
  handler: async (input, { em, caller, services }) => {
    const provider = findProvider(input.integration);
    if (!provider) throw invalidInput('Integration not allowed', { hint: `"${input.integration}" is not a platform identifier.` });
    if (provider.auth.kind === 'credentials' || !provider.authorizeUrl) {
      throw invalidInput(`${provider.name} does not connect through OAuth.`, {
        hint: `Connect it with its credentials: POST /integrations/${provider.identifier}/connect, or the form in the console.`,
      });
    }
    const client = services.config.oauthClients[provider.identifier];
    if (!client) {
      const prefix = provider.identifier.toUpperCase().replace(/-/g, '_');
      throw invalidInput(`${provider.name} is not configured on this Herald.`, { hint: `The operator sets ${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET from the platform's developer app.` });
    }
    if (input.refresh) await findIntegration(em, caller.organizationId, input.refresh);
    const codeVerifier = randomToken(48);
    const state: ConnectState = {
      organizationId: caller.organizationId,
      provider: provider.identifier,
      codeVerifier,
      refresh: input.refresh,
      expiresAt: services.now().getTime() + 60 * 60 * 1000,
    };
    const url = provider.authorizeUrl({
      clientId: client.clientId,
      redirectUri: redirectUri(services, provider),
      state: services.secrets.sealJson(state),
      codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      endpoints: providerEndpoints(services, provider),
    });
    return { url };
  },
});
