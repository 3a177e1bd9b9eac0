// GET /audit: the organization's audit trail, newest first, paged, filtered by target (e.g. one post), actor, action,
// channel and date. A key limited to channels sees only its channels' events.
import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listAudit } from './internal/audit-query.js';

const eventSchema = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.object({ kind: z.enum(['person', 'api_key', 'oauth_app', 'herald', 'preview_link']), id: z.string().nullable(), name: z.string() }),
  via: z.string().describe('console, rest, mcp, worker, cli or preview_link'),
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
  description:
    'GET /audit?actor=…&action=…&integrationId=…&from=…&to=…&targetKind=post&targetId=…&cursor=…&limit=…: who changed what, when, how (console, REST, MCP, Herald itself) and from where (address, client), newest first. ' +
    'Never holds secrets. A key limited to channels sees only its channels\' events. Needs the read scope.',
  annotations: readOnly,
  mcp: false,
  input: z.object({
    targetKind: z.string().max(50).optional(),
    targetId: z.string().max(200).optional(),
    actor: z.string().max(200).optional().describe('An actor id (actor.id of an event: a key, an app, a person), or "herald"'),
    action: z.string().max(100).optional().describe('An action (post.approved) or a family of them (post, key, channel, webhook, member, app)'),
    integrationId: z.string().max(200).optional().describe('Events about this channel'),
    from: z.iso.datetime({ offset: true }).optional().describe('Events at or after this instant (ISO 8601)'),
    to: z.iso.datetime({ offset: true }).optional().describe('Events before this instant (ISO 8601)'),
    cursor: z.string().max(500).optional().describe('nextCursor of the previous page'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  }),
  output: z.object({ events: z.array(eventSchema), nextCursor: z.string().nullable() }),
  rest: { method: 'GET', path: '/audit' },
  handler: async ({ from, to, ...input }, { em, caller }) =>
    listAudit(em, caller.organizationId, { ...input, from: from ? new Date(from) : undefined, to: to ? new Date(to) : undefined }),
});
