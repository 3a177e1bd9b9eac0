// Webhooks, signed as Standard Webhooks describes (https://www.standardwebhooks.com): every delivery carries `webhook-id`
// (the delivery's id, the same on every attempt and replay), `webhook-timestamp` (Unix seconds) and `webhook-signature`
// (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the base64 part of the endpoint's `whsec_` secret).
// Deliveries go through the SSRF guard, one graphile-worker job each, retried with backoff for about a day; every attempt
// is recorded.
import { createHmac, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  WebhookAttemptSchema,
  WebhookDeliverySchema,
  WebhookEventSchema,
  WebhookSchema,
  type DeliveryState,
  type Webhook,
  type WebhookDelivery,
} from '../../src/db/agent-entities.js';
import { IntegrationSchema } from '../../src/db/entities.js';
import { DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { createUrlGuard, FetchFailedError, type UrlGuard } from '../../src/lib/ssrf.js';
import type { Services } from '../types.js';
import { TEST_EVENT } from './webhook-events.js';
import { webhookAttempted } from '../../src/lib/metrics.js';
import { recordChange } from './audit.js';

export const DELIVER_TASK = 'deliver_webhook';
export const deliveryJobKey = (deliveryId: string) => `webhook:${deliveryId}`;
/** Waits after each failed automatic attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 8 h, 8 h (8 attempts over about 23.6 hours). */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 28800, 28800];
/** After a rotation the old secret still signs (a second signature) for a day, so receivers can switch without losing events. */
const PREVIOUS_SECRET_HOURS = 24;
const MAX_ENDPOINTS = 20;
const HISTORY_DAYS = 30;

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The Standard Webhooks signature of one delivery attempt. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The guard for webhook URLs: no private or loopback address unless WEBHOOKS_ALLOW_PRIVATE (or DISABLE_SSRF_PROTECTION). */
export function webhookGuard(services: Services): UrlGuard {
  return createUrlGuard({
    userAgent: 'Herald-Webhooks/0.1',
    connectTimeoutMs: 5000,
    timeoutMs: 15_000,
    protection: services.config.ssrfProtection && !services.config.webhooksAllowPrivate,
  });
}

export interface WebhookRecord {
  id: string;
  url: string;
  events: string[];
  description: string;
  createdAt: string;
  /** Until then the previous secret signs too (after a rotation). */
  previousSecretExpiresAt?: string;
}

export function toWebhookRecord(webhook: Webhook): WebhookRecord {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    description: webhook.description,
    createdAt: webhook.createdAt.toISOString(),
    ...(webhook.previousSecretExpiresAt ? { previousSecretExpiresAt: webhook.previousSecretExpiresAt.toISOString() } : {}),
  };
}

