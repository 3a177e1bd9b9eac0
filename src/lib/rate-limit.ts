// Sliding-window rate limits counted in Postgres, so they hold exactly across processes and restarts. Each (subject, name)
// has one row: the current fixed window's count and the previous window's; a request is allowed when the previous count,
// weighted by how much of it still overlaps the sliding window, plus the current count stays within the limit. This lets
// no double burst through at a window's edge (fixed windows did), and a refused request costs nothing. The subject is an
// organization id, or a prefixed key such as `login-email:<hash>` for limits that come before any organization.
// The table is unlogged: counts are not written to the WAL (no request waits for a disk flush), so a crash of Postgres
// forgets the current windows (and a standby does not see them): the limits then start counting afresh.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlOf, statement } from '../db/sql.js';

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a request is allowed again when refused; otherwise until the current window ends. */
  resetSeconds: number;
  /** The window's length in seconds (for the message: "per minute", "per hour"). */
  windowSeconds: number;
}

export const HOUR_MS = 60 * 60 * 1000;
export const MINUTE_MS = 60 * 1000;

/** Milliseconds from `elapsed` into a window until `previous * (1 - t / window) + current + 1 <= limit`, or undefined if never in this window. */
function waitWithin(windowMs: number, elapsed: number, previous: number, current: number, limit: number): number | undefined {
  if (current + 1 > limit) return undefined;
  if (previous === 0) return 0;
  const at = windowMs * (1 - (limit - current - 1) / previous);
  return Math.max(0, at - elapsed);
}

// Every SET expression sees the row as it was: `previous` and `current` are the counts carried into this window. From the
// first parameter `at` (2 by default): the limit's name, this window's start, the previous window's, the weight of the
// previous window still inside the sliding one, the limit.
const previous = (at: number) => `case when w.window_start = $${at + 1} then w.previous_count when w.window_start = $${at + 2} then w.count else 0 end`;
const current = (at: number) => `case when w.window_start = $${at + 1} then w.count else 0 end`;
const fits = (at: number) => `(${previous(at)}) * $${at + 3}::float8 + (${current(at)}) + 1 <= $${at + 4}::int`;

/**
 * The upsert that counts one request against a limit, returning `count, previous_count, granted`, for the subject
 * `subject` ($1, or a column of `from`): the five parameters of `consumeParameters` from $`at` (default $2 to $6). One
 * statement, so concurrent requests of every process are counted exactly (the row's lock orders them) and a refused request
 * changes nothing.
 */
export function consumeSql(subject = '$1::text', from = '', at = 2): string {
  return `insert into rate_limit_window as w (subject, name, window_start, count, previous_count, granted)
    select ${subject}, $${at}::text, $${at + 1}::timestamptz, case when $${at + 4}::int >= 1 then 1 else 0 end, 0, $${at + 4}::int >= 1 ${from}
    on conflict (subject, name) do update set
      previous_count = ${previous(at)},
      count = (${current(at)}) + case when ${fits(at)} then 1 else 0 end,
      granted = ${fits(at)},
      window_start = $${at + 1}
    returning count, previous_count, granted`;
}

const CONSUME = statement('rate_limit_consume', consumeSql());

/**
 * `consumeSql` for many requests at once (a batch of concurrent REST requests): `demand`, a CTE of (subject, name, lim,
 * demand), names each window once with its limit and how many requests of the batch it counts, in the batch's order. A
 * window counts the first of them that fit exactly as that many calls of `consumeSql` one after another would (each
 * request `i` of it fits when previous * weight + current + i <= limit), in one statement: rows are taken in subject order,
 * so concurrent batches lock them in the same order. Window bounds and weight are $`at`+1 to $`at`+3 of
 * `consumeParameters` (the batch's one instant). Returns each window's row and `taken`, how many of its requests it
 * granted (`old`: Postgres 18's RETURNING of the row as it was; null for a new row).
 */
export function consumeBatchSql(demand: string, at = 2): string {
  const asked = (column: 'demand' | 'lim') => `(select d.${column} from ${demand} d where d.subject = w.subject and d.name = w.name)`;
  const taken = `(select count(*)::int from generate_series(1, ${asked('demand')}) i where (${previous(at)}) * $${at + 3}::float8 + (${current(at)}) + i <= ${asked('lim')})`;
  return `insert into rate_limit_window as w (subject, name, window_start, count, previous_count, granted)
    select d.subject, d.name, $${at + 1}::timestamptz, least(d.demand, greatest(d.lim, 0)), 0, d.demand <= d.lim from ${demand} d order by d.subject, d.name
    on conflict (subject, name) do update set
      previous_count = ${previous(at)},
      count = (${current(at)}) + ${taken},
      granted = ${taken} = ${asked('demand')},
      window_start = $${at + 1}
    returning w.subject, w.name, w.count, w.previous_count,
      w.count - case when old.window_start = $${at + 1} then old.count else 0 end as taken`;
}

