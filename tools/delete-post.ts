import { z } from 'zod';
import { defineTool } from './types.js';
import { deleteGroup, findPost } from './internal/posts.js';
import { confirmDeletion, groupSummary } from './internal/confirmation.js';
import { confirmInput, deletionOutput, idParam } from './shapes.js';

export const deletePost = defineTool({
  name: 'deletePost',
  title: 'Delete a post',
  description:
    'Deletes the post and every post of its group (created together), and cancels their publishing. Nothing is deleted on the platforms. ' +
    'Over MCP the user confirms first (an elicitation, or a first call that answers what would be deleted and a second one with confirm: true).',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({ id: idParam.describe('Post id'), confirm: confirmInput }),
  output: deletionOutput,
  rest: { method: 'DELETE', path: '/posts/:id', toInput: ({ params }) => ({ id: params.id }), toResponse: (output) => ({ id: output.id }) },
  handler: async (input, context) => {
    const { em, caller, services } = context;
    const post = await findPost(em, caller.organizationId, input.id);
    const { summary, wouldDelete, count } = await groupSummary(em, caller.organizationId, post.group);
    const refused = await confirmDeletion(context, { action: `deleteGroup:${post.group}`, tool: 'deletePost', id: post.id, summary, wouldDelete, confirmed: input.confirm });
    if (refused) return refused;
    await deleteGroup(em, caller.organizationId, post.group, services.now());
    context.log?.('notice', `Deleted ${count} post${count === 1 ? '' : 's'} of group ${post.group}.`, { group: post.group });
    return { id: post.id, deleted: true };
  },
});
