// The analytics-history job's work: read each active channel's metrics once a day and each published post's on a decaying
// schedule (often in its first days, then rarely), store them (metrics-history.ts), and record how each read went.
//
// Rate limits: a run reads at most `snapshotLimits.perPlatform` targets of one platform and stops asking a platform for
// the rest of the run once it answers 429; what is left stays due for the next run (every 10 minutes). A retryable
// failure backs off (15 minutes doubling, at least the platform's Retry-After, at most 6 hours) and is recorded as
// `retrying`; a permanent one as `failed` with the platform's words, tried again at the next regular read; a platform
// without an analytics API as `no_analytics`; a channel that needs reconnecting is not called (`needs_reconnection`).
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema, type Integration } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { Services } from '../types.js';
import { channelStatus, providerOf, withChannel } from './integrations.js';
import { pruneMetricsHistory, recordChannelMetrics, recordPostSnapshot } from './metrics-history.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Ages (hours after publication) at which a post's metrics are read: hourly-ish at first, then rarely, for 90 days. */
export const POST_SNAPSHOT_AGES_HOURS = [1, 6, 24, 48, 72, 120, 168, 336, 720, 1440, 2160];
/** Per run; tests lower them. */
export const snapshotLimits = { channels: 100, posts: 300, perPlatform: 30 };
/** Days asked of a channel at its first read (platforms that keep a daily series give it back). */
const BACKFILL_DAYS = 90;
const MAX_BACKOFF_MS = 6 * HOUR_MS;
const FIRST_BACKOFF_MS = 15 * 60_000;
/** Retryable failures in a row before the read is given up until the next regular one. */
const MAX_RETRIES = 5;

export type ScheduleStatus = 'pending' | 'ok' | 'retrying' | 'failed' | 'no_analytics' | 'needs_reconnection' | 'inactive' | 'done';

interface ScheduleRow {
  target_kind: 'channel' | 'post';
  target_id: string;
  organization_id: string;
  integration_id: string;
  next_at: string | Date | null;
  attempts: number;
  last_success_at: string | Date | null;
}

export interface SnapshotRun {
  channels: number;
  posts: number;
  failed: number;
  /** Due targets left for the next run (a platform's share of this run was used up, or it answered 429). */
  deferred: number;
}

/** Adds the schedule of every channel and of every recently published post that has none yet (due at once / at +1 h). */
async function enrol(em: EntityManager, now: Date): Promise<void> {
  const connection = em.getConnection();
  await connection.execute(
    `insert into metrics_schedule (target_kind, target_id, organization_id, integration_id, next_at)
     select 'channel', id, organization_id, id, ?::timestamptz from integration where deleted_at is null
     on conflict do nothing`,
    [now.toISOString()],
  );
  await connection.execute(
    `insert into metrics_schedule (target_kind, target_id, organization_id, integration_id, next_at)
     select 'post', post.id, post.organization_id, post.integration_id, post.published_at + interval '1 hour' from post
      where post.position = 0 and post.state = 'PUBLISHED' and post.deleted_at is null and post.release_id is not null and post.release_id <> 'missing'
        and post.published_at >= ?::timestamptz
     on conflict do nothing`,
    [new Date(now.getTime() - POST_SNAPSHOT_AGES_HOURS.at(-1)! * HOUR_MS).toISOString()],
  );
  // Deleted channels and posts are read no more.
  await connection.execute(
    `delete from metrics_schedule s where (s.target_kind = 'channel' and not exists (select 1 from integration i where i.id = s.target_id and i.deleted_at is null))
       or (s.target_kind = 'post' and not exists (select 1 from post p where p.id = s.target_id and p.deleted_at is null))`,
  );
}

async function dueRows(em: EntityManager, kind: 'channel' | 'post', now: Date, limit: number): Promise<ScheduleRow[]> {
  return em.getConnection().execute<ScheduleRow[]>(
    `select target_kind, target_id, organization_id, integration_id, next_at, attempts, last_success_at from metrics_schedule
      where target_kind = ? and next_at is not null and next_at <= ?::timestamptz order by next_at, target_id limit ?`,
    [kind, now.toISOString(), limit],
  );
}

interface Outcome {
  status: ScheduleStatus;
  nextAt: Date | null;
  error?: string | null;
  attempts?: number;
  success?: boolean;
}

