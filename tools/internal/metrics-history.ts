// Analytics history: what platforms answered, kept in Postgres, and analytics answers made of it plus the live value.
//
// Normalisation. A provider answers `[{label, data: [{total, date}], percentageChange}]`. The metric's key is its label in
// snake case ("Post karma" → post_karma), so a renamed label keeps its history. A metric with several points is a daily
// series ('daily': each point is that day's value, stored under its own date, and a later read of the same day replaces
// it, as platforms revise recent days); a metric with one point is a counter read now ('total': stored under the day
// Herald read it, by Herald's clock, since providers date "now" by the wall clock). A point dated after Herald's today is
// not stored (a platform clock ahead of ours). Channels: one row per channel, metric and day. Posts: one row per post,
// metric and snapshot; a post metric given as a daily series is stored as its sum (the post's total so far).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AnalyticsMetric } from '../../providers/types.js';
import { dailyMetric, isoDay } from '../../providers/shared.js';

export type MetricKind = 'total' | 'daily';

const DAY_MS = 86_400_000;

export const metricKey = (label: string) =>
  label
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '') || 'metric';

const numberOf = (total: string) => {
  const value = Number(total);
  return Number.isFinite(value) ? value : undefined;
};

export interface DayValue {
  metric: string;
  label: string;
  day: string;
  value: number;
  kind: MetricKind;
}

/** A provider's answer as rows of (metric, day, value), dated by `today` (Herald's `YYYY-MM-DD`) where it is a counter. */
export function normaliseMetrics(metrics: AnalyticsMetric[], today: string): DayValue[] {
  const rows = new Map<string, DayValue>();
  for (const metric of metrics) {
    const metricId = metricKey(metric.label);
    const points = metric.data.filter((point) => numberOf(point.total) !== undefined);
    const kind: MetricKind = points.length > 1 ? 'daily' : 'total';
    for (const point of points) {
      const day = kind === 'total' ? today : point.date.slice(0, 10);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day > today) continue;
      rows.set(`${metricId}/${day}`, { metric: metricId, label: metric.label, day, value: numberOf(point.total)!, kind });
    }
  }
  return [...rows.values()];
}

/** A post's counters at one moment: a daily series counts as its sum. */
export function postTotals(metrics: AnalyticsMetric[]): { metric: string; label: string; value: number; kind: MetricKind }[] {
  const totals = new Map<string, { metric: string; label: string; value: number; kind: MetricKind }>();
  for (const metric of metrics) {
    const values = metric.data.map((point) => numberOf(point.total)).filter((value): value is number => value !== undefined);
    if (values.length === 0) continue;
    const key = metricKey(metric.label);
    totals.set(key, { metric: key, label: metric.label, value: values.reduce((sum, value) => sum + value, 0), kind: values.length > 1 ? 'daily' : 'total' });
  }
  return [...totals.values()];
}

interface ChannelRef {
  id: string;
  organizationId: string;
}

export async function recordChannelMetrics(em: EntityManager, channel: ChannelRef, metrics: AnalyticsMetric[], now: Date): Promise<number> {
  const rows = normaliseMetrics(metrics, isoDay(now));
  if (rows.length === 0) return 0;
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    values.push(channel.id, channel.organizationId, row.metric, row.day, row.label, row.value, row.kind, now.toISOString());
    return '(?, ?, ?, ?::date, ?, ?, ?, ?::timestamptz)';
  });
  await em.getConnection().execute(
    `insert into channel_metric_day (integration_id, organization_id, metric, day, label, value, kind, recorded_at) values ${tuples.join(', ')}
     on conflict (integration_id, metric, day) do update set label = excluded.label, value = excluded.value, kind = excluded.kind, recorded_at = excluded.recorded_at`,
    values,
  );
  return rows.length;
}

interface PostRef {
  id: string;
  organizationId: string;
  integrationId: string;
}

