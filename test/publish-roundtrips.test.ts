// Issue 26: a publish costs at most 8 database round trips, counted as the bench counts them (bench/roundtrips.ts): Herald
// as `npm start` runs it, the web process on the database directly, the worker process through the counting proxy
// (bench/lib/pg-proxy.ts), from the worker's wake-up at the post's date to its completed job (graphile-worker's get_job,
// the job's lock, reads and writes, complete_job and the worker's next get_job). A number that regresses fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgProxy, type PgProxy } from '../bench/lib/pg-proxy.js';
import { connectChannel, postBody, rest, sleep, socialEndpoints, startHerald, startPlatformFake, type PlatformFake } from '../bench/lib/env.js';
import type { HeraldProcess } from './helpers/herald-process.js';
import { newTestDatabase } from './helpers/harness.js';

const SETTLE_MS = 300;
const MAX_PUBLISH_ROUND_TRIPS = 8;

describe('round trips of a publish', () => {
  let fake: PlatformFake;
  let proxy: PgProxy;
  const processes: HeraldProcess[] = [];
  let web: HeraldProcess;
  let integrationId: string;
  let serial = 0;

  beforeAll(async () => {
    const databaseUrl = await newTestDatabase();
    fake = await startPlatformFake();
    proxy = await startPgProxy(databaseUrl);
    web = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
    processes.push(web);
    processes.push(await startHerald(proxy.url, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'worker']));
    integrationId = await connectChannel(web, web.apiKey!, fake);
  }, 120_000);

  afterAll(async () => {
    for (const process of processes) await process.stop();
    await proxy?.close();
    await fake?.close();
  });

  /** Creates a one-item post due in a moment, resets the count just before its date, and counts until it went out. */
  async function countedPublish(): Promise<{ roundTrips: number; statements: string[] }> {
    const due = Date.now() + 1500;
    const text = `Counted ${serial++}`;
    const created = await rest(web, web.apiKey!, 'POST', '/posts', postBody(integrationId, new Date(due), [[text]]));
    expect(created.status).toBe(200);
    await sleep(Math.max(0, due - Date.now() - 200));
    proxy.reset();
    const deadline = Date.now() + 30_000;
    while (!fake.received.some((message) => message.text === text)) {
      if (Date.now() > deadline) throw new Error(`"${text}" was not published within 30 s`);
      await sleep(5);
    }
    await sleep(SETTLE_MS);
    return { roundTrips: proxy.count(), statements: proxy.statements().map(({ statements }) => statements.join(' | ').slice(0, 120)) };
  }

  it(`publishes one item in at most ${MAX_PUBLISH_ROUND_TRIPS} round trips, its outcome announced with it`, async () => {
    await countedPublish(); // warm-up: prepared statements, pools
    const runs = [await countedPublish(), await countedPublish(), await countedPublish()];
    // The fewest of three: the worker's own periodic queries (the look-ahead every 30 s, the recovery every 20 s, the
    // poll every 10 s) fall now and then into a run's half second; a publish that costs more fails every run.
    const best = runs.reduce((fewest, run) => (run.roundTrips < fewest.roundTrips ? run : fewest));
    expect(best.roundTrips, best.statements.join('\n')).toBeLessThanOrEqual(MAX_PUBLISH_ROUND_TRIPS);
    // The outcome, its notification, webhook event and audit record are one statement; no session lookup of its own.
    expect(best.statements.filter((text) => /^(BEGIN|COMMIT)/.test(text))).toEqual([]);
    expect(best.statements.some((text) => /from mcp_session/.test(text) && !/update post/.test(text))).toBe(false);
  }, 180_000);
});