async function record(em: EntityManager, row: ScheduleRow, now: Date, outcome: Outcome): Promise<void> {
  await em.getConnection().execute(
    `update metrics_schedule set status = ?, next_at = ?::timestamptz, last_error = ?, attempts = ?, last_attempt_at = ?::timestamptz,
       last_success_at = case when ? then ?::timestamptz else last_success_at end, snapshots = snapshots + case when ? then 1 else 0 end
     where target_kind = ? and target_id = ?`,
    [
      outcome.status,
      outcome.nextAt?.toISOString() ?? null,
      outcome.error ?? null,
      outcome.attempts ?? 0,
      now.toISOString(),
      Boolean(outcome.success),
      now.toISOString(),
      Boolean(outcome.success),
      row.target_kind,
      row.target_id,
    ],
  );
}

/** The next daily read: a day after the one that was due (no drift with the job's latency), never in the past. */
function nextDaily(row: ScheduleRow, now: Date): Date {
  const due = row.next_at ? new Date(row.next_at).getTime() : now.getTime();
  const next = due + DAY_MS;
  return new Date(next > now.getTime() ? next : now.getTime() + DAY_MS);
}

function nextRung(publishedAt: Date, now: Date): Date | null {
  const age = now.getTime() - publishedAt.getTime();
  const hours = POST_SNAPSHOT_AGES_HOURS.find((rung) => rung * HOUR_MS > age);
  return hours === undefined ? null : new Date(publishedAt.getTime() + hours * HOUR_MS);
}

const isRetryable = (error: unknown) =>
  (error instanceof PlatformHttpError && (error.retryable || error.isNetworkError)) || (error instanceof DomainError && error.code === 'unavailable');

/** What a failed read becomes: back off when it may pass, else recorded with the platform's words. */
function failure(error: unknown, row: ScheduleRow, now: Date, regular: Date | null): Outcome {
  if (error instanceof DomainError && error.code === 'reauth_required') return { status: 'needs_reconnection', nextAt: new Date(now.getTime() + DAY_MS), error: error.message };
  const message = error instanceof Error ? error.message : String(error);
  if (isRetryable(error) && row.attempts < MAX_RETRIES) {
    const attempts = row.attempts + 1;
    const platformWait = error instanceof PlatformHttpError && error.retryAfterSeconds ? error.retryAfterSeconds * 1000 : 0;
    const wait = Math.max(platformWait, Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempts - 1)));
    return { status: 'retrying', nextAt: new Date(now.getTime() + wait), error: message, attempts };
  }
  return { status: 'failed', nextAt: regular, error: message };
}

const throttledBy = (error: unknown) => error instanceof PlatformHttpError && error.status === 429;

async function snapshotChannel(services: Services, em: EntityManager, row: ScheduleRow, integration: Integration, now: Date): Promise<Outcome> {
  const state = channelStatus(integration);
  const provider = providerOf(integration);
  if (state === 'needs_reconnection') return { status: 'needs_reconnection', nextAt: new Date(now.getTime() + DAY_MS), error: 'The channel needs reconnecting.' };
  if (state !== 'active') return { status: 'inactive', nextAt: new Date(now.getTime() + DAY_MS), error: `The channel is ${state.replace('_', ' ')}.` };
  if (!provider.analytics) return { status: 'no_analytics', nextAt: new Date(now.getTime() + 30 * DAY_MS), error: `${provider.name} offers no analytics API.` };
  const since = row.last_success_at ? Math.ceil((now.getTime() - new Date(row.last_success_at).getTime()) / DAY_MS) + 1 : BACKFILL_DAYS;
  const days = Math.max(2, Math.min(since, BACKFILL_DAYS, services.config.analyticsHistoryDays));
  const metrics = await withChannel(services, em, integration, {}, (context) => provider.analytics!(context, days));
  await recordChannelMetrics(em, integration, metrics, now);
  return { status: 'ok', nextAt: nextDaily(row, now), success: true };
}

async function snapshotPost(services: Services, em: EntityManager, row: ScheduleRow, integration: Integration, now: Date): Promise<Outcome> {
  const post = await em.findOne(PostSchema, { id: row.target_id, organizationId: row.organization_id, deletedAt: null });
  if (!post?.publishedAt || !post.releaseId || post.releaseId === 'missing') return { status: 'done', nextAt: null };
  const provider = providerOf(integration);
  if (!provider.postAnalytics) return { status: 'no_analytics', nextAt: null, error: `${provider.name} offers no post analytics API.` };
  if (channelStatus(integration) === 'needs_reconnection') return { status: 'needs_reconnection', nextAt: new Date(now.getTime() + DAY_MS), error: 'The channel needs reconnecting.' };
  const days = Math.min(365, Math.max(1, Math.ceil((now.getTime() - post.publishedAt.getTime()) / DAY_MS) + 1));
  const ref = { id: post.releaseId, url: post.releaseUrl ?? undefined, meta: post.releaseMeta ?? undefined };
  const metrics = await withChannel(services, em, integration, {}, (context) => provider.postAnalytics!(context, ref, days));
  await recordPostSnapshot(em, post, metrics, now);
  const next = nextRung(post.publishedAt, now);
  return { status: next ? 'ok' : 'done', nextAt: next, success: true };
}

