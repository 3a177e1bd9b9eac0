// Start and memory: `npm start`'s command (the compiled JavaScript, embedded Postgres) from spawn to the banner, cold (a new
// data directory: the cluster is created and migrated) and warm (the same directory again), against node starting the
// embedded Postgres alone; then the idle memory of Herald's node process and of its Postgres, against a bare express + pg
// process and a bare embedded Postgres, and what `npm start` itself adds (the npm process that waits for Herald).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, repositoryRoot, startHeraldProcess } from '../test/helpers/herald-process.js';
import { commandOf, memoryOf, newDatabase, processTree, sleep, startBaseline, standalone } from './lib/env.js';
import { heading, line, ratios, repeat, settings } from './lib/stats.js';

async function timed<T>(start: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await start();
  return { value, ms: performance.now() - started };
}

/** Postgres processes of a tree (the watchdog's postmaster and its children). */
const postgresPids = (root: number) => processTree(root).filter((pid) => /postgres/.test(commandOf(pid)) && !/^sh /.test(commandOf(pid)));

export async function startFigure(): Promise<void> {
  const runs = Math.max(1, Math.min(settings.runs, Number(process.env.BENCH_START_RUNS ?? 3)));
  const directories: string[] = [];
  const directory = () => {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-start-'));
    fs.chmodSync(made, 0o755);
    directories.push(made);
    return made;
  };
  const memory = { node: [] as number[], postgres: [] as number[], bareNode: [] as number[], barePostgres: [] as number[] };
  try {
    const figures = await repeat(runs, async () => {
      const home = directory();
      const env = { DATA_DIR: path.join(home, 'data'), EMBEDDED_POSTGRES_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
      const cold = await timed(() => startHeraldProcess({ cwd: home, env }));
      await cold.value.stop();
      const warm = await timed(() => startHeraldProcess({ cwd: home, env }));
      // Idle: five seconds after the start, nothing asked of it.
      await sleep(5000);
      memory.node.push(memoryOf([warm.value.child.pid!]).rss);
      memory.postgres.push(memoryOf(postgresPids(warm.value.child.pid!)).pss);
      await warm.value.stop();

      const bareHome = directory();
      const bareEnv = { DATA_DIR: path.join(bareHome, 'data'), EMBEDDED_POSTGRES_PORT: String(await freePort()) };
      const bareCold = await timed(() => startBaseline('postgres-only.mjs', bareEnv));
      await bareCold.value.stop();
      const bareWarm = await timed(() => startBaseline('postgres-only.mjs', bareEnv));
      await sleep(5000);
      memory.barePostgres.push(memoryOf(postgresPids(bareWarm.value.child.pid!)).pss);
      await bareWarm.value.stop();
      return { cold: cold.ms, warm: warm.ms, bareCold: bareCold.ms, bareWarm: bareWarm.ms };
    });
    // A bare express + pg process, idle.
    const express = await startBaseline('express-pg.mjs', { DATABASE_URL: await newDatabase('memory'), INTEGRATION_ID: 'none' });
    await sleep(5000);
    memory.bareNode.push(memoryOf([express.child.pid!]).rss);
    await express.stop();
    // What `npm start` adds: the npm process waiting for Herald.
    const home = directory();
    const npm = spawn('npm', ['start', '--prefix', repositoryRoot], {
      cwd: home,
      env: { ...process.env, DATA_DIR: path.join(home, 'data'), EMBEDDED_POSTGRES_PORT: String(await freePort()), PORT: String(await freePort()), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const deadline = Date.now() + 60_000;
    while (!/Herald is running/.test(output) && Date.now() < deadline) await sleep(100);
    await sleep(5000);
    const tree = processTree(npm.pid!);
    const nodes = tree.filter((pid) => /node|npm/.test(commandOf(pid)) && !/postgres|^sh /.test(commandOf(pid)));
    const npmRss = memoryOf([npm.pid!]).rss;
    const nodeCount = nodes.length;
    process.kill(-npm.pid!, 'SIGTERM');
    await new Promise((resolve) => npm.once('exit', resolve));

    heading(`Start (spawn to the banner, embedded Postgres) and idle memory, ${runs} runs`);
    console.log(line({ label: 'cold start: new data directory (target ≤ 3 s)', values: figures.cold, unit: 'ms' }));
    console.log(line({ label: 'node + embedded Postgres alone, new cluster', values: figures.bareCold, unit: 'ms' }));
    console.log(line({ label: 'ratio cold Herald / baseline', values: ratios(figures.cold, figures.bareCold), unit: '', digits: 2 }));
    console.log(line({ label: 'warm start: same directory', values: figures.warm, unit: 'ms' }));
    console.log(line({ label: 'node + embedded Postgres alone, existing cluster', values: figures.bareWarm, unit: 'ms' }));
    console.log(line({ label: 'ratio warm Herald / baseline (target ≤ 3)', values: ratios(figures.warm, figures.bareWarm), unit: '', digits: 2 }));
    console.log(line({ label: 'idle RSS, Herald node process (target ≤ 150)', values: memory.node, unit: 'MiB' }));
    console.log(line({ label: 'idle RSS, bare express + pg node process', values: memory.bareNode, unit: 'MiB' }));
    console.log(line({ label: 'idle PSS, Herald\'s embedded Postgres', values: memory.postgres, unit: 'MiB' }));
    console.log(line({ label: 'idle PSS, bare embedded Postgres', values: memory.barePostgres, unit: 'MiB' }));
    console.log(`  npm start: ${nodeCount} node processes (npm waiting for Herald, and Herald itself), npm's own RSS ${npmRss.toFixed(0)} MiB (run node scripts/run.mjs main directly to save it)`);
  } finally {
    for (const made of directories) fs.rmSync(made, { recursive: true, force: true });
  }
}

await standalone(import.meta.url, startFigure);
