// What recoveries share (DESIGN.md §9 "Recovery identifies exactly one item"): after a create whose outcome is unknown, a
// lookup may take for the item only a marker Herald sent with it, or the same content created at or after the interrupted
// call began (less the clock skew allowed between Herald and the platform). An older post with the same text is never taken
// for it, and two candidates are never guessed between: the item then stops with "could not confirm" (`CouldNotConfirm`).
// The skew allowance reaches back before the attempt began, so there a post matching only in part (its title, its words
// without their links, nothing at all for a story) may be an older one: only a marker or the whole item is taken (`identify`).
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

/** A post a lookup found that matches the interrupted call's item, wholly or in part (the caller compares what it can). */
export interface Candidate<T> {
  item: T;
  /** When the platform says it was created. Undated, it is never taken. */
  created: string | number | Date | null | undefined;
  /**
   * It carries Herald's marker, or the whole of what was sent as the platform stores it (every field of the create, e.g. a
   * WordPress post's title, content and featured image). False when only part of it could be compared (a title alone, text
   * with its links shortened away, nothing for a story).
   */
  whole: boolean;
}

/**
 * Whether something created at `created` was made since the attempt began, the skew allowance left out: for a lookup that can
 * compare nothing but the time (an Instagram story), where a post inside the allowance may as well be an older one. The
 * start is taken to the second, as platforms date posts, so a post made in the same second counts.
 */
export function createdSinceStart(attempt: StepAttempt, created: string | number | Date | null | undefined): boolean {
  const time = timeOf(created);
  return time !== undefined && time >= Math.floor(attempt.startedAt.getTime() / 1000) * 1000;
}

/**
 * The interrupted call's item among `candidates` (DESIGN.md §9 "Recovery identifies exactly one item"). Created before the
 * recovery window (the attempt's start less the clock skew), or undated, a candidate is never it. Within the window:
 * - a whole match (marker or whole content) is it; two whole matches cannot be told apart (could not confirm);
 * - without one, a partial match is it only when created at or after the attempt began: one dated inside the skew
 *   allowance before the start may as well be an older post of the same title as this one (a platform clock running behind
 *   Herald's), so the item stops with "could not confirm" rather than taking another post's id. Two partial matches since
 *   the start cannot be told apart either.
 * Undefined (nothing was created, as far as these candidates show) only when no candidate is in the window.
 */
export function identify<T>(attempt: StepAttempt, candidates: Candidate<T>[], platform: string, what: string, where?: string): T | undefined {
  const inWindow = candidates.filter((candidate) => createdSince(attempt, candidate.created));
  const whole = inWindow.filter((candidate) => candidate.whole);
  if (whole.length > 0) return onlyCandidate(whole.map((candidate) => candidate.item), platform, what);
  const beforeStart = inWindow.filter((candidate) => !createdSinceStart(attempt, candidate.created));
  if (beforeStart.length > 0) {
    throw couldNotConfirm(
      platform,
      `${what} matching it only in part (not its whole content) were made just before the interrupted attempt began (${beforeStart.length}), within the ${CLOCK_SKEW_MS / 60_000} minutes allowed for clock differences, so an older one cannot be told from this one`,
      where,
    );
  }
  return onlyCandidate(inWindow.map((candidate) => candidate.item), platform, what);
}
