// BENCH_CPU_PROF=<directory>: the environment that makes a Herald of the bench write a CPU profile of its main thread there
// when it stops (bench/lib/cpu-profile.mjs, preloaded: --cpu-prof is not allowed in NODE_OPTIONS). Empty when unset.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDir } from './env.js';

export function profiled(directory = process.env.BENCH_CPU_PROF): Record<string, string> {
  if (!directory) return {};
  return { NODE_OPTIONS: `--import=${pathToFileURL(path.join(benchDir, 'lib', 'cpu-profile.mjs')).href}`, HERALD_CPU_PROF: path.resolve(directory) };
}
