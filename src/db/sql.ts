// Plain SQL for the statements every request runs (credential lookup, rate limits, MCP sessions): a named statement is
// prepared once per connection and then only executed, on a connection of the ORM's own pool (no second pool to size).
// Measured on GET /integrations: the ORM's query builder and knex's string rendering cost more CPU than the queries
// themselves. A timestamptz comes back as a Date (src/db/orm.ts parses it on the ORM's connections, for raw queries too).
import type pg from 'pg';

export interface Statement {
  /** Unique per text: Postgres keeps one prepared statement per name and connection. */
  name: string;
  text: string;
}

export interface Sql {
  /** Runs a prepared statement with positional parameters ($1, $2...): its rows. */
  rows<Row>(statement: Statement, values: unknown[]): Promise<Row[]>;
}

interface KnexClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<void>;
}

/** Statements on the pool of an entity manager (any fork: they run outside its transaction, on their own connection). */
export function sqlOf(em: { getConnection(): { getKnex(): unknown } }): Sql {
  const client = () => (em.getConnection().getKnex() as { client: KnexClient }).client;
  return {
    async rows<Row>(statement: Statement, values: unknown[]): Promise<Row[]> {
      const knex = client();
      const connection = await knex.acquireConnection();
      try {
        const result = await connection.query({ name: statement.name, text: statement.text, values });
        return result.rows as Row[];
      } finally {
        await knex.releaseConnection(connection);
      }
    },
  };
}

export const statement = (name: string, text: string): Statement => ({ name, text: text.replace(/\s+/g, ' ').trim() });
