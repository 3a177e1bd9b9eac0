import { z } from 'zod';
import { defineTool } from './types.js';
import { deleteGroup, findPost } from './internal/posts.js';
import { idParam } from './shapes.js';

export const deletePost = defineTool({
  name: 'deletePost',
  title: 'Delete a post',
  description: 'Deletes the post and every post of its group (created together), and cancels their publishing. Nothing is deleted on the platforms.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({ id: idParam }),
  output: z.object({ id: z.string() }),
  rest: { method: 'DELETE', path: '/posts/:id' },
  handler: async (input, { em, caller, services }) => {
    const post = await findPost(em, caller.organizationId, input.id);
    await deleteGroup(em, caller.organizationId, post.group, services.now());
    return { id: post.id };
  },
});
