// Organizations and API keys: random keys, stored as SHA-256 hashes, shown once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeySchema, OrganizationSchema, type Organization } from '../../src/db/entities.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import { notFound } from '../../src/errors.js';
import { coalescedPerDatabase, sqlOf, statement, type Sql } from '../../src/db/sql.js';
import { batchRowOf, consumeBatchSql, consumeParameters, consumeSql, rateLimitState, type BatchConsumedRow, type ConsumedRow, type RateLimitState, type Window } from '../../src/lib/rate-limit.js';
import type { Caller } from '../types.js';
import { expandScopes, OWNER_SCOPES } from './scopes.js';
import { recordChange } from './audit.js';

const API_KEY_PREFIX = 'hrld_';


/** A key's limits when none are set: every channel, no expiry, the organization's rates and gate (api-keys.ts sets them). */
export const NO_LIMITS = {
  channelIds: null,
  customerIds: null,
  expiresAt: null,
  requestsPerMinute: null,
  postsPerHour: null,
  approvalRequired: null,
} as const;

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

/**
 * Mints the organization key (the owner key: every scope) and revokes the previous organization key; the organization's
 * named keys are left alone. The returned key is never stored.
 */
export async function mintApiKey(em: EntityManager, organizationId: string, now = new Date()): Promise<string> {
  const organization = await em.findOne(OrganizationSchema, { id: organizationId });
  if (!organization) throw notFound(`Organization ${organizationId} not found.`);
  await em.nativeUpdate(ApiKeySchema, { organizationId, organizationKey: true, revokedAt: null }, { revokedAt: now });
  const key = newApiKeySecret();
  const id = newId();
  em.create(ApiKeySchema, { ...ORGANIZATION_KEY, id, organizationId, keyHash: sha256(key), lastFour: key.slice(-4), createdAt: now, revokedAt: null });
  await em.flush();
  await recordChange(em, organizationId, { action: 'key.created', target: { kind: 'api_key', id }, did: `made a new organization key (the previous one stops working)`, changes: { name: ORGANIZATION_KEY_NAME } });
  return key;
}

export const ORGANIZATION_KEY_NAME = 'Organization key (owner)';
const ORGANIZATION_KEY = {
  name: ORGANIZATION_KEY_NAME,
  organizationKey: true,
  scopes: [...OWNER_SCOPES],
  ...NO_LIMITS,
  createdBy: null,
  rotatedAt: null,
  lastUsedAt: null,
  lastUsedAddress: null,
  lastUsedClient: null,
};

export const newApiKeySecret = (): string => `${API_KEY_PREFIX}${randomToken(32)}`;

/** Revokes the organization key (the named keys stay: each is revoked by its id). */
export async function revokeApiKeys(em: EntityManager, organizationId: string, now = new Date()): Promise<number> {
  return em.nativeUpdate(ApiKeySchema, { organizationId, organizationKey: true, revokedAt: null }, { revokedAt: now });
}

/** What an API key is looked up by (its SHA-256), or undefined when `raw` is missing or of a length no key has. */
export function apiKeyHash(raw: string | undefined): string | undefined {
  if (!raw || raw.length < 8 || raw.length > 512) return undefined;
  return sha256(raw);
}

/** True for an OAuth access token (`pos_...`); any other credential is taken for an API key. */
export const isOAuthToken = (value: string): boolean => value.startsWith('pos_');

/**
 * The columns a key's caller is made of, from `api_key k`: its channel limit resolved now (its channels and every channel of
 * its customers, so a channel added to a customer later is included), or null for every channel.
 */
export const KEY_COLUMNS = `k.id as key_id, k.organization_id as key_organization_id, k.name as key_name, k.scopes as key_scopes,
  k.approval_required as key_approval_required, k.posts_per_hour as key_posts_per_hour, k.requests_per_minute as key_requests_per_minute,
  k.last_used_at as key_last_used_at,
  case when k.channel_ids is null and k.customer_ids is null then null else array(
    select i.id from integration i where i.organization_id = k.organization_id and (
      i.id in (select jsonb_array_elements_text(coalesce(k.channel_ids, '[]'::jsonb)))
      or i.customer_id in (select jsonb_array_elements_text(coalesce(k.customer_ids, '[]'::jsonb))))) end as key_channel_ids`;
/** A live key: not revoked, not expired. */
export const LIVE_KEY = 'k.key_hash = $1 and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())';

export interface KeyRow {
  key_id: string;
  key_organization_id: string;
  key_name: string;
  key_scopes: string[];
  key_approval_required: boolean | null;
  key_posts_per_hour: number | null;
  key_requests_per_minute: number | null;
  key_last_used_at: Date | string | null;
  key_channel_ids: string[] | null;
}

