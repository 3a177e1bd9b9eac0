// Publishing throughput: N posts due now on BENCH_PUBLISH_CHANNELS Telegram channels (50), published by worker processes
// (`--role worker`, WORKER_CONCURRENCY slots for the other jobs, publishing at its defaults) to a zero-latency local fake
// platform, from the first platform call to the last; against bare graphile-worker running N no-op jobs at that concurrency
// (first job to last), and with two worker processes against one. Spread over channels so that Telegram's limit of a few
// sends at a time per chat (providers/telegram.ts) is not what is measured: with one chat 400 posts take 100 rounds of it.
import type { HeraldProcess } from '../test/helpers/herald-process.js';
import { connectChannel, newDatabase, postBody, rest, runBaseline, sleep, socialEndpoints, startHerald, startPlatformFake, type PlatformFake, standalone } from './lib/env.js';
import { heading, line, ratios, repeat, settings } from './lib/stats.js';

/** One run: `posts` posts due now created through `web`, then `workers` worker processes on `databaseUrl` publish them; posts/s. */
export async function publishRun(web: HeraldProcess, databaseUrl: string, fake: PlatformFake, integrationIds: string[], posts: number, concurrency: number, workers: number, run: string): Promise<number> {
  const before = fake.received.length;
  for (let start = 0; start < posts; start += 50) {
    const entries = Array.from({ length: Math.min(50, posts - start) }, (_, index) => start + index);
    const body = postBody(integrationIds[0], new Date(), [], 'now');
    body.posts = entries.map((index) => postBody(integrationIds[index % integrationIds.length], new Date(), [[`Publish ${run} ${index}`]]).posts[0]);
    const answer = await rest(web, web.apiKey!, 'POST', '/posts', body);
    if (answer.status !== 200) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  const started = await Promise.all(
    Array.from({ length: workers }, () => startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake), HERALD_ROLE: 'worker', WORKER_CONCURRENCY: String(concurrency) })),
  );
  const deadline = Date.now() + 120_000;
  while (fake.received.length < before + posts && Date.now() < deadline) await sleep(20);
  await Promise.all(started.map((worker) => worker.stop()));
  const received = fake.received.slice(before);
  if (received.length < posts) throw new Error(`only ${received.length} of ${posts} posts were published`);
  return (posts - 1) / ((received.at(-1)!.at - received[0].at) / 1000);
}

export async function publishFigure(): Promise<void> {
  const posts = Number(process.env.BENCH_PUBLISH_POSTS ?? 400);
  const concurrency = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 4);
  const databaseUrl = await newDatabase('publish');
  const fake = await startPlatformFake();
  const web = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
  const integrationIds: string[] = [];
  for (let channel = 0; channel < Number(process.env.BENCH_PUBLISH_CHANNELS ?? 50); channel++) integrationIds.push(await connectChannel(web, web.apiKey!, fake, String(-1008000000000 - channel)));
  try {
    const figures = await repeat(settings.runs, async (run) => {
      const one = await publishRun(web, databaseUrl, fake, integrationIds, posts, concurrency, 1, `${run}a`);
      const bare = await runBaseline<{ jobs: number; seconds: number }>('graphile-noop.mjs', { DATABASE_URL: await newDatabase('graphile'), JOBS: String(posts), CONCURRENCY: String(concurrency) });
      const two = await publishRun(web, databaseUrl, fake, integrationIds, posts, concurrency, 2, `${run}b`);
      return { one, two, bare: (bare.jobs - 1) / bare.seconds };
    });
    heading(`Publishing ${posts} posts due now on ${integrationIds.length} channels to a zero-latency fake platform, WORKER_CONCURRENCY ${concurrency} (baseline: ${concurrency} jobs at a time), ${settings.runs} runs, interleaved`);
    console.log(line({ label: 'Herald, 1 worker process', values: figures.one, unit: 'posts/s' }));
    console.log(line({ label: 'Herald, 2 worker processes', values: figures.two, unit: 'posts/s' }));
    console.log(line({ label: 'bare graphile-worker, no-op jobs', values: figures.bare, unit: 'jobs/s' }));
    console.log(line({ label: 'ratio Herald (1 process) / baseline (target ≥ 0.25)', values: ratios(figures.one, figures.bare), unit: '', digits: 2 }));
    console.log(line({ label: 'ratio 2 worker processes / 1', values: ratios(figures.two, figures.one), unit: '', digits: 2 }));
  } finally {
    await web.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, publishFigure);
