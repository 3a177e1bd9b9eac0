// graphile-worker in the same database: the task list and the crontab. Each task is thin and calls tools/internal.
import pg from 'pg';
import { EventEmitter } from 'node:events';
import { run, type Runner, type Task, type WorkerEvents, type WorkerPool } from 'graphile-worker';
import { WorkerPresence } from './presence.js';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { publishChain } from '../../tools/internal/publish.js';
import type { Post } from '../db/entities.js';
import { PUBLISH_TASK, publishJobKey, sweepDuePosts } from '../../tools/internal/queue.js';
import { pruneRateLimits } from '../lib/rate-limit.js';
import { pruneExpiredAccess } from '../../tools/internal/oauth-apps.js';
import { silentLogger } from '../db/orm.js';
import { GENERATE_TASK } from '../../tools/internal/generation-run.js';
import { generateMediaTask } from './generate-media.js';
import { exclusiveTask, RunLocks } from './exclusive.js';
import { refreshExpiringTokens } from '../../tools/internal/integrations.js';
import { warnExpiringTokens } from '../../tools/internal/channel-health.js';
import { AGENT_API_CRONTAB, agentApiTasks } from './agent-api.js';
import { COMMENT_CRONTAB, commentTasks, startCommentPolling } from './comments.js';
import { NOSTR_REDELIVERY_TASK, nostrRedeliveryTask, scheduleRelayRedeliveries } from './nostr-redelivery.js';
import { platformChangeTask, sweepPendingChanges } from './platform-change.js';
import { CHANGE_TASK } from '../../tools/internal/platform-changes.js';
import { METRICS_HISTORY_CRONTAB, metricsHistoryTasks } from './metrics-history.js';
import { AUDIT_CRONTAB, auditTasks } from './audit.js';
import { FEEDS_CRONTAB, feedTasks } from './feeds.js';
import { RECURRENCE_CRONTAB, recurrenceTasks } from './recurrence.js';

export function publishPostTask(services: Services): Task {
  return exclusiveTask({
    task: PUBLISH_TASK,
    payload: z.object({ postId: z.string().min(1) }),
    jobKey: ({ postId }) => publishJobKey(postId),
    maxAttempts: 8,
    run: async ({ postId }) => {
      let chain: Post[] = [];
      const outcome = await publishChain(services, postId, { ranOn: (loaded) => (chain = loaded) });
      // A Nostr note that some relays missed is sent to them again later: asked only when an item of the chain (as this run
      // left it in memory, its outcome written) went out with relays pending, so other publications spend no round trip on it.
      if (chain.some((item) => item.state === 'PUBLISHED' && item.releaseMeta?.pendingRelays)) await scheduleRelayRedeliveries(services.orm.em.fork(), postId, services.now());
      return outcome.kind === 'waiting' ? outcome.runAt : undefined;
    },
  });
}

/** The tasks of the CPU and database work (WORKER_CONCURRENCY at a time); publishing has slots of its own (startWorker). */
export const taskList = (services: Services) => ({
  [GENERATE_TASK]: generateMediaTask(services),
  [NOSTR_REDELIVERY_TASK]: nostrRedeliveryTask(services),
  [CHANGE_TASK]: platformChangeTask(services),
  sweep_due_posts: (async () => {
    await sweepDuePosts(services.orm.em.fork(), services.now());
    await sweepPendingChanges(services.orm.em.fork(), services.now());
  }) as Task,
  prune_rate_limits: (async () => {
    await pruneRateLimits(services.orm.em.fork(), services.now());
  }) as Task,
  prune_expired: (async () => {
    await pruneExpiredAccess(services.orm.em.fork(), services.now());
  }) as Task,
  refresh_expiring_tokens: (async () => {
    await refreshExpiringTokens(services, services.now());
    await warnExpiringTokens(services, services.now());
  }) as Task,
  ...agentApiTasks(services),
  ...metricsHistoryTasks(services),
  ...commentTasks(services),
  ...auditTasks(services),
  ...feedTasks(services),
  ...recurrenceTasks(services),
});

export interface Worker {
  runner: Runner;
  /** Lets running jobs finish, releases the others, closes the pool. */
  stop(): Promise<void>;
}

/**
 * Every task's `helpers.addJob` with a `runAt` also wakes this process's workers at that time (the next item of a thread,
 * a platform's processing recheck, a generation check, a webhook retry), instead of at the next poll.
 */
function punctual(tasks: Record<string, Task>, arm: (at: number, publishing: boolean) => void, locks: RunLocks): Record<string, Task> {
  return Object.fromEntries(
    Object.entries(tasks).map(([name, task]) => [
      name,
      ((payload, helpers) => {
        const addJob: typeof helpers.addJob = async (identifier, jobPayload, spec) => {
          const job = await helpers.addJob(identifier, jobPayload, spec);
          if (spec?.runAt) arm(new Date(spec.runAt).getTime(), identifier === PUBLISH_TASK);
          return job;
        };
        return task(payload, Object.create(locks.on(helpers), { addJob: { value: addJob } }));
      }) as Task,
    ]),
  );
}