/** The caller of an API key row (KEY_COLUMNS). */
export function keyCaller(row: KeyRow): Caller {
  return {
    organizationId: row.key_organization_id,
    credentialId: row.key_id,
    credentialKind: 'api_key',
    scopes: expandScopes(row.key_scopes),
    name: row.key_name,
    ...(row.key_channel_ids ? { channelIds: row.key_channel_ids } : {}),
    approvalRequired: row.key_approval_required,
    postsPerHour: row.key_posts_per_hour,
  };
}

/** Where and how a key was used, recorded at most once a minute (not a write per request). */
export interface KeyUse {
  now: Date;
  address?: string;
  client?: string;
}

/** Resolves a raw API key to its caller, or undefined when missing, unknown, revoked or expired. */
export async function resolveApiKey(em: EntityManager, raw: string | undefined, use?: KeyUse): Promise<Caller | undefined> {
  const hash = apiKeyHash(raw);
  if (!hash) return undefined;
  // Every MCP request without a session runs this: one prepared statement on the unique key_hash index, no entity loaded.
  const [key] = await sqlOf(em).rows<KeyRow>(FIND_API_KEY, [hash]);
  if (!key) return undefined;
  if (use) await touchKey(em, key, use);
  return keyCaller(key);
}

const TOUCH_EVERY_MS = 60_000;
const TOUCH_KEY = statement('api_key_touch', 'update api_key set last_used_at = $2, last_used_address = $3, last_used_client = $4 where id = $1');

/** Records a key's last use when the stored one is over a minute old. */
export async function touchKey(em: EntityManager, key: Pick<KeyRow, 'key_id' | 'key_last_used_at'>, use: KeyUse): Promise<void> {
  const last = key.key_last_used_at ? new Date(key.key_last_used_at).getTime() : 0;
  if (use.now.getTime() - last < TOUCH_EVERY_MS) return;
  await sqlOf(em).rows(TOUCH_KEY, [key.key_id, use.now, use.address?.slice(0, 100) ?? null, use.client?.slice(0, 200) ?? null]);
}

const FIND_API_KEY = statement('api_key_by_hash', `select ${KEY_COLUMNS} from api_key k where ${LIVE_KEY}`);

// The organization's window ($2..$6), then the key's own per-minute window when it has one (same window bounds, its own limit).
const keyWindow = consumeSql("'key:' || key.key_id", 'from key where key.key_requests_per_minute is not null')
  .replaceAll('$2::text', "'rest_minute_key'::text")
  .replaceAll('$6::int', '(select key_requests_per_minute from key)');
const FIND_API_KEY_AND_COUNT = statement(
  'api_key_by_hash_counted',
  `with key as (select ${KEY_COLUMNS} from api_key k where ${LIVE_KEY}),
   consumed as (${consumeSql('key.key_organization_id', 'from key')}),
   own as (${keyWindow})
   select key.*, consumed.count, consumed.previous_count, consumed.granted,
     own.count as own_count, own.previous_count as own_previous_count, own.granted as own_granted
   from key left join consumed on true left join own on true`,
);

// The same for a batch of keys ($1, in the batch's order; a key may come several times): each window (the organization's,
// the key's own) counts the batch's requests on it at once. One row per request of a live key, in the batch's order.
const FIND_API_KEYS_AND_COUNT = statement(
  'api_keys_by_hash_counted',
  `with asked as (select a.hash, a.n from unnest($1::text[]) with ordinality as a(hash, n)),
   key as (select asked.n, ${KEY_COLUMNS} from asked join api_key k on ${LIVE_KEY.replace('$1', 'asked.hash')}),
   demand as (
     select key.key_organization_id as subject, $2::text as name, $6::int as lim, count(*)::int as demand from key group by 1
     union all
     select 'key:' || key.key_id, 'rest_minute_key', min(key.key_requests_per_minute), count(*)::int from key where key.key_requests_per_minute is not null group by key.key_id),
   consumed as (${consumeBatchSql('demand')})
   select key.*, row_number() over (partition by key.key_organization_id order by key.n) as org_rank,
     row_number() over (partition by key.key_id order by key.n) as own_rank,
     consumed.count, consumed.previous_count, consumed.taken, own.count as own_count, own.previous_count as own_previous_count, own.taken as own_taken
   from key join consumed on consumed.subject = key.key_organization_id and consumed.name = $2
   left join consumed own on own.subject = 'key:' || key.key_id and own.name = 'rest_minute_key'
   order by key.n`,
);

