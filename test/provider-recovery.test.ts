// providers/recovery.ts `identify` (DESIGN.md §9 "Recovery identifies exactly one item", issue 31): after a create of unknown
// outcome, a post matching the item only in part (its title, its words without their links) is taken only when the platform
// dates it at or after the attempt's start; inside the clock-skew allowance before the start only a marker or the whole
// content identifies it, and two that could be it stop the item with "could not confirm".
import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MS, createdSinceStart, identify, type Candidate } from '../providers/recovery.js';
import { CouldNotConfirm } from '../providers/types.js';

const startedAt = new Date('2026-12-02T10:00:00.400Z');
const attempt = { startedAt };
/** A platform date `seconds` from the attempt's start, as a platform counting in whole seconds writes it. */
const at = (seconds: number) => new Date(Math.floor(startedAt.getTime() / 1000) * 1000 + seconds * 1000).toISOString();
const candidate = (id: string, seconds: number, whole: boolean): Candidate<string> => ({ item: id, created: at(seconds), whole });
const run = (candidates: Candidate<string>[]) => identify(attempt, candidates, 'Example', 'posts titled "Weekly"');
const refusal = (candidates: Candidate<string>[]) => {
  try {
    run(candidates);
  } catch (error) {
    return error;
  }
  throw new Error('expected "could not confirm"');
};

describe('identify: the one post an interrupted create made', () => {
  it('never takes an older post matching only in part, made 35 s before the attempt inside the skew allowance', () => {
    const error = refusal([candidate('older', -35, false)]);
    expect(error).toBeInstanceOf(CouldNotConfirm);
    expect((error as Error).message).toBe(
      'Could not confirm whether Example published this item: posts titled "Weekly" matching it only in part (not its whole content) were made just before the interrupted attempt began (1), within the 2 minutes allowed for clock differences, so an older one cannot be told from this one. Check the account before publishing again, to avoid a duplicate.',
    );
  });

  it('takes the whole match (marker or whole content) over an older partial one, even dated before the start (a clock behind)', () => {
    expect(run([candidate('older', -35, false), candidate('ours', 0, true)])).toBe('ours');
    expect(run([candidate('ours', -20, true), candidate('older', -35, false)])).toBe('ours');
  });

  it('takes a partial match made since the attempt began, the same second included, when nothing older is in the window', () => {
    expect(run([candidate('ours', 0, false)])).toBe('ours');
    expect(run([candidate('ours', 3, false), candidate('long ago', -CLOCK_SKEW_MS / 1000 - 60, false)])).toBe('ours');
  });

  it('stops when two could be it: two whole matches, or a partial one since the start beside an older partial one', () => {
    expect((refusal([candidate('a', -10, true), candidate('b', 2, true)]) as Error).message).toMatch(/^Could not confirm whether Example published this item: 2 identical posts titled "Weekly"/);
    expect(refusal([candidate('older', -35, false), candidate('ours', 2, false)])).toBeInstanceOf(CouldNotConfirm);
    expect(refusal([candidate('a', 1, false), candidate('b', 2, false)])).toBeInstanceOf(CouldNotConfirm);
  });

  it('dates a post "since the start" to the second, the skew allowance left out, for lookups that compare nothing else (a story)', () => {
    expect([createdSinceStart(attempt, at(0)), createdSinceStart(attempt, at(1)), createdSinceStart(attempt, at(-1)), createdSinceStart(attempt, undefined)]).toEqual([true, true, false, false]);
  });

  it('answers nothing was made when no candidate is in the window (older than the skew allowance, or undated)', () => {
    expect(run([])).toBeUndefined();
    expect(run([candidate('last week', -7 * 86_400, true), { item: 'undated', created: undefined, whole: true }])).toBeUndefined();
  });
});
