// Sliding-window rate limits counted in Postgres, so they hold exactly across processes and restarts. Each (subject, name)
// has one row: the current fixed window's count and the previous window's; a request is allowed when the previous count,
// weighted by how much of it still overlaps the sliding window, plus the current count stays within the limit. This lets
// no double burst through at a window's edge (fixed windows did), and a refused request costs nothing. The subject is an
// organization id, or a prefixed key such as `login-email:<hash>` for limits that come before any organization.
import type { EntityManager } from '@mikro-orm/postgresql';

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

export async function consumeRateLimit(em: EntityManager, subject: string, name: string, limit: number, now: Date, windowMs = HOUR_MS): Promise<RateLimitState> {
  const windowStart = new Date(Math.floor(now.getTime() / windowMs) * windowMs);
  const previousStart = new Date(windowStart.getTime() - windowMs);
  const elapsed = now.getTime() - windowStart.getTime();
  const weight = 1 - elapsed / windowMs;
  // Every SET expression sees the row as it was: `previous` and `current` below are the counts carried into this window.
  const previous = 'case when w.window_start = ? then w.previous_count when w.window_start = ? then w.count else 0 end';
  const current = 'case when w.window_start = ? then w.count else 0 end';
  const fits = `(${previous}) * ?::float8 + (${current}) + 1 <= ?`;
  const fitsParams = [windowStart, previousStart, weight, windowStart, limit];
  const rows = await em.getConnection().execute<{ count: number; previous_count: number; granted: boolean }[]>(
    `insert into rate_limit_window as w (subject, name, window_start, count, previous_count, granted) values (?, ?, ?, ?, 0, ?)
     on conflict (subject, name) do update set
       previous_count = ${previous},
       count = (${current}) + case when ${fits} then 1 else 0 end,
       granted = ${fits},
       window_start = ?
     returning count, previous_count, granted`,
    [subject, name, windowStart, limit >= 1 ? 1 : 0, limit >= 1, windowStart, previousStart, windowStart, ...fitsParams, ...fitsParams, windowStart],
  );
  const row = rows[0];
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
