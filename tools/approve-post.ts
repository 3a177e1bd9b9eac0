import { z } from 'zod';
import { defineTool, type ToolContext } from './types.js';
import { approvalSettings, approvePost, credentialRef, refuseAgent, rejectPost, setApprovalSettings, type Decider } from './internal/approval.js';
import { idParam } from './shapes.js';

const decisionSchema = z.object({
  id: z.string(),
  state: z.enum(['QUEUE', 'DRAFT', 'PUBLISHED']).describe('PUBLISHED: the decision was on an edit or deletion of a published post on its platform'),
  platformChange: z.enum(['edit', 'delete']).optional().describe('Which change of what went out was decided, when it was one'),
  publishAt: z.string().nullable().describe('When the approved post will be published (now when its date had passed)'),
  approval: z.record(z.string(), z.unknown()),
});

/** Who decides, for the post's record, the notification and the check that it did not create the post. */
function decider(context: ToolContext): Decider {
  const { caller } = context;
  if (caller.credentialKind === 'api_key') return { id: credentialRef(caller), name: caller.name ? `The API key "${caller.name}"` : 'An API key', caller };
  return { id: caller.credentialId, name: 'An owner', caller };
}

export const approvePostTool = defineTool({
  name: 'approvePost',
  title: 'Approve a post',
  description:
    'POST /posts/{id}/approve: approves a post waiting for approval (AWAITING_APPROVAL). It keeps its date, or is published at once when the date has passed (a notification says so). Needs the approve scope; no credential approves a post it created.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  mcp: false,
  scope: 'approve',
  input: z.object({ id: idParam }),
  output: decisionSchema,
  rest: { method: 'POST', path: '/posts/:id/approve', toInput: ({ params }) => ({ id: params.id }) },
  handler: async (input, context) => {
    const decision = await approvePost(context.services, context.em, context.caller.organizationId, input.id, decider(context));
    return decision;
  },
});

export const rejectPostTool = defineTool({
  name: 'rejectPost',
  title: 'Reject a post',
  description:
    'POST /posts/{id}/reject {reason}: rejects a post waiting for approval. It becomes a draft; the reason is kept on it (approval.reason) and in a notification, for the agent to read and fix. Needs the approve scope; no credential rejects a post it created.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  mcp: false,
  scope: 'approve',
  input: z.object({ id: idParam, reason: z.string().trim().min(1, 'is required: say what is wrong').max(1000) }),
  output: decisionSchema,
  rest: { method: 'POST', path: '/posts/:id/reject' },
  handler: async (input, context) => {
    const decision = await rejectPost(context.services, context.em, context.caller.organizationId, input.id, input.reason, decider(context));
    return decision;
  },
});

const settingsSchema = z.object({
  agents: z.boolean().describe('Posts created by agents (MCP sessions, OAuth apps on REST) wait for approval'),
  apps: z.array(z.object({ appId: z.string(), name: z.string(), required: z.boolean().nullable().describe('true: always wait; false: never; null: the organization\'s rule') })),
});

export const approvalSettingsTool = defineTool({
  name: 'approvalSettings',
  title: 'Approval gate settings',
  description: 'GET /approval-settings: whether posts created by agents wait for an owner\'s approval, and each OAuth app\'s override.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({}),
  output: settingsSchema,
  rest: { method: 'GET', path: '/approval-settings' },
  handler: async (_input, context) => approvalSettings(context.em, context.caller.organizationId),
});

export const setApprovalSettingsTool = defineTool({
  name: 'setApprovalSettings',
  title: 'Change the approval gate',
  description:
    'PUT /approval-settings {agents?, apps?: [{appId, required: true|false|null}]}: turns the approval gate for agents on or off, and overrides it per OAuth app (null removes the override). Needs the organization:manage scope (an owner key); agents cannot change it. Each API key has its own override (PUT /keys/{id} approvalRequired).',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  scope: 'organization:manage',
  input: z.object({ agents: z.boolean().optional(), apps: z.array(z.object({ appId: z.string().min(1), required: z.boolean().nullable() })).max(100).optional() }),
  output: settingsSchema,
  rest: { method: 'PUT', path: '/approval-settings' },
  handler: async (input, context) => {
    refuseAgent(context, 'change the approval gate');
    return setApprovalSettings(context.em, context.caller.organizationId, input);
  },
});
