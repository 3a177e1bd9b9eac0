// The read every publication starts with (tools/internal/publish.ts): a post's chain and its channel. The chains of the
// publications that start at the same moment (a burst at a round hour) are read in one statement.
// The chain's items are plain objects the entity manager does not manage yet (detached): mapping them through the ORM (its
// hydration, identity map and change-tracking snapshot) was a sixth of a publish's CPU in a profile of a burst, and the
// usual publication writes them with statements of its own (publish-outcome.ts). A path that changes them through the ORM
// (a failure, a retry, a provider's recorded step) attaches them first (`attachChain`), so its flush writes what it changes.
// The channel is read the same way; a refused token changes it during the platform call, and integrations.ts attaches it then.
import { helper, type EntityMetadata } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema, type Integration, type Post } from '../../src/db/entities.js';
import { coalescedPerDatabase, statement } from '../../src/db/sql.js';

type ChainRow = Record<string, unknown> & { root_post_id: string; herald_integration: Record<string, unknown> | null };

/** The chains of many posts (their items, each root with its channel) in one prepared statement. */
const CHAINS = statement(
  'publish_chains',
  `select p.*, case when p.position = 0 then (select to_jsonb(i) from integration i where i.id = p.integration_id and i.deleted_at is null) end as herald_integration
     from post p where p.root_post_id = any($1::text[]) and p.deleted_at is null order by p.root_post_id, p.position asc`,
);

/** The rows of a post's chain, read with those of the publications starting at the same moment (a burst: one query). */
const chainRows = coalescedPerDatabase<string, ChainRow[]>(async (sql, rootPostIds) => {
  const byRoot = new Map<string, ChainRow[]>();
  for (const row of await sql.rows<ChainRow>(CHAINS, [rootPostIds])) {
    const rows = byRoot.get(row.root_post_id);
    if (rows) rows.push(row);
    else byRoot.set(row.root_post_id, [row]);
  }
  return rootPostIds.map((id) => byRoot.get(id) ?? []);
});

/** Items read by loadChain and not yet attached to an entity manager. */
const detached = new WeakSet<Post>();

/** Each column of an entity's table, the property it fills and whether it is a date, once per metadata (per ORM). */
const columnsOf = new WeakMap<EntityMetadata, [column: string, property: string, date: boolean][]>();

/**
 * An entity of `meta` from its row, not managed: the values as the ORM's connections read them (JSON parsed, a timestamptz as
 * a Date, or its text inside `to_jsonb`), which are those of the entity's properties (every property of Post and
 * Integration is a column of its own, no relation). `plain`: a plain object of the same properties (the entity's prototype
 * defines an accessor of each property on its first write, a cost of its own), given the prototype when attached.
 */
function entityOf<T extends object>(meta: EntityMetadata<T>, row: Record<string, unknown>, plain = false): T {
  let columns = columnsOf.get(meta);
  if (!columns) columnsOf.set(meta, (columns = meta.props.filter((prop) => prop.persist !== false).map((prop) => [prop.fieldNames[0], prop.name, prop.runtimeType === 'Date'])));
  const entity = (plain ? {} : Object.create(meta.prototype as object)) as Record<string, unknown>;
  for (const [column, property, date] of columns) {
    const value = row[column];
    entity[property] = date && typeof value === 'string' ? new Date(value) : value;
  }
  return entity as T;
}

/** Registers `entity` with `em` as it is in memory: the next flush writes what changes after this. */
function register<T extends object>(em: EntityManager, entity: T): void {
  em.getUnitOfWork().register(entity);
  helper(entity).__originalEntityData = em.getComparator().prepareEntity(entity);
}

/**
 * Makes `entity` managed by `em` as it is in memory, unless it is already (an entity the ORM loaded): the channel loadChain
 * read, before a change to it, so the next flush writes the change. Call before changing it.
 */
export function attachEntity<T extends { id: string }>(em: EntityManager, schema: { meta: { className: string } }, entity: T): void {
  if (helper(entity).__managed) return;
  if (em.getUnitOfWork().getById<T>(schema.meta.className, entity.id as never)) throw new Error(`${schema.meta.className} ${entity.id} is managed twice`);
  register(em, entity);
}

const metaOf = <T extends object>(em: EntityManager, schema: { meta: { className: string } }) => em.getMetadata().get<T>(schema.meta.className);

/**
 * The chain (the root first, its items detached: see above) and its channel (managed) in one query; the channel is
 * undefined when it was deleted. Every publication starts here.
 */
export async function loadChain(em: EntityManager, rootPostId: string): Promise<{ chain: Post[]; integration?: Integration }> {
  const rows = await chainRows(em, rootPostId);
  const postMeta = metaOf<Post>(em, PostSchema);
  const chain = rows.map(({ herald_integration: _, ...row }) => {
    const item = entityOf(postMeta, row, true);
    detached.add(item);
    return item;
  });
  const channel = rows[0]?.herald_integration;
  // Not managed either (without the ORM's hydration: the row is the entity's values): what changes it during the platform
  // call (a token refresh, a reconnection) attaches it first (`attachEntity`, integrations.ts).
  const integration = channel ? entityOf(metaOf<Integration>(em, IntegrationSchema), channel) : undefined;
  return { chain, integration };
}

/** Whether `item` was read detached by loadChain and is not attached yet (its changes are not written by a flush). */
export const isDetached = (item: Post): boolean => detached.has(item);

/**
 * Makes the chain's detached items managed by `em`, as they are in memory now (what the database holds: the publication's
 * own statements wrote any change), so the next flush writes what changes after this. Call before changing them.
 */
export function attachChain(em: EntityManager, chain: Post[]): void {
  const work = em.getUnitOfWork();
  const prototype = metaOf<Post>(em, PostSchema).prototype as object;
  for (const item of chain) {
    if (!detached.has(item)) continue;
    const known = work.getById<Post>(PostSchema.meta.className, item.id);
    // Nothing in a publication loads an item through the ORM while its chain is detached: two copies would diverge.
    if (known && known !== item) throw new Error(`publish: item ${item.id} is managed twice`);
    // Registering gives it the entity's accessors, its values kept (EntityHelper.ensurePropagation).
    Object.setPrototypeOf(item, prototype);
    register(em, item);
    detached.delete(item);
  }
}
