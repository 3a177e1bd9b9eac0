// The audit trail (issue 23, DESIGN §9): every change recorded with who did it (a person, an API key by name, an OAuth
// app, or Herald itself), when, how (console, REST, MCP, worker) and what changed. Kept in Postgres (audit_event), never
// holding secrets: callers pass names, ids and the fields that changed, never a key, token or password.
import type { EntityManager } from '@mikro-orm/postgresql';
import { invalidInput } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { sqlOf, statement } from '../../src/db/sql.js';
import type { Caller, ToolContext } from '../types.js';
import { visibleChannelIds } from './visibility.js';

export interface AuditActor {
  kind: 'person' | 'api_key' | 'oauth_app' | 'herald';
  id: string | null;
  name: string;
}

export interface AuditEvent {
  organizationId: string;
  actor: AuditActor;
  via: 'console' | 'rest' | 'mcp' | 'worker' | 'cli';
  address?: string | null;
  client?: string | null;
  /** e.g. post.created, post.approved, key.created, approval_settings.changed */
  action: string;
  target: { kind: string; id: string | null };
  /** The channel it is about, when one (a key limited to channels sees only its channels' events). */
  integrationId?: string | null;
  summary: string;
  /** What changed, without secrets. */
  changes?: Record<string, unknown>;
}

/** Herald itself (publishing outcomes, the daily jobs). */
export const HERALD: AuditActor = { kind: 'herald', id: null, name: 'Herald' };

/** Who a caller is, for the trail. */
export function actorOf(caller: Caller): AuditActor {
  if (caller.credentialKind === 'api_key') return { kind: 'api_key', id: caller.credentialId, name: caller.name ?? 'API key' };
  if (caller.credentialKind === 'oauth_token') return { kind: 'oauth_app', id: caller.credentialId, name: caller.name ?? 'OAuth app' };
  return { kind: 'person', id: caller.credentialId, name: caller.name ?? 'A person in the console' };
}

/** The event's `actor` and `via` for a tool call. */
export function auditFrom(context: Pick<ToolContext, 'caller' | 'via'>): Pick<AuditEvent, 'organizationId' | 'actor' | 'via'> {
  const { caller } = context;
  return { organizationId: caller.organizationId, actor: actorOf(caller), via: context.via === 'mcp' ? 'mcp' : caller.credentialKind === 'session' ? 'console' : 'rest' };
}

/** The audit_event columns and their values in that order ($1..$15), for a statement that records an event as part of its own work (publish-outcome.ts). */
export const AUDIT_COLUMNS = 'id, organization_id, at, actor_kind, actor_id, actor_name, via, address, client, action, target_kind, target_id, integration_id, summary, changes';

const INSERT = statement('audit_insert', `insert into audit_event (${AUDIT_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb)`);

export function auditValues(event: AuditEvent, at = new Date()): unknown[] {
  return [
    newId(),
    event.organizationId,
    at,
    event.actor.kind,
    event.actor.id,
    event.actor.name,
    event.via,
    event.address ?? null,
    event.client ?? null,
    event.action,
    event.target.kind,
    event.target.id,
    event.integrationId ?? null,
    event.summary,
    JSON.stringify(event.changes ?? {}),
  ];
}

/** Records one event. The one function every tool and job calls. */
export async function recordAudit(em: EntityManager, event: AuditEvent, at = new Date()): Promise<void> {
  await sqlOf(em).rows(INSERT, auditValues(event, at));
}

export interface AuditRecord {
  id: string;
  at: string;
  actor: AuditActor;
  via: string;
  address: string | null;
  client: string | null;
  action: string;
  target: { kind: string; id: string | null };
  integrationId: string | null;
  summary: string;
  changes: Record<string, unknown>;
}

/** Newest first, paged by cursor (the last event's `at|id`); filtered by target. A key limited to channels sees its channels' events. */
export async function listAudit(
  em: EntityManager,
  organizationId: string,
  query: { targetKind?: string; targetId?: string; cursor?: string; limit: number },
): Promise<{ events: AuditRecord[]; nextCursor: string | null }> {
  const visible = visibleChannelIds();
  const [at, id] = query.cursor ? Buffer.from(query.cursor, 'base64url').toString().split('|') : [];
  if (query.cursor !== undefined && (id === undefined || Number.isNaN(Date.parse(at ?? '')))) {
    throw invalidInput(`cursor: "${query.cursor.slice(0, 40)}" is not a cursor of this list.`, { hint: 'Pass nextCursor from the previous page, or no cursor for the first page.' });
  }
  const rows = await em.getConnection().execute<Record<string, any>[]>(
    `select * from audit_event where organization_id = ?
       and (?::text is null or target_kind = ?) and (?::text is null or target_id = ?)
       and (?::jsonb is null or integration_id in (select jsonb_array_elements_text(?::jsonb)))
       and (?::timestamptz is null or (at, id) < (?::timestamptz, ?))
     order by at desc, id desc limit ?`,
    [
      organizationId,
      query.targetKind ?? null, query.targetKind ?? null,
      query.targetId ?? null, query.targetId ?? null,
      // JSON, not an array: the driver would spread an array binding into a list.
      visible ? JSON.stringify([...visible]) : null, visible ? JSON.stringify([...visible]) : null,
      // The cursor's time as Postgres reads it for sure (an ISO instant), whatever form Date.parse accepted.
      at ? new Date(at).toISOString() : null, at ? new Date(at).toISOString() : null, id ?? '',
      query.limit + 1,
    ],
  );
  const page = rows.slice(0, query.limit);
  const events = page.map((row) => ({
    id: row.id,
    at: new Date(row.at).toISOString(),
    actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name },
    via: row.via,
    address: row.address,
    client: row.client,
    action: row.action,
    target: { kind: row.target_kind, id: row.target_id },
    integrationId: row.integration_id,
    summary: row.summary,
    changes: row.changes,
  }));
  const last = events.at(-1);
  return { events, nextCursor: rows.length > query.limit && last ? Buffer.from(`${last.at}|${last.id}`).toString('base64url') : null };
}

/** One `post.created` event per created post (waiting for approval or not). */
export async function recordPostsCreated(context: Pick<ToolContext, 'caller' | 'via' | 'em'>, created: { postId: string; integration: string; approval?: unknown }[]): Promise<void> {
  for (const post of created) {
    await recordAudit(context.em, {
      ...auditFrom(context),
      action: 'post.created',
      target: { kind: 'post', id: post.postId },
      integrationId: post.integration,
      summary: `${actorOf(context.caller).name} created post ${post.postId}${post.approval ? ' (waiting for approval)' : ''}.`,
      changes: { awaitingApproval: Boolean(post.approval) },
    });
  }
}
