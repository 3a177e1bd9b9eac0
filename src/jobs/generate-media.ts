// The generation job: runs a recorded generation (tools/internal/generation-run.ts) and re-schedules itself while a model
// queue is still working, so no worker is held for the minutes a video takes.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { GENERATE_TASK, generationJobKey, runGeneration } from '../../tools/internal/generation-run.js';
import { exclusiveTask } from './exclusive.js';

export function generateMediaTask(services: Services): Task {
  return exclusiveTask({
    task: GENERATE_TASK,
    payload: z.object({ generationId: z.string().min(1) }),
    jobKey: ({ generationId }) => generationJobKey(generationId),
    maxAttempts: 5,
    run: async ({ generationId }) => {
      const outcome = await runGeneration(services, generationId);
      return outcome.kind === 'waiting' ? outcome.runAt : undefined;
    },
  });
}
