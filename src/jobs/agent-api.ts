// Tasks of the agent-grade API: webhook fan-out and delivery, and the daily prune of idempotency keys and webhook history.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../../tools/types.js';
import { pruneIdempotencyKeys } from '../../tools/internal/idempotency.js';
import { DELIVER_TASK, deliverWebhook, deliveryJobKey, emitWebhookEvent, pruneWebhookHistory } from '../../tools/internal/webhooks.js';
import { exclusiveTask } from './exclusive.js';

const eventPayload = z.object({ eventId: z.string().min(1) });

export const agentApiTasks = (services: Services): Record<string, Task> => ({
  emit_webhook_event: async (payload) => {
    await emitWebhookEvent(services, eventPayload.parse(payload).eventId);
  },
  [DELIVER_TASK]: exclusiveTask({
    task: DELIVER_TASK,
    payload: z.object({ deliveryId: z.string().min(1) }),
    jobKey: ({ deliveryId }) => deliveryJobKey(deliveryId),
    maxAttempts: 3,
    run: async ({ deliveryId }) => {
      const outcome = await deliverWebhook(services, deliveryId);
      return outcome.kind === 'retry' ? outcome.runAt : undefined;
    },
  }),
  prune_agent_api: async () => {
    const em = services.orm.em.fork();
    await pruneIdempotencyKeys(em, services.now());
    await pruneWebhookHistory(em, services.now());
  },
});

export const AGENT_API_CRONTAB = '11 3 * * * prune_agent_api ?max=1\n';
