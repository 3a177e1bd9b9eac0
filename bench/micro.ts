// Micro figures (`npm run bench -- micro`): the costs that matter at the edges: password hashing (every log-in and sign-up) and length counting
// of long posts (every validation). Run with `npm run bench`; nothing here asserts, it measures.
import { contentLength } from '../src/lib/length.js';
import { hashPassword, verifyPassword } from '../src/lib/password.js';

async function time<T>(label: string, runs: number, work: () => Promise<T> | T): Promise<void> {
  await work();
  const start = performance.now();
  for (let index = 0; index < runs; index++) await work();
  console.log(`${label.padEnd(44)} ${((performance.now() - start) / runs).toFixed(1).padStart(8)} ms/op  (${runs} runs)`);
}

const stored = await hashPassword('correct horse battery');
await time('scrypt hash (N=2^15, r=8, p=1)', 10, () => hashPassword('correct horse battery'));
await time('scrypt verify', 10, () => verifyPassword('correct horse battery', stored));
const long = 'Hello 👋🏽 world, café. '.repeat(50_000);
await time(`graphemes of ${long.length.toLocaleString('en')} characters`, 3, () => contentLength(long, 'graphemes'));
await time(`X weighted length of ${long.length.toLocaleString('en')} characters`, 3, () => contentLength(long, 'twitter'));
const rss = process.memoryUsage().rss / 1024 / 1024;
console.log(`${'resident memory after the runs'.padEnd(44)} ${rss.toFixed(0).padStart(8)} MB`);
