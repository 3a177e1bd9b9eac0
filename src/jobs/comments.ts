// The comment poll's task (tools/internal/comment-poll.ts): one job under one key that runs again when the poll says, kept
// alive by the worker's start and a crontab safety net (a job that failed for good would otherwise end the chain).
import type { Runner, Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { POLL_JOB_KEY, POLL_TASK, pollDueComments } from '../../tools/internal/comment-poll.js';
import { exclusiveTask } from './exclusive.js';

export const commentTasks = (services: Services): Record<string, Task> => ({
  [POLL_TASK]: exclusiveTask({
    task: POLL_TASK,
    payload: z.object({}).loose(),
    jobKey: () => POLL_JOB_KEY,
    maxAttempts: 5,
    run: () => pollDueComments(services),
  }),
});

export const COMMENT_CRONTAB = `*/10 * * * * ${POLL_TASK} ?max=1\n`;

/** Starts the chain at once when no poll job is waiting (an existing one keeps its time). */
export async function startCommentPolling(runner: Runner): Promise<void> {
  await runner.addJob(POLL_TASK, {}, { jobKey: POLL_JOB_KEY, jobKeyMode: 'preserve_run_at', maxAttempts: 5 });
}
