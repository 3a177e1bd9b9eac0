// One live run per key: a second run of the same job (a replaced job picked up early, a sweep) sees the lock and leaves.
// The locks of all of a process's runs are held on one connection of their own (RunLocks), so a run waiting on a platform
// holds no pooled database connection: a burst of publications waits on the platforms, not on the pool.
import pg from 'pg';
import type { JobHelpers, Task } from 'graphile-worker';
import type { z } from 'zod';
import type { Logger } from '../lib/logger.js';

const LOCKS = Symbol('herald run locks');

/** Session advisory locks, one per running key, all on one connection (a session may hold any number of them). */
export class RunLocks {
  /** Keys locked by this process: the session would grant a lock it holds again, so a second run here is told apart here. */
  private readonly held = new Set<string>();
  private readonly pool: pg.Pool;
  constructor(connectionString: string, logger: Logger) {
    // One connection, never closed for being idle (its locks would go with it); replaced when it is lost.
    this.pool = new pg.Pool({ connectionString, max: 1, idleTimeoutMillis: 0 });
    this.pool.on('error', (error) => logger.warn({ err: error.message }, 'worker lock connection lost'));
    this.pool.on('connect', (client) => client.on('error', (error) => logger.warn({ err: error.message }, 'worker lock connection error')));
  }

  async exclusively(key: string, run: () => Promise<void>): Promise<void> {
    if (this.held.has(key)) return;
    this.held.add(key);
    try {
      const { rows } = await this.pool.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [key]);
      if (!rows[0]?.locked) return;
      try {
        await run();
      } finally {
        await this.pool.query('select pg_advisory_unlock(hashtext($1))', [key]);
      }
    } finally {
      this.held.delete(key);
    }
  }

  /** `helpers` with these locks, for `exclusively`. */
  on(helpers: JobHelpers): JobHelpers {
    return Object.create(helpers, { [LOCKS]: { value: this } }) as JobHelpers;
  }

  async end(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

export async function exclusively(helpers: JobHelpers, key: string, run: () => Promise<void>): Promise<void> {
  const locks = (helpers as JobHelpers & { [LOCKS]?: RunLocks })[LOCKS];
  if (!locks) throw new Error('exclusively: the task was not run by startWorker (no RunLocks on its helpers)');
  await locks.exclusively(key, run);
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
