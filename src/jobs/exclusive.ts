// One live run per key: a second run of the same job (a replaced job picked up early, a sweep) sees the lock and leaves.
import type { JobHelpers, Task } from 'graphile-worker';
import type { z } from 'zod';

export async function exclusively(helpers: JobHelpers, key: string, run: () => Promise<void>): Promise<void> {
  await helpers.withPgClient(async (client) => {
    const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [key]);
    if (!rows[0]?.locked) return;
    try {
      await run();
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [key]);
    }
  });
}

/**
 * A task whose jobs run one at a time per job key (`exclusively`) and come back while their work waits: `run` answers when
 * to run again (the job is added anew then, replacing itself under its key), or undefined when done.
 */
export function exclusiveTask<Payload>(spec: {
  task: string;
  payload: z.ZodType<Payload>;
  jobKey: (payload: Payload) => string;
  maxAttempts: number;
  run: (payload: Payload) => Promise<Date | undefined>;
}): Task {
  return async (raw, helpers) => {
    const payload = spec.payload.parse(raw);
    const jobKey = spec.jobKey(payload);
    await exclusively(helpers, jobKey, async () => {
      const runAt = await spec.run(payload);
      if (runAt) await helpers.addJob(spec.task, payload, { runAt, jobKey, jobKeyMode: 'replace', maxAttempts: spec.maxAttempts });
    });
  };
}
