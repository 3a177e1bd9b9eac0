import { z } from 'zod';
import { notFound } from '../src/errors.js';
import { defineTool } from './types.js';
import { deleteGroup } from './internal/posts.js';
import { idParam } from './shapes.js';

export const deletePostGroup = defineTool({
  name: 'deletePostGroup',
  title: 'Delete a post group',
  description: 'Deletes every post of a group and cancels their publishing.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({ group: idParam }),
  output: z.object({ id: z.string() }),
  rest: { method: 'DELETE', path: '/posts/group/:group' },
  handler: async (input, { em, caller, services }) => {
    const deleted = await deleteGroup(em, caller.organizationId, input.group, services.now());
    if (deleted === 0) throw notFound(`Post group ${input.group} not found.`, { hint: 'Use the `group` field of a post listed by GET /posts.' });
    return { id: input.group };
  },
});
