import { z } from 'zod';
import { defineTool } from './types.js';
import { deleteGroup, findPost } from './internal/posts.js';
import { confirmDeletion, groupSummary } from './internal/confirmation.js';
import { deleteGroupOnPlatform, deleteOnPlatformInput, deleteOnPlatformOf, onPlatformOutput } from './internal/platform-changes.js';
import { confirmInput, deletionOutput, idParam } from './shapes.js';

export const deletePost = defineTool({
  name: 'deletePost',
  title: 'Delete a post',
  description:
    "Deletes the post and its group (its socialPost item: thread, comments), cancelling their publishing; deleteOnPlatform also deletes what went out. The first call answers what would be deleted: show the user, then call again with confirm: true.",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  mcp: true,
  input: z.object({ id: idParam.describe('Post id'), deleteOnPlatform: deleteOnPlatformInput, confirm: confirmInput }),
  output: deletionOutput.extend({ onPlatform: onPlatformOutput }),
  rest: {
    method: 'DELETE',
    path: '/posts/:id',
    toInput: ({ params, query, body }) => ({ id: params.id, deleteOnPlatform: deleteOnPlatformOf(query, body) }),
    toResponse: (output) => ({ id: output.id, ...(output.onPlatform ? { onPlatform: output.onPlatform } : {}) }),
  },
  handler: async (input, context) => {
    const { em, caller, services } = context;
    const post = await findPost(em, caller.organizationId, input.id);
    const onPlatform = input.deleteOnPlatform === true;
    const { summary, wouldDelete, count } = await groupSummary(em, caller.organizationId, post.group, { onPlatform });
    const action = `${onPlatform ? 'deleteGroupOnPlatform' : 'deleteGroup'}:${post.group}`;
    const refused = await confirmDeletion(context, { action, tool: 'deletePost', id: post.id, summary, wouldDelete, confirmed: input.confirm });
    if (refused) return refused;
    if (onPlatform) {
      const answer = await deleteGroupOnPlatform(context, em, post.group);
      context.log?.('notice', answer.onPlatform.message, { group: post.group });
      return { id: post.id, deleted: true, message: answer.onPlatform.message, onPlatform: answer.onPlatform };
    }
    await deleteGroup(em, caller.organizationId, post.group, services.now());
    context.log?.('notice', `Deleted ${count} post${count === 1 ? '' : 's'} of group ${post.group}.`, { group: post.group });
    return { id: post.id, deleted: true };
  },
});
