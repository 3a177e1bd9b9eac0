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
import { coalescedPerDatabase, statement, type Sql } from '../../src/db/sql.js';
import { newId } from '../../src/lib/crypto.js';
import { STREAM_CHANNEL } from '../../src/mcp/event-store.js';
import { AUDIT_COLUMNS, auditRecord, recordAudit, type AuditEvent } from './audit.js';
import { webhookEventOf } from './webhook-events.js';
import { isDetached } from './publish-chain.js';

// Only an item as the run read it: still queued, not deleted, not changed since (its `updated_at`, which every change through
// the ORM moves; compared to the millisecond, the precision of a JavaScript date), its channel neither deleted nor disabled.
// An item that changed while its run waited for its date (an edit, a delete) is not attempted: the run reads it again.
const ATTEMPTS_STARTED = statement(
  'publish_attempts_started',
  `update post set attempt_started_at = started.at, updated_at = started.at
     from unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) as started(id, at, seen)
     where post.id = started.id and post.state = 'QUEUE' and post.deleted_at is null and date_trunc('milliseconds', post.updated_at) = started.seen
       and exists (select 1 from integration i where i.id = post.integration_id and i.deleted_at is null and not i.disabled)
     returning post.id`,
);

/** The attempts of the publications calling their platforms at the same moment, in one statement (committed as it answers). */
const attemptStarted = coalescedPerDatabase<{ id: string; at: Date; seen: Date }, boolean>(async (sql, attempts) => {
  const started = new Set((await sql.rows<{ id: string }>(ATTEMPTS_STARTED, [attempts.map((attempt) => attempt.id), attempts.map((attempt) => attempt.at), attempts.map((attempt) => attempt.seen)])).map((row) => row.id));
  return attempts.map((attempt) => started.has(attempt.id));
});

/**
 * Records that the platform is about to be called for `item` (committed when this answers), before the call. Answers false,
 * recording nothing, when the item is not as the run holds it in memory any more (see ATTEMPTS_STARTED).
 */
export async function recordAttemptStarted(em: EntityManager, item: Post, now: Date): Promise<boolean> {
  if (!(await attemptStarted(em, { id: item.id, at: now, seen: item.updatedAt }))) return false;
  item.attemptStartedAt = now;
  item.updatedAt = now;
  markSaved(em, item);
  return true;
}

// The outcomes of the publications whose platforms answered while the last outcome was being written, in one statement
// (coalesced: in a burst hundreds end together). $1 the items, each with its notification and webhook event (none when
// their ids are null) and whether to announce its chain to the subscribed MCP sessions; $2 the audit events.
const PUBLISHED = statement(
  'publish_outcomes_published',
  `with input as (
     select * from jsonb_to_recordset($1::jsonb) as i(id text, root_post_id text, organization_id text, integration_id text, release_id text,
       release_url text, release_meta text, release_warnings text, at timestamptz, notification_id text, notification_type text,
       content text, link text, event_id text, event_type text, event_data text, announce boolean, created_at timestamptz)),
   item as (
     update post set state = 'PUBLISHED', release_id = input.release_id, release_url = input.release_url, release_meta = input.release_meta::jsonb,
       release_warnings = input.release_warnings::jsonb, published_at = input.at, updated_at = input.at, attempt_started_at = null,
       next_attempt_at = null, error = null, last_error = null
     from input where post.id = input.id returning post.id),
   notification as (
     insert into notification (id, organization_id, integration_id, type, content, link, target_kind, target_id, created_at)
     select notification_id, organization_id, integration_id, notification_type, content, link, 'post', root_post_id, created_at
     from input where notification_id is not null returning id),
   event as (
     insert into webhook_event (id, organization_id, type, data, created_at)
     select event_id, organization_id, event_type, event_data::jsonb, created_at from input where event_id is not null returning id),
   audit as (
     insert into audit_event (${AUDIT_COLUMNS}) select ${AUDIT_COLUMNS} from jsonb_populate_recordset(null::audit_event, $2::jsonb) returning id),
   announced as (
     insert into mcp_event (session_id, stream_id, message)
     select s.id, s.id || '.get',
       jsonb_build_object('jsonrpc', '2.0', 'method', 'notifications/resources/updated', 'params', jsonb_build_object('uri', subscription.key))
     from input join mcp_session s on s.organization_id = input.organization_id cross join lateral jsonb_each_text(s.state->'subscriptions') subscription
     where input.announce and s.state->'subscriptions' is not null and subscription.value = input.root_post_id
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

interface Outcome {
  item: Record<string, unknown>;
  audit?: Record<string, unknown>;
}

const writeOutcomes = (sql: Sql, outcomes: Outcome[]) =>
  sql.rows(PUBLISHED, [JSON.stringify(outcomes.map((outcome) => outcome.item)), JSON.stringify(outcomes.flatMap((outcome) => (outcome.audit ? [outcome.audit] : [])))]);

/**
 * The outcomes asked while the last statement was in flight, written together (committed as the statement answers). Should
 * the statement fail, each is written alone, so one outcome that cannot be written does not fail the others: each call
 * answers its own failure, if any.
 */
const published = coalescedPerDatabase<Outcome, { failure?: unknown }>(async (sql, outcomes) => {
  try {
    await writeOutcomes(sql, outcomes);
    return outcomes.map(() => ({}));
  } catch (error) {
    if (outcomes.length === 1) return [{ failure: error }];
  }
  const alone = await Promise.allSettled(outcomes.map((outcome) => writeOutcomes(sql, [outcome])));
  return alone.map((result) => (result.status === 'fulfilled' ? {} : { failure: result.reason as unknown }));
});

/**
 * Writes `item` as it is in memory (published), with what announces it, in one statement with the outcomes of the other
 * publications that end at the same moment.
 */
export async function recordPublished(em: EntityManager, item: Post, what: PublishedAnnouncement): Promise<void> {
  const at = item.publishedAt ?? new Date();
  const { notification } = what;
  const event = notification && webhookEventOf(notification.type, { content: notification.content, link: notification.link, subject: { post: item } });
  const { failure } = await published(em, {
    item: {
      id: item.id,
      root_post_id: item.rootPostId,
      organization_id: item.organizationId,
      integration_id: item.integrationId,
      release_id: item.releaseId,
      release_url: item.releaseUrl,
      release_meta: item.releaseMeta === null ? null : JSON.stringify(item.releaseMeta),
      release_warnings: item.releaseWarnings === null ? null : JSON.stringify(item.releaseWarnings),
      at,
      notification_id: notification ? newId() : null,
      notification_type: notification?.type ?? null,
      content: notification?.content ?? null,
      link: notification?.link ?? null,
      event_id: event ? newId() : null,
      event_type: event?.type ?? null,
      event_data: event ? JSON.stringify(event.data) : null,
      announce: what.announce,
      // When the notification and its event were made (the wall clock, as notify() dates them, not the item's publication date).
      created_at: new Date(),
    },
    audit: what.audit ? auditRecord({ ...what.audit, organizationId: item.organizationId }, at) : undefined,
  });
  if (failure !== undefined) throw failure;
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

/**
 * The entity as it is in memory is what the database holds: the entity manager's next flush leaves it out (a detached item,
 * publish-chain.ts, is not flushed at all; attached later, it is taken as it is then).
 */
function markSaved(em: EntityManager, entity: Post): void {
  if (!isDetached(entity)) helper(entity).__originalEntityData = em.getComparator().prepareEntity(entity);
}
