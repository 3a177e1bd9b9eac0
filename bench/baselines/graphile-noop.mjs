// Baselines of the publishing figures: bare graphile-worker on a database of its own, plain JavaScript, one worker with
// CONCURRENCY jobs at a time and no-op jobs. Prints one JSON line.
//   MODE=throughput  JOBS jobs due now added first, then run: {"jobs", "seconds"} from the first job's start to the last's end
//   MODE=lateness    JOBS jobs due evenly over SPREAD_MS starting LEAD_MS from now: {"p50","p99","max"} of start - run_at (ms)
//   MODE=idle        no jobs, IDLE_SECONDS idle: {"transactionsPerSecond"} the worker costs Postgres (pg_stat_database)
// POLL_INTERVAL (ms) is graphile-worker's poll: 1000 as Herald had it before its timers.
import { run, runMigrations, Logger } from 'graphile-worker';
import pg from 'pg';

const mode = process.env.MODE ?? 'throughput';
const jobs = Number(process.env.JOBS ?? 1000);
const concurrency = Number(process.env.CONCURRENCY ?? 4);
const pollInterval = Number(process.env.POLL_INTERVAL ?? 1000);
const connectionString = process.env.DATABASE_URL;
const logger = new Logger(() => () => undefined);
await runMigrations({ connectionString, logger });
const pool = new pg.Pool({ connectionString, max: concurrency + 2 });
pool.on("error", () => undefined);
pool.on("connect", (client) => client.on("error", () => undefined));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

let done = 0;
let first = Infinity;
let last = 0;
const lateness = [];
let finish;
const finished = new Promise((resolve) => (finish = resolve));
const lead = Number(process.env.LEAD_MS ?? 3000);
const spread = Number(process.env.SPREAD_MS ?? 10_000);
const start = Date.now() + lead;
if (mode === 'throughput') {
  await pool.query(`select graphile_worker.add_jobs(array(select ('noop', json_build_object('n', n), null, now(), 8, null, null, null)::graphile_worker.job_spec from generate_series(1, $1) n))`, [jobs]);
} else if (mode === 'lateness') {
  await pool.query(
    `select graphile_worker.add_jobs(array(select ('noop', json_build_object('due', $2::float8 + n * $3::float8), null, to_timestamp(($2::float8 + n * $3::float8) / 1000), 8, null, null, null)::graphile_worker.job_spec from generate_series(0, $1 - 1) n))`,
    [jobs, start, spread / jobs],
  );
}
const runner = await run({
  pgPool: pool,
  concurrency,
  noHandleSignals: true,
  pollInterval,
  logger,
  taskList: {
    noop: async (payload) => {
      const now = Date.now();
      if (payload.due !== undefined) lateness.push(now - payload.due);
      first = Math.min(first, performance.now());
      last = Math.max(last, performance.now());
      if (++done === jobs) finish();
    },
  },
});
let result;
if (mode === 'idle') {
  const seconds = Number(process.env.IDLE_SECONDS ?? 20);
  const count = async () => Number((await pool.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()')).rows[0].n);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const before = await count();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  result = { transactionsPerSecond: ((await count()) - before - 1) / seconds };
} else {
  await finished;
  if (mode === 'lateness') {
    lateness.sort((a, b) => a - b);
    result = { p50: percentile(lateness, 50), p99: percentile(lateness, 99), max: lateness.at(-1) };
  } else result = { jobs, seconds: (last - first) / 1000 };
}
await runner.stop();
await pool.end();
console.log(JSON.stringify(result));
