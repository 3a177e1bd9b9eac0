// Named API keys of an organization (issue 23): created, listed, changed, rotated and revoked by an owner (REST /keys, the
// CLI). The secret is answered once and stored as its SHA-256 only, like the organization key (credentials.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeySchema, CustomerSchema, IntegrationSchema, type ApiKey } from '../../src/db/entities.js';
import { DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId, sha256 } from '../../src/lib/crypto.js';
import { newApiKeySecret, NO_LIMITS } from './credentials.js';
import { AGENT_PRESET, API_SCOPES, type ApiScope } from './scopes.js';
import type { Caller } from '../types.js';
import { credentialRef } from './approval.js';
import { recordChange } from './audit.js';

/** What an owner sets on a key; every field optional on a change. */
export interface KeySettings {
  name?: string;
  scopes?: ApiScope[];
  /** Channel ids it may see and post to; null: not limited by channel. */
  channels?: string[] | null;
  /** Customers whose channels (now and later) it may see and post to; null: not limited by customer. */
  customers?: string[] | null;
  expiresAt?: string | null;
  requestsPerMinute?: number | null;
  postsPerHour?: number | null;
  approvalRequired?: boolean | null;
}

/** A key as listed (never its secret nor its hash). */
export interface KeyRecord {
  id: string;
  name: string;
  organizationKey: boolean;
  scopes: string[];
  channels: string[] | null;
  customers: string[] | null;
  expiresAt: string | null;
  requestsPerMinute: number | null;
  postsPerHour: number | null;
  approvalRequired: boolean | null;
  lastFour: string;
  createdAt: string;
  rotatedAt: string | null;
  lastUsed: { at: string; address: string | null; client: string | null } | null;
}

export function toKeyRecord(key: ApiKey): KeyRecord {
  return {
    id: key.id,
    name: key.name,
    organizationKey: key.organizationKey,
    scopes: key.scopes,
    channels: key.channelIds ?? null,
    customers: key.customerIds ?? null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    requestsPerMinute: key.requestsPerMinute ?? null,
    postsPerHour: key.postsPerHour ?? null,
    approvalRequired: key.approvalRequired ?? null,
    lastFour: key.lastFour,
    createdAt: key.createdAt.toISOString(),
    rotatedAt: key.rotatedAt?.toISOString() ?? null,
    lastUsed: key.lastUsedAt ? { at: key.lastUsedAt.toISOString(), address: key.lastUsedAddress ?? null, client: key.lastUsedClient ?? null } : null,
  };
}

/** A key limited to channels manages no keys: it could otherwise mint itself a key without the limit. */
function refuseLimited(caller: Caller): void {
  if (caller.channelIds) {
    throw new DomainError('forbidden', 'A key limited to channels cannot manage API keys.', { hint: 'Use an owner key, or the Herald console.' });
  }
}

async function checkSettings(em: EntityManager, organizationId: string, settings: KeySettings, now: Date): Promise<void> {
  for (const id of settings.channels ?? []) {
    if (!(await em.findOne(IntegrationSchema, { id, organizationId, deletedAt: null }))) {
      throw invalidInput(`Channel ${id} not found.`, { hint: 'Use channel ids listed by GET /integrations.' });
    }
  }
  for (const id of settings.customers ?? []) {
    if (!(await em.findOne(CustomerSchema, { id, organizationId }))) throw invalidInput(`Customer ${id} not found.`, { hint: 'Use customer ids listed by GET /integrations (customer.id).' });
  }
  if (settings.expiresAt && Date.parse(settings.expiresAt) <= now.getTime()) {
    throw invalidInput(`expiresAt (${settings.expiresAt}) has passed.`, { hint: 'Give a future date and time (ISO 8601), or leave it out for a key that does not expire.' });
  }
  if ((settings.channels || settings.customers) && settings.scopes?.includes('organization:manage')) {
    throw invalidInput('A key limited to channels cannot have the organization:manage scope.', { hint: 'Managing the organization (keys, webhooks, the gate) reaches every channel: give that scope only to a key without channels.' });
  }
  if (settings.scopes && settings.scopes.length === 0) throw invalidInput('scopes: give at least one scope.', { hint: `Scopes: ${API_SCOPES.join(', ')}.` });
}