/** graphile-worker's poll: only a back-up of the timers of WorkerPresence (see presence.ts). */
const POLL_INTERVAL_MS = 10_000;

export async function startWorker(services: Services, connectionString: string): Promise<Worker> {
  const { workerConcurrency: concurrency, publishConcurrency } = services.config;
  // Our own pool, so a connection dropped under us (Ctrl-C reaches the embedded Postgres too) is logged, not fatal. No job
  // holds one of its connections while it runs (the runs' locks are on RunLocks' connection): they serve graphile-worker's
  // job queries, each runner's LISTEN and the presence queries, whatever the number of slots.
  const pgPool = new pg.Pool({ connectionString, max: concurrency + 8 });
  pgPool.on('error', (error) => services.logger.warn({ err: error.message }, 'worker database connection lost'));
  // Every client gets its own handler too: an idle client whose server went away must not crash the process.
  pgPool.on('connect', (client) => client.on('error', (error) => services.logger.warn({ err: error.message }, 'worker database client error')));
  const locks = new RunLocks(connectionString, services.logger);
  const workerPools: { pool: WorkerPool; slots: number; publishes: boolean }[] = [];
  // Any number of worker processes share the database: jobs left locked by a process that died are released by the
  // others (and by this one as it starts), never those of a live one; the per-post advisory lock still prevents two runs
  // of one post.
  const events: WorkerEvents = new EventEmitter() as WorkerEvents;
  const presence = new WorkerPresence({
    connectionString,
    pool: pgPool,
    logger: services.logger,
    wake: (jobs, publishing) => {
      for (const { pool, slots, publishes } of workerPools) if (publishing === undefined || publishing === publishes) pool.nudge(Math.min(jobs ?? slots, slots));
    },
    events,
  });
  // Jobs are locked in the name of the pool (graphile-worker 0.17) or of one of its workers: both are recorded as this process's.
  const register = (id: string) => void presence.register(id).catch(() => undefined); // logged, and tried again before a job is taken
  let starting = { slots: concurrency, publishes: false };
  events.on('pool:create', ({ workerPool: created }) => {
    workerPools.push({ pool: created, ...starting });
    register(created.id);
  });
  events.on('worker:create', ({ worker }) => register(worker.workerId));
  await presence.start();
  const arm = (at: number, publishing: boolean) => presence.arm(at, 1, false, publishing);
  const common = {
    pgPool,
    noHandleSignals: true,
    logger: silentLogger,
    events,
    // Awaited before each job is taken: every id that may lock a job is recorded first.
    forbiddenFlags: () => presence.recorded(),
  };
  const runner = await run({
    ...common,
    concurrency,
    pollInterval: POLL_INTERVAL_MS,
    taskList: punctual(taskList(services), arm, locks),
    crontab: `${services.config.sweepCron} sweep_due_posts ?max=1\n17 * * * * prune_rate_limits ?max=1\n43 3 * * * prune_expired ?max=1\n29 4 * * * refresh_expiring_tokens ?max=1\n${AGENT_API_CRONTAB}${METRICS_HISTORY_CRONTAB}${COMMENT_CRONTAB}${AUDIT_CRONTAB}${FEEDS_CRONTAB}${RECURRENCE_CRONTAB}`,
  });
  // Publishing waits on platforms most of its time: slots of its own, as many as PUBLISH_CONCURRENCY, the platform calls in
  // flight bounded by each provider's limits (tools/internal/publish-slots.ts), not by WORKER_CONCURRENCY.
  starting = { slots: publishConcurrency, publishes: true };
  const publisher = await run({
    ...common,
    concurrency: publishConcurrency,
    pollInterval: POLL_INTERVAL_MS,
    // The slots take their jobs from one local queue (graphile-worker's batching): woken at a due time it locks up to as many
    // jobs as there are slots in one get_job, and it is the pool's one poller when idle (the slots do not poll each on
    // their own). The completions of the jobs that end in the same tick go to Postgres in one call too.
    preset: { worker: { completeJobBatchDelay: 0, localQueue: { size: publishConcurrency } } },
    taskList: punctual({ [PUBLISH_TASK]: publishPostTask(services) }, arm, locks),
  });
  await startCommentPolling(runner).catch((error: Error) => services.logger.warn({ err: error.message }, 'could not start the comment poll'));
  return {
    runner,
    async stop() {
      await Promise.all([runner, publisher].map((each) => each.stop().catch((error: Error) => services.logger.warn({ err: error.message }, 'worker stop'))));
      await presence.stop();
      await locks.end();
      await pgPool.end().catch(() => undefined);
    },
  };
}
