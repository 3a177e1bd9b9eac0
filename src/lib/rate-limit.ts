// Fixed one-hour windows counted in Postgres, so limits hold across processes and restarts. The subject is an
// organization id, or a prefixed key such as `login-email:<hash>` for limits that come before any organization.
import type { EntityManager } from '@mikro-orm/postgresql';

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

const WINDOW_MS = 60 * 60 * 1000;

export async function consumeRateLimit(em: EntityManager, subject: string, name: string, limit: number, now: Date): Promise<RateLimitState> {
  const windowStart = new Date(Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS);
  const rows = await em.getConnection().execute<{ count: number }[]>(
    `insert into rate_limit_counter (organization_id, name, window_start, count) values (?, ?, ?, 1)
     on conflict (organization_id, name, window_start) do update set count = rate_limit_counter.count + 1
     returning count`,
    [subject, name, windowStart],
  );
  const count = Number(rows[0]?.count ?? 1);
  const resetSeconds = Math.max(1, Math.ceil((windowStart.getTime() + WINDOW_MS - now.getTime()) / 1000));
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
}

export async function pruneRateLimits(em: EntityManager, now: Date): Promise<void> {
  await em.getConnection().execute('delete from rate_limit_counter where window_start < ?', [new Date(now.getTime() - 2 * WINDOW_MS)]);
}