function apply(key: ApiKey, settings: KeySettings): void {
  if (settings.name !== undefined) key.name = settings.name;
  // Kept in the order of API_SCOPES, without repetitions.
  if (settings.scopes !== undefined) key.scopes = API_SCOPES.filter((scope) => settings.scopes!.includes(scope));
  if (settings.channels !== undefined) key.channelIds = settings.channels ? [...new Set(settings.channels)] : null;
  if (settings.customers !== undefined) key.customerIds = settings.customers ? [...new Set(settings.customers)] : null;
  if (settings.expiresAt !== undefined) key.expiresAt = settings.expiresAt ? new Date(settings.expiresAt) : null;
  if (settings.requestsPerMinute !== undefined) key.requestsPerMinute = settings.requestsPerMinute;
  if (settings.postsPerHour !== undefined) key.postsPerHour = settings.postsPerHour;
  if (settings.approvalRequired !== undefined) key.approvalRequired = settings.approvalRequired;
}

export async function listKeys(em: EntityManager, caller: Caller): Promise<KeyRecord[]> {
  refuseLimited(caller);
  const keys = await em.find(ApiKeySchema, { organizationId: caller.organizationId, revokedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return keys.map(toKeyRecord);
}

/** A new named key (the agent preset unless `scopes` says otherwise); the secret is in this answer only. */
export async function createKey(em: EntityManager, caller: Caller, settings: KeySettings & { name: string }, now: Date): Promise<{ key: KeyRecord; secret: string }> {
  refuseLimited(caller);
  await checkSettings(em, caller.organizationId, settings, now);
  const secret = newApiKeySecret();
  const key = em.create(ApiKeySchema, {
    id: newId(),
    organizationId: caller.organizationId,
    keyHash: sha256(secret),
    lastFour: secret.slice(-4),
    name: settings.name,
    organizationKey: false,
    scopes: [...AGENT_PRESET],
    ...NO_LIMITS,
    createdBy: credentialRef(caller),
    rotatedAt: null,
    lastUsedAt: null,
    lastUsedAddress: null,
    lastUsedClient: null,
    createdAt: now,
    revokedAt: null,
  });
  apply(key, settings);
  await em.flush();
  await recordKey(em, 'key.created', key, 'created');
  return { key: toKeyRecord(key), secret };
}

/** The trail's record of a key change (REST and console alike): its name, scopes and limits, never its secret. */
async function recordKey(em: EntityManager, action: string, key: ApiKey, verb: string, change?: Record<string, unknown>): Promise<void> {
  const record = toKeyRecord(key);
  await recordChange(em, key.organizationId, {
    action,
    target: { kind: 'api_key', id: key.id },
    did: `${verb} the API key "${key.name}"`,
    changes: change ?? { name: record.name, scopes: record.scopes, channels: record.channels, customers: record.customers, expiresAt: record.expiresAt },
  });
}

async function liveKey(em: EntityManager, caller: Caller, id: string): Promise<ApiKey> {
  refuseLimited(caller);
  const key = await em.findOne(ApiKeySchema, { id, organizationId: caller.organizationId, revokedAt: null });
  if (!key) throw notFound(`API key ${id} not found.`, { hint: 'Use an id listed by GET /keys; a revoked key is gone.' });
  return key;
}

export async function updateKey(em: EntityManager, caller: Caller, id: string, settings: KeySettings, now: Date): Promise<KeyRecord> {
  const key = await liveKey(em, caller, id);
  await checkSettings(em, caller.organizationId, settings, now);
  // The key as it would be: a limit added to an organization:manage key (or the reverse) is refused too.
  const channels = settings.channels !== undefined ? settings.channels : key.channelIds;
  const customers = settings.customers !== undefined ? settings.customers : key.customerIds;
  await checkSettings(em, caller.organizationId, { channels: channels ? [] : null, customers: customers ? [] : null, scopes: settings.scopes ?? (key.scopes as ApiScope[]) }, now);
  apply(key, settings);
  await em.flush();
  await recordKey(em, 'key.changed', key, 'changed', { ...settings });
  return toKeyRecord(key);
}

/** A new secret for the same key (same id, name, scopes and limits): the old secret stops working at once. */
export async function rotateKey(em: EntityManager, caller: Caller, id: string, now: Date): Promise<{ key: KeyRecord; secret: string }> {
  const key = await liveKey(em, caller, id);
  const secret = newApiKeySecret();
  key.keyHash = sha256(secret);
  key.lastFour = secret.slice(-4);
  key.rotatedAt = now;
  await em.flush();
  await recordKey(em, 'key.rotated', key, 'rotated', {});
  return { key: toKeyRecord(key), secret };
}

export async function revokeKey(em: EntityManager, caller: Caller, id: string, now: Date): Promise<KeyRecord> {
  const key = await liveKey(em, caller, id);
  key.revokedAt = now;
  await em.flush();
  await recordKey(em, 'key.revoked', key, 'revoked', {});
  return toKeyRecord(key);
}
