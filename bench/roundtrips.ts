// Database round trips per operation (issue 26: "a regression shows as a number"). Herald runs as `npm start` runs it, as
// two processes: `--role web` with its DATABASE_URL through one counting proxy (bench/lib/pg-proxy.ts) and `--role
// worker` through another, so what the web process does and what a publishing job does are counted apart. Each
// operation is measured alone, after warm-up runs (caches, prepared pools), several times; the table shows the median.
//
// Both processes also talk to Postgres on their own: the worker in bursts (graphile-worker's poll every 10 s, the
// presence's recovery every 20 s and look-ahead every 30 s, the cron sweep), the web process not at all when idle (0 in
// the runs so far). Subtracting a mean idle rate would take a share of those bursts off every run although almost no run
// (a window of about half a second) contains one; so nothing is subtracted, the idle traffic is measured and printed, and
// the median of the runs leaves out a run that a burst fell into (the range shows it). The count is read once the
// operation's trailing work has settled (SETTLE_MS after its answer), so writes Herald makes after answering count too.
//
// Publish: a one-item post due in a moment, created by the web process (not counted on the worker's proxy); the worker's
// counter is reset just before the post becomes due and read once the fake platform has the message and the job has been
// completed (SETTLE_MS later): the timer's wake-up, graphile-worker's get_job, the job's own reads and writes, and
// complete_job.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HeraldProcess } from '../test/helpers/herald-process.js';
import { startPgProxy, type PgProxy } from './lib/pg-proxy.js';
import { connectChannel, newDatabase, postBody, rest, sleep, socialEndpoints, startHerald, startPlatformFake, standalone } from './lib/env.js';
import { heading, median } from './lib/stats.js';

const SETTLE_MS = 300;

/** Round trips per second on a proxy with nothing asked of the processes behind it. */
async function idleRate(proxy: PgProxy, seconds: number): Promise<number> {
  proxy.reset();
  await sleep(seconds * 1000);
  return proxy.count() / seconds;
}

/** One operation's round trips: the count from its start until SETTLE_MS after it ended. */
async function counted(proxy: PgProxy, operation: () => Promise<void>): Promise<{ roundTrips: number; connections: number; statements: string[] }> {
  proxy.reset();
  await operation();
  await sleep(SETTLE_MS);
  const statements = proxy.statements().map(({ connection, statements }) => `#${connection} ${statements.join(' | ').replace(/\s+/g, ' ').slice(0, 240)}`);
  return { roundTrips: proxy.count(), connections: proxy.connections(), statements };
}

interface Operation {
  name: string;
  goal: string;
  proxy: PgProxy;
  run: () => Promise<void>;
}

