// REST: GET /api/public/v1/integrations (API key, rate limiting on and exact, one channel) against a bare express + pg
// server doing one primary-key SELECT on the same database, interleaved run by run.
//   npm run bench -- rest      (BENCH_RUNS, BENCH_SECONDS, BENCH_CONNECTIONS)
import { connectChannel, newDatabase, startBaseline, startHerald, startPlatformFake, socialEndpoints, standalone } from './lib/env.js';
import { loadGet } from './lib/load.js';
import { heading, printVersus, repeat, settings } from './lib/stats.js';
import { profiled } from './lib/profiled.js';

export async function restFigure(): Promise<void> {
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const databaseUrl = await newDatabase('rest');
  const fake = await startPlatformFake();
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake), ...profiled() });
  const baseline = await startBaseline('express-pg.mjs', { DATABASE_URL: databaseUrl, INTEGRATION_ID: await connectChannel(herald, herald.apiKey!, fake) });
  try {
    // Both warmed up first (the JIT compiles the hot paths), then measured.
    await loadGet(`${herald.url}/api/public/v1/integrations`, { authorization: herald.apiKey! }, connections, 3);
    await loadGet(`${baseline.url}/integrations`, {}, connections, 3);
    const figures = await repeat(settings.runs, async () => {
      const ours = await loadGet(`${herald.url}/api/public/v1/integrations`, { authorization: herald.apiKey! }, connections, settings.seconds);
      const bare = await loadGet(`${baseline.url}/integrations`, {}, connections, settings.seconds);
      if (ours.errors || bare.errors) console.log(`  (errors: Herald ${ours.errors}, baseline ${bare.errors})`);
      return { ours: ours.perSecond, oursP99: ours.p99, bare: bare.perSecond, bareP99: bare.p99 };
    });
    heading(`REST GET /integrations, ${connections} connections, ${settings.runs} runs of ${settings.seconds} s each, interleaved`);
    printVersus(figures, { unit: 'requests/s', baseline: 'express + pg, one SELECT', ratio: 'ratio Herald / baseline (target ≥ 0.6)' });
  } finally {
    await herald.stop();
    await baseline.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, restFigure);
