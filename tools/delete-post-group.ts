import { z } from 'zod';
import { notFound } from '../src/errors.js';
import { defineTool } from './types.js';
import { deleteGroup } from './internal/posts.js';
import { confirmDeletion, groupSummary } from './internal/confirmation.js';
import { confirmInput, deletionOutput, idParam } from './shapes.js';

export const deletePostGroup = defineTool({
  name: 'deletePostGroup',
  title: 'Delete a post group',
  description:
    'Deletes every post of a group (the `group` of a post: the posts created together) and cancels their publishing. ' +
    'Over MCP the user confirms first (an elicitation, or a first call that answers what would be deleted and a second one with confirm: true).',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({ group: idParam.describe('The group of a post (postsListTool, herald://posts/{id})'), confirm: confirmInput }),
  output: deletionOutput,
  rest: { method: 'DELETE', path: '/posts/group/:group', toInput: ({ params }) => ({ group: params.group }), toResponse: (output) => ({ id: output.id }) },
  handler: async (input, context) => {
    const { em, caller, services } = context;
    const { summary, wouldDelete, count } = await groupSummary(em, caller.organizationId, input.group);
    if (count === 0) throw notFound(`Post group ${input.group} not found.`, { hint: 'Use the `group` field of a post listed by GET /posts.' });
    const refused = await confirmDeletion(context, { action: `deleteGroup:${input.group}`, tool: 'deletePostGroup', id: input.group, summary, wouldDelete, confirmed: input.confirm });
    if (refused) return refused;
    const deleted = await deleteGroup(em, caller.organizationId, input.group, services.now());
    if (deleted === 0) throw notFound(`Post group ${input.group} not found.`, { hint: 'Use the `group` field of a post listed by GET /posts.' });
    context.log?.('notice', `Deleted ${count} post${count === 1 ? '' : 's'} of group ${input.group}.`, { group: input.group });
    return { id: input.group, deleted: true };
  },
});
