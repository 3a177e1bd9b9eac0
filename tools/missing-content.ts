import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { findIntegration, providerFailure, providerOf, withChannel } from './internal/integrations.js';
import { findPost } from './internal/posts.js';
import { idParam, wrapped } from './shapes.js';

export const missingContent = defineTool({
  name: 'missingContent',
  title: 'Candidates for a missing release id',
  description: "For a post whose releaseId is \"missing\", lists the channel's recent content [{id, url}] to pick from; empty when the platform cannot list it.",
  annotations: { ...readOnly, openWorldHint: true },
  mcp: false,
  input: z.object({ id: idParam }),
  output: wrapped(z.array(z.object({ id: z.string(), url: z.string() }))),
  rest: { method: 'GET', path: '/posts/:id/missing', toResponse: (output) => output.output },
  handler: async (input, { em, caller, services }) => {
    const post = await findPost(em, caller.organizationId, input.id);
    if (post.releaseId !== 'missing') return { output: [] };
    const integration = await findIntegration(em, caller.organizationId, post.integrationId);
    const provider = providerOf(integration);
    if (!provider.recent) return { output: [] };
    try {
      return { output: await withChannel(services, em, integration, {}, (context) => provider.recent!(context)) };
    } catch (error) {
      throw providerFailure(provider, error);
    }
  },
});
