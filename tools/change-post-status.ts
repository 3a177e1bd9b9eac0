import { z } from 'zod';
import { defineTool } from './types.js';
import { changeStatus, findPost } from './internal/posts.js';
import { idParam } from './shapes.js';

export const changePostStatus = defineTool({
  name: 'changePostStatus',
  title: 'Draft or schedule a post',
  description:
    'status "draft" stops a queued post from publishing; "schedule" queues a draft (or a failed post, to retry) for its stored date, or at once when the date has passed. The date is unchanged. A published post cannot be re-queued (conflict); one published only in part (publishStatus partial) is resumed at the first item that did not go out.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({ id: idParam, status: z.enum(['draft', 'schedule'], { message: 'must be "draft" or "schedule"' }) }),
  output: z.object({ id: z.string(), state: z.enum(['DRAFT', 'QUEUE']) }),
  rest: { method: 'PUT', path: '/posts/:id/status' },
  handler: async (input, { em, caller }) => {
    // The spec answers 400 (not 404) for an unknown post on this route.
    const post = await findPost(em, caller.organizationId, input.id, 400);
    const state = await changeStatus(em, post, input.status);
    return { id: post.id, state: state as 'DRAFT' | 'QUEUE' };
  },
});
