// Memory over a long run (issue 26: "10,000 creates, 2,000 publishes and 30 minutes of mixed REST and MCP traffic; RSS of
// the node process at the end ≤ 250 MiB and not growing over its last 15 minutes"). Herald runs as `npm start` runs it (one
// process, web and worker); SOAK_CLIENTS (4) clients send, each in turn, a create (POST /posts, one post, until the creates
// are done), GET /posts (a 3-day window), GET /integrations, an MCP integrationList and an MCP groupList on open sessions,
// for SOAK_MINUTES (30). Of the creates, SOAK_PUBLISHES are due during the run (spread evenly between its first and its
// last minute) and go out on the zero-latency fake platform; the others are due next month. The node processes' RSS is
// sampled every 10 s; the figure is the RSS at the end, its peak, and the slope of a least-squares line through the samples
// of the second half of the run (the issue's last 15 minutes of 30), in MiB per minute.
// A shorter run (SOAK_MINUTES=5) scales the creates and publishes with it (SOAK_CREATES, SOAK_PUBLISHES to set them).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { commandOf, connectChannel, memoryOf, newDatabase, postBody, processTree, rest, sleep, socialEndpoints, startHerald, startPlatformFake, standalone } from './lib/env.js';
import { heading } from './lib/stats.js';

const SAMPLE_EVERY_MS = 10_000;

/** Least-squares slope of `points` (minutes, MiB): MiB per minute. */
function slope(points: { minute: number; mib: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((sum, point) => sum + point.minute, 0) / n;
  const my = points.reduce((sum, point) => sum + point.mib, 0) / n;
  const sxy = points.reduce((sum, point) => sum + (point.minute - mx) * (point.mib - my), 0);
  const sxx = points.reduce((sum, point) => sum + (point.minute - mx) ** 2, 0);
  return sxy / sxx;
}

interface HeapFigures {
  used: number;
  total: number;
  external: number;
}

/** The node process's V8 heap and external memory (MiB), from its own /metrics (prom-client's default metrics). */
async function heapOf(url: string): Promise<HeapFigures | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
    return { used: value('nodejs_heap_size_used_bytes'), total: value('nodejs_heap_size_total_bytes'), external: value('nodejs_external_memory_bytes') };
  } catch {
    return undefined;
  }
}

