// MCP: tools/call integrationList from 10 SDK clients, each with its own stateful session over streamable HTTP, against a
// bare MCP SDK server answering a trivial tool (sessions in memory, no database), interleaved run by run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectChannel, newDatabase, socialEndpoints, startBaseline, startHerald, startPlatformFake, standalone } from './lib/env.js';
import { closedLoop } from './lib/load.js';
import { heading, printVersus, repeat, settings } from './lib/stats.js';
import { profiled } from './lib/profiled.js';

async function clients(url: string, count: number, headers: Record<string, string>): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      return client;
    }),
  );
}

const callAll = (all: Client[], seconds: number) =>
  closedLoop({
    connections: all.length,
    seconds,
    send: async (index) => {
      const result = await all[index].callTool({ name: 'integrationList', arguments: {} });
      return !result.isError;
    },
  });

export async function mcpFigure(): Promise<void> {
  const count = Number(process.env.BENCH_MCP_CLIENTS ?? 10);
  const databaseUrl = await newDatabase('mcp');
  const fake = await startPlatformFake();
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake), ...profiled() });
  await connectChannel(herald, herald.apiKey!, fake);
  const baseline = await startBaseline('mcp-sdk.mjs', {});
  const ours = await clients(`${herald.url}/api/mcp`, count, { authorization: `Bearer ${herald.apiKey}` });
  const bare = await clients(baseline.url, count, {});
  try {
    // Both warmed up first (the JIT compiles the hot paths), then measured.
    await callAll(ours, 3);
    await callAll(bare, 3);
    const figures = await repeat(settings.runs, async () => {
      const a = await callAll(ours, settings.seconds);
      const b = await callAll(bare, settings.seconds);
      if (a.errors || b.errors) console.log(`  (errors: Herald ${a.errors}, baseline ${b.errors})`);
      return { ours: a.perSecond, oursP99: a.p99, bare: b.perSecond, bareP99: b.p99 };
    });
    heading(`MCP tools/call integrationList, ${count} SDK clients (one stateful session each), ${settings.runs} runs of ${settings.seconds} s, interleaved`);
    printVersus(figures, { unit: 'calls/s', baseline: 'bare MCP SDK server, trivial tool', ratio: 'ratio Herald / baseline (target ≥ 0.7)' });
  } finally {
    await Promise.all([...ours, ...bare].map((client) => client.close().catch(() => undefined)));
    await herald.stop();
    await baseline.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, mcpFigure);
