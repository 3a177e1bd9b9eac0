// What recoveries share (DESIGN.md §9 "Recovery identifies exactly one item"): after a create whose outcome is unknown, a
// lookup may take for the item only a marker Herald sent with it, or the same content created at or after the interrupted
// call began (less the clock skew allowed between Herald and the platform). An older post with the same text is never taken
// for it, and two candidates are never guessed between: the item then stops with "could not confirm" (`CouldNotConfirm`).
import { CouldNotConfirm, type StepAttempt } from './types.js';

/** How far a platform's clock may run behind Herald's: a lookup reads from this long before the call began. */
export const CLOCK_SKEW_MS = 2 * 60_000;

/** The earliest time (epoch milliseconds) the interrupted call's item may carry on the platform's clock. */
export const earliestCreation = (startedAt: Date) => startedAt.getTime() - CLOCK_SKEW_MS;

/** `earliestCreation` as a Date, for platforms queried with a date bound. */
export const recoveryWindowStart = (startedAt: Date) => new Date(earliestCreation(startedAt));

/** `earliestCreation` in epoch seconds, for platforms that count in seconds (Reddit, VK). */
export const earliestCreationSeconds = (startedAt: Date) => Math.floor(earliestCreation(startedAt) / 1000);

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
  return time !== undefined && time >= earliestCreation(attempt.startedAt);
}

/** Stops the item: the person checks `where` instead of Herald posting a second copy. */
export function couldNotConfirm(platform: string, why: string, where = 'the account'): CouldNotConfirm {
  return new CouldNotConfirm(`Could not confirm whether ${platform} published this item: ${why}. Check ${where} before publishing again, to avoid a duplicate.`);
}

/**
 * The one candidate among those matching the item and created since the attempt began; undefined when there is none. Two or
 * more cannot be told apart: the item stops, naming what to check.
 */
export function onlyCandidate<T>(candidates: T[], platform: string, what: string): T | undefined {
  if (candidates.length <= 1) return candidates[0];
  throw couldNotConfirm(platform, `${candidates.length} identical ${what}, all created since the interrupted attempt, cannot be told apart`, 'the account, then set the post\'s release id');
}
