// The read every publication starts with (tools/internal/publish.ts): a post's chain and its channel, as managed entities.
// The chains of the publications that start at the same moment (a burst at a round hour) are read in one statement.
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

/**
 * The chain (the root first) and its channel in one query, as managed entities; the channel is undefined when it was
 * deleted. Every publication starts here.
 */
export async function loadChain(em: EntityManager, rootPostId: string): Promise<{ chain: Post[]; integration?: Integration }> {
  const rows = await chainRows(em, rootPostId);
  const chain = rows.map(({ herald_integration: _, ...row }) => em.map(PostSchema, row));
  const integration = rows[0]?.herald_integration ? em.map(IntegrationSchema, rows[0].herald_integration) : undefined;
  return { chain, integration };
}
