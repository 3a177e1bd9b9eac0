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
import { exclusiveTask } from './exclusive.js';
import { refreshExpiringTokens } from '../../tools/internal/integrations.js';
import { warnExpiringTokens } from '../../tools/internal/channel-health.js';
import { AGENT_API_CRONTAB, agentApiTasks } from './agent-api.js';
import { COMMENT_CRONTAB, commentTasks, startCommentPolling } from './comments.js';
import { NOSTR_REDELIVERY_TASK, nostrRedeliveryTask, scheduleRelayRedeliveries } from './nostr-redelivery.js';
import { platformChangeTask, sweepPendingChanges } from './platform-change.js';
import { CHANGE_TASK } from '../../tools/internal/platform-changes.js';
import { METRICS_HISTORY_CRONTAB, metricsHistoryTasks } from './metrics-history.js';
import { AUDIT_CRONTAB, auditTasks } from './audit.js';

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

export const taskList = (services: Services) => ({
  [PUBLISH_TASK]: publishPostTask(services),
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
function punctual(tasks: Record<string, Task>, arm: (at: number) => void): Record<string, Task> {
  return Object.fromEntries(
    Object.entries(tasks).map(([name, task]) => [
      name,
      ((payload, helpers) => {
        const addJob: typeof helpers.addJob = async (identifier, jobPayload, spec) => {
          const job = await helpers.addJob(identifier, jobPayload, spec);
          if (spec?.runAt) arm(new Date(spec.runAt).getTime());
          return job;
        };
        return task(payload, Object.create(helpers, { addJob: { value: addJob } }));
      }) as Task,
    ]),
  );
}

/** graphile-worker's poll: only a back-up of the timers of WorkerPresence (see presence.ts). */
const POLL_INTERVAL_MS = 10_000;

export async function startWorker(services: Services, connectionString: string): Promise<Worker> {
  // Our own pool, so a connection dropped under us (Ctrl-C reaches the embedded Postgres too) is logged, not fatal.
  const pgPool = new pg.Pool({ connectionString, max: services.config.workerConcurrency + 2 });
  pgPool.on('error', (error) => services.logger.warn({ err: error.message }, 'worker database connection lost'));
  // Every client gets its own handler too: an idle client whose server went away must not crash the process.
  pgPool.on('connect', (client) => client.on('error', (error) => services.logger.warn({ err: error.message }, 'worker database client error')));
  const concurrency = services.config.workerConcurrency;
  let workerPool: WorkerPool | undefined;
  // Any number of worker processes share the database: jobs left locked by a process that died are released by the
  // others (and by this one as it starts), never those of a live one; the per-post advisory lock still prevents two runs
  // of one post.
  const events: WorkerEvents = new EventEmitter() as WorkerEvents;
  const presence = new WorkerPresence({ connectionString, pool: pgPool, logger: services.logger, wake: (jobs) => workerPool?.nudge(Math.min(jobs ?? concurrency, concurrency)), events });
  // Jobs are locked in the name of the pool (graphile-worker 0.17) or of one of its workers: both are recorded as this process's.
  const register = (id: string) => void presence.register(id).catch(() => undefined); // logged, and tried again before a job is taken
  events.on('pool:create', ({ workerPool: created }) => {
    workerPool = created;
    register(created.id);
  });
  events.on('worker:create', ({ worker }) => register(worker.workerId));
  await presence.start();
  const runner = await run({
    pgPool,
    concurrency,
    noHandleSignals: true,
    pollInterval: POLL_INTERVAL_MS,
    logger: silentLogger,
    events,
    // Awaited before each job is taken: every id that may lock a job is recorded first.
    forbiddenFlags: () => presence.recorded(),
    taskList: punctual(taskList(services), (at) => presence.arm(at)),
    crontab: `${services.config.sweepCron} sweep_due_posts ?max=1\n17 * * * * prune_rate_limits ?max=1\n43 3 * * * prune_expired ?max=1\n29 4 * * * refresh_expiring_tokens ?max=1\n${AGENT_API_CRONTAB}${METRICS_HISTORY_CRONTAB}${COMMENT_CRONTAB}${AUDIT_CRONTAB}`,
  });
  await startCommentPolling(runner).catch((error: Error) => services.logger.warn({ err: error.message }, 'could not start the comment poll'));
  return {
    runner,
    async stop() {
      await runner.stop().catch((error: Error) => services.logger.warn({ err: error.message }, 'worker stop'));
      await presence.stop();
      await pgPool.end().catch(() => undefined);
    },
  };
}