/** A window's row of `consumeBatchSql`. */
export interface BatchConsumedRow {
  count: number | string;
  previous_count: number | string;
  taken: number | string;
}

/** What a batch's window row means for its `rank`-th request (from 1, in the batch's order): the row one call would return. */
export function batchRowOf(row: BatchConsumedRow, rank: number): ConsumedRow {
  const taken = Number(row.taken);
  return { count: Number(row.count) - taken + Math.min(rank, taken), previous_count: row.previous_count, granted: rank <= taken };
}


export interface Window {
  name: string;
  limit: number;
  windowMs: number;
  now: Date;
}

export interface ConsumedRow {
  count: number | string;
  previous_count: number | string;
  granted: boolean;
}

/** Parameters $2 to $6 of `consumeSql` for a window. */
export function consumeParameters(window: Window): unknown[] {
  const windowStart = new Date(Math.floor(window.now.getTime() / window.windowMs) * window.windowMs);
  const elapsed = window.now.getTime() - windowStart.getTime();
  return [window.name, windowStart, new Date(windowStart.getTime() - window.windowMs), 1 - elapsed / window.windowMs, window.limit];
}

/** What a consumed row means: allowed or not, what remains, when to come back. */
export function rateLimitState(row: ConsumedRow | undefined, window: Window): RateLimitState {
  const { limit, windowMs } = window;
  const elapsed = window.now.getTime() % windowMs;
  const weight = 1 - elapsed / windowMs;
  const count = Number(row?.count ?? 1);
  const previousCount = Number(row?.previous_count ?? 0);
  const allowed = Boolean(row?.granted ?? true);
  const estimate = previousCount * weight + count;
  let resetMs = windowMs - elapsed;
  if (!allowed) {
    // Later in this window, or else in the next one (where this window's count becomes the previous one).
    resetMs = waitWithin(windowMs, elapsed, previousCount, count, limit) ?? windowMs - elapsed + (waitWithin(windowMs, 0, count, 0, limit) ?? windowMs);
  }
  return {
    allowed,
    limit,
    remaining: Math.max(0, Math.floor(limit - estimate)),
    resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    windowSeconds: windowMs / 1000,
  };
}

/**
 * Counts one request of `subject` against `limit` per sliding `windowMs` (a prepared upsert on an unlogged table: no request
 * waits for a disk flush).
 */
export async function consumeRateLimit(em: EntityManager, subject: string, name: string, limit: number, now: Date, windowMs = HOUR_MS): Promise<RateLimitState> {
  const window = { name, limit, windowMs, now };
  return rateLimitState(await consumeWindow(em, subject, window), window);
}

/** `consumeRateLimit`'s counted row, for callers that read it with `rateLimitState` themselves. */
export async function consumeWindow(em: EntityManager, subject: string, window: Window): Promise<ConsumedRow | undefined> {
  const [row] = await sqlOf(em).rows<ConsumedRow>(CONSUME, [subject, ...consumeParameters(window)]);
  return row;
}

/**
 * Gives back one request counted by `consumeRateLimit` at `window.now` (it created nothing: a refused create): taken from the
 * window it was counted in, which is the previous one if a window began since.
 */
export async function refundRateLimit(em: EntityManager, subject: string, window: Window): Promise<void> {
  const [, countedIn, , ,] = consumeParameters(window);
  await em.getConnection().execute(
    `update rate_limit_window set
       count = case when window_start = ? then greatest(count - 1, 0) else count end,
       previous_count = case when window_start = ? then greatest(previous_count - 1, 0) else previous_count end
     where subject = ? and name = ?`,
    [countedIn, new Date((countedIn as Date).getTime() + window.windowMs), subject, window.name],
  );
}

/** Rows untouched for two of the longest windows hold nothing that still counts. */
export async function pruneRateLimits(em: EntityManager, now: Date): Promise<void> {
  await em.getConnection().execute('delete from rate_limit_window where window_start < ?', [new Date(now.getTime() - 2 * 24 * HOUR_MS)]);
}

/** "per minute", "per hour", "per 10 minutes"... */
export function perWindow(seconds: number): string {
  if (seconds === 60) return 'per minute';
  if (seconds === 3600) return 'per hour';
  return seconds % 60 === 0 ? `per ${seconds / 60} minutes` : `per ${seconds} seconds`;
}
