// Customer preview links (REST /preview-links, the console's Preview links page): make one (its URL answered once), list
// them with their last use, read what was done through one, revoke one. Needs the approve scope: a link may carry the
// power to approve, and shows posts to someone outside the organization.
import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { defineTool, readOnly } from './types.js';
import { idParam, utcDateTime, wrapped } from './shapes.js';
import { parseInput } from './runner.js';
import { createPreviewLink, findPreviewLink, linkFeedback, listPreviewLinks, MAX_LINK_DAYS, previewLinkRecord, refuseChannelLimited, revokePreviewLink } from './internal/preview-links.js';

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const linkSchema = z.object({
  id: z.string(),
  name: z.string(),
  channels: z.array(z.string()).nullable().describe('The channels whose posts it shows (null: a customer\'s channels)'),
  customer: z.object({ id: z.string(), name: z.string() }).nullable(),
  from: z.string(),
  to: z.string(),
  expiresAt: z.string(),
  canApprove: z.boolean(),
  state: z.enum(['active', 'expired', 'revoked']),
  createdAt: z.string(),
  createdBy: z.string(),
  lastUsedAt: z.string().nullable().describe('When the link was last opened or used (to the minute)'),
  revokedAt: z.string().nullable(),
  feedback: z.number().describe('Comments, approvals and requests for changes made through it'),
});

export const createPreviewLinkTool = defineTool({
  name: 'createPreviewLink',
  title: 'Make a customer preview link',
  description:
    `POST /preview-links {name, channels? | customer?, from, to, expiresAt, canApprove?}: a link (no account needed) showing the scheduled and waiting posts of the channels (or of the customer's channels) dated from \`from\` to \`to\`, as each platform will show them; whoever holds it comments or asks for changes, and approves waiting posts when canApprove. It expires at expiresAt (at most ${MAX_LINK_DAYS} days). The url is in this answer only.`,
  annotations: writes,
  mcp: false,
  scope: 'approve',
  // No Idempotency-Key: a replay would have to keep the URL, and the token is kept only as its hash.
  input: z.object({
    name: z.string().trim().min(1, 'is required: who the link is for').max(100),
    channels: z.array(idParam).max(100).optional().describe('Channel ids whose posts it shows'),
    customer: idParam.optional().describe('A customer id: all its channels, now and later'),
    from: utcDateTime,
    to: utcDateTime,
    expiresAt: utcDateTime,
    canApprove: z.boolean().default(false).describe('Whoever holds the link may approve posts waiting for approval, or send them back to draft'),
  }),
  output: linkSchema.extend({ url: z.string().describe('The link to send, shown only in this answer') }),
  rest: { method: 'POST', path: '/preview-links', status: 201 },
  handler: async (input, { em, caller, services }) => {
    refuseChannelLimited(caller);
    const { link, url } = await createPreviewLink(services, em, caller, {
      ...input,
      from: new Date(input.from),
      to: new Date(input.to),
      expiresAt: new Date(input.expiresAt),
    });
    return { ...link, url };
  },
});

export const listPreviewLinksTool = defineTool({
  name: 'listPreviewLinks',
  title: 'List customer preview links',
  description: 'GET /preview-links: the organization\'s preview links, newest first, with their state and last use (never their URL).',
  annotations: readOnly,
  mcp: false,
  scope: 'approve',
  input: z.object({}),
  output: wrapped(z.array(linkSchema)),
  rest: { method: 'GET', path: '/preview-links', toInput: () => ({}), toResponse: (output) => output.output },
  handler: async (_input, { em, caller, services }) => {
    refuseChannelLimited(caller);
    return { output: await listPreviewLinks(services, em, caller.organizationId) };
  },
});

