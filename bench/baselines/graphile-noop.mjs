// Baseline of the publish figure: bare graphile-worker running JOBS no-op jobs at CONCURRENCY, on a database of its own.
// The jobs are added first (all due now), then one worker runs them; prints {"jobs", "seconds"} from the first job's start
// to the last job's end, measured like Herald's first to last platform call.
//   DATABASE_URL=... JOBS=1000 CONCURRENCY=4 node bench/baselines/graphile-noop.mjs
import { run, runMigrations, Logger } from 'graphile-worker';
import pg from 'pg';

const jobs = Number(process.env.JOBS ?? 1000);
const concurrency = Number(process.env.CONCURRENCY ?? 4);
const connectionString = process.env.DATABASE_URL;
const logger = new Logger(() => () => undefined);
await runMigrations({ connectionString, logger });
const pool = new pg.Pool({ connectionString, max: concurrency + 2 });
await pool.query(`select graphile_worker.add_jobs(array(select ('noop', json_build_object('n', n), null, null, now(), 8, null, null, null)::graphile_worker.job_spec from generate_series(1, $1) n))`, [jobs]);
let done = 0;
let first = Infinity;
let last = 0;
let finish;
const finished = new Promise((resolve) => (finish = resolve));
const runner = await run({
  pgPool: pool,
  concurrency,
  noHandleSignals: true,
  pollInterval: 1000,
  logger,
  taskList: {
    noop: async () => {
      first = Math.min(first, performance.now());
      last = Math.max(last, performance.now());
      if (++done === jobs) finish();
    },
  },
});
await finished;
await runner.stop();
await pool.end();
console.log(JSON.stringify({ jobs, seconds: (last - first) / 1000 }));
