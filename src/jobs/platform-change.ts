// The `platform_change` task: edits and deletions of what went out (tools/internal/platform-change-run.ts), one job per
// chain (job key `platform-change:<root>`). It holds the chain's publishing lock (`publish:<root>`), so it never runs while
// the chain is being published; when the lock is busy it comes back a few seconds later instead of being lost.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { runPlatformChanges } from '../../tools/internal/platform-change-run.js';
import { CHANGE_TASK, changeJobKey, scheduleChange } from '../../tools/internal/platform-changes.js';
import { publishJobKey } from '../../tools/internal/queue.js';

const BUSY_RETRY_MS = 5000;

export function platformChangeTask(services: Services): Task {
  return async (raw, helpers) => {
    const { postId } = z.object({ postId: z.string().min(1) }).parse(raw);
    const again = (runAt: Date) => helpers.addJob(CHANGE_TASK, { postId }, { runAt, jobKey: changeJobKey(postId), jobKeyMode: 'replace', maxAttempts: 8 });
    let ran = false;
    await helpers.withPgClient(async (client) => {
      const key = publishJobKey(postId);
      const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [key]);
      if (!rows[0]?.locked) return;
      ran = true;
      try {
        const outcome = await runPlatformChanges(services, postId);
        if (outcome.kind === 'waiting') await again(outcome.runAt);
      } finally {
        await client.query('select pg_advisory_unlock(hashtext($1))', [key]);
      }
    });
    if (!ran) await again(new Date(services.now().getTime() + BUSY_RETRY_MS));
  };
}

/** Re-enqueues chains with a change to make and no job (a crash between commit and enqueue); run with the publishing sweep. */
export async function sweepPendingChanges(em: EntityManager, now: Date): Promise<number> {
  const rows = await em.getConnection().execute<{ id: string }[]>(
    `select distinct item.root_post_id as id from post item
       where item.platform_change->>'state' = 'pending' and item.deleted_at is null
         and not exists (select 1 from graphile_worker.jobs job where job.key = 'platform-change:' || item.root_post_id)
       limit 500`,
  );
  for (const row of rows) await scheduleChange(em, row.id, now);
  return rows.length;
}
