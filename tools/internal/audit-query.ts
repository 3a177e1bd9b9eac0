// Reading the audit trail (tools/internal/audit.ts): newest first, paged by cursor, filtered by actor, action, channel,
// target and date. A key limited to channels sees only its channels' events: never the organization's key, member, app
// or gate changes (they name no channel).
import type { EntityManager } from '@mikro-orm/postgresql';
import { invalidInput } from '../../src/errors.js';
import type { AuditActor } from './audit.js';
import { visibleChannelIds } from './visibility.js';

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

export interface AuditQuery {
  targetKind?: string;
  targetId?: string;
  /** An actor's id (a key's or app's id, a person's user id), or "herald". */
  actor?: string;
  /** An action (`post.approved`) or a family of them (`post`, `key`). */
  action?: string;
  /** A channel id. */
  integrationId?: string;
  /** Events at or after this instant. */
  from?: Date;
  /** Events before this instant. */
  to?: Date;
  cursor?: string;
  limit: number;
}

function decodeCursor(cursor: string | undefined): { at: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (id === undefined || Number.isNaN(Date.parse(at ?? ''))) {
    throw invalidInput(`cursor: "${cursor.slice(0, 40)}" is not a cursor of this list.`, { hint: 'Pass nextCursor from the previous page, or no cursor for the first page.' });
  }
  // The cursor's time as Postgres reads it for sure (an ISO instant), whatever form Date.parse accepted.
  return { at: new Date(at!).toISOString(), id };
}

/** Newest first, paged by cursor (the last event's `at|id`). */
export async function listAudit(em: EntityManager, organizationId: string, query: AuditQuery): Promise<{ events: AuditRecord[]; nextCursor: string | null }> {
  const visible = visibleChannelIds();
  const after = decodeCursor(query.cursor);
  const where = ['organization_id = ?'];
  const values: unknown[] = [organizationId];
  const add = (clause: string, ...bound: unknown[]) => {
    where.push(clause);
    values.push(...bound);
  };
  if (query.targetKind) add('target_kind = ?', query.targetKind);
  if (query.targetId) add('target_id = ?', query.targetId);
  if (query.actor === 'herald') add("actor_kind = 'herald'");
  else if (query.actor) add('actor_id = ?', query.actor);
  if (query.action) add(query.action.includes('.') ? 'action = ?' : "split_part(action, '.', 1) = ?", query.action);
  if (query.integrationId) add('integration_id = ?', query.integrationId);
  if (query.from) add('at >= ?', query.from.toISOString());
  if (query.to) add('at < ?', query.to.toISOString());
  // JSON, not an array: the driver would spread an array binding into a list.
  if (visible) add('integration_id in (select jsonb_array_elements_text(?::jsonb))', JSON.stringify([...visible]));
  if (after) add('(at, id) < (?::timestamptz, ?)', after.at, after.id);
  const rows = await em.getConnection().execute<Record<string, any>[]>(
    `select * from audit_event where ${where.join(' and ')} order by at desc, id desc limit ?`,
    [...values, query.limit + 1],
  );
  const events = rows.slice(0, query.limit).map(
    (row): AuditRecord => ({
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
    }),
  );
  const last = events.at(-1);
  return { events, nextCursor: rows.length > query.limit && last ? Buffer.from(`${last.at}|${last.id}`).toString('base64url') : null };
}

/** The people, keys and apps that appear in the organization's trail (the Activity page's actor filter). */
export async function auditActors(em: EntityManager, organizationId: string): Promise<AuditActor[]> {
  const visible = visibleChannelIds();
  const rows = await em.getConnection().execute<{ actor_kind: AuditActor['kind']; actor_id: string | null; actor_name: string }[]>(
    `select distinct on (actor_kind, actor_id) actor_kind, actor_id, actor_name from audit_event
      where organization_id = ? and (?::jsonb is null or integration_id in (select jsonb_array_elements_text(?::jsonb)))
      order by actor_kind, actor_id, at desc limit 200`,
    [organizationId, visible ? JSON.stringify([...visible]) : null, visible ? JSON.stringify([...visible]) : null],
  );
  return rows.map((row) => ({ kind: row.actor_kind, id: row.actor_id, name: row.actor_name }));
}