/**
 * One run of the job: enrol new channels and posts, read what is due (channels first), record each outcome. `now` comes
 * from services (tests move the clock by days).
 */
export async function snapshotDueMetrics(services: Services): Promise<SnapshotRun> {
  const now = services.now();
  const em = services.orm.em.fork();
  await enrol(em, now);
  const run: SnapshotRun = { channels: 0, posts: 0, failed: 0, deferred: 0 };
  const perPlatform = new Map<string, number>();
  const throttled = new Set<string>();
  const work = [...(await dueRows(em, 'channel', now, snapshotLimits.channels)), ...(await dueRows(em, 'post', now, snapshotLimits.posts))];
  const channels = new Map<string, Integration | null>();
  for (const row of work) {
    if (!channels.has(row.integration_id)) channels.set(row.integration_id, await em.findOne(IntegrationSchema, { id: row.integration_id, organizationId: row.organization_id, deletedAt: null }));
    const integration = channels.get(row.integration_id);
    if (!integration) continue;
    const platform = integration.providerIdentifier;
    if (throttled.has(platform) || (perPlatform.get(platform) ?? 0) >= snapshotLimits.perPlatform) {
      run.deferred += 1;
      continue;
    }
    perPlatform.set(platform, (perPlatform.get(platform) ?? 0) + 1);
    let outcome: Outcome;
    try {
      outcome = row.target_kind === 'channel' ? await snapshotChannel(services, em, row, integration, now) : await snapshotPost(services, em, row, integration, now);
    } catch (error) {
      if (throttledBy(error)) throttled.add(platform);
      const post = row.target_kind === 'post' ? await em.findOne(PostSchema, { id: row.target_id }) : null;
      outcome = failure(error, row, now, row.target_kind === 'channel' ? nextDaily(row, now) : post?.publishedAt ? nextRung(post.publishedAt, now) : null);
      run.failed += 1;
      services.logger.warn({ integrationId: integration.id, target: `${row.target_kind}:${row.target_id}`, status: outcome.status, err: outcome.error }, 'analytics snapshot failed');
    }
    if (outcome.success) run[row.target_kind === 'channel' ? 'channels' : 'posts'] += 1;
    await record(em, row, now, outcome);
  }
  if (run.channels + run.posts + run.failed > 0) services.logger.info({ ...run }, 'analytics snapshots taken');
  return run;
}

/** The daily clean-up: history older than ANALYTICS_HISTORY_DAYS goes. */
export async function pruneAnalyticsHistory(services: Services): Promise<number> {
  return pruneMetricsHistory(services.orm.em.fork(), services.now(), services.config.analyticsHistoryDays);
}

export interface HistoryStatus {
  status: ScheduleStatus;
  lastError: string | null;
  lastSuccessAt: Date | null;
  nextAt: Date | null;
  snapshots: number;
}

/** How the history of each channel stands (what the console and the overview say when a chart is empty). */
export const channelHistoryStatus = (em: EntityManager, organizationId: string, integrationIds: string[]) => historyStatus(em, organizationId, 'channel', integrationIds);

/** How the snapshots of each post stand (what a post's chart says when it is empty). */
export const postHistoryStatus = (em: EntityManager, organizationId: string, postIds: string[]) => historyStatus(em, organizationId, 'post', postIds);

async function historyStatus(em: EntityManager, organizationId: string, kind: 'channel' | 'post', ids: string[]): Promise<Map<string, HistoryStatus>> {
  if (ids.length === 0) return new Map();
  const rows = await em.getConnection().execute<{ target_id: string; status: ScheduleStatus; last_error: string | null; last_success_at: string | null; next_at: string | null; snapshots: number }[]>(
    `select target_id, status, last_error, last_success_at, next_at, snapshots from metrics_schedule
      where target_kind = ? and organization_id = ? and target_id in (${ids.map(() => '?').join(', ')})`,
    [kind, organizationId, ...ids],
  );
  const date = (value: string | Date | null) => (value === null ? null : new Date(value));
  return new Map(rows.map((row) => [row.target_id, { status: row.status, lastError: row.last_error, lastSuccessAt: date(row.last_success_at), nextAt: date(row.next_at), snapshots: Number(row.snapshots) }]));
}
