// `npm run bench [-- figure...]`: every figure, or the ones named (rest, mcp, create, publish, lateness, window, start,
// console, roundtrips, remote-db, soak, burst, micro; `soak` runs SOAK_MINUTES, 30 by default). Each figure starts what it measures (Postgres, Herald as `npm start` runs it, its bare
// baseline) and prints the median and range of several runs, Herald and baseline interleaved, and their ratio. Nothing
// here asserts: it measures.
//   BENCH_RUNS (5), BENCH_SECONDS (4) per load run; DATABASE_URL to use an existing Postgres server instead of an embedded one.
import { execSync } from 'node:child_process';
import { machine, stopPostgres } from './lib/env.js';
import { restFigure } from './rest.js';
import { mcpFigure } from './mcp.js';
import { createPostFigure } from './create-post.js';
import { publishFigure } from './publish.js';
import { latenessFigure } from './lateness.js';
import { postsWindowFigure } from './posts-window.js';
import { startFigure } from './start.js';
import { consoleFigure } from './console.js';
import { roundtripsFigure } from './roundtrips.js';
import { remoteDbFigure } from './remote-db.js';
import { soakFigure } from './soak.js';
import { burstFigure } from './burst.js';

const figures: Record<string, () => Promise<void>> = {
  rest: restFigure,
  mcp: mcpFigure,
  create: createPostFigure,
  publish: publishFigure,
  lateness: latenessFigure,
  window: postsWindowFigure,
  start: startFigure,
  console: consoleFigure,
  roundtrips: roundtripsFigure,
  'remote-db': remoteDbFigure,
  soak: soakFigure,
  burst: burstFigure,
  micro: async () => void (await import('./micro.js')),
  'tools-list': async () => (await import('./tools-list.js')).toolsListFigure(),
};

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in figures));
if (unknown.length > 0) {
  console.error(`Unknown figure ${unknown.join(', ')}: choose among ${Object.keys(figures).join(', ')}.`);
  process.exit(1);
}
let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  /* not a checkout */
}
console.log(`Herald bench, ${new Date().toISOString().slice(0, 16)}Z, commit ${commit}\n${machine()}`);
const started = performance.now();
try {
  for (const name of asked.length > 0 ? asked : Object.keys(figures)) {
    try {
      await figures[name]();
    } catch (error) {
      console.log(`\n${name}: failed: ${(error as Error).stack ?? error}`);
    }
  }
} finally {
  await stopPostgres();
}
console.log(`\nbench done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
