// Organizations and API keys: random keys, stored as SHA-256 hashes, shown once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeySchema, OrganizationSchema, type Organization } from '../../src/db/entities.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import { notFound } from '../../src/errors.js';
import type { Caller } from '../types.js';

const API_KEY_PREFIX = 'hrld_';

export async function createOrganization(em: EntityManager, name: string): Promise<Organization> {
  const organization = em.create(OrganizationSchema, { id: newId(), name, billingCustomer: null, createdAt: new Date() });
  await em.flush();
  return organization;
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

/** Resolves a raw API key to its caller, or undefined when missing, unknown or revoked. */
export async function resolveApiKey(em: EntityManager, raw: string | undefined): Promise<Caller | undefined> {
  if (!raw || raw.length < 8 || raw.length > 512) return undefined;
  const key = await em.findOne(ApiKeySchema, { keyHash: sha256(raw), revokedAt: null });
  if (!key) return undefined;
  return { organizationId: key.organizationId, credentialId: key.id, credentialKind: 'api_key', scopes: ['mcp:read', 'mcp:write'] };
}
