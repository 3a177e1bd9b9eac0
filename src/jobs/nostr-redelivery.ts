// Re-delivery of a published Nostr note to the relays that missed it (down, or silent): the very same signed event (its id
// does not change, relays keep one copy per id) is sent again with backoff, a bounded number of times; the item's
// meta.relays and warnings follow each answer (providers/nostr/delivery.ts), so REST, MCP and the console show where it stands.
// One job per item (job key), scheduled when its chain's publishing run ends and then by itself (helpers.addJob, runAt).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Task } from 'graphile-worker';
import type { Event } from 'nostr-tools/pure';
import { z } from 'zod';
import { PostSchema } from '../db/entities.js';
import type { Services } from '../../tools/types.js';
import { deliveryWarnings, isDeliveryWarning, deliveryMeta, redeliver, type Delivery } from '../../providers/nostr/delivery.js';
import { exclusively } from './exclusive.js';
import { providerEndpoints } from '../../tools/internal/integrations.js';
import { dialFor } from '../../tools/internal/typed-hosts.js';
import nostrProvider from '../../providers/nostr/index.js';

export const NOSTR_REDELIVERY_TASK = 'nostr_redeliver';
const jobKey = (postId: string) => `nostr-redeliver:${postId}`;

/** Attempts after the first send, and the wait before each: 1, 2, 4, 8, 16, 32 minutes then hourly (about 5 hours in all). Tests shorten them. */
export const redeliveryTiming = { attempts: 8, firstSeconds: 60, maxSeconds: 3600 };
const waitSeconds = (attempt: number) => Math.min(redeliveryTiming.maxSeconds, redeliveryTiming.firstSeconds * 2 ** Math.max(0, attempt - 1));

/**
 * Adds the re-delivery job of every published item of the chain that has relays pending and no job yet (a job already
 * waiting keeps its time). Run when a publishing run of the chain ends.
 */
export async function scheduleRelayRedeliveries(em: EntityManager, rootPostId: string, now: Date): Promise<void> {
  await em.getConnection().execute(
    `select graphile_worker.add_job(?, json_build_object('postId', item.id), run_at := ?::timestamptz, max_attempts := 1,
        job_key := 'nostr-redeliver:' || item.id, job_key_mode := 'preserve_run_at')
       from post item
      where item.root_post_id = ? and item.state = 'PUBLISHED' and item.deleted_at is null and item.release_meta->>'pendingRelays' is not null`,
    [NOSTR_REDELIVERY_TASK, new Date(now.getTime() + waitSeconds(1) * 1000).toISOString(), rootPostId],
  );
}

export function nostrRedeliveryTask(services: Services): Task {
  return async (raw, helpers) => {
    const { postId } = z.object({ postId: z.string().min(1) }).parse(raw);
    await exclusively(helpers, jobKey(postId), async () => {
      const em = services.orm.em.fork();
      const item = await em.findOne(PostSchema, { id: postId, deletedAt: null });
      const recorded = item?.publishProgress?.steps.event; // the signed event, recorded before it was first sent
      const event = recorded?.state === 'done' ? (recorded.result as Event) : undefined;
      if (!item || item.state !== 'PUBLISHED' || !item.releaseMeta?.pendingRelays || !event) return;
      const attempt = Number(item.releaseMeta.redeliveries ?? 0) + 1;
      const last = attempt >= redeliveryTiming.attempts;
      const dial = dialFor(services, providerEndpoints(services, nostrProvider));
      const delivery = await redeliver(JSON.parse(item.releaseMeta.relays ?? '{}') as Delivery, event, attempt, last, dial);
      item.releaseMeta = { ...deliveryMeta(item.releaseMeta, delivery), redeliveries: String(attempt) };
      const warnings = [...(item.releaseWarnings ?? []).filter((warning) => !isDeliveryWarning(warning)), ...deliveryWarnings(delivery)];
      item.releaseWarnings = warnings.length > 0 ? warnings : null;
      await em.flush();
      services.logger.info({ postId, attempt, pending: item.releaseMeta.pendingRelays ?? null }, 'nostr note sent again to the relays that missed it');
      if (item.releaseMeta.pendingRelays) {
        await helpers.addJob(NOSTR_REDELIVERY_TASK, { postId }, { runAt: new Date(services.now().getTime() + waitSeconds(attempt + 1) * 1000), jobKey: jobKey(postId), jobKeyMode: 'replace', maxAttempts: 1 });
      }
    });
  };
}