type CountedRow = KeyRow & ConsumedRow & { own_count: number | null; own_previous_count: number | null; own_granted: boolean | null };
type BatchRow = KeyRow & BatchConsumedRow & { n: number | string; org_rank: number | string; own_rank: number | string; own_count: number | null; own_previous_count: number | null; own_taken: number | null };

/** Whether the pool's Postgres has RETURNING old (18 and later), which the batched statement needs; asked once per pool. */
const returnsOld = new WeakMap<object, Promise<boolean>>();
function batchable(em: EntityManager, sql: Sql): Promise<boolean> {
  const pool = (em.getConnection().getKnex() as { client: object }).client;
  let known = returnsOld.get(pool);
  if (!known) {
    // Not known when the database did not answer: asked again by the next request.
    known = sql.rows<{ version: string }>(SERVER_VERSION, []).then(
      ([row]) => Number(row?.version) >= 180000,
      () => {
        returnsOld.delete(pool);
        return false;
      },
    );
    returnsOld.set(pool, known);
  }
  return known;
}
const SERVER_VERSION = statement('server_version_num', "select current_setting('server_version_num') as version");

interface Counting {
  hash: string;
  window: Window;
}

/**
 * The key lookups and counts asked while one is in flight go together in the next statement (one round trip for all of
 * them, sent after every one of them was asked: it sees every revocation committed before any of them); requests counted
 * at the batch's latest instant. One coalescer per window (its name, limit and length), per database.
 */
const batches = new Map<string, (em: EntityManager, input: Counting) => Promise<{ row: CountedRow; window: Window } | undefined>>();
function countInBatch(em: EntityManager, input: Counting): Promise<{ row: CountedRow; window: Window } | undefined> {
  const id = `${input.window.name}\u0000${input.window.limit}\u0000${input.window.windowMs}`;
  let batch = batches.get(id);
  if (!batch) {
    batch = coalescedPerDatabase(async (sql, inputs: Counting[]) => {
      const now = new Date(Math.max(...inputs.map((one) => one.window.now.getTime())));
      const window = { ...inputs[0].window, now };
      const rows = await sql.rows<BatchRow>(FIND_API_KEYS_AND_COUNT, [inputs.map((one) => one.hash), ...consumeParameters(window)]);
      const byIndex = new Map(rows.map((row) => [Number(row.n) - 1, row]));
      return inputs.map((_input, index) => {
        const row = byIndex.get(index);
        if (!row) return undefined;
        const organization = batchRowOf(row, Number(row.org_rank));
        const own = row.own_taken === null ? undefined : batchRowOf({ count: row.own_count!, previous_count: row.own_previous_count!, taken: row.own_taken }, Number(row.own_rank));
        const counted: CountedRow = { ...row, ...organization, own_count: own ? Number(own.count) : null, own_previous_count: own ? Number(own.previous_count) : null, own_granted: own ? own.granted : null };
        return { row: counted, window };
      });
    });
    batches.set(id, batch);
  }
  return batch(em, input);
}

/**
 * An API key's caller and one request counted against its organization's `window` (and the key's own per-minute limit), in
 * one round trip (REST runs this on every request: the key lookup and the rate-limit write are the two statements every
 * request pays for; the last use is written at most once a minute). Nothing is counted for an unknown, revoked or expired key.
 * Concurrent requests share that round trip (countInBatch) on Postgres 18 and later; one statement each before.
 */
export async function resolveApiKeyCounting(em: EntityManager, raw: string, window: Window, use?: KeyUse): Promise<{ caller: Caller; limit: RateLimitState; limitOfKey?: boolean } | undefined> {
  const hash = apiKeyHash(raw);
  if (!hash) return undefined;
  const sql = sqlOf(em);
  let row: CountedRow | undefined;
  if (await batchable(em, sql)) {
    const counted = await countInBatch(em, { hash, window });
    row = counted?.row;
    if (counted) window = counted.window;
  } else {
    [row] = await sql.rows<CountedRow>(FIND_API_KEY_AND_COUNT, [hash, ...consumeParameters(window)]);
  }
  if (!row) return undefined;
  if (use) await touchKey(em, row, use);
  const organization = rateLimitState(row, window);
  if (row.key_requests_per_minute === null || row.own_granted === null) return { caller: keyCaller(row), limit: organization };
  const own = rateLimitState({ count: row.own_count!, previous_count: row.own_previous_count!, granted: row.own_granted }, { ...window, limit: row.key_requests_per_minute });
  const stricter = !own.allowed || (organization.allowed && own.remaining < organization.remaining) ? own : organization;
  return { caller: keyCaller(row), limit: stricter, ...(stricter === own ? { limitOfKey: true } : {}) };
}
