import { z } from 'zod';
import { defineTool } from './types.js';
import { findPost, setReleaseId as linkReleaseId } from './internal/posts.js';
import { idParam } from './shapes.js';

export const setReleaseId = defineTool({
  name: 'setReleaseId',
  title: 'Link a post to its published content',
  description: 'For a post whose releaseId is "missing", stores the platform content id picked from GET /posts/{id}/missing; analytics then work for it.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({ id: idParam, releaseId: z.string().trim().min(1, 'is required').max(500) }),
  output: z.object({ id: z.string(), releaseId: z.string() }),
  rest: { method: 'PUT', path: '/posts/:id/release-id' },
  handler: async (input, { em, caller }) => {
    const post = await linkReleaseId(em, await findPost(em, caller.organizationId, input.id), input.releaseId);
    return { id: post.id, releaseId: post.releaseId! };
  },
});
