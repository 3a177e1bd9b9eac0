// What a recovery may take for the item it recovers (DESIGN.md §9): a marker Herald sent with it, or the same content created
// at or after the interrupted call began. An older post with the same text is never taken for it, and two candidates are
// never guessed between: the item then stops with "could not confirm" instead of linking the wrong post.
import { PlatformHttpError } from '../src/lib/platform-http.js';
import type { StepAttempt } from './types.js';

/** How far a platform's clock may run behind Herald's (its timestamps are compared with Herald's start time). */
export const CLOCK_SKEW_MS = 2 * 60_000;

/** A platform timestamp in milliseconds: ISO 8601 (Meta's "+0000" offsets included), or epoch milliseconds. */
export function timeOf(value: string | number | Date | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const parsed = Date.parse(value.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** Whether something created at `created` may be the result of the interrupted call (no timestamp: it cannot be told). */
export function createdSince(attempt: StepAttempt, created: string | number | Date | null | undefined): boolean {
  const time = timeOf(created);
  return time !== undefined && time >= attempt.startedAt.getTime() - CLOCK_SKEW_MS;
}

/**
 * The one candidate among those matching the item and created since the attempt began; undefined when there is none. Two or
 * more cannot be told apart: the item stops, naming what to check.
 */
export function onlyCandidate<T>(candidates: T[], platform: string, what: string): T | undefined {
  if (candidates.length <= 1) return candidates[0];
  throw new PlatformHttpError({
    status: 409,
    retryable: false,
    bodyExcerpt: '',
    message: `could not confirm which of ${candidates.length} identical ${what} on ${platform}, all created since the interrupted attempt, is this post's: check the account, then set its release id`,
  });
}
