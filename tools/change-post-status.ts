import { z } from 'zod';
import { conflict } from '../src/errors.js';
import { defineTool } from './types.js';
import { changeStatus, findPost, rootOf } from './internal/posts.js';
import { approvalRequest } from './internal/approval.js';
import { announcePostChange } from './internal/announce.js';
import { idParam } from './shapes.js';

export const changePostStatus = defineTool({
  name: 'changePostStatus',
  title: 'Draft or schedule a post',
  description:
    "draft stops a queued post; schedule queues a draft or failed post (a retry) for its stored date, at once when past. A published post cannot be re-queued; a partial one resumes where it stopped. Under the approval gate: AWAITING_APPROVAL.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({
    id: idParam.describe('Post id'),
    status: z.enum(['draft', 'schedule'], { message: 'must be "draft" or "schedule"' }),
    allowDuplicate: z.boolean().optional().describe('true only when repeating the text of a recent post on the same channel is intended'),
  }),
  output: z.object({ id: z.string(), state: z.enum(['DRAFT', 'QUEUE', 'AWAITING_APPROVAL']) }),
  rest: { method: 'PUT', path: '/posts/:id/status' },
  handler: async (input, context) => {
    const { em, caller } = context;
    // The spec answers 400 (not 404) for an unknown post on this route.
    const post = await findPost(em, caller.organizationId, input.id, 400);
    const root = await rootOf(em, post);
    let awaitApproval;
    if (input.status === 'schedule') {
      if (root.state === 'AWAITING_APPROVAL') {
        throw conflict(`Post ${root.id} is waiting for approval.`, { hint: 'An owner approves it (POST /posts/{id}/approve or the console); it cannot be scheduled around the gate.' });
      }
      // An approval stays good for a retry of the same content; anything else an agent schedules waits for a new one.
      if (root.approval?.decision !== 'approved') awaitApproval = await approvalRequest(em, context);
    }
    const { services } = context;
    const state = await changeStatus(em, root, input.status, {
      awaitApproval,
      duplicateGuard: { now: services.now(), windowDays: services.config.duplicateWindowDays, allowDuplicate: input.allowDuplicate },
    });
    await announcePostChange(context.services, root.id);
    context.log?.(state === 'AWAITING_APPROVAL' ? 'notice' : 'info', state === 'AWAITING_APPROVAL' ? `Post ${root.id} waits for an owner's approval.` : `Post ${root.id} is now ${state}.`, { postId: root.id, state });
    return { id: post.id, state: state as 'DRAFT' | 'QUEUE' | 'AWAITING_APPROVAL' };
  },
});
