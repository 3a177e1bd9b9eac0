// On-time publishing: 1,000 posts due evenly over 10 seconds (100 dates, 10 posts each), published by one Herald (`npm
// start`, web and worker) to a zero-latency fake platform; lateness = the platform's receive time minus the post's date.
// Against bare graphile-worker no-op jobs due the same way (its poll every second, as Herald had before its timers). Then
// the idle load each puts on Postgres (transactions per second with nothing to do).
import pg from 'pg';
import type { HeraldProcess } from '../test/helpers/herald-process.js';
import { connectChannel, newDatabase, postBody, rest, runBaseline, socialEndpoints, startHerald, startPlatformFake, sleep, standalone, type PlatformFake } from './lib/env.js';
import { heading, line, percentile, ratios, repeat, settings } from './lib/stats.js';

const POSTS = 1000;
const DATES = 100;
const SPREAD_MS = 10_000;

async function transactionsPerSecond(databaseUrl: string, seconds: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const count = async () => Number((await client.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()')).rows[0].n);
  try {
    const before = await count();
    await sleep(seconds * 1000);
    // Our own second query counts once.
    return ((await count()) - before - 1) / seconds;
  } finally {
    await client.end();
  }
}

/**
 * One lateness run: `posts` posts due evenly over `spreadMs` (`dates` dates, created 8 requests at a time, the first date
 * `leadMs` from now), published by `herald`'s workers to `fake`; the sorted lateness of each (platform receive time - its
 * date, ms).
 */
export async function latenessRun(
  herald: HeraldProcess,
  fake: PlatformFake,
  integrationId: string,
  options: { posts: number; dates: number; spreadMs: number; leadMs: number; label: string },
): Promise<number[]> {
  const start = Date.now() + options.leadMs;
  const due = new Map<string, number>();
  const requests = Array.from({ length: options.dates }, (_, index) => {
    const date = start + Math.round((index * options.spreadMs) / options.dates);
    const texts = Array.from({ length: options.posts / options.dates }, (_, item) => `Late ${options.label} ${index} ${item}`);
    for (const text of texts) due.set(text, date);
    return () => rest(herald, herald.apiKey!, 'POST', '/posts', postBody(integrationId, new Date(date), texts.map((text) => [text])));
  });
  for (let index = 0; index < requests.length; index += 8) await Promise.all(requests.slice(index, index + 8).map((send) => send()));
  if (Date.now() > start) console.log(`  (run ${options.label}: creating the posts took past the first date; raise the lead time)`);
  const before = fake.received.length;
  while (fake.received.length < before + options.posts && Date.now() < start + options.spreadMs + 60_000) await sleep(50);
  return fake.received
    .slice(before)
    .filter((message) => due.has(message.text))
    .map((message) => message.at - due.get(message.text)!)
    .sort((a, b) => a - b);
}

export async function latenessFigure(): Promise<void> {
  const runs = Math.max(1, Math.min(settings.runs, Number(process.env.BENCH_LATENESS_RUNS ?? 3)));
  const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
  const databaseUrl = await newDatabase('lateness');
  const fake = await startPlatformFake();
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) });
  const integrationId = await connectChannel(herald, herald.apiKey!, fake);
  try {
    const figures = await repeat(runs, async (run) => {
      // Dates far enough ahead for the 100 creates (8 at a time) to finish first.
      const late = await latenessRun(herald, fake, integrationId, { posts: POSTS, dates: DATES, spreadMs: SPREAD_MS, leadMs: Number(process.env.BENCH_LATENESS_LEAD_MS ?? 12_000), label: `${run}` });
      const bare = await runBaseline<{ p50: number; p99: number; max: number }>('graphile-noop.mjs', {
        MODE: 'lateness',
        DATABASE_URL: await newDatabase('graphile_late'),
        JOBS: String(POSTS),
        SPREAD_MS: String(SPREAD_MS),
        LEAD_MS: '3000',
      });
      return { p50: percentile(late, 50), p99: percentile(late, 99), max: late.at(-1)!, published: late.length, bareP50: bare.p50, bareP99: bare.p99, bareMax: bare.max };
    });
    await sleep(3000);
    const idle = await transactionsPerSecond(databaseUrl, idleSeconds);
    const bareIdle = await runBaseline<{ transactionsPerSecond: number }>('graphile-noop.mjs', { MODE: 'idle', DATABASE_URL: await newDatabase('graphile_idle'), IDLE_SECONDS: String(idleSeconds) });
    heading(`Lateness of ${POSTS.toLocaleString('en')} posts due over ${SPREAD_MS / 1000} s (platform receive time - post date), ${runs} runs`);
    console.log(line({ label: 'posts published of 1,000', values: figures.published, unit: '' }));
    console.log(line({ label: 'Herald p50', values: figures.p50, unit: 'ms' }));
    console.log(line({ label: 'Herald p99 (target ≤ 50)', values: figures.p99, unit: 'ms' }));
    console.log(line({ label: 'Herald max', values: figures.max, unit: 'ms' }));
    console.log(line({ label: 'bare graphile-worker (poll 1 s) p50', values: figures.bareP50, unit: 'ms' }));
    console.log(line({ label: 'bare graphile-worker (poll 1 s) p99', values: figures.bareP99, unit: 'ms' }));
    console.log(line({ label: 'bare graphile-worker (poll 1 s) max', values: figures.bareMax, unit: 'ms' }));
    console.log(line({ label: 'ratio p99 Herald / baseline', values: ratios(figures.p99, figures.bareP99), unit: '', digits: 2 }));
    console.log(`  idle load on Postgres over ${idleSeconds} s: Herald (web + worker) ${idle.toFixed(2)} transactions/s, bare graphile-worker polling every second at concurrency 4: ${bareIdle.transactionsPerSecond.toFixed(2)} transactions/s`);
  } finally {
    await herald.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, latenessFigure);
