// Processes a test starts end with the test runner, however the runner ends: a runner killed with SIGKILL (a CI time-out)
// leaves no Herald running, adopted by init, after it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { newTestDatabase } from './helpers/harness.js';
import { repositoryRoot } from './helpers/herald-process.js';
import { waitFor } from './helpers/posts.js';

/** Running, and not a zombie waiting for its parent (init) to reap it. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const started: number[] = [];

afterAll(() => {
  // Whatever the outcome, nothing of this test outlives it.
  for (const pid of started) if (running(pid)) process.kill(pid, 'SIGKILL');
});

describe('a Herald process started by a test', () => {
  it('exits within a few seconds when the process that started it is killed with SIGKILL', async () => {
    const helper = pathToFileURL(path.join(repositoryRoot, 'test/helpers/herald-process.ts')).href;
    // A stand-in for a vitest worker: starts Herald with the test helper, says its process id, and waits.
    const script = `const { startHeraldProcess } = await import(${JSON.stringify(helper)});
      const herald = await startHeraldProcess({ env: JSON.parse(process.env.HERALD_TEST_ENV) });
      console.log('herald ' + herald.child.pid);
      setInterval(() => undefined, 60_000);`;
    const runner = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', script], {
      env: { ...process.env, HERALD_TEST_ENV: JSON.stringify({ DATABASE_URL: await newTestDatabase() }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    runner.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    runner.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const pid = await waitFor(async () => {
      if (runner.exitCode !== null) throw new Error(`the runner ended first:\n${output}`);
      const match = /herald (\d+)/.exec(output);
      return match ? Number(match[1]) : undefined;
    }, 60_000);
    started.push(pid);
    expect(running(pid)).toBe(true);

    runner.kill('SIGKILL');
    await waitFor(async () => (running(pid) ? undefined : true), 10_000);
  }, 90_000);
});
