import { z } from 'zod';
import { PostSchema } from '../src/db/entities.js';
import { defineTool } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { cancelPublish } from './internal/queue.js';
import { idParam } from './shapes.js';

export const deleteIntegration = defineTool({
  name: 'deleteIntegration',
  title: 'Delete a channel',
  description: 'Deletes a channel and its posts that are not published yet (their jobs are cancelled). Published posts stay on the platform.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  mcp: false,
  input: z.object({ id: idParam }),
  output: z.object({ id: z.string() }),
  rest: { method: 'DELETE', path: '/integrations/:id' },
  handler: async (input, { em, caller, services }) => {
    const integration = await findIntegration(em, caller.organizationId, input.id);
    const now = services.now();
    await em.transactional(async (transaction) => {
      const posts = await transaction.find(PostSchema, { organizationId: caller.organizationId, integrationId: integration.id, deletedAt: null, state: { $ne: 'PUBLISHED' } });
      for (const post of posts) {
        post.deletedAt = now;
        if (post.position === 0) await cancelPublish(transaction, post.id);
      }
      transaction.merge(integration).deletedAt = now;
      await transaction.flush();
    });
    return { id: integration.id };
  },
});
