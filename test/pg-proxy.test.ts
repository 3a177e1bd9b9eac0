// The bench's Postgres proxy (bench/lib/pg-proxy.ts) counts round trips exactly and delays answers as asked: a real pg
// client through the proxy to the test run's Postgres.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgProxy, type PgProxy } from '../bench/lib/pg-proxy.js';
import { newTestDatabase } from './helpers/harness.js';

describe('bench pg proxy', () => {
  let proxy: PgProxy;
  let client: pg.Client;

  beforeAll(async () => {
    proxy = await startPgProxy(await newTestDatabase());
    client = new pg.Client({ connectionString: proxy.url });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
    await proxy.close();
  });

  it('counts a simple query, a parameterised query and a transaction of N statements', async () => {
    proxy.reset();
    await client.query('select 1');
    expect(proxy.count()).toBe(1);

    proxy.reset();
    // Parse, Bind, Describe, Execute, Sync: one exchange.
    const answer = await client.query('select $1::int + 1 as n', [41]);
    expect(answer.rows[0].n).toBe(42);
    expect(proxy.count()).toBe(1);

    proxy.reset();
    await client.query('begin');
    await client.query('create temporary table t (n int)');
    for (let n = 0; n < 3; n++) await client.query('insert into t values ($1)', [n]);
    await client.query('commit');
    // 4 statements + begin + commit.
    expect(proxy.count()).toBe(6);
    expect([...proxy.perConnection().values()]).toEqual([6]);
  });

  it('counts a new connection apart from its round trips, and answers SSLRequest with N', async () => {
    proxy.reset();
    // `ssl` makes node-postgres send an SSLRequest first; the proxy's 'N' makes it fail cleanly rather than hang.
    const secure = new pg.Client({ connectionString: proxy.url, ssl: { rejectUnauthorized: false } });
    await expect(secure.connect()).rejects.toThrow(/does not support SSL/);
    const other = new pg.Client({ connectionString: proxy.url });
    await other.connect();
    await other.query('select 1');
    await other.end();
    expect(proxy.connections()).toBe(2);
    expect(proxy.count()).toBe(1);
  });

  it('delays each round trip by the delay asked', async () => {
    proxy.setDelay(20);
    try {
      proxy.reset();
      const started = performance.now();
      await client.query('select 1');
      expect(performance.now() - started).toBeGreaterThanOrEqual(20);
      expect(proxy.appliedDelayMs()).toBeGreaterThanOrEqual(20);
      // Five sequential round trips: at least five delays.
      const five = performance.now();
      for (let n = 0; n < 5; n++) await client.query('select $1::int', [n]);
      expect(performance.now() - five).toBeGreaterThanOrEqual(100);
    } finally {
      proxy.setDelay(0);
    }
  });
});
