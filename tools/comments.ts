// Comments someone left on the posts Herald published (tools/internal/comments.ts) and the replies to them
// (tools/internal/comment-replies.ts): listed, answered once, hidden or deleted, over MCP and REST alike.
import { z } from 'zod';
import { defineTool, readOnly, type ToolContext } from './types.js';
import { commentStates } from '../src/db/comment-entities.js';
import { commentRecord, deleteComment, findComment, hideComment, listComments } from './internal/comments.js';
import { replyToComment as createReply } from './internal/comment-replies.js';
import { approvalRequest } from './internal/approval.js';
import { confirmDeletion } from './internal/confirmation.js';
import { idempotencyKeyField } from './internal/idempotency.js';
import { confirmInput, idParam } from './shapes.js';

const MAX_PAGE_SIZE = 100;
const commentSchema = z.record(z.string(), z.unknown());
const booleanish = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);

export const commentListTool = defineTool({
  name: 'commentListTool',
  title: 'List comments',
  description:
    "Comments on published posts, newest first: author, text, link, state, parentId, Herald's reply. Answer with replyToComment.",
  annotations: readOnly,
  mcp: true,
  input: z.object({
    channel: z.string().trim().min(1).max(200).optional().describe('An integration id'),
    post: z.string().trim().min(1).max(200).optional().describe('A post id'),
    unanswered: booleanish.optional().describe('Only comments nobody answered yet'),
    state: z.enum(commentStates).optional().describe('Deleted ones only when asked for'),
    page: z.coerce.number().int().min(0).max(10_000).default(0),
    pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50).describe(`At most ${MAX_PAGE_SIZE}`),
  }),
  output: z.object({ comments: z.array(commentSchema), total: z.number(), page: z.number(), pageSize: z.number() }),
  rest: { method: 'GET', path: '/comments' },
  handler: async (input, { em, caller }) => {
    const { comments, total } = await listComments(em, caller.organizationId, input);
    return { comments: comments as unknown as Record<string, unknown>[], total, page: input.page, pageSize: input.pageSize };
  },
});

const replyOutput = z.object({
  postId: z.string().describe('The reply is a post: follow it with herald://posts/{postId} or GET /posts/{postId}'),
  commentId: z.string(),
  state: z.string(),
  approval: z.object({ status: z.literal('pending'), message: z.string() }).optional(),
});

export const replyToCommentTool = defineTool({
  name: 'replyToComment',
  title: 'Reply to a comment',
  description:
    "Publishes a reply under a comment (commentListTool id), once, like any post. An answered comment is refused unless allowDuplicate. Send an idempotencyKey; on a time-out call again with the same key.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: true,
  countsAsPostCreation: true,
  acceptsIdempotencyKey: true,
  input: z.object({
    id: idParam.describe('Comment id'),
    content: z.string().min(1, 'is required: the text of the reply').max(100_000),
    date: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-12-01T00:00:00Z' }).optional().describe('When to publish; now when absent'),
    allowDuplicate: z.boolean().optional(),
    idempotencyKey: idempotencyKeyField,
  }),
  output: replyOutput,
  rest: { method: 'POST', path: '/comments/:id/reply', body: z.object({ content: z.string(), date: z.string().optional(), allowDuplicate: z.boolean().optional() }) },
  handler: async (input, context) => {
    const { em, caller, services } = context;
    const approval = await approvalRequest(em, context);
    return createReply(services, em, caller.organizationId, input.id, {
      content: input.content,
      date: input.date ? new Date(input.date) : undefined,
      allowDuplicate: input.allowDuplicate,
      creationMethod: context.via === 'mcp' ? 'MCP' : 'API',
      approval,
    });
  },
});

export const hideCommentTool = defineTool({
  name: 'hideComment',
  title: 'Hide a comment',
  description:
    "Hides a comment (hidden: false shows it) where the platform lets the post's author.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  mcp: true,
  input: z.object({ id: idParam.describe('Comment id'), hidden: z.boolean().default(true) }),
  output: z.object({ comment: commentSchema }),
  rest: { method: 'POST', path: '/comments/:id/hide', toInput: ({ params, body }) => ({ ...(body && typeof body === 'object' ? body : {}), id: params.id }) },
  handler: async (input, { em, caller, services }) => {
    const comment = await hideComment(services, em, caller.organizationId, input.id, input.hidden);
    const { integration } = await findComment(em, caller.organizationId, comment.id);
    return { comment: (await commentRecord(em, comment, integration)) as unknown as Record<string, unknown> };
  },
});

async function confirmCommentDeletion(context: ToolContext, id: string, confirmed: boolean | undefined) {
  const { comment, integration } = await findComment(context.em, context.caller.organizationId, id);
  const summary = `Delete the comment by ${comment.author.name} on ${integration.name} (${integration.providerIdentifier}): "${comment.text.slice(0, 80)}". It is removed from the platform; this cannot be undone.`;
  return confirmDeletion(context, { action: `deleteComment:${id}`, tool: 'deleteComment', id, summary, wouldDelete: { comment: comment.id, text: comment.text }, confirmed });
}

export const deleteCommentTool = defineTool({
  name: 'deleteComment',
  title: 'Delete a comment',
  description:
    "Deletes a comment on the platform where it lets the post's author; confirmation as deletePost.",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  mcp: true,
  input: z.object({ id: idParam.describe('Comment id'), confirm: confirmInput }),
  output: z.object({ id: z.string(), deleted: z.boolean(), wouldDelete: z.record(z.string(), z.unknown()).optional(), message: z.string().optional() }),
  rest: { method: 'DELETE', path: '/comments/:id', toInput: ({ params }) => ({ id: params.id }) },
  handler: async (input, context) => {
    const refused = await confirmCommentDeletion(context, input.id, input.confirm);
    if (refused) return refused;
    const { em, caller, services } = context;
    const comment = await deleteComment(services, em, caller.organizationId, input.id);
    return { id: comment.id, deleted: true };
  },
});

export const commentTools = [commentListTool, replyToCommentTool, hideCommentTool, deleteCommentTool];
