// One live run per key: a second run of the same job (a replaced job picked up early, a sweep) sees the lock and leaves.
// The locks of all of a process's runs are held on one connection of their own (RunLocks), so a run waiting on a platform
// holds no pooled database connection: a burst of publications waits on the platforms, not on the pool.
import pg from 'pg';
import type { JobHelpers, Task } from 'graphile-worker';
import type { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { coalesced } from '../db/sql.js';

const LOCKS = Symbol('herald run locks');

/**
 * Session advisory locks, one per running key, all on one connection (a session may hold any number of them). The locks and
 * unlocks asked while the connection is busy go together in its next query (coalesced): in a burst hundreds of runs start
 * and end at once, and one query each on one connection would queue them behind each other.
 */
export class RunLocks {
  /** Keys locked by this process: the session would grant a lock it holds again, so a second run here is told apart here. */
  private readonly held = new Set<string>();
  private readonly pool: pg.Pool;
  /** Locks (true) or unlocks (false) a key, with what was asked meanwhile: the function's result. */
  private readonly ask: (asked: { key: string; lock: boolean }) => Promise<boolean>;
  constructor(connectionString: string, logger: Logger) {
    // One connection, never closed for being idle (its locks would go with it); replaced when it is lost.
    this.pool = new pg.Pool({ connectionString, max: 1, idleTimeoutMillis: 0 });
    this.pool.on('error', (error) => logger.warn({ err: error.message }, 'worker lock connection lost'));
    this.pool.on('connect', (client) => client.on('error', (error) => logger.warn({ err: error.message }, 'worker lock connection error')));
    this.ask = coalesced(async (asked) => {
      const { rows } = await this.pool.query<{ done: boolean }>(
        `select case when asked.lock then pg_try_advisory_lock(hashtext(asked.key)) else pg_advisory_unlock(hashtext(asked.key)) end as done
         from unnest($1::text[], $2::boolean[]) with ordinality as asked(key, lock, n) order by asked.n`,
        [asked.map((each) => each.key), asked.map((each) => each.lock)],
      );
      return asked.map((_, index) => rows[index]?.done === true);
    });
  }

  async exclusively(key: string, run: () => Promise<void>): Promise<void> {
    if (this.held.has(key)) return;
    this.held.add(key);
    try {
      if (!(await this.ask({ key, lock: true }))) return;
      try {
        await run();
      } finally {
        await this.ask({ key, lock: false });
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
