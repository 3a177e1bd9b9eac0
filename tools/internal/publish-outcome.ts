// The two writes of a publication that exactly once needs (DESIGN.md §5), each one statement, one database round trip
// (issue 26: a publish in at most 8): the attempt started, committed before the platform is called, and the item
// published, committed after it with everything that announces it — the notification (with its channel), its webhook
// event (a trigger enqueues the deliveries on commit), the audit trail's `post.published` by Herald, and, when the chain is
// complete, the update to the MCP sessions subscribed to the post (their stream events, and a NOTIFY to the process holding
// each stream: the same rows and channel as src/mcp/resources.ts `resourceUpdates` and event-store.ts `storeEvent`).
// The ORM's flush would spend BEGIN, one statement per row and COMMIT; and the entity is then marked as saved, so a later
// flush of the same entity manager does not write it again.
import { helper } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post } from '../../src/db/entities.js';
import { coalescedPerDatabase, sqlOf, statement } from '../../src/db/sql.js';
import { newId } from '../../src/lib/crypto.js';
import { STREAM_CHANNEL } from '../../src/mcp/event-store.js';
import { AUDIT_COLUMNS, auditRow, recordAudit, type AuditEvent } from './audit.js';
import { webhookEventOf } from './webhook-events.js';

const ATTEMPTS_STARTED = statement(
  'publish_attempts_started',
  'update post set attempt_started_at = started.at, updated_at = started.at from unnest($1::text[], $2::timestamptz[]) as started(id, at) where post.id = started.id',
);

/** The attempts of the publications calling their platforms at the same moment, in one statement (committed as it answers). */
const attemptStarted = coalescedPerDatabase<{ id: string; at: Date }, void>(async (sql, attempts) => {
  await sql.rows(ATTEMPTS_STARTED, [attempts.map((attempt) => attempt.id), attempts.map((attempt) => attempt.at)]);
  return attempts.map(() => undefined);
});

/** Records that the platform is about to be called for `item` (committed when this answers), before the call. */
export async function recordAttemptStarted(em: EntityManager, item: Post, now: Date): Promise<void> {
  await attemptStarted(em, { id: item.id, at: now });
  item.attemptStartedAt = now;
  item.updatedAt = now;
  markSaved(em, item);
}

// $1–$6 the item; $7–$12 the notification (none when $7 is null); $13–$15 its webhook event (none when $13 is null);
// $16–$30 the audit event (none when $16 is null); $31 the root post to announce to subscribed MCP sessions (none when null);
// $32 when the notification and its event were made (the wall clock, as notify() dates them, not the item's publication date).
const PUBLISHED = statement(
  'publish_outcome_published',
  `with item as (
     update post set state = 'PUBLISHED', release_id = $2, release_url = $3, release_meta = $4::jsonb, release_warnings = $5::jsonb,
       published_at = $6, updated_at = $6, attempt_started_at = null, next_attempt_at = null, error = null, last_error = null
     where id = $1 returning id),
   notification as (
     insert into notification (id, organization_id, integration_id, type, content, link, created_at)
     select $7, $8, $9, $10, $11, $12, $32 where $7::text is not null returning id),
   event as (
     insert into webhook_event (id, organization_id, type, data, created_at)
     select $13, $8, $14, $15::jsonb, $32 where $13::text is not null returning id),
   audit as (
     insert into audit_event (${AUDIT_COLUMNS})
     select $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30::jsonb where $16::text is not null returning id),
   announced as (
     insert into mcp_event (session_id, stream_id, message)
     select s.id, s.id || '.get',
       jsonb_build_object('jsonrpc', '2.0', 'method', 'notifications/resources/updated', 'params', jsonb_build_object('uri', subscription.key))
     from mcp_session s cross join lateral jsonb_each_text(s.state->'subscriptions') subscription
     where $31::text is not null and s.organization_id = $8 and s.state->'subscriptions' is not null and subscription.value = $31
     returning stream_id)
   select (select count(*) from item) as items, (select count(pg_notify('${STREAM_CHANNEL}', stream_id)) from announced) as announced`,
);

export interface PublishedAnnouncement {
  /** The notification (the root item only). */
  notification?: { type: 'post_published'; content: string; link?: string };
  audit?: Omit<AuditEvent, 'organizationId'>;
  /** The chain is complete: its subscribed MCP sessions are told. */
  announce: boolean;
}

/** Writes `item` as it is in memory (published), with what announces it, in one statement. */
export async function recordPublished(em: EntityManager, item: Post, what: PublishedAnnouncement): Promise<void> {
  const at = item.publishedAt ?? new Date();
  const { notification } = what;
  const event = notification && webhookEventOf(notification.type, { content: notification.content, link: notification.link, subject: { post: item } });
  const audit = what.audit ? auditRow({ ...what.audit, organizationId: item.organizationId }, at) : Array.from({ length: 15 }, () => null);
  await sqlOf(em).rows(PUBLISHED, [
    item.id,
    item.releaseId,
    item.releaseUrl,
    item.releaseMeta === null ? null : JSON.stringify(item.releaseMeta),
    item.releaseWarnings === null ? null : JSON.stringify(item.releaseWarnings),
    at,
    notification ? newId() : null,
    item.organizationId,
    item.integrationId,
    notification?.type ?? null,
    notification?.content ?? null,
    notification?.link ?? null,
    event ? newId() : null,
    event?.type ?? null,
    event ? JSON.stringify(event.data) : null,
    ...audit,
    what.announce ? item.rootPostId : null,
    new Date(),
  ]);
  item.updatedAt = at;
  markSaved(em, item);
}

/** Flushes `em` and records `event` in the audit trail, in one transaction (the outcomes that are not the hot path). */
export async function flushWithAudit(em: EntityManager, event: AuditEvent): Promise<void> {
  await em.begin();
  try {
    await em.flush();
    await recordAudit(em, event);
    await em.commit();
  } catch (error) {
    await em.rollback();
    throw error;
  }
}

/** The entity as it is in memory is what the database holds: the entity manager's next flush leaves it out. */
function markSaved(em: EntityManager, entity: Post): void {
  helper(entity).__originalEntityData = em.getComparator().prepareEntity(entity);
}
