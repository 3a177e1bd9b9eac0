// What the tests of comments and changes on the platform share: a comment poll at a given moment, and the platform-change
// job run until it settles (each re-run at the moment the job asked for, on the test's clock).
import { pollDueComments } from '../../tools/internal/comment-poll.js';
import { runPlatformChanges, type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import type { Herald } from './harness.js';

/** Polls the comments due at `when` (a date, or minutes from now), then gives the clock back. */
export async function pollCommentsAt(herald: Herald, when: Date | number): Promise<void> {
  herald.setNow(typeof when === 'number' ? new Date(Date.now() + when * 60_000) : when);
  try {
    await pollDueComments(herald.services);
  } finally {
    herald.setNow(undefined);
  }
}

/** Runs the platform changes of `rootId` until they stop waiting; each run's outcome. */
export async function changeUntilSettled(herald: Herald, rootId: string): Promise<ChangeOutcome[]> {
  const runs: ChangeOutcome[] = [];
  try {
    for (let run = 0; run < 20; run++) {
      const outcome = await runPlatformChanges(herald.services, rootId);
      runs.push(outcome);
      if (outcome.kind !== 'waiting') return runs;
      herald.setNow(new Date(Math.max(outcome.runAt.getTime(), Date.now()) + 1000));
    }
  } finally {
    herald.setNow(undefined);
  }
  throw new Error(`changes of ${rootId} did not settle`);
}