export async function recordPostSnapshot(em: EntityManager, post: PostRef, metrics: AnalyticsMetric[], takenAt: Date): Promise<number> {
  const totals = postTotals(metrics);
  if (totals.length === 0) return 0;
  const values: unknown[] = [];
  const tuples = totals.map((total) => {
    values.push(post.id, post.organizationId, post.integrationId, total.metric, takenAt.toISOString(), total.label, total.value, total.kind);
    return '(?, ?, ?, ?, ?::timestamptz, ?, ?, ?)';
  });
  await em.getConnection().execute(
    `insert into post_metric_snapshot (post_id, organization_id, integration_id, metric, taken_at, label, value, kind) values ${tuples.join(', ')}
     on conflict (post_id, metric, taken_at) do update set value = excluded.value, label = excluded.label`,
    values,
  );
  return totals.length;
}

export interface StoredDay extends DayValue {
  integrationId: string;
}

/** The stored days of some channels from `fromDay` to `toDay` (inclusive), oldest first. */
export async function storedChannelDays(em: EntityManager, organizationId: string, integrationIds: string[], fromDay: string, toDay: string): Promise<StoredDay[]> {
  if (integrationIds.length === 0) return [];
  const rows = await em.getConnection().execute<{ integration_id: string; metric: string; label: string; day: string; value: number; kind: MetricKind }[]>(
    `select integration_id, metric, label, to_char(day, 'YYYY-MM-DD') as day, value, kind from channel_metric_day
      where organization_id = ? and integration_id in (${integrationIds.map(() => '?').join(', ')}) and day between ?::date and ?::date
      order by integration_id, metric, day`,
    [organizationId, ...integrationIds, fromDay, toDay],
  );
  return rows.map((row) => ({ integrationId: row.integration_id, metric: row.metric, label: row.label, day: row.day, value: Number(row.value), kind: row.kind }));
}

export interface Snapshot {
  metric: string;
  label: string;
  takenAt: Date;
  value: number;
  kind: MetricKind;
}

/** The snapshots of posts taken since `since` (all when undefined), oldest first. */
export async function storedPostSnapshots(em: EntityManager, organizationId: string, postIds: string[], since?: Date): Promise<(Snapshot & { postId: string })[]> {
  if (postIds.length === 0) return [];
  const rows = await em.getConnection().execute<{ post_id: string; metric: string; label: string; taken_at: string | Date; value: number; kind: MetricKind }[]>(
    `select post_id, metric, label, taken_at, value, kind from post_metric_snapshot
      where organization_id = ? and post_id in (${postIds.map(() => '?').join(', ')}) and taken_at >= ?::timestamptz
      order by post_id, metric, taken_at`,
    [organizationId, ...postIds, (since ?? new Date(0)).toISOString()],
  );
  return rows.map((row) => ({ postId: row.post_id, metric: row.metric, label: row.label, takenAt: new Date(row.taken_at), value: Number(row.value), kind: row.kind }));
}

/** The first day of a period of `days` days ending on `today` (both `YYYY-MM-DD`). */
export const periodStart = (today: string, days: number) => isoDay(new Date(Date.parse(`${today}T00:00:00Z`) - (days - 1) * DAY_MS));

/** Change from the first to the last value (counters: followers went from 40 to 46 → 15%), in percent with two decimals. */
function changeOfTotal(values: number[]): number {
  if (values.length < 2 || values[0] === 0) return 0;
  return Math.round(((values.at(-1)! - values[0]) / values[0]) * 10_000) / 100;
}

/** A metric from its days, with the change computed as its kind wants it. */
function metricOf(label: string, kind: MetricKind, days: Map<string, number>): AnalyticsMetric {
  const points = [...days].map(([date, value]) => ({ date, value })).sort((a, b) => a.date.localeCompare(b.date));
  if (kind === 'daily') return dailyMetric(label, points);
  return { label, data: points.map((point) => ({ total: String(point.value), date: point.date })), percentageChange: changeOfTotal(points.map((point) => point.value)) };
}

/**
 * A channel's analytics for the period: what the platform answers now (`live`, undefined when it could not be asked),
 * over the stored days of the same metrics (the live value wins on its day), plus metrics only the history still has.
 * Nothing is invented: a day without a value is absent.
 */