export async function soakFigure(): Promise<void> {
  const minutes = Number(process.env.SOAK_MINUTES ?? 30);
  const creates = Number(process.env.SOAK_CREATES ?? Math.round((10_000 * minutes) / 30));
  const publishes = Math.min(creates, Number(process.env.SOAK_PUBLISHES ?? Math.round((2_000 * minutes) / 30)));
  const clientCount = Number(process.env.SOAK_CLIENTS ?? 4);
  const databaseUrl = await newDatabase('soak');
  const fake = await startPlatformFake();
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) });
  const sessions: Client[] = [];
  try {
    const apiKey = herald.apiKey!;
    const integrationId = await connectChannel(herald, apiKey, fake);
    for (let index = 0; index < clientCount; index++) {
      const client = new Client({ name: 'soak', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
      sessions.push(client);
    }
    const nodePids = () => processTree(herald.child.pid!).filter((pid) => /node/.test(commandOf(pid)) && !/postgres/.test(commandOf(pid)));
    const started = Date.now();
    const end = started + minutes * 60_000;
    const samples: { minute: number; mib: number; heap?: HeapFigures }[] = [];
    const sample = () => {
      const point: (typeof samples)[number] = { minute: (Date.now() - started) / 60_000, mib: memoryOf(nodePids()).rss };
      samples.push(point);
      void heapOf(herald.url).then((heap) => (point.heap = heap));
    };
    sample();
    const sampler = setInterval(sample, SAMPLE_EVERY_MS);
    // The publishes' dates, evenly between the first and the last minute of the run.
    const firstDue = started + Math.min(60_000, (minutes * 60_000) / 4);
    const lastDue = end - Math.min(60_000, (minutes * 60_000) / 4);
    let created = 0;
    const counts = { create: 0, 'GET /posts': 0, 'GET /integrations': 0, 'MCP integrationList': 0, 'MCP groupList': 0 };
    let errors = 0;
    let firstError = '';
    const window = () => `startDate=${new Date(Date.now() - 86_400_000).toISOString()}&endDate=${new Date(Date.now() + 2 * 86_400_000).toISOString()}`;
    const nextCreate = () => {
      const index = created++;
      // Every (creates / publishes)-th create is one of the publishes, due in order along the run.
      const every = creates / Math.max(1, publishes);
      const publishIndex = Math.floor(index / every);
      const due = index % every < 1 && publishIndex < publishes ? new Date(firstDue + ((lastDue - firstDue) * publishIndex) / Math.max(1, publishes - 1)) : new Date(Date.now() + 30 * 86_400_000);
      return postBody(integrationId, due, [[`Soak ${index}`]]);
    };
    const operations: [keyof typeof counts, (session: Client) => Promise<unknown>][] = [
      ['create', async () => (created < creates ? rest(herald, apiKey, 'POST', '/posts', nextCreate()) : { status: 200 })],
      ['GET /posts', () => rest(herald, apiKey, 'GET', `/posts?${window()}`)],
      ['GET /integrations', () => rest(herald, apiKey, 'GET', '/integrations')],
      ['MCP integrationList', (session) => session.callTool({ name: 'integrationList', arguments: {} })],
      ['MCP groupList', (session) => session.callTool({ name: 'groupList', arguments: {} })],
    ];
    // Creates spread over the run: a client creates when the creates are behind their share of the time elapsed.
    const createsDue = () => (creates * (Date.now() - started)) / (minutes * 60_000);
    await Promise.all(
      sessions.map(async (session, client) => {
        let turn = client;
        while (Date.now() < end) {
          const [name, run] = created < creates && created < createsDue() ? operations[0] : operations[1 + (turn++ % (operations.length - 1))];
          try {
            const answer = (await run(session)) as { status?: number; isError?: boolean; body?: unknown };
            if ((answer.status !== undefined && answer.status !== 200) || answer.isError) throw new Error(`${name}: ${answer.status ?? ''} ${JSON.stringify(answer.body ?? answer).slice(0, 200)}`);
            counts[name]++;
          } catch (error) {
            errors++;
            firstError ||= (error as Error).message;
          }
        }
      }),
    );
    clearInterval(sampler);
    sample();
    // The last publishes (due a minute before the end) are given a moment to go out.
    const deadline = Date.now() + 60_000;
    while (fake.received.filter((message) => message.text.startsWith('Soak ')).length < publishes && Date.now() < deadline) await sleep(500);
    const published = fake.received.filter((message) => message.text.startsWith('Soak ')).length;
    const secondHalf = samples.filter((point) => point.minute >= minutes / 2);
    const peak = Math.max(...samples.map((point) => point.mib));
    heading(
      `Soak: ${minutes} min of mixed REST and MCP traffic (${clientCount} clients), ${creates} creates, ${publishes} publishes due during the run`,
      minutes < 30 ? `a shortened run (SOAK_MINUTES=${minutes}; the issue's figure is 30 minutes with 10,000 creates and 2,000 publishes): creates and publishes scaled with it` : undefined,
    );
    console.log(`  requests: ${Object.entries(counts).map(([name, count]) => `${name} ${count}`).join(', ')}; errors ${errors}${firstError ? ` (first: ${firstError})` : ''}`);
    console.log(`  creates ${Math.min(created, creates)} of ${creates}; published ${published} of ${publishes}`);
    console.log(`  RSS of the node process: start ${samples[0].mib.toFixed(0)} MiB, end ${samples.at(-1)!.mib.toFixed(0)} MiB (goal ≤ 250), peak ${peak.toFixed(0)} MiB`);
    console.log(`  RSS slope over the second half (${secondHalf.length} samples from minute ${(minutes / 2).toFixed(1)}): ${slope(secondHalf).toFixed(2)} MiB/min (goal: not growing)`);
    const heaps = samples.filter((point) => point.heap);
    const last = heaps.at(-1)?.heap;
    if (last) {
      console.log(`  V8 heap at the end (from /metrics): used ${last.used.toFixed(0)} MiB of ${last.total.toFixed(0)} MiB; external ${last.external.toFixed(0)} MiB; RSS less heap and external: ${(samples.at(-1)!.mib - last.total - last.external).toFixed(0)} MiB`);
      console.log(`  heap used (minute: MiB): ${heaps.filter((_, index) => index % 3 === 0 || index === heaps.length - 1).map((point) => `${point.minute.toFixed(1)}: ${point.heap!.used.toFixed(0)}/${point.heap!.total.toFixed(0)}`).join(', ')}`);
    }
    console.log(`  samples (minute: MiB): ${samples.filter((_, index) => index % 3 === 0 || index === samples.length - 1).map((point) => `${point.minute.toFixed(1)}: ${point.mib.toFixed(0)}`).join(', ')}`);
  } finally {
    for (const session of sessions) await session.close().catch(() => undefined);
    await herald.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, soakFigure);