async function checkUrl(services: Services, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidInput(`"${raw}" is not an absolute URL.`, { hint: 'Give the full address of your receiver, e.g. https://example.com/webhooks/herald.' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidInput('Webhook URLs must be http or https.');
  if (url.username || url.password) throw invalidInput('Webhook URLs may not carry a user name or password: the signature authenticates Herald.');
  try {
    await webhookGuard(services).check(url);
  } catch (error) {
    if (!(error instanceof FetchFailedError)) throw error;
    throw invalidInput(`This webhook URL cannot be used: ${error.message.replace(/^fetch failed: /, '')}.`, {
      hint: 'Use a public address. To deliver to a private network or this machine, the operator sets WEBHOOKS_ALLOW_PRIVATE=true.',
    });
  }
  return url.toString();
}

export async function findWebhook(em: EntityManager, organizationId: string, id: string): Promise<Webhook> {
  const webhook = await em.findOne(WebhookSchema, { id, organizationId, deletedAt: null });
  if (!webhook) throw notFound(`Webhook ${id} not found.`, { hint: 'GET /webhooks lists the webhooks of this organization.' });
  return webhook;
}

export async function listWebhooks(em: EntityManager, organizationId: string): Promise<Webhook[]> {
  return em.find(WebhookSchema, { organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

/** Creates an endpoint; answers it with its secret, which is never shown again. */
export async function createWebhook(
  services: Services,
  em: EntityManager,
  organizationId: string,
  input: { url: string; events: string[]; description?: string },
): Promise<{ webhook: Webhook; secret: string }> {
  if ((await em.count(WebhookSchema, { organizationId, deletedAt: null })) >= MAX_ENDPOINTS) {
    throw new DomainError('conflict', `This organization already has ${MAX_ENDPOINTS} webhooks.`, { hint: 'Delete one you no longer use (DELETE /webhooks/{id}).' });
  }
  const url = await checkUrl(services, input.url);
  const secret = newWebhookSecret();
  const webhook = em.create(WebhookSchema, {
    id: newId(),
    organizationId,
    url,
    events: [...new Set(input.events)],
    description: input.description?.trim() ?? '',
    secret: services.secrets.seal(secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: services.now(),
    deletedAt: null,
  });
  await em.flush();
  await recordChange(em, organizationId, { action: 'webhook.created', target: { kind: 'webhook', id: webhook.id }, did: `created a webhook to ${webhook.url}`, changes: { url: webhook.url, events: webhook.events, description: webhook.description } });
  return { webhook, secret };
}

/** A new secret; the old one keeps signing (as a second signature) for a day. */
export async function rotateWebhookSecret(services: Services, em: EntityManager, webhook: Webhook): Promise<string> {
  const secret = newWebhookSecret();
  webhook.previousSecret = webhook.secret;
  webhook.previousSecretExpiresAt = new Date(services.now().getTime() + PREVIOUS_SECRET_HOURS * 3600_000);
  webhook.secret = services.secrets.seal(secret);
  await em.flush();
  await recordChange(em, webhook.organizationId, { action: 'webhook.secret_rotated', target: { kind: 'webhook', id: webhook.id }, did: `rotated the signing secret of the webhook to ${webhook.url}` });
  return secret;
}

export async function deleteWebhook(services: Services, em: EntityManager, webhook: Webhook): Promise<void> {
  webhook.deletedAt = services.now();
  await em.flush();
  await recordChange(em, webhook.organizationId, { action: 'webhook.removed', target: { kind: 'webhook', id: webhook.id }, did: `removed the webhook to ${webhook.url}`, changes: { url: webhook.url, events: webhook.events } });
  // Deliveries still waiting for a retry have nowhere to go.
  await em.getConnection().execute(
    `select graphile_worker.remove_job('webhook:' || id) from webhook_delivery where webhook_id = ? and state = 'pending'`,
    [webhook.id],
  );
}

/** Queues the delivery job (replacing a waiting one), in the caller's transaction when it has one. */
export async function scheduleDelivery(em: EntityManager, deliveryId: string, runAt: Date): Promise<void> {
  await em.getConnection().execute(
    `select graphile_worker.add_job(?, json_build_object('deliveryId', ?::text), run_at := ?::timestamptz, max_attempts := 3, job_key := ?, job_key_mode := 'replace')`,
    [DELIVER_TASK, deliveryId, runAt.toISOString(), deliveryJobKey(deliveryId)],
    'all',
    em.getTransactionContext(),
  );
}

/** The body of a delivery: Standard Webhooks' `{type, timestamp, data}`. */
const bodyOf = (type: string, timestamp: Date, data: Record<string, unknown>) => JSON.stringify({ type, timestamp: timestamp.toISOString(), data });

/** The fan-out of one event (job emit_webhook_event): a delivery per endpoint listening to it, each with its job. */
export async function emitWebhookEvent(services: Services, eventId: string): Promise<number> {
  const em = services.orm.em.fork();
  const event = await em.findOne(WebhookEventSchema, { id: eventId });
  if (!event) return 0;
  const webhooks = (await listWebhooks(em, event.organizationId)).filter((webhook) => webhook.events.includes(event.type));
  if (webhooks.length === 0) return 0;
  const data: Record<string, unknown> = { ...event.data };
  if (typeof data.integrationId === 'string') {
    const integration = await em.findOne(IntegrationSchema, { id: data.integrationId, organizationId: event.organizationId });
    if (integration) data.integration = { id: integration.id, name: integration.name, platform: integration.providerIdentifier, profile: integration.profile };
  }
  const body = bodyOf(event.type, event.createdAt, data);
  let created = 0;
  await em.transactional(async (transaction) => {
    for (const webhook of webhooks) {
      const id = `msg_${newId()}`;
      const rows = await transaction.getConnection().execute<unknown[]>(
        `insert into webhook_delivery (id, webhook_id, organization_id, event_id, event_type, body, state, attempts, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) on conflict (event_id, webhook_id) do nothing returning id`,
        [id, webhook.id, event.organizationId, event.id, event.type, body, services.now(), services.now()],
        'all',
        transaction.getTransactionContext(),
      );
      if (rows.length === 0) continue; // this event was already fanned out to this endpoint (the job ran twice)
      await scheduleDelivery(transaction, id, services.now());
      created += 1;
    }
  });
  return created;
}

export type DeliveryOutcome = { kind: 'delivered' } | { kind: 'retry'; runAt: Date } | { kind: 'failed'; error: string } | { kind: 'skipped'; reason: string };

async function excerptOf(body: Readable, limit = 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= limit) break;
    }
  } catch {
    // A receiver that times out mid-body: keep what came.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/**
 * One attempt of a delivery. Automatic attempts follow the retry schedule (a 2xx delivers; anything else, a time-out or a
 * refused connection waits for the next try, and the 8th failure fails the delivery); an address the SSRF guard refuses
 * fails at once. A replay is one more attempt now: it does not change the schedule of a delivery still being retried.
 */
export async function deliverWebhook(services: Services, deliveryId: string, trigger: 'automatic' | 'replay' = 'automatic'): Promise<DeliveryOutcome> {
  const em = services.orm.em.fork();
  const delivery = await em.findOne(WebhookDeliverySchema, { id: deliveryId });
  if (!delivery) return { kind: 'skipped', reason: 'delivery not found' };
  if (trigger === 'automatic' && delivery.state !== 'pending') return { kind: 'skipped', reason: `delivery is ${delivery.state}` };
  const now = services.now();
  if (trigger === 'automatic' && delivery.nextAttemptAt && delivery.nextAttemptAt.getTime() > now.getTime() + 1000) return { kind: 'retry', runAt: delivery.nextAttemptAt };
  const webhook = await em.findOne(WebhookSchema, { id: delivery.webhookId, deletedAt: null });
  if (!webhook) {
    Object.assign(delivery, { state: 'failed', nextAttemptAt: null, lastError: 'The webhook was deleted.' });
    await em.flush();
    return { kind: 'failed', error: 'The webhook was deleted.' };
  }
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = [signWebhook(services.secrets.open(webhook.secret), delivery.id, timestamp, delivery.body)];
  if (webhook.previousSecret && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt.getTime() > now.getTime()) {
    signatures.push(signWebhook(services.secrets.open(webhook.previousSecret), delivery.id, timestamp, delivery.body));
  }
  const started = Date.now();
  let status: number | null = null;
  let error: string | null = null;
  let responseExcerpt: string | null = null;
  let permanent = false;
  try {
    const response = await webhookGuard(services).send(webhook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatures.join(' '),
      },
      body: delivery.body,
    });
    status = response.status;
    responseExcerpt = (await excerptOf(response.body)) || null;
    if (status >= 300 && status < 400) error = `The receiver answered ${status}: redirects are not followed, use the final URL.`;
    else if (status < 200 || status >= 300) error = `The receiver answered ${status}.`;
  } catch (raw) {
    const message = (raw as Error).message.replace(/^fetch failed: /, '');
    permanent = raw instanceof FetchFailedError && /blocked address|not an allowed/.test(message);
    error = permanent ? `Refused by the SSRF guard: ${message}. The operator sets WEBHOOKS_ALLOW_PRIVATE=true to deliver to private addresses.` : `The receiver could not be reached: ${message}.`;
  }
  em.create(WebhookAttemptSchema, {
    id: newId(),
    deliveryId: delivery.id,
    attemptedAt: now,
    trigger,
    status,
    error,
    durationMs: Date.now() - started,
    responseExcerpt,
  });
  webhookAttempted(trigger, error === null);
  delivery.lastStatus = status;
  delivery.lastError = error;
  if (trigger === 'automatic') delivery.attempts += 1;
  if (!error) {
    Object.assign(delivery, { state: 'delivered', nextAttemptAt: null });
    await em.flush();
    return { kind: 'delivered' };
  }
  if (trigger === 'replay') {
    await em.flush();
    return { kind: 'failed', error };
  }
  const delay = RETRY_DELAYS_SECONDS[delivery.attempts - 1];
  if (permanent || delay === undefined) {
    Object.assign(delivery, { state: 'failed', nextAttemptAt: null });
    await em.flush();
    return { kind: 'failed', error };
  }
  delivery.nextAttemptAt = new Date(now.getTime() + delay * 1000);
  await em.flush();
  return { kind: 'retry', runAt: delivery.nextAttemptAt };
}

/** An attempt made outside the worker (a test event): a retry it calls for is left to the worker. */
async function attemptNow(services: Services, deliveryId: string): Promise<void> {
  const outcome = await deliverWebhook(services, deliveryId);
  if (outcome.kind === 'retry') await scheduleDelivery(services.orm.em.fork(), deliveryId, outcome.runAt);
}

/** POST /webhooks/{id}/test: a `webhook.test` event to this endpoint alone, attempted at once. */
export async function sendTestEvent(services: Services, em: EntityManager, webhook: Webhook): Promise<WebhookDelivery> {
  const now = services.now();
  const data = { message: 'This is a test delivery from Herald: your endpoint receives and verifies webhooks.', webhookId: webhook.id };
  const delivery = em.create(WebhookDeliverySchema, {
    id: `msg_${newId()}`,
    webhookId: webhook.id,
    organizationId: webhook.organizationId,
    eventId: null,
    eventType: TEST_EVENT,
    body: bodyOf(TEST_EVENT, now, data),
    state: 'pending',
    attempts: 0,
    nextAttemptAt: null,
    lastStatus: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  await attemptNow(services, delivery.id);
  return findDelivery(services.orm.em.fork(), webhook, delivery.id);
}

export async function findDelivery(em: EntityManager, webhook: Webhook, deliveryId: string): Promise<WebhookDelivery> {
  const delivery = await em.findOne(WebhookDeliverySchema, { id: deliveryId, webhookId: webhook.id });
  if (!delivery) throw notFound(`Delivery ${deliveryId} not found for webhook ${webhook.id}.`, { hint: 'GET /webhooks/{id}/deliveries lists its deliveries.' });
  return delivery;
}

export interface DeliveryRecord {
  id: string;
  eventType: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  payload: unknown;
  attemptLog: { attemptedAt: string; trigger: 'automatic' | 'replay'; status: number | null; error: string | null; durationMs: number; responseExcerpt: string | null }[];
}

export async function deliveryRecords(em: EntityManager, deliveries: WebhookDelivery[]): Promise<DeliveryRecord[]> {
  const attempts = deliveries.length
    ? await em.find(WebhookAttemptSchema, { deliveryId: { $in: deliveries.map((delivery) => delivery.id) } }, { orderBy: { attemptedAt: 'asc', id: 'asc' } })
    : [];
  return deliveries.map((delivery) => ({
    id: delivery.id,
    eventType: delivery.eventType,
    state: delivery.state,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    lastStatus: delivery.lastStatus ?? null,
    lastError: delivery.lastError ?? null,
    createdAt: delivery.createdAt.toISOString(),
    payload: JSON.parse(delivery.body) as unknown,
    attemptLog: attempts
      .filter((attempt) => attempt.deliveryId === delivery.id)
      .map((attempt) => ({
        attemptedAt: attempt.attemptedAt.toISOString(),
        trigger: attempt.trigger,
        status: attempt.status ?? null,
        error: attempt.error ?? null,
        durationMs: attempt.durationMs,
        responseExcerpt: attempt.responseExcerpt ?? null,
      })),
  }));
}

export async function listDeliveries(em: EntityManager, webhook: Webhook, page: number, pageSize: number): Promise<{ deliveries: DeliveryRecord[]; total: number }> {
  const [rows, total] = await em.findAndCount(
    WebhookDeliverySchema,
    { webhookId: webhook.id },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: pageSize, offset: page * pageSize },
  );
  return { deliveries: await deliveryRecords(em, rows), total };
}

/** Deliveries and events are kept 30 days. */
export async function pruneWebhookHistory(em: EntityManager, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - HISTORY_DAYS * 86_400_000);
  await em.getConnection().execute("delete from webhook_delivery where created_at < ? and state <> 'pending'", [cutoff]);
  await em.getConnection().execute('delete from webhook_event where created_at < ?', [cutoff]);
}