export function channelAnswer(live: AnalyticsMetric[] | undefined, stored: DayValue[], today: string, days: number): AnalyticsMetric[] {
  const from = periodStart(today, days);
  const byMetric = new Map<string, { label: string; kind: MetricKind; days: Map<string, number> }>();
  for (const row of stored) {
    if (row.day < from || row.day > today) continue;
    const entry = byMetric.get(row.metric) ?? { label: row.label, kind: row.kind, days: new Map() };
    entry.label = row.label;
    entry.kind = row.kind;
    entry.days.set(row.day, row.value);
    byMetric.set(row.metric, entry);
  }
  const recorded = new Set(byMetric.keys());
  const answer: AnalyticsMetric[] = [];
  const liveKeys = new Set<string>();
  // The live answer is the platform's own period for `days` (Meta and YouTube date a day by its end, so theirs starts a day
  // earlier): it is kept whole, the history only fills days around it.
  for (const row of normaliseMetrics(live ?? [], today)) {
    const entry = byMetric.get(row.metric) ?? { label: row.label, kind: row.kind, days: new Map() };
    entry.label = row.label;
    entry.kind = row.kind;
    entry.days.set(row.day, row.value);
    byMetric.set(row.metric, entry);
  }
  // The live answer's order first (as the platform lists them), then what only the history has.
  for (const metric of live ?? []) {
    const key = metricKey(metric.label);
    if (liveKeys.has(key)) continue;
    liveKeys.add(key);
    const entry = byMetric.get(key);
    // Without history for it, the platform's answer stands as given (its own percentage change included).
    answer.push(entry && recorded.has(key) ? metricOf(metric.label, entry.kind, entry.days) : metric);
  }
  for (const [key, entry] of [...byMetric].sort(([a], [b]) => a.localeCompare(b))) {
    if (!liveKeys.has(key)) answer.push(metricOf(entry.label, entry.kind, entry.days));
  }
  return answer;
}

/**
 * A post's analytics: each counter as it grew, one point per day (the day's last snapshot) since `days` ago, and the live
 * value as today's point. A metric the platform gives as a daily series is answered as the platform gives it.
 */
export function postAnswer(live: AnalyticsMetric[] | undefined, snapshots: Snapshot[], today: string, days: number): AnalyticsMetric[] {
  const from = periodStart(today, days);
  const byMetric = new Map<string, { label: string; days: Map<string, number> }>();
  for (const snapshot of snapshots) {
    if (snapshot.kind !== 'total') continue;
    const day = isoDay(snapshot.takenAt);
    if (day < from || day > today) continue;
    const entry = byMetric.get(snapshot.metric) ?? { label: snapshot.label, days: new Map() };
    entry.days.set(day, snapshot.value);
    byMetric.set(snapshot.metric, entry);
  }
  const answer: AnalyticsMetric[] = [];
  const seen = new Set<string>();
  for (const metric of live ?? []) {
    const key = metricKey(metric.label);
    seen.add(key);
    const values = metric.data.map((point) => numberOf(point.total)).filter((value): value is number => value !== undefined);
    if (values.length !== 1) {
      answer.push(metric);
      continue;
    }
    const entry = byMetric.get(key) ?? { label: metric.label, days: new Map() };
    entry.days.set(today, values[0]);
    answer.push(metricOf(metric.label, 'total', entry.days));
  }
  for (const [key, entry] of byMetric) if (!seen.has(key)) answer.push(metricOf(entry.label, 'total', entry.days));
  return answer;
}

/** One CSV field (RFC 4180); a leading =, +, - or @ is quoted with an apostrophe so a spreadsheet never runs it as a formula. */
export function csvField(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvOf = (header: string[], rows: (string | number)[][]) => [header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';

/** Deletes history older than the retention (ANALYTICS_HISTORY_DAYS). Answers how many rows went. */
export async function pruneMetricsHistory(em: EntityManager, now: Date, retentionDays: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  const connection = em.getConnection();
  const days = await connection.execute<{ count: number }[]>(`with gone as (delete from channel_metric_day where day < ?::date returning 1) select count(*)::int as count from gone`, [isoDay(cutoff)]);
  const snapshots = await connection.execute<{ count: number }[]>(`with gone as (delete from post_metric_snapshot where taken_at < ?::timestamptz returning 1) select count(*)::int as count from gone`, [cutoff.toISOString()]);
  return Number(days[0]?.count ?? 0) + Number(snapshots[0]?.count ?? 0);
}
