// Publishing jobs in graphile-worker, written with SQL on the caller's transaction so a post and its job commit together.
import type { EntityManager } from '@mikro-orm/postgresql';

export const PUBLISH_TASK = 'publish_post';
export const publishJobKey = (rootPostId: string) => `publish:${rootPostId}`;

/**
 * A post's publishing job runs this long before the post's date: its run takes the post's lock and reads its chain and
 * channel ahead, then waits for the date itself before it calls the platform (publish.ts). At a round hour, when a thousand
 * posts fall due at once, the first sends go at the instant instead of after a thousand chain reads.
 */
export const PUBLISH_LEAD_MS = 1000;

/** When the job of a post due at `publishDate` runs. */
export const publishJobAt = (publishDate: Date): Date => new Date(publishDate.getTime() - PUBLISH_LEAD_MS);

/**
 * Adds or replaces the job of a root post due at `publishDate` (one job per post: rescheduling replaces, it never
 * duplicates; it runs PUBLISH_LEAD_MS before), and tells the worker processes its time (NOTIFY herald_job_scheduled, sent at
 * commit), so one wakes at that moment rather than at its next poll (src/jobs/presence.ts).
 */
export async function schedulePublish(em: EntityManager, rootPostId: string, publishDate: Date): Promise<void> {
  const runAt = publishJobAt(publishDate);
  await em.getConnection().execute(
    `select graphile_worker.add_job(?, json_build_object('postId', ?::text), run_at := ?::timestamptz, max_attempts := 8, job_key := ?, job_key_mode := 'replace'),
       pg_notify('herald_job_scheduled', ?)`,
    [PUBLISH_TASK, rootPostId, runAt.toISOString(), publishJobKey(rootPostId), String(runAt.getTime())],
    'all',
    em.getTransactionContext(),
  );
}

/** Removes a pending job. A job already running checks the post's state before each item and stops. */
export async function cancelPublish(em: EntityManager, rootPostId: string): Promise<void> {
  await em.getConnection().execute('select graphile_worker.remove_job(?)', [publishJobKey(rootPostId)], 'all', em.getTransactionContext());
}

export async function hasPublishJob(em: EntityManager, rootPostId: string): Promise<boolean> {
  const rows = await em.getConnection().execute('select 1 from graphile_worker.jobs where key = ?', [publishJobKey(rootPostId)]);
  return rows.length > 0;
}

/** Re-enqueues due QUEUE posts that lost their job (a crash between commit and enqueue, a manual database edit). */
export async function sweepDuePosts(em: EntityManager, now: Date): Promise<number> {
  const rows = await em.getConnection().execute<{ id: string }[]>(
    `select distinct root.id from post item
       join post root on root.id = item.root_post_id
       where item.state = 'QUEUE' and item.deleted_at is null and root.deleted_at is null and root.publish_date <= ?
         and not exists (select 1 from graphile_worker.jobs job where job.key = 'publish:' || root.id)
       limit 500`,
    [now],
  );
  for (const row of rows) await schedulePublish(em, row.id, now);
  return rows.length;
}
