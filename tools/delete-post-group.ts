import { z } from 'zod';
import { notFound } from '../src/errors.js';
import { defineTool } from './types.js';
import { deleteGroup } from './internal/posts.js';
import { confirmDeletion, groupSummary } from './internal/confirmation.js';
import { deleteGroupOnPlatform, deleteOnPlatformInput, deleteOnPlatformOf, onPlatformOutput } from './internal/platform-changes.js';
import { confirmInput, deletionOutput, idParam } from './shapes.js';

export const deletePostGroup = defineTool({
  name: 'deletePostGroup',
  title: 'Delete a post group',
  description:
    "Deletes every post of a group (postsListTool's group), cancelling their publishing; deleteOnPlatform and confirmation as deletePost.",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  // REST only: over MCP deletePost with any post of the group does the same (one tool, not two differing by the id's kind).
  mcp: false,
  input: z.object({ group: idParam.describe('The group of a post (postsListTool, herald://posts/{id})'), deleteOnPlatform: deleteOnPlatformInput, confirm: confirmInput }),
  output: deletionOutput.extend({ onPlatform: onPlatformOutput }),
  rest: {
    method: 'DELETE',
    path: '/posts/group/:group',
    toInput: ({ params, query, body }) => ({ group: params.group, deleteOnPlatform: deleteOnPlatformOf(query, body) }),
    toResponse: (output) => ({ id: output.id, ...(output.onPlatform ? { onPlatform: output.onPlatform } : {}) }),
  },
  handler: async (input, context) => {
    const { em, caller, services } = context;
    const onPlatform = input.deleteOnPlatform === true;
    const { summary, wouldDelete, count } = await groupSummary(em, caller.organizationId, input.group, { onPlatform });
    if (count === 0) throw notFound(`Post group ${input.group} not found.`, { hint: 'Use the `group` field of a post listed by GET /posts.' });
    const action = `${onPlatform ? 'deleteGroupOnPlatform' : 'deleteGroup'}:${input.group}`;
    const refused = await confirmDeletion(context, { action, tool: 'deletePostGroup', id: input.group, summary, wouldDelete, confirmed: input.confirm });
    if (refused) return refused;
    if (onPlatform) {
      const answer = await deleteGroupOnPlatform(context, em, input.group);
      context.log?.('notice', answer.onPlatform.message, { group: input.group });
      return { id: input.group, deleted: true, message: answer.onPlatform.message, onPlatform: answer.onPlatform };
    }
    const deleted = await deleteGroup(em, caller.organizationId, input.group, services.now());
    if (deleted === 0) throw notFound(`Post group ${input.group} not found.`, { hint: 'Use the `group` field of a post listed by GET /posts.' });
    context.log?.('notice', `Deleted ${count} post${count === 1 ? '' : 's'} of group ${input.group}.`, { group: input.group });
    return { id: input.group, deleted: true };
  },
});