export async function roundtripsFigure(): Promise<void> {
  const runs = Math.max(5, Number(process.env.BENCH_ROUNDTRIP_RUNS ?? 7));
  const databaseUrl = await newDatabase('roundtrips');
  const fake = await startPlatformFake();
  const webProxy = await startPgProxy(databaseUrl);
  const workerProxy = await startPgProxy(databaseUrl);
  const processes: HeraldProcess[] = [];
  let mcp: Client | undefined;
  try {
    const web = await startHerald(webProxy.url, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
    processes.push(web);
    processes.push(await startHerald(workerProxy.url, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'worker']));
    const apiKey = web.apiKey!;
    const integrationId = await connectChannel(web, apiKey, fake);
    mcp = new Client({ name: 'bench', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${web.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    const session = mcp;
    const ok = (answer: { status: number; body: unknown }, what: string) => {
      if (answer.status !== 200) throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    };
    let serial = 0;
    const tomorrow = () => new Date(Date.now() + 86_400_000);
    const window = () => `startDate=${new Date(Date.now() - 86_400_000).toISOString()}&endDate=${new Date(Date.now() + 2 * 86_400_000).toISOString()}`;
    const publishOne = async () => {
      // Due far enough ahead for the create to be done before; the counter is reset just before the date.
      const due = Date.now() + 1500;
      const text = `Round trips ${serial++}`;
      ok(await rest(web, apiKey, 'POST', '/posts', postBody(integrationId, new Date(due), [[text]])), 'POST /posts');
      await sleep(Math.max(0, due - Date.now() - 200));
      return text;
    };
    const operations: Operation[] = [
      { name: 'POST /posts (create, one item, due tomorrow)', goal: '≤ 2 (REST)', proxy: webProxy, run: async () => ok(await rest(web, apiKey, 'POST', '/posts', postBody(integrationId, tomorrow(), [[`Created ${serial++}`]])), 'POST /posts') },
      { name: 'GET /posts (a 3-day window)', goal: '≤ 2 (REST)', proxy: webProxy, run: async () => ok(await rest(web, apiKey, 'GET', `/posts?${window()}`), 'GET /posts') },
      { name: 'GET /integrations', goal: '≤ 2 (REST)', proxy: webProxy, run: async () => ok(await rest(web, apiKey, 'GET', '/integrations'), 'GET /integrations') },
      {
        name: 'MCP tools/call integrationList (open session)',
        goal: '≤ 3 (MCP)',
        proxy: webProxy,
        run: async () => {
          const result = await session.callTool({ name: 'integrationList', arguments: {} });
          if (result.isError) throw new Error(`integrationList failed: ${JSON.stringify(result.content)}`);
        },
      },
    ];
    // Warm-up: every operation twice, and one publish.
    for (const operation of operations) for (let index = 0; index < 2; index++) await operation.run();
    await waitForMessage(fake, await publishOne());
    const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
    const [webIdle, workerIdle] = await Promise.all([idleRate(webProxy, idleSeconds), idleRate(workerProxy, idleSeconds)]);
    const results = new Map<string, { roundTrips: number[]; connections: number[]; statements: string[] }>();
    const record = (name: string, value: { roundTrips: number; connections: number; statements: string[] }) => {
      const entry = results.get(name) ?? { roundTrips: [], connections: [], statements: [] };
      entry.roundTrips.push(value.roundTrips);
      entry.connections.push(value.connections);
      entry.statements = value.statements;
      results.set(name, entry);
    };
    for (let run = 0; run < runs; run++) {
      for (const operation of operations) record(operation.name, await counted(operation.proxy, operation.run));
      const text = await publishOne();
      record('publish (one item, worker: wake-up to completed job)', await counted(workerProxy, () => waitForMessage(fake, text)));
    }
    const goals = new Map([...operations.map((operation) => [operation.name, operation.goal] as const), ['publish (one item, worker: wake-up to completed job)', '≤ 8']]);
    heading(
      `Database round trips per operation (Query, Sync or FunctionCall messages counted by a proxy), median of ${runs} runs`,
      `idle traffic over ${idleSeconds} s (not subtracted; see the comment at the top of bench/roundtrips.ts): web process ${webIdle.toFixed(2)}/s, worker process ${workerIdle.toFixed(2)}/s`,
    );
    console.log(`  ${'operation'.padEnd(56)} ${'round trips'.padStart(11)} ${'range'.padStart(9)} ${'goal'.padStart(12)}  new connections`);
    for (const [name, entry] of results) {
      const sorted = [...entry.roundTrips].sort((a, b) => a - b);
      const range = `${sorted[0].toFixed(0)}–${sorted.at(-1)!.toFixed(0)}`;
      console.log(`  ${name.padEnd(56)} ${median(sorted).toFixed(0).padStart(11)} ${range.padStart(9)} ${goals.get(name)!.padStart(12)}  ${median(entry.connections)}`);
    }
    // BENCH_ROUNDTRIP_LOG=1: the SQL of each round trip of every operation's last run (the proxy reads it off the wire).
    if (process.env.BENCH_ROUNDTRIP_LOG) {
      for (const [name, entry] of results) console.log(`\n  ${name}, last run:\n${entry.statements.map((line) => `    ${line}`).join('\n')}`);
    }
  } finally {
    await mcp?.close().catch(() => undefined);
    for (const process of processes) await process.stop();
    await webProxy.close();
    await workerProxy.close();
    await fake.close();
  }
}

async function waitForMessage(fake: { received: { text: string }[] }, text: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!fake.received.some((message) => message.text === text)) {
    if (Date.now() > deadline) throw new Error(`"${text}" was not published within 30 s`);
    await sleep(5);
  }
}

await standalone(import.meta.url, roundtripsFigure);
