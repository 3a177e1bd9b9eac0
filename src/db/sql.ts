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

/**
 * One statement for the calls that come while the last is in flight: `send` answers the outputs in the order of the inputs.
 * A call alone goes at once; in a burst (hundreds of publications starting and ending together) each statement carries all
 * the calls that queued behind the one before it, so they wait for one round trip instead of queuing one by one.
 */
export function coalesced<In, Out>(send: (inputs: In[]) => Promise<Out[]>): (input: In) => Promise<Out> {
  let waiting: { input: In; resolve: (output: Out) => void; reject: (error: unknown) => void }[] = [];
  let sending = false;
  const drain = async () => {
    sending = true;
    try {
      while (waiting.length > 0) {
        const batch = waiting;
        waiting = [];
        try {
          const outputs = await send(batch.map((call) => call.input));
          batch.forEach((call, index) => call.resolve(outputs[index]));
        } catch (error) {
          for (const call of batch) call.reject(error);
        }
      }
    } finally {
      sending = false;
    }
  };
  return (input) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (!sending) void drain();
    });
}

/** One coalesced statement per database (per ORM pool): forks of one entity manager share it, two Heralds in one process do not. */
export function coalescedPerDatabase<In, Out>(send: (sql: Sql, inputs: In[]) => Promise<Out[]>): (em: { getConnection(): { getKnex(): unknown } }, input: In) => Promise<Out> {
  const perPool = new WeakMap<object, (input: In) => Promise<Out>>();
  return (em, input) => {
    const pool = (em.getConnection().getKnex() as { client: object }).client;
    let call = perPool.get(pool);
    if (!call) {
      const sql = sqlOf(em);
      perPool.set(pool, (call = coalesced((inputs: In[]) => send(sql, inputs))));
    }
    return call(input);
  };
}
