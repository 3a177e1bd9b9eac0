// A closed-loop load generator: `connections` workers each send a request, wait for its answer, and send the next, for a
// fixed time after a warm-up; answers requests per second and latency percentiles. HTTP goes through node:http with one
// keep-alive socket per worker (as wrk does), so the generator costs the same against Herald and against a baseline.
import http from 'node:http';
import { percentile } from './stats.js';

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
}

export async function closedLoop(options: { connections: number; seconds: number; warmupSeconds?: number; send: (worker: number) => Promise<boolean> }): Promise<LoadResult> {
  const warmupEnd = performance.now() + (options.warmupSeconds ?? 1) * 1000;
  const end = warmupEnd + options.seconds * 1000;
  const latencies: number[] = [];
  let errors = 0;
  let first = Infinity;
  let last = 0;
  const worker = async (index: number) => {
    for (;;) {
      const started = performance.now();
      if (started >= end) return;
      let ok = false;
      try {
        ok = await options.send(index);
      } catch {
        ok = false;
      }
      const finished = performance.now();
      if (started < warmupEnd) continue;
      first = Math.min(first, started);
      last = Math.max(last, finished);
      if (ok) latencies.push(finished - started);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, (_, index) => worker(index)));
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / ((last - first) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
  };
}

export interface HttpAnswer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request on a keep-alive agent; the whole answer read as text. */
export function request(agent: http.Agent, url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const sent = http.request(url, { agent, method: options.method ?? 'GET', headers: options.body === undefined ? options.headers : { 'content-length': String(Buffer.byteLength(options.body)), ...options.headers } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: answer.headers }));
      answer.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(options.body);
  });
}

export const keepAlive = (connections: number) => new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });

/** GET `url` with `connections` keep-alive workers: requests that answer 200 count, anything else is an error. */
export async function loadGet(url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<LoadResult> {
  const agent = keepAlive(connections);
  try {
    return await closedLoop({ connections, seconds, send: async () => (await request(agent, url, { headers })).status === 200 });
  } finally {
    agent.destroy();
  }
}
