// Organizations and API keys: random keys, stored as SHA-256 hashes, shown once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeySchema, OrganizationSchema, type Organization } from '../../src/db/entities.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import { notFound } from '../../src/errors.js';
import { sqlOf, statement } from '../../src/db/sql.js';
import { consumeParameters, consumeSql, rateLimitState, type ConsumedRow, type RateLimitState, type Window } from '../../src/lib/rate-limit.js';
import type { Caller } from '../types.js';

const API_KEY_PREFIX = 'hrld_';

export async function createOrganization(em: EntityManager, name: string): Promise<Organization> {
  const organization = em.create(OrganizationSchema, { id: newId(), name, billingCustomer: null, createdAt: new Date() });
  await em.flush();
  return organization;
}

/**
 * A fresh instance's organization and its API key (answered once, never stored), or undefined when an organization exists.
 * Several web processes may start together on a fresh database: the lock lets one of them make it.
 */
export async function firstOrganization(em: EntityManager): Promise<string | undefined> {
  return em.transactional(async (transaction) => {
    await transaction.execute("select pg_advisory_xact_lock(hashtext('herald:first-organization'))");
    if ((await transaction.count(OrganizationSchema, {})) > 0) return undefined;
    const organization = await createOrganization(transaction, 'My organization');
    return mintApiKey(transaction, organization.id);
  });
}

/** Revokes every live key of the organization and mints a new one. The returned key is never stored. */
export async function mintApiKey(em: EntityManager, organizationId: string, now = new Date()): Promise<string> {
  const organization = await em.findOne(OrganizationSchema, { id: organizationId });
  if (!organization) throw notFound(`Organization ${organizationId} not found.`);
  await em.nativeUpdate(ApiKeySchema, { organizationId, revokedAt: null }, { revokedAt: now });
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  em.create(ApiKeySchema, { id: newId(), organizationId, keyHash: sha256(key), lastFour: key.slice(-4), createdAt: now, revokedAt: null });
  await em.flush();
  return key;
}

export async function revokeApiKeys(em: EntityManager, organizationId: string, now = new Date()): Promise<number> {
  return em.nativeUpdate(ApiKeySchema, { organizationId, revokedAt: null }, { revokedAt: now });
}

/** What an API key is looked up by (its SHA-256), or undefined when `raw` is missing or of a length no key has. */
export function apiKeyHash(raw: string | undefined): string | undefined {
  if (!raw || raw.length < 8 || raw.length > 512) return undefined;
  return sha256(raw);
}

/** True for an OAuth access token (`pos_...`); any other credential is taken for an API key. */
export const isOAuthToken = (value: string): boolean => value.startsWith('pos_');

/** Resolves a raw API key to its caller, or undefined when missing, unknown or revoked. */
export async function resolveApiKey(em: EntityManager, raw: string | undefined): Promise<Caller | undefined> {
  const hash = apiKeyHash(raw);
  if (!hash) return undefined;
  // Every REST and MCP request runs this: one prepared statement on the unique key_hash index, no entity loaded.
  const [key] = await sqlOf(em).rows<{ id: string; organization_id: string }>(FIND_API_KEY, [hash]);
  if (!key) return undefined;
  return apiKeyCaller(key.id, key.organization_id);
}

/** The caller of an API key: its organization, every scope. */
export const apiKeyCaller = (keyId: string, organizationId: string): Caller => ({ organizationId, credentialId: keyId, credentialKind: 'api_key', scopes: ['mcp:read', 'mcp:write'] });

const FIND_API_KEY = statement('api_key_by_hash', 'select id, organization_id from api_key where key_hash = $1 and revoked_at is null');

const FIND_API_KEY_AND_COUNT = statement(
  'api_key_by_hash_counted',
  `with key as (select id, organization_id from api_key where key_hash = $1 and revoked_at is null),
   consumed as (${consumeSql('key.organization_id', 'from key')})
   select key.id, key.organization_id, consumed.count, consumed.previous_count, consumed.granted from key left join consumed on true`,
);

/**
 * An API key's caller and one request counted against its organization's `window`, in one round trip (REST runs this on
 * every request: the key lookup and the rate-limit write are the two statements every request pays for). Nothing is counted
 * for an unknown or revoked key.
 */
export async function resolveApiKeyCounting(em: EntityManager, raw: string, window: Window): Promise<{ caller: Caller; limit: RateLimitState } | undefined> {
  const hash = apiKeyHash(raw);
  if (!hash) return undefined;
  const [row] = await sqlOf(em).rows<{ id: string; organization_id: string } & ConsumedRow>(FIND_API_KEY_AND_COUNT, [hash, ...consumeParameters(window)]);
  if (!row) return undefined;
  return { caller: apiKeyCaller(row.id, row.organization_id), limit: rateLimitState(row, window) };
}
