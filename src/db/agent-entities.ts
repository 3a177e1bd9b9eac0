// Webhooks, short links and channel health (the agent-grade API). Idempotency keys are plain SQL (tools/internal/idempotency.ts).
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

const timestamp = () => p.datetime().columnType('timestamptz');

/** An organization's webhook endpoint. The signing secret is sealed (AES-256-GCM): it must be read back to sign. */
export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhook',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    url: p.text(),
    events: p.json<string[]>(),
    description: p.string().default(''),
    secret: p.text(),
    /** The secret before the last rotation: deliveries carry its signature too until it expires. */
    previousSecret: p.text().nullable(),
    previousSecretExpiresAt: timestamp().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    deletedAt: timestamp().nullable(),
  },
});
export type Webhook = InferEntity<typeof WebhookSchema>;

/** Raised by notify() with the notification; fanned out to the endpoints listening to `type`. */
export const WebhookEventSchema = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_event',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    type: p.string(),
    data: p.json<Record<string, unknown>>(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type WebhookEvent = InferEntity<typeof WebhookEventSchema>;

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint: its id is the Standard Webhooks `webhook-id`, the same on every attempt and replay. */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  properties: {
    id: p.string().primary(),
    webhookId: p.string(),
    organizationId: p.string(),
    eventId: p.string().nullable(),
    eventType: p.string(),
    /** The exact JSON body sent (and signed) on every attempt. */
    body: p.text(),
    state: p.string().$type<DeliveryState>(),
    attempts: p.integer().default(0),
    nextAttemptAt: timestamp().nullable(),
    lastStatus: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type WebhookDelivery = InferEntity<typeof WebhookDeliverySchema>;

export const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempt',
  properties: {
    id: p.string().primary(),
    deliveryId: p.string(),
    attemptedAt: timestamp(),
    trigger: p.string().$type<'automatic' | 'replay'>(),
    status: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
    responseExcerpt: p.text().nullable(),
  },
});
export type WebhookAttempt = InferEntity<typeof WebhookAttemptSchema>;

/** A link of a post shortened at publish time; one per (post item, target URL), so a retried publication reuses it. */
export const ShortLinkSchema = defineEntity({
  name: 'ShortLink',
  tableName: 'short_link',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    postId: p.string(),
    rootPostId: p.string(),
    targetUrl: p.text(),
    shortener: p.string().$type<'herald' | 'dub'>(),
    /** Herald's own links: the code of PUBLIC_URL/l/<code>. */
    code: p.string().nullable(),
    /** Set once the link exists (Dub answers it). */
    shortUrl: p.text().nullable(),
    /** Dub's link id. */
    externalId: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type ShortLink = InferEntity<typeof ShortLinkSchema>;

/** What the daily job and the reconnection path know about a channel beyond its connection columns. */
export const ChannelHealthSchema = defineEntity({
  name: 'ChannelHealth',
  tableName: 'channel_health',
  properties: {
    integrationId: p.string().primary(),
    reconnectReason: p.text().nullable(),
    reconnectSince: timestamp().nullable(),
    /** The token expiry the owner was already warned about (a reconnection brings a new expiry, warned about again). */
    expiryWarnedFor: timestamp().nullable(),
  },
});
export type ChannelHealth = InferEntity<typeof ChannelHealthSchema>;

export const agentEntities = [WebhookSchema, WebhookEventSchema, WebhookDeliverySchema, WebhookAttemptSchema, ShortLinkSchema, ChannelHealthSchema];
