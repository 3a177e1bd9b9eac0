// A burst at the top of the hour (issue 34): BURST_POSTS one-item posts (1,000) on BURST_CHANNELS Telegram channels (50),
// all due at one instant, published by one Herald started as `npm start` runs it, at its defaults, to a fake Bot API that
// answers each send after BURST_LATENCY_MS (a comma-separated list, "0,300,1000" by default: run side by side on the same
// Herald). Prints per latency the lateness (the fake's receive time minus the posts' date) p50/p99/max, the throughput (posts
// a second from the due instant to the last send), the most sends in flight at once, and the physical floor of the same
// burst: the CPU it cost (Herald's node process, whose JavaScript runs on one thread, and Postgres's processes, over the
// machine's cores) plus one platform answer. BURST_RUNS (1) runs per latency, BURST_LEAD_MS (25,000) from the creates to the
// due instant, BURST_CPU_PROF a directory for a CPU profile of Herald. BURST_WORKERS ("1,2"): the worker processes, each
// count run in turn: 1 is Herald alone (web and worker in one process, as `npm start`), 2 adds one `--role worker` process
// on the same database and on this machine, so both compete for its cores (with Postgres and the fake); the publishing
// limits (Telegram's 4 calls per chat) are kept per process, so two processes may have twice as many in flight.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDir, commandOf, connectChannel, newDatabase, postBody, processTree, rest, sleep, socialEndpoints, standalone, startHerald, startPlatformFake } from './lib/env.js';
import type { HeraldProcess } from '../test/helpers/herald-process.js';
import { heading, line, percentile, repeat } from './lib/stats.js';

const numbers = (text: string) => text.split(',').map((value) => Number(value.trim()));