export const previewLinkActivityTool = defineTool({
  name: 'previewLinkActivity',
  title: 'What was done through a preview link',
  description: 'GET /preview-links/{id}/activity: the link, and its comments, approvals and requests for changes, newest first, each with the post it is about.',
  annotations: readOnly,
  mcp: false,
  scope: 'approve',
  input: z.object({ id: idParam }),
  output: z.object({
    link: linkSchema,
    activity: z.array(
      z.object({
        id: z.string(),
        postId: z.string(),
        kind: z.enum(['comment', 'approved', 'changes_requested']),
        text: z.string(),
        outcome: z.enum(['draft', 'comment']).nullable().describe('For changes_requested: draft (the waiting post went back to draft) or comment (it stays as it is)'),
        createdAt: z.string(),
      }),
    ),
  }),
  rest: { method: 'GET', path: '/preview-links/:id/activity' },
  handler: async (input, { em, caller, services }) => {
    refuseChannelLimited(caller);
    const link = await findPreviewLink(em, caller.organizationId, input.id);
    const activity = await linkFeedback(em, caller.organizationId, { linkId: link.id });
    return {
      link: await previewLinkRecord(services, em, link),
      activity: activity.map((item) => ({
        id: item.id,
        postId: item.postId,
        kind: item.kind,
        text: item.text,
        outcome: (item.outcome as 'draft' | 'comment' | null) ?? null,
        createdAt: item.createdAt.toISOString(),
      })),
    };
  },
});

export const revokePreviewLinkTool = defineTool({
  name: 'revokePreviewLink',
  title: 'Revoke a customer preview link',
  description: 'DELETE /preview-links/{id}: the link stops working at once (its page answers 410); what was done through it stays.',
  annotations: { ...writes, destructiveHint: true, idempotentHint: true },
  mcp: false,
  scope: 'approve',
  input: z.object({ id: idParam }),
  output: linkSchema,
  rest: { method: 'DELETE', path: '/preview-links/:id' },
  handler: async (input, { em, caller, services }) => {
    refuseChannelLimited(caller);
    return revokePreviewLink(services, em, caller.organizationId, input.id);
  },
});

const actions = ['create', 'list', 'activity', 'revoke'] as const;

/**
 * The one MCP tool (tools/list is paid for in every turn): each REST operation by `action`, running that operation's own
 * handler, so the checks, the audit trail and the answers are REST's.
 */
export const previewLinkTool = defineTool({
  name: 'previewLinkTool',
  title: 'Customer preview links',
  description:
    `Links (no account needed) showing a customer the posts of channels (or of a customer) dated from..to, as each platform shows them, to comment, ask for changes and, with canApprove, approve. create answers the url once (send it to the customer); list, activity (what was done through one) and revoke take what list answers.`,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  mcp: true,
  scope: 'approve',
  input: z.object({ action: z.enum(actions), id: idParam.optional(), link: z.record(z.string(), z.unknown()).optional() }),
  listedInput: z.object({
    action: z.enum(actions),
    id: z.string().optional(),
    link: z.record(z.string(), z.unknown()).optional().describe(`For create: name channels[]|customer from to expiresAt (ISO 8601, at most ${MAX_LINK_DAYS} days) canApprove`),
  }),
  output: z.object({
    link: createPreviewLinkTool.output.partial({ url: true }).optional(),
    links: z.array(linkSchema).optional(),
    activity: previewLinkActivityTool.output.shape.activity.optional(),
  }),
  handler: async (input, context) => {
    const id = () => {
      if (!input.id) throw invalidInput(`id: ${input.action} needs the preview link's id.`, { hint: 'action "list" gives the ids.' });
      return input.id;
    };
    switch (input.action) {
      case 'create': {
        const link = parseInput(createPreviewLinkTool.input, input.link ?? {}, 'create needs link.name, link.from, link.to, link.expiresAt and link.channels or link.customer.');
        return { link: await createPreviewLinkTool.handler(link, context) };
      }
      case 'list':
        return { links: (await listPreviewLinksTool.handler({}, context)).output };
      case 'activity':
        return previewLinkActivityTool.handler({ id: id() }, context);
      case 'revoke':
        return { link: await revokePreviewLinkTool.handler({ id: id() }, context) };
    }
  },
});

export const previewLinkTools = [createPreviewLinkTool, listPreviewLinksTool, previewLinkActivityTool, revokePreviewLinkTool, previewLinkTool];
