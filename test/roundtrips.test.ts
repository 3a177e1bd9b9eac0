// Issue 26: a publish costs at most 8 database round trips and a create 3, counted as the bench counts them
// (bench/roundtrips.ts): Herald as `npm start` runs it, the web process and the worker process each through a counting proxy
// (bench/lib/pg-proxy.ts), from the worker's wake-up at the post's date to its completed job (graphile-worker's get_job,
// the job's lock, reads and writes, complete_job and the worker's next get_job); a create (POST /posts) from its request to
// SETTLE_MS after its answer: the key with its rate limit, one read (channels, duplicate guard, post-creation limit) and
// one write (items, job, audit). A number that regresses fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgProxy, type PgProxy } from '../bench/lib/pg-proxy.js';
import { connectChannel, postBody, rest, sleep, socialEndpoints, startHerald, startPlatformFake, type PlatformFake } from '../bench/lib/env.js';
import type { HeraldProcess } from './helpers/herald-process.js';
import { newTestDatabase } from './helpers/harness.js';

const SETTLE_MS = 300;
const MAX_PUBLISH_ROUND_TRIPS = 8;
const MAX_CREATE_ROUND_TRIPS = 3;

describe('round trips of a publish and of a create', () => {
  let fake: PlatformFake;
  let proxy: PgProxy;
  let webProxy: PgProxy;
  const processes: HeraldProcess[] = [];
  let web: HeraldProcess;
  let integrationId: string;
  let serial = 0;

  beforeAll(async () => {
    const databaseUrl = await newTestDatabase();
    fake = await startPlatformFake();
    proxy = await startPgProxy(databaseUrl);
    webProxy = await startPgProxy(databaseUrl);
    web = await startHerald(webProxy.url, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
    processes.push(web);
    processes.push(await startHerald(proxy.url, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'worker']));
    integrationId = await connectChannel(web, web.apiKey!, fake);
  }, 120_000);

  afterAll(async () => {
    for (const process of processes) await process.stop();
    await proxy?.close();
    await webProxy?.close();
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

  it(`creates a two-item thread in at most ${MAX_CREATE_ROUND_TRIPS} round trips, with its job and audit record`, async () => {
    const create = async () => {
      webProxy.reset();
      const text = `Created ${serial++}`;
      const created = await rest(web, web.apiKey!, 'POST', '/posts', postBody(integrationId, new Date(Date.now() + 86_400_000), [[text, `${text}, continued`]]));
      expect(created.status).toBe(200);
      await sleep(SETTLE_MS);
      return { roundTrips: webProxy.count(), statements: webProxy.statements().map(({ statements }) => statements.join(' | ').slice(0, 120)) };
    };
    await create(); // warm-up
    const runs = [await create(), await create(), await create()];
    const best = runs.reduce((fewest, run) => (run.roundTrips < fewest.roundTrips ? run : fewest));
    expect(best.roundTrips, best.statements.join('\n')).toBeLessThanOrEqual(MAX_CREATE_ROUND_TRIPS);
    expect(best.statements.filter((text) => /^(BEGIN|COMMIT)/.test(text))).toEqual([]);
  }, 120_000);
});
