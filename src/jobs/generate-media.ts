// The generation job: runs a recorded generation (tools/internal/generation-run.ts) and re-schedules itself while a model
// queue is still working, so no worker is held for the minutes a video takes.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { GENERATE_TASK, generationJobKey, runGeneration } from '../../tools/internal/generation-run.js';
import { exclusively } from './exclusive.js';

const payload = z.object({ generationId: z.string().min(1) });

export function generateMediaTask(services: Services): Task {
  return async (raw, helpers) => {
    const { generationId } = payload.parse(raw);
    await exclusively(helpers, generationJobKey(generationId), async () => {
      const outcome = await runGeneration(services, generationId);
      if (outcome.kind === 'waiting') {
        await helpers.addJob(GENERATE_TASK, { generationId }, { runAt: outcome.runAt, jobKey: generationJobKey(generationId), jobKeyMode: 'replace', maxAttempts: 5 });
      }
    });
  };
}

export { GENERATE_TASK };
