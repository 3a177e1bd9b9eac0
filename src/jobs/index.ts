// graphile-worker in the same database: the task list and the crontab. Each task is thin and calls tools/internal.
import pg from 'pg';
import { run, type Runner, type Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { publishChain } from '../../tools/internal/publish.js';
import { PUBLISH_TASK, publishJobKey, sweepDuePosts } from '../../tools/internal/queue.js';
import { pruneRateLimits } from '../lib/rate-limit.js';
import { pruneExpiredAccess } from '../../tools/internal/oauth-apps.js';
import { silentLogger } from '../db/orm.js';
import { GENERATE_TASK, generateMediaTask } from './generate-media.js';
import { exclusively } from './exclusive.js';
import { refreshExpiringTokens } from '../../tools/internal/integrations.js';
import { warnExpiringTokens } from '../../tools/internal/channel-health.js';
import { AGENT_API_CRONTAB, agentApiTasks } from './agent-api.js';

const publishPayload = z.object({ postId: z.string().min(1) });

export function publishPostTask(services: Services): Task {
  return async (payload, helpers) => {
    const { postId } = publishPayload.parse(payload);
    await exclusively(helpers, publishJobKey(postId), async () => {
      const outcome = await publishChain(services, postId);
      if (outcome.kind === 'waiting') {
        await helpers.addJob(PUBLISH_TASK, { postId }, { runAt: outcome.runAt, jobKey: publishJobKey(postId), jobKeyMode: 'replace', maxAttempts: 8 });
      }
    });
  };
}

export const taskList = (services: Services) => ({
  [PUBLISH_TASK]: publishPostTask(services),
  [GENERATE_TASK]: generateMediaTask(services),
  sweep_due_posts: (async () => {
    await sweepDuePosts(services.orm.em.fork(), services.now());
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
});

export interface Worker {
  runner: Runner;
  /** Lets running jobs finish, releases the others, closes the pool. */
  stop(): Promise<void>;
}

export async function startWorker(services: Services, connectionString: string): Promise<Worker> {
  // Our own pool, so a connection dropped under us (Ctrl-C reaches the embedded Postgres too) is logged, not fatal.
  const pgPool = new pg.Pool({ connectionString, max: services.config.workerConcurrency + 2 });
  pgPool.on('error', (error) => services.logger.warn({ err: error.message }, 'worker database connection lost'));
  // Every client gets its own handler too: an idle client whose server went away must not crash the process.
  pgPool.on('connect', (client) => client.on('error', (error) => services.logger.warn({ err: error.message }, 'worker database client error')));
  // One worker process per database is the supported deployment: jobs left locked by a crashed run are released at start.
  // The per-post advisory lock still prevents two live runs of one post.
  await services.orm.em.fork().getConnection().execute('update graphile_worker._private_jobs set locked_at = null, locked_by = null where locked_at is not null');
  const runner = await run({
    pgPool,
    concurrency: services.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: silentLogger,
    taskList: taskList(services),
    crontab: `${services.config.sweepCron} sweep_due_posts ?max=1\n17 * * * * prune_rate_limits ?max=1\n43 3 * * * prune_expired ?max=1\n29 4 * * * refresh_expiring_tokens ?max=1\n${AGENT_API_CRONTAB}`,
  });
  return {
    runner,
    async stop() {
      await runner.stop().catch((error: Error) => services.logger.warn({ err: error.message }, 'worker stop'));
      await pgPool.end().catch(() => undefined);
    },
  };
}
