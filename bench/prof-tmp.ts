import { connectChannel, newDatabase, postBody, rest, sleep, socialEndpoints, startHerald, startPlatformFake, stopPostgres } from './lib/env.js';
const posts = 1200;
const databaseUrl = await newDatabase('prof');
const fake = await startPlatformFake();
const web = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
const integrationId = await connectChannel(web, web.apiKey!, fake);
for (let start = 0; start < posts; start += 50) {
  const texts = Array.from({ length: Math.min(50, posts - start) }, (_, index) => [`Publish ${start + index}`]);
  const answer = await rest(web, web.apiKey!, 'POST', '/posts', postBody(integrationId, new Date(), texts, 'now'));
  if (answer.status !== 200) throw new Error(`create failed: ${answer.status}`);
}
const worker = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake), HERALD_ROLE: 'worker', WORKER_CONCURRENCY: '4', NODE_OPTIONS: '--require /tmp/prof.cjs' });
const deadline = Date.now() + 120_000;
while (fake.received.length < posts && Date.now() < deadline) await sleep(20);
const received = fake.received;
console.log('posts/s', (posts - 1) / ((received.at(-1)!.at - received[0].at) / 1000));
await worker.stop();
await web.stop();
await fake.close();
await stopPostgres();