/** CPU seconds (user + system) a process has used, or with `children` those of its children that ended, from /proc. */
function cpuSeconds(pid: number, children = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return children ? (Number(fields[13]) + Number(fields[14])) / 100 : (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of the bench's Postgres (the embedded server is a child of this process; an external one is not counted): its
 * live processes, and the backends that ended, counted in the server process's children's times.
 */
function postgresCpu(): number {
  const pids = processTree(process.pid).filter((pid) => /postgres/.test(commandOf(pid)) && !/node/.test(commandOf(pid)));
  const ended = pids.map((pid) => cpuSeconds(pid, true)).reduce((sum, value) => sum + value, 0);
  return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) + ended;
}

/** What every burst of one run of the figure shares. */
interface Setup {
  herald: HeraldProcess;
  fake: Awaited<ReturnType<typeof startPlatformFake>>;
  integrations: string[];
  posts: number;
  channels: number;
  leadMs: number;
  cores: number;
}

/** One burst: the posts created and due at one instant, published by `nodes` (Herald and any more worker processes). */
async function oneBurst(setup: Setup, nodes: HeraldProcess[], latency: number, run: number) {
  const { herald, fake, integrations, posts, channels, leadMs, cores } = setup;
  const workers = nodes.length;
  const nodeCpu = () => nodes.reduce((sum, each) => sum + cpuSeconds(each.pid), 0);
  const date = Date.now() + leadMs;
  const label = `Burst ${workers} ${latency} ${run}`;
  // One create per channel, its share of the posts as separate entries (each its own post), 5 creates at a time.
  const creates = integrations.map((integrationId, channel) => {
    const count = Math.floor(posts / channels) + (channel < posts % channels ? 1 : 0);
    return () => rest(herald, herald.apiKey!, 'POST', '/posts', postBody(integrationId, new Date(date), Array.from({ length: count }, (_, index) => [`${label} ${channel} ${index}`])));
  });
  for (let index = 0; index < creates.length; index += 5) {
    for (const answer of await Promise.all(creates.slice(index, index + 5).map((send) => send()))) {
      if (answer.status !== 200) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  }
  if (Date.now() > date - 2000) console.log(`  (${workers} process${workers === 1 ? '' : 'es'}, latency ${latency} ms, run ${run}: the creates ended less than 2 s before the due instant; raise BURST_LEAD_MS)`);
  while (Date.now() < date - 1000) await sleep(100);
  const before = fake.received.length;
  fake.maxInFlight = 0;
  const heraldCpu = nodeCpu();
  const pgCpu = postgresCpu();
  const deadline = date + Number(process.env.BURST_TIMEOUT_MS ?? 600_000);
  while (fake.received.length < before + posts && Date.now() < deadline) await sleep(50);
  // The last answers and their outcomes' writes.
  while (fake.inFlight > 0 && Date.now() < deadline) await sleep(20);
  await sleep(500);
  const heraldSpent = nodeCpu() - heraldCpu;
  const pgSpent = postgresCpu() - pgCpu;
  const late = fake.received
    .slice(before)
    .filter((message) => message.text.startsWith(label))
    .map((message) => message.at - date)
    .sort((a, b) => a - b);
  // BURST_TIMELINE=1: the sends of each 100 ms after the due instant, to see the rounds of the platform's limits.
  if (process.env.BURST_TIMELINE) {
    const buckets = new Map<number, number>();
    for (const ms of late) buckets.set(Math.floor(ms / 100), (buckets.get(Math.floor(ms / 100)) ?? 0) + 1);
    console.log(`  ${label}: sends per 100 ms from the due instant: ${[...buckets].map(([bucket, count]) => `${bucket * 100}:${count}`).join(' ')}`);
  }
  if (late.length < posts) console.log(`  (${workers} process${workers === 1 ? '' : 'es'}, latency ${latency} ms, run ${run}: only ${late.length} of ${posts} posts went out before the time-out)`);
  const heraldPerPublish = (heraldSpent * 1000) / late.length;
  // Not measured when a Postgres process ended between the two readings and its time went with it (seen as a negative).
  const pgPerPublish = pgSpent < 0 ? Number.NaN : (pgSpent * 1000) / late.length;
  // The floor: Herald's JavaScript on one thread per process, or all the CPU over the cores, whichever is longer, then
  // one answer.
  const floor = Math.max((late.length * heraldPerPublish) / 1000 / nodes.length, (late.length * (heraldPerPublish + (pgPerPublish || 0))) / 1000 / cores) + latency / 1000;
  return {
    published: late.length,
    p50: percentile(late, 50) / 1000,
    p99: percentile(late, 99) / 1000,
    max: late.at(-1)! / 1000,
    throughput: late.length / Math.max(0.001, (late.at(-1)! + latency) / 1000),
    inFlight: fake.maxInFlight,
    heraldPerPublish,
    pgPerPublish,
    floor,
  };
}

export async function burstFigure(): Promise<void> {
  const posts = Number(process.env.BURST_POSTS ?? 1000);
  const channels = Number(process.env.BURST_CHANNELS ?? 50);
  const latencies = numbers(process.env.BURST_LATENCY_MS ?? '0,300,1000');
  const workerCounts = numbers(process.env.BURST_WORKERS ?? '1,2');
  const runs = Number(process.env.BURST_RUNS ?? 1);
  const leadMs = Number(process.env.BURST_LEAD_MS ?? 25_000);
  const cores = os.cpus().length;
  const databaseUrl = await newDatabase('burst');
  const fake = await startPlatformFake();
  // BURST_CPU_PROF=<directory>: Herald writes a CPU profile there when it stops (bench/lib/cpu-profile.mjs), to see where a
  // publish goes.
  const profile: Record<string, string> = process.env.BURST_CPU_PROF
    ? { NODE_OPTIONS: `--import=${pathToFileURL(path.join(benchDir, 'lib', 'cpu-profile.mjs')).href}`, HERALD_CPU_PROF: path.resolve(process.env.BURST_CPU_PROF) }
    : {};
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake), ...profile });
  let extra: HeraldProcess[] = [];
  try {
    const integrations: string[] = [];
    for (let channel = 0; channel < channels; channel++) integrations.push(await connectChannel(herald, herald.apiKey!, fake, String(-1009000000000 - channel)));
    const results: { workers: number; latency: number; figures: Record<string, number[]> }[] = [];
    const setup: Setup = { herald, fake, integrations, posts, channels, leadMs, cores };
    for (const workers of workerCounts) {
      // The worker processes besides Herald's own, at their defaults too.
      extra = await Promise.all(Array.from({ length: Math.max(0, workers - 1) }, () => startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake), HERALD_ROLE: 'worker', ...profile })));
      for (const latency of latencies) {
        fake.latencyMs = latency;
        results.push({ workers, latency, figures: await repeat(runs, (run) => oneBurst(setup, [herald, ...extra], latency, run)) });
      }
      await Promise.all(extra.map((each) => each.stop()));
      extra = [];
    }
    // Each latency's figures with one process beside those with more.
    results.sort((a, b) => latencies.indexOf(a.latency) - latencies.indexOf(b.latency) || a.workers - b.workers);
    const target = (latency: number) => (latency === 300 ? ' (target ≤ 2 s)' : latency === 1000 ? ' (target ≤ 4 s)' : '');
    heading(
      `Burst: ${posts.toLocaleString('en')} one-item posts on ${channels} Telegram channels due at one instant, Herald at its defaults (npm start), ${runs} run${runs === 1 ? '' : 's'} per latency`,
      `lateness = the fake's receive time - the posts' date; floor = max(posts × Herald's CPU a publish / processes, posts × (Herald + Postgres CPU) / ${cores} cores) + one answer`,
    );
    for (const { workers, latency, figures } of results) {
      const processes = workers === 1 ? 'one Herald process' : `Herald and ${workers - 1} more worker process${workers === 2 ? '' : 'es'} (${workers} on ${cores} cores)`;
      console.log(`  ${processes}, platform answers after ${latency} ms:`);
      console.log(line({ label: '  posts published', values: figures.published, unit: `of ${posts}` }));
      console.log(line({ label: '  lateness p50', values: figures.p50, unit: 's', digits: 2 }));
      console.log(line({ label: `  lateness p99${target(latency)}`, values: figures.p99, unit: 's', digits: 2 }));
      console.log(line({ label: '  lateness max', values: figures.max, unit: 's', digits: 2 }));
      console.log(line({ label: '  throughput', values: figures.throughput, unit: 'posts/s', digits: 1 }));
      console.log(line({ label: '  most sends in flight at once', values: figures.inFlight, unit: '' }));
      console.log(line({ label: `  CPU a publish, Herald (node${workers === 1 ? '' : `, ${workers} processes`})`, values: figures.heraldPerPublish, unit: 'ms', digits: 2 }));
      console.log(line({ label: '  CPU a publish, Postgres', values: figures.pgPerPublish, unit: 'ms', digits: 2 }));
      console.log(line({ label: '  physical floor (last post)', values: figures.floor, unit: 's', digits: 2 }));
    }
  } finally {
    await Promise.all(extra.map((each) => each.stop()));
    await herald.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, burstFigure);
