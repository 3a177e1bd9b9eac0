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
  /**
   * Runs `opening` (SQL without parameters, such as taking transaction-scoped advisory locks), then the statement, as one
   * transaction in one round trip: a simple query of two statements (Postgres runs them in one implicit transaction, the
   * second with a snapshot taken after the first). The parameters go as quoted literals (`escapeLiteral`), so they are
   * text (JSON) or numbers; the statement is parsed on each call instead of prepared.
   */
  rowsAfter<Row>(opening: string, statement: Statement, values: (string | number | null)[]): Promise<Row[]>;
}

interface KnexClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<void>;
}

/** Statements on the pool of an entity manager (any fork: they run outside its transaction, on their own connection). */
export function sqlOf(em: { getConnection(): { getKnex(): unknown } }): Sql {
  const client = () => (em.getConnection().getKnex() as { client: KnexClient }).client;
  const withConnection = async <T>(work: (connection: pg.Client) => Promise<T>): Promise<T> => {
    const knex = client();
    const connection = await knex.acquireConnection();
    try {
      return await work(connection);
    } finally {
      await knex.releaseConnection(connection);
    }
  };
  return {
    rows: <Row>(statement: Statement, values: unknown[]) =>
      withConnection(async (connection) => (await connection.query({ name: statement.name, text: statement.text, values })).rows as Row[]),
    rowsAfter: <Row>(opening: string, statement: Statement, values: (string | number | null)[]) =>
      withConnection(async (connection) => {
        const text = statement.text.replace(/\$(\d+)/g, (_all, number: string) => {
          const value = values[Number(number) - 1];
          return value === null || value === undefined ? 'null' : typeof value === 'number' ? String(value) : connection.escapeLiteral(value);
        });
        const results = (await connection.query(`${opening}; ${text}`)) as unknown as pg.QueryResult[];
        return results[results.length - 1].rows as Row[];
      }),
  };
}

export const statement = (name: string, text: string): Statement => ({ name, text: text.replace(/\s+/g, ' ').trim() });
