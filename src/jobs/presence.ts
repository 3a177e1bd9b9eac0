// What a worker process adds to graphile-worker so that any number of them share one Postgres, and jobs run on time:
//
// Presence. The process keeps one connection named `herald-worker:<process id>` (application_name) and records which
// graphile-worker workers are its own (herald_worker). A job locked by a worker whose process has no such connection any
// more was interrupted by a crash: at start and every minute, each worker process releases those jobs
// (force_unlock_workers), never the jobs of a live process. The connection asks Postgres to probe the client (TCP
// keepalives, about a minute), so a machine that vanished without closing its connections is noticed too.
//
// Punctuality. graphile-worker runs a job when it is added due now (its own NOTIFY), or at its next poll. Herald's jobs are
// mostly due later (a post's date), so the process keeps a timer for each known due time and wakes its workers at that
// moment: due times come from `herald_job_scheduled` NOTIFYs sent when a post is scheduled (any process), from this
// process's own jobs' re-schedules (helpers.addJob with a runAt), and from a look-ahead query every 30 seconds for jobs due within the next 35 (retries and
// the other tasks' jobs). The poll then only backs these up: every 10 seconds instead of every second, so an idle worker
// costs Postgres fewer queries than before while a post due at 12:00:00.000 starts within milliseconds of it.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { Listener } from '../db/listener.js';
import type { Logger } from '../lib/logger.js';

/** Sent by tools/internal/queue.ts (schedulePublish), which spells the name out in its SQL. */
const SCHEDULED_CHANNEL = 'herald_job_scheduled';
const APPLICATION_PREFIX = 'herald-worker:';
const LOOKAHEAD_EVERY_MS = 30_000;
const LOOKAHEAD_SPAN = '35 seconds';
const RECOVER_EVERY_MS = 60_000;
/** Timers kept at once; beyond that the look-ahead and the poll catch up. */
const MAX_TIMERS = 10_000;

export class WorkerPresence {
  readonly processId = randomUUID();
  private readonly listener: Listener;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly intervals: NodeJS.Timeout[] = [];
  constructor(
    private readonly options: {
      connectionString: string;
      /** A pool for the recovery and look-ahead queries (not the presence connection, which only listens). */
      pool: pg.Pool;
      logger: Logger;
      /** Wakes the idle workers (graphile-worker's pool nudge). */
      wake: () => void;
    },
  ) {
    this.listener = new Listener({
      connectionString: options.connectionString,
      applicationName: `${APPLICATION_PREFIX}${this.processId}`,
      // Postgres probes the client, so a machine lost without closing its connections drops out within about a minute.
      setup: 'set tcp_keepalives_idle = 30; set tcp_keepalives_interval = 10; set tcp_keepalives_count = 3; ',
      channels: [SCHEDULED_CHANNEL],
      onNotification: (channel, payload) => {
        const at = Number(payload);
        if (channel === SCHEDULED_CHANNEL && Number.isFinite(at)) this.arm(at);
      },
      // Posts scheduled while the connection was down are found by the look-ahead.
      onConnected: () => {
        if (this.intervals.length > 0) void this.lookAhead();
      },
      logger: options.logger,
      purpose: 'worker presence',
    });
  }

  /** Connects, releases the jobs of dead processes, and starts the timers. */
  async start(): Promise<void> {
    this.listener.start();
    await this.listener.connected;
    await this.recover();
    await this.lookAhead();
    this.intervals.push(setInterval(() => void this.lookAhead(), LOOKAHEAD_EVERY_MS), setInterval(() => void this.recover(), RECOVER_EVERY_MS));
    for (const interval of this.intervals) interval.unref();
  }

  /** Records a worker of this process (graphile-worker's `worker:create`). */
  async register(workerId: string): Promise<void> {
    await this.options.pool.query('insert into herald_worker (worker_id, process_id) values ($1, $2) on conflict (worker_id) do nothing', [workerId, this.processId]);
  }

  /** Wakes the workers at `at` (at once when it is due). */
  arm(at: number): void {
    const wait = at - Date.now();
    if (wait <= 2) return this.options.wake();
    if (this.timers.has(at) || this.timers.size >= MAX_TIMERS) return;
    const timer = setTimeout(() => {
      this.timers.delete(at);
      this.options.wake();
    }, wait);
    timer.unref();
    this.timers.set(at, timer);
  }

  async stop(): Promise<void> {
    for (const interval of this.intervals) clearInterval(interval);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.options.pool.query('delete from herald_worker where process_id = $1', [this.processId]).catch(() => undefined);
    await this.listener.stop();
  }

  /** Releases the jobs locked by workers of processes that are gone (crashed, killed, their machine lost). */
  async recover(): Promise<void> {
    try {
      const { rows } = await this.options.pool.query<{ worker_id: string }>(
        `select worker_id from herald_worker w
         where not exists (select 1 from pg_stat_activity a where a.application_name = $1 || w.process_id)`,
        [APPLICATION_PREFIX],
      );
      if (rows.length === 0) return;
      const ids = rows.map((row) => row.worker_id);
      await this.options.pool.query('select graphile_worker.force_unlock_workers($1::text[])', [ids]);
      await this.options.pool.query('delete from herald_worker where worker_id = any($1::text[])', [ids]);
      this.options.logger.info({ workers: ids.length }, 'released the jobs of worker processes that stopped without finishing them');
      this.options.wake();
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not check for jobs of stopped worker processes');
    }
  }

  /** Arms a timer for each job due within the next 35 seconds. */
  private async lookAhead(): Promise<void> {
    try {
      const { rows } = await this.options.pool.query<{ at: number }>(
        `select distinct (extract(epoch from run_at) * 1000)::float8 as at from graphile_worker._private_jobs
         where is_available = true and run_at > now() and run_at <= now() + interval '${LOOKAHEAD_SPAN}' limit 1000`,
      );
      for (const row of rows) this.arm(Math.round(Number(row.at)));
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not look ahead for due jobs');
    }
  }
}
