// REST create-post: POST /posts of a two-item thread on one channel, due in a day (validation, the rate limit, the rows, the
// job), against a bare express + pg server inserting two rows in one transaction, interleaved run by run.
import { connectChannel, newDatabase, postBody, socialEndpoints, startBaseline, startHerald, startPlatformFake, standalone } from './lib/env.js';
import { closedLoop, keepAlive, request } from './lib/load.js';
import { heading, printVersus, repeat, settings } from './lib/stats.js';

export async function createPostFigure(): Promise<void> {
  const connections = Number(process.env.BENCH_CREATE_CONNECTIONS ?? 16);
  const databaseUrl = await newDatabase('create');
  const fake = await startPlatformFake();
  // Web only: the posts are due tomorrow, and the figure is the API's.
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
  const integrationId = await connectChannel(herald, herald.apiKey!, fake);
  const baseline = await startBaseline('express-pg.mjs', { DATABASE_URL: databaseUrl, INTEGRATION_ID: integrationId });
  const agent = keepAlive(connections);
  let counter = 0;
  const body = () => JSON.stringify(postBody(integrationId, new Date(Date.now() + 86_400_000), [[`Bench thread ${counter++} first`, `Bench thread ${counter} second`]]));
  const post = (url: string, headers: Record<string, string>) =>
    closedLoop({ connections, seconds: settings.seconds, send: async () => (await request(agent, url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body() })).status === 200 });
  try {
    const figures = await repeat(settings.runs, async () => {
      const ours = await post(`${herald.url}/api/public/v1/posts`, { authorization: herald.apiKey! });
      const bare = await post(`${baseline.url}/posts`, {});
      if (ours.errors || bare.errors) console.log(`  (errors: Herald ${ours.errors}, baseline ${bare.errors})`);
      return { ours: ours.perSecond, oursP99: ours.p99, bare: bare.perSecond, bareP99: bare.p99 };
    });
    heading(`REST POST /posts (two-item thread, one channel), ${connections} connections, ${settings.runs} runs of ${settings.seconds} s, interleaved`);
    printVersus(figures, { unit: 'posts/s', baseline: 'express + pg, two INSERTs in a transaction', ratio: 'ratio Herald / baseline (target ≥ 0.15)' });
  } finally {
    agent.destroy();
    await herald.stop();
    await baseline.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, createPostFigure);
