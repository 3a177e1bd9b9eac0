import { z } from 'zod';
import { PostSchema } from '../src/db/entities.js';
import { defineTool } from './types.js';
import { findIntegration } from './internal/integrations.js';
import { cancelPublish } from './internal/queue.js';
import { confirmDeletion } from './internal/confirmation.js';
import { platformName } from './internal/channel-health.js';
import { confirmInput, deletionOutput, idParam } from './shapes.js';
import { recordChange } from './internal/audit.js';

export const deleteIntegration = defineTool({
  name: 'deleteIntegration',
  title: 'Delete a channel',
  description:
    'Deletes a channel and its posts that are not published yet (their jobs are cancelled). Published posts stay on the platform. ' +
    'Over MCP the user confirms first: your client asks them when it supports elicitation; otherwise the first call deletes nothing and answers what would be deleted, ' +
    'and a second call with confirm: true (after the user agreed) deletes.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  mcp: true,
  scope: 'channels:manage',
  input: z.object({
    id: idParam.describe('Channel id from integrationList'),
    confirm: confirmInput,
  }),
  output: deletionOutput,
  rest: { method: 'DELETE', path: '/integrations/:id', toInput: ({ params }) => ({ id: params.id }), toResponse: (output) => ({ id: output.id }) },
  handler: async (input, context) => {
    const { em, caller, services } = context;
    const integration = await findIntegration(em, caller.organizationId, input.id);
    const pending = await em.find(PostSchema, { organizationId: caller.organizationId, integrationId: integration.id, deletedAt: null, state: { $ne: 'PUBLISHED' }, position: 0 });
    const byState: Record<string, number> = {};
    for (const post of pending) byState[post.state] = (byState[post.state] ?? 0) + 1;
    const platform = platformName(integration);
    const counts = Object.entries(byState).map(([state, count]) => `${count} ${state.toLowerCase().replace('_', ' ')}`).join(', ');
    const refused = await confirmDeletion(context, {
      action: `deleteIntegration:${integration.id}`,
      tool: 'deleteIntegration',
      id: integration.id,
      summary:
        `Delete the channel "${integration.name}" (${platform}, ${integration.profile})? ` +
        (pending.length > 0 ? `Its ${pending.length} post${pending.length === 1 ? '' : 's'} not published yet (${counts}) will be deleted with it. ` : 'It has no unpublished posts. ') +
        `Published posts stay on ${platform}. This cannot be undone.`,
      wouldDelete: { channel: { id: integration.id, name: integration.name, platform: integration.providerIdentifier, profile: integration.profile }, unpublishedPosts: pending.length, byState },
      confirmed: input.confirm,
    });
    if (refused) return refused;
    const now = services.now();
    await em.transactional(async (transaction) => {
      const posts = await transaction.find(PostSchema, { organizationId: caller.organizationId, integrationId: integration.id, deletedAt: null, state: { $ne: 'PUBLISHED' } });
      for (const post of posts) {
        post.deletedAt = now;
        if (post.position === 0) await cancelPublish(transaction, post.id);
      }
      transaction.merge(integration).deletedAt = now;
      await transaction.flush();
      await recordChange(transaction, caller.organizationId, {
        action: 'channel.removed',
        target: { kind: 'channel', id: integration.id },
        integrationId: integration.id,
        did: `removed the channel "${integration.name}" (${platform}) and ${posts.filter((post) => post.position === 0).length} unpublished post(s)`,
        changes: { name: integration.name, platform: integration.providerIdentifier, profile: integration.profile, unpublishedPosts: byState },
      });
    });
    context.log?.('notice', `Deleted the channel ${integration.name} (${platform}) and ${pending.length} unpublished post${pending.length === 1 ? '' : 's'}.`, { id: integration.id });
    return { id: integration.id, deleted: true };
  },
});
