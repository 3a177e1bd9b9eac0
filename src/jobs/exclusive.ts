// One live run per key: a second run of the same job (a replaced job picked up early, a sweep) sees the lock and leaves.
import type { JobHelpers } from 'graphile-worker';

export async function exclusively(helpers: JobHelpers, key: string, run: () => Promise<void>): Promise<void> {
  await helpers.withPgClient(async (client) => {
    const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [key]);
    if (!rows[0]?.locked) return;
    try {
      await run();
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [key]);
    }
  });
}
