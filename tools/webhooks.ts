// Webhook endpoints of the organization (REST /webhooks): create (the secret is shown once), list, delete, rotate the secret,
// send a test event, read the deliveries with every attempt, replay one.
import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { idParam, pageInput, pageOutput, paged, wrapped } from './shapes.js';
import { WEBHOOK_EVENTS } from './internal/webhook-events.js';
import {
  createWebhook,
  deleteWebhook,
  deliverWebhook,
  deliveryRecords,
  findDelivery,
  findWebhook,
  listDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  sendTestEvent,
  toWebhookRecord,
} from './internal/webhooks.js';

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string(),
  createdAt: z.string(),
  previousSecretExpiresAt: z.string().optional().describe('After a rotation: until then deliveries also carry a signature made with the previous secret'),
});

const secretField = z.string().describe('The signing secret (whsec_…), shown only in this answer: store it now');

const deliverySchema = z.object({
  id: z.string().describe('The webhook-id header of every attempt of this delivery'),
  eventType: z.string(),
  state: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().describe('Attempts made on the retry schedule (replays not counted)'),
  nextAttemptAt: z.string().nullable(),
  lastStatus: z.number().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  payload: z.unknown().describe('The JSON body sent: {type, timestamp, data}'),
  attemptLog: z.array(
    z.object({
      attemptedAt: z.string(),
      trigger: z.enum(['automatic', 'replay']),
      status: z.number().nullable(),
      error: z.string().nullable(),
      durationMs: z.number(),
      responseExcerpt: z.string().nullable(),
    }),
  ),
});

export const createWebhookTool = defineTool({
  name: 'createWebhook',
  title: 'Create a webhook',
  description:
    `POST /webhooks {url, events, description?}: Herald POSTs the chosen events (${WEBHOOK_EVENTS.join(', ')}) to url, signed as Standard Webhooks describes ` +
    '(webhook-id, webhook-timestamp, webhook-signature headers). The answer carries the signing secret once.',
  annotations: writes,
  mcp: false,
  scope: 'organization:manage',
  acceptsIdempotencyKey: true,
  input: z.object({
    url: z.string().trim().min(1).max(2000).describe('Your receiver: a public http(s) URL'),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).describe('The events to receive'),
    description: z.string().max(200).optional(),
  }),
  output: webhookSchema.extend({ secret: secretField }),
  rest: { method: 'POST', path: '/webhooks' },
  handler: async (input, { em, caller, services }) => {
    const { webhook, secret } = await createWebhook(services, em, caller.organizationId, input);
    return { ...toWebhookRecord(webhook), secret };
  },
});

export const listWebhooksTool = defineTool({
  name: 'listWebhooks',
  title: 'List webhooks',
  description: 'GET /webhooks: the webhooks of this organization (never their secrets).',
  annotations: readOnly,
  mcp: false,
  scope: 'organization:manage',
  input: z.object({}),
  output: wrapped(z.array(webhookSchema)),
  rest: { method: 'GET', path: '/webhooks', toInput: () => ({}), toResponse: (output) => output.output },
  handler: async (_input, { em, caller }) => ({ output: (await listWebhooks(em, caller.organizationId)).map(toWebhookRecord) }),
});

export const deleteWebhookTool = defineTool({
  name: 'deleteWebhook',
  title: 'Delete a webhook',
  description: 'DELETE /webhooks/{id}: stops deliveries to this webhook at once, pending retries included.',
  annotations: { ...writes, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: false,
  scope: 'organization:manage',
  input: z.object({ id: idParam }),
  output: z.object({ id: z.string() }),
  rest: { method: 'DELETE', path: '/webhooks/:id' },
  handler: async (input, { em, caller, services }) => {
    await deleteWebhook(services, em, await findWebhook(em, caller.organizationId, input.id));
    return { id: input.id };
  },
});

export const rotateWebhookSecretTool = defineTool({
  name: 'rotateWebhookSecret',
  title: 'Rotate a webhook secret',
  description:
    'POST /webhooks/{id}/rotate-secret: a new signing secret, shown once. For 24 hours deliveries carry two signatures (new and previous secret) in webhook-signature, so your receiver can switch without losing events.',
  annotations: writes,
  mcp: false,
  scope: 'organization:manage',
  input: z.object({ id: idParam }),
  output: webhookSchema.extend({ secret: secretField }),
  rest: { method: 'POST', path: '/webhooks/:id/rotate-secret' },
  handler: async (input, { em, caller, services }) => {
    const webhook = await findWebhook(em, caller.organizationId, input.id);
    const secret = await rotateWebhookSecret(services, em, webhook);
    return { ...toWebhookRecord(webhook), secret };
  },
});

export const testWebhookTool = defineTool({
  name: 'testWebhook',
  title: 'Send a test event',
  description: 'POST /webhooks/{id}/test: sends a webhook.test event to this webhook at once and answers the delivery with its first attempt (retried like any event if it fails).',
  annotations: writes,
  mcp: false,
  scope: 'organization:manage',
  input: z.object({ id: idParam }),
  output: deliverySchema,
  rest: { method: 'POST', path: '/webhooks/:id/test' },
  handler: async (input, { em, caller, services }) => {
    const delivery = await sendTestEvent(services, em, await findWebhook(em, caller.organizationId, input.id));
    return (await deliveryRecords(services.orm.em.fork(), [delivery]))[0];
  },
});

export const webhookDeliveriesTool = defineTool({
  name: 'webhookDeliveries',
  title: 'Deliveries of a webhook',
  description: 'GET /webhooks/{id}/deliveries: newest first, each with its payload, state (pending, delivered, failed), next retry and every attempt (status, error, duration).',
  annotations: readOnly,
  mcp: false,
  scope: 'organization:manage',
  input: z.object({ id: idParam, ...pageInput }),
  output: z.object({ deliveries: z.array(deliverySchema), ...pageOutput }),
  rest: { method: 'GET', path: '/webhooks/:id/deliveries', toInput: ({ params, query }) => ({ id: params.id, page: query.page, pageSize: query.pageSize }) },
  handler: async (input, { em, caller }) => {
    const { deliveries, total } = await listDeliveries(em, await findWebhook(em, caller.organizationId, input.id), input.page, input.pageSize);
    return { deliveries, ...paged(total, input.page, input.pageSize) };
  },
});

export const replayWebhookDeliveryTool = defineTool({
  name: 'replayWebhookDelivery',
  title: 'Replay a delivery',
  description:
    'POST /webhooks/{id}/deliveries/{deliveryId}/replay: sends the delivery again now (same webhook-id and body, a new timestamp and signature) and answers it with the new attempt.',
  annotations: writes,
  mcp: false,
  scope: 'organization:manage',
  input: z.object({ id: idParam, deliveryId: idParam }),
  output: deliverySchema,
  rest: { method: 'POST', path: '/webhooks/:id/deliveries/:deliveryId/replay' },
  handler: async (input, { em, caller, services }) => {
    const webhook = await findWebhook(em, caller.organizationId, input.id);
    const delivery = await findDelivery(em, webhook, input.deliveryId);
    await deliverWebhook(services, delivery.id, 'replay');
    const fresh = services.orm.em.fork();
    return (await deliveryRecords(fresh, [await findDelivery(fresh, webhook, delivery.id)]))[0];
  },
});

export const webhookTools = [
  createWebhookTool,
  listWebhooksTool,
  deleteWebhookTool,
  rotateWebhookSecretTool,
  testWebhookTool,
  webhookDeliveriesTool,
  replayWebhookDeliveryTool,
];
