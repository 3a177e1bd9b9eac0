// GET /audit: the organization's audit trail, newest first, paged, filtered by target (e.g. one post).
import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listAudit } from './internal/audit.js';

const eventSchema = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.object({ kind: z.enum(['person', 'api_key', 'oauth_app', 'herald']), id: z.string().nullable(), name: z.string() }),
  via: z.string().describe('console, rest, mcp, worker or cli'),
  address: z.string().nullable(),
  client: z.string().nullable(),
  action: z.string().describe('e.g. post.created, post.approved, post.rejected, key.created, key.revoked, approval_settings.changed'),
  target: z.object({ kind: z.string(), id: z.string().nullable() }),
  integrationId: z.string().nullable(),
  summary: z.string(),
  changes: z.record(z.string(), z.unknown()),
});

export const auditList = defineTool({
  name: 'auditList',
  title: 'Audit trail',
  description: 'GET /audit?targetKind=post&targetId=…&cursor=…&limit=…: who changed what, when and how (console, REST, MCP, Herald itself), newest first. Never holds secrets.',
  annotations: readOnly,
  mcp: false,
  input: z.object({
    targetKind: z.string().max(50).optional(),
    targetId: z.string().max(200).optional(),
    cursor: z.string().max(500).optional().describe('nextCursor of the previous page'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  }),
  output: z.object({ events: z.array(eventSchema), nextCursor: z.string().nullable() }),
  rest: { method: 'GET', path: '/audit' },
  handler: async (input, { em, caller }) => listAudit(em, caller.organizationId, input),
});
