// The audit trail (issue 23, DESIGN §9): every change recorded with who did it (a person, an API key by name, an OAuth
// app, or Herald itself), when, how (console, REST, MCP, worker), from where (address and client) and what changed. Kept
// in Postgres (audit_event), never holding secrets: callers pass names, ids and the fields that changed, never a key,
// token or password. Pruned after AUDIT_RETENTION_DAYS.
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../src/lib/crypto.js';
import { sqlOf, statement } from '../../src/db/sql.js';
import type { Caller, ToolContext } from '../types.js';
import { currentCaller } from './visibility.js';

export interface AuditActor {
  kind: 'person' | 'api_key' | 'oauth_app' | 'herald' | 'preview_link';
  id: string | null;
  name: string;
}

export interface AuditEvent {
  organizationId: string;
  actor: AuditActor;
  via: 'console' | 'rest' | 'mcp' | 'worker' | 'cli' | 'preview_link';
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

/** What a change says about itself; who, how and from where come from the caller. */
export interface AuditChange {
  action: string;
  target: { kind: string; id: string | null };
  integrationId?: string | null;
  /** The sentence after the actor's name, e.g. `disabled the channel "Acme on X"`. */
  did: string;
  changes?: Record<string, unknown>;
}

/** Herald itself (publishing outcomes, the daily jobs). */
export const HERALD: AuditActor = { kind: 'herald', id: null, name: 'Herald' };

/** Who a caller is, for the trail. */
export function actorOf(caller: Caller): AuditActor {
  if (caller.credentialKind === 'api_key') return { kind: 'api_key', id: caller.credentialId, name: caller.name ?? 'API key' };
  if (caller.credentialKind === 'oauth_token') return { kind: 'oauth_app', id: caller.credentialId, name: caller.name ?? 'OAuth app' };
  if (caller.credentialKind === 'preview_link') return { kind: 'preview_link', id: caller.credentialId, name: caller.name ?? 'A preview link' };
  return { kind: 'person', id: caller.personId ?? caller.credentialId, name: caller.name ?? 'A person in the console' };
}

type Source = Pick<AuditEvent, 'organizationId' | 'actor' | 'via' | 'address' | 'client'>;

/** Who, how and from where, for a caller (Herald itself when there is none: a job). */
export function sourceOf(caller: Caller | undefined, organizationId: string, mcp = false): Source {
  if (!caller) return { organizationId, actor: HERALD, via: 'worker', address: null, client: null };
  const via = mcp ? 'mcp' : (caller.origin?.via ?? (caller.credentialKind === 'session' ? 'console' : 'rest'));
  return { organizationId, actor: actorOf(caller), via, address: caller.origin?.address ?? null, client: caller.origin?.client?.slice(0, 200) ?? null };
}

/** The event's who, how and from where for a tool call. */
export function auditFrom(context: Pick<ToolContext, 'caller' | 'via'>): Source {
  return sourceOf(context.caller, context.caller.organizationId, context.via === 'mcp');
}

/** The columns of an event, in the order of `auditRow`'s values (for a job that inserts an event in its own statement). */
export const AUDIT_COLUMNS = 'id, organization_id, at, actor_kind, actor_id, actor_name, via, address, client, action, target_kind, target_id, integration_id, summary, changes';

/**
 * The 15 values of one event, in AUDIT_COLUMNS' order (cast the last, `changes`, to jsonb): for the publishing job to
 * insert a Herald event (post.published / post.failed) in the same statement as the outcome it records, e.g.
 * `insert into audit_event (${AUDIT_COLUMNS}) values ($1, …, $15::jsonb)`.
 */
export function auditRow(event: AuditEvent, at = new Date()): unknown[] {
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

const COLUMN_NAMES = AUDIT_COLUMNS.split(', ');

/** One event as a row object keyed by column (for `jsonb_populate_recordset(null::audit_event, …)` in a statement that inserts several). */
export function auditRecord(event: AuditEvent, at = new Date()): Record<string, unknown> {
  const values = auditRow(event, at);
  return { ...Object.fromEntries(COLUMN_NAMES.map((column, index) => [column, values[index]])), changes: event.changes ?? {} };
}

const INSERT = statement('audit_insert', `insert into audit_event (${AUDIT_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb)`);

/** Records one event; inside a transaction (`em` of em.transactional), it commits or rolls back with the change. */
export async function recordAudit(em: EntityManager, event: AuditEvent, at = new Date()): Promise<void> {
  const transaction = em.getTransactionContext();
  if (!transaction) {
    await sqlOf(em).rows(INSERT, auditRow(event, at));
    return;
  }
  await em.getConnection().execute(`insert into audit_event (${AUDIT_COLUMNS}) values (${'?, '.repeat(14)}?::jsonb)`, auditRow(event, at), 'run', transaction);
}

/**
 * Records a change made by the current caller (the tool call, REST or MCP request or console page it runs in), or by
 * Herald when there is none. The one function the internal units call: they need not know who called them.
 */
export async function recordChange(em: EntityManager, organizationId: string, change: AuditChange, at = new Date()): Promise<void> {
  const source = sourceOf(currentCaller(), organizationId);
  await recordAudit(em, { ...source, action: change.action, target: change.target, integrationId: change.integrationId ?? null, summary: `${source.actor.name} ${change.did}.`, changes: change.changes }, at);
}

/** Deletes events older than AUDIT_RETENTION_DAYS (the daily prune job). Answers how many went. */
export async function pruneAudit(em: EntityManager, now: Date, retentionDays: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 60 * 60 * 1000);
  const rows = await em.getConnection().execute<{ count: number }[]>('with gone as (delete from audit_event where at < ? returning 1) select count(*)::int as count from gone', [cutoff.toISOString()]);
  return Number(rows[0]?.count ?? 0);
}

/** The `post.created` event of a created post (waiting for approval or not): createPosts writes it with the post. */
export function postCreatedEvent(context: Pick<ToolContext, 'caller' | 'via'>, post: { postId: string; integration: string; approval?: unknown }): AuditEvent {
  return {
    ...auditFrom(context),
    action: 'post.created',
    target: { kind: 'post', id: post.postId },
    integrationId: post.integration,
    summary: `${actorOf(context.caller).name} created post ${post.postId}${post.approval ? ' (waiting for approval)' : ''}.`,
    changes: { awaitingApproval: Boolean(post.approval) },
  };
}
