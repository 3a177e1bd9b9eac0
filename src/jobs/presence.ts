// What a worker process adds to graphile-worker so that any number of them share one Postgres, no job stays locked by a run
// that ended, and jobs run on time:
//
// Presence. The process keeps one connection named `herald-worker:<process id>` (application_name) and records which
// graphile-worker ids are its own (herald_worker) before any of them locks a job. A job locked in the name of a process
// that has had no such connection at two checks ten seconds apart (killed, crashed, its machine lost) was interrupted: the
// other worker processes, and this one as it starts, release it (force_unlock_workers). Two checks, because after a
// Postgres restart every process needs a moment to connect again. The connection asks Postgres to probe the client (TCP
// keepalives, about a minute), so a machine that vanished without closing its connections is noticed too.
//
// Own jobs. A process whose database went away (Postgres killed and restarted, a network cut) lives on, but the jobs it was
// running could not record their outcome: graphile-worker's complete/fail calls failed, and the jobs stay locked in this
// live process's name, which no other process may release. So the process itself releases, every 20 seconds and when its
// connection comes back, the jobs locked in its name that it is not running (nor just finishing). A graceful stop releases
// everything still locked in its name before it removes its record; when that fails, the record stays for the others.
//
// Punctuality. graphile-worker runs a job when it is added due now (its own NOTIFY), or at its next poll. Herald's jobs are
// mostly due later (a post's date), so the process keeps a timer for each known due time and wakes its workers at that
// moment: due times come from `herald_job_scheduled` NOTIFYs sent when a post is scheduled (any process), from this
// process's own jobs' re-schedules (helpers.addJob with a runAt), and from a look-ahead query every 30 seconds for jobs due within the next 35 (retries and
// the other tasks' jobs). The poll then only backs these up: every 10 seconds instead of every second, so an idle worker
// costs Postgres fewer queries than before while a post due at 12:00:00.000 starts within milliseconds of it.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { WorkerEvents } from 'graphile-worker';
import { Listener } from '../db/listener.js';
import { PUBLISH_TASK } from '../../tools/internal/queue.js';
import type { Logger } from '../lib/logger.js';

/** Sent by tools/internal/queue.ts (schedulePublish), which spells the name out in its SQL. */
const SCHEDULED_CHANNEL = 'herald_job_scheduled';
const APPLICATION_PREFIX = 'herald-worker:';
const LOOKAHEAD_EVERY_MS = 30_000;
const LOOKAHEAD_SPAN = '35 seconds';
const RECOVER_EVERY_MS = 20_000;
/** A process found without its presence connection is released when it is still without one this much later. */
const CONFIRM_GONE_MS = 10_000;
/**
 * An own job is left alone this long after it was locked (the answer that locked it may still be on its way to this
 * process) and after its run ended (graphile-worker's complete or fail call may still be on its way to the database).
 */
const OWN_GRACE_MS = 10_000;
/** How long after a due time's first notification its jobs are counted (countLater). */
const COUNT_DELAY_MS = 100;
/** Timers kept at once; beyond that the look-ahead and the poll catch up. */
const MAX_TIMERS = 10_000;
/** Due times further off are left to the look-ahead, which runs every LOOKAHEAD_EVERY_MS over LOOKAHEAD_SPAN. */
const ARM_HORIZON_MS = 35_000;

export class WorkerPresence {
  readonly processId = randomUUID();
  private readonly listener: Listener;
  /**
   * A timer per known due time and kind of job (publications or not: "<time>:p" / "<time>:o"), and how many jobs are known
   * due then (that many workers are woken, no more).
   */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; jobs: number }>();
  private readonly intervals: NodeJS.Timeout[] = [];
  /** graphile-worker ids of this process (its pools and workers), and whether each is recorded yet. */
  private readonly ownIds = new Map<string, Promise<void>>();
  /** Ids whose record is not yet known to be written. */
  private readonly unrecorded = new Set<string>();
  /** The ids registered in this tick, recorded together (register). */
  private registering?: { ids: string[]; written: Promise<void> };
  /** Processes found without a presence connection: since when. */
  private readonly missing = new Map<string, number>();
  private confirmTimer?: NodeJS.Timeout;
  /** The wait of `recorded()` in progress, shared by every caller meanwhile. */
  private recording?: Promise<null>;
  /** Due times whose jobs are about to be counted (countLater). */
  private readonly counting = new Set<number>();
  /** The job each worker of this process is running, and when recent runs ended (job id -> time). */
  private readonly running = new Map<object, string>();
  /** Jobs the publishing slots' local queue locked and holds until a slot is free (graphile-worker's batched get_job). */
  private readonly queued = new Set<string>();
  private readonly ended = new Map<string, number>();
  constructor(
    private readonly options: {
      connectionString: string;
      /** A pool for the recovery and look-ahead queries (not the presence connection, which only listens). */
      pool: pg.Pool;
      logger: Logger;
      /**
       * Wakes idle workers (graphile-worker's pool nudge): `jobs` of them when that many jobs fell due (each woken worker
       * that finds nothing spends a database round trip; one that finds a job goes on taking due jobs until none is
       * left), every idle one when not said; only the publishing slots when the jobs are publications (`publishing`), only
       * the others when they are not, both when not known.
       */
      wake: (jobs?: number, publishing?: boolean) => void;
      /** graphile-worker's events: which jobs this process is running. */
      events: WorkerEvents;
    },
  ) {
    this.listener = new Listener({
      connectionString: options.connectionString,
      applicationName: `${APPLICATION_PREFIX}${this.processId}`,
      // Postgres probes the client, so a machine lost without closing its connections drops out within about a minute.
      setup: 'set tcp_keepalives_idle = 30; set tcp_keepalives_interval = 10; set tcp_keepalives_count = 3; ',
      channels: [SCHEDULED_CHANNEL],
      onNotification: (channel, payload) => {
        const at = Number(payload.split(' ')[0]);
        if (channel !== SCHEDULED_CHANNEL || !Number.isFinite(at)) return;
        this.arm(at, 1);
        this.countLater(at);
      },
      // Back after a loss: jobs interrupted meanwhile are released, jobs that fell due run now, and posts scheduled while the
      // connection was down are found by the look-ahead.
      onConnected: () => {
        if (this.intervals.length === 0) return;
        void this.recover();
        void this.lookAhead();
        this.options.wake();
        // The runs the outage cut short count as running for a moment more: released as soon as they may be.
        setTimeout(() => void this.recover(), OWN_GRACE_MS + 1000).unref();
      },
      logger: options.logger,
      purpose: 'worker presence',
    });
  }

  /** Connects, releases the jobs of dead processes, and starts the timers. */
  async start(): Promise<void> {
    this.options.events.on('job:start', ({ worker, job }) => {
      this.running.set(worker, job.id);
      this.queued.delete(job.id);
    });
    this.options.events.on('localQueue:getJobs:complete', ({ jobs }) => {
      for (const job of jobs) this.queued.add(job.id);
    });
    this.options.events.on('localQueue:returnJobs', ({ jobs }) => {
      for (const job of jobs) this.queued.delete(job.id);
    });
    const end = ({ worker }: { worker: object }) => {
      const id = this.running.get(worker);
      if (id === undefined) return;
      this.running.delete(worker);
      this.ended.set(id, Date.now());
    };
    this.options.events.on('job:complete', end);
    this.options.events.on('worker:fatalError', end);
    this.listener.start();
    await this.listener.connected;
    await this.recover();
    await this.lookAhead();
    this.intervals.push(setInterval(() => void this.lookAhead(), LOOKAHEAD_EVERY_MS), setInterval(() => void this.recover(), RECOVER_EVERY_MS));
    for (const interval of this.intervals) interval.unref();
  }

  /**
   * Records a graphile-worker id of this process (its pool's, a worker's): from then on it is released if the process dies.
   * The ids registered in one tick (a pool's hundreds of publishing slots as it starts) are recorded in one statement.
   */
  register(id: string): Promise<void> {
    let batch = this.registering;
    if (!batch) {
      const ids: string[] = [];
      const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.registering = undefined;
        return this.options.pool
          .query('insert into herald_worker (worker_id, process_id) select unnest($1::text[]), $2 on conflict (worker_id) do nothing', [ids, this.processId])
          .then(() => undefined);
      });
      // Not yet recorded: tried again by `recorded()` before the next job is taken.
      written.catch((error: Error) => this.options.logger.warn({ err: error.message, workers: ids.length }, 'could not record the workers of this process'));
      this.registering = batch = { ids, written };
    }
    batch.ids.push(id);
    const recorded = batch.written;
    this.ownIds.set(id, recorded);
    this.unrecorded.add(id);
    recorded.then(
      () => {
        if (this.ownIds.get(id) === recorded) this.unrecorded.delete(id);
      },
      () => undefined,
    );
    return recorded;
  }

  /**
   * Settles once every id of this process is recorded, recording again those that failed; graphile-worker awaits it before
   * each job it takes (forbiddenFlags), so no job is ever locked in a name the other processes could not attribute.
   */
  recorded(): null | Promise<null> {
    // Once all are recorded (hundreds of publishing slots), taking a job awaits nothing.
    if (this.unrecorded.size === 0) return null;
    // One wait shared by every slot that asks meanwhile: at start each of the 1024 publishing slots asks while the 1024 ids
    // are being recorded, and a wait of its own for each would be a million awaits (a third of a second of CPU).
    return (this.recording ??= (async () => {
      try {
        // Ids registered during the wait are waited for too.
        while (this.unrecorded.size > 0) for (const id of [...this.unrecorded]) await this.ownIds.get(id)!.catch(() => this.register(id));
        return null;
      } finally {
        this.recording = undefined;
      }
    })());
  }

  /**
   * Wakes workers at `at` (at once when it is due) for `jobs` more jobs due then (a NOTIFY, a re-schedule), or for `jobs`
   * in all when `counted` (the look-ahead, which counts every job due then); `publishing`: whether they are publications.
   */
  arm(at: number, jobs = 1, counted = false, publishing?: boolean): void {
    const wait = at - Date.now();
    // Never before the due time: a worker woken early finds nothing due (get_job's run_at <= now()) and goes back to its
    // poll, which for the publishing slots is minutes away.
    if (wait <= 0) return this.options.wake(jobs, publishing);
    // Further than the look-ahead sees: it arms the time when it comes within its span. (A timer of more than 24.8 days
    // fires at once in Node, and re-armed every millisecond; and posts scheduled for next month must not take the timers
    // of the ones due in a minute.)
    if (wait > ARM_HORIZON_MS) return;
    const key = `${at}:${publishing === undefined ? 'a' : publishing ? 'p' : 'o'}`;
    const armed = this.timers.get(key);
    if (armed) {
      armed.jobs = counted ? Math.max(armed.jobs, jobs) : armed.jobs + jobs;
      return;
    }
    if (this.timers.size >= MAX_TIMERS) return;
    // setTimeout may fire a millisecond or so early: then it waits for the rest.
    const fire = () => {
      const fired = this.timers.get(key);
      const early = at - Date.now();
      if (fired && early > 0) {
        fired.timer = setTimeout(fire, early);
        fired.timer.unref();
        return;
      }
      this.timers.delete(key);
      this.options.wake(fired?.jobs, publishing);
    };
    const timer = setTimeout(fire, wait);
    timer.unref();
    this.timers.set(key, { timer, jobs });
  }

  /**
   * Postgres sends the identical notifications of one transaction once: a create of 50 posts due at 09:00 tells one due
   * time. So the jobs due then are counted, once per due time and shortly after its first notification (the rest of the
   * commit's come with it), and that many slots are woken at that time, not one. Not for what is due now: graphile-worker
   * wakes as many workers as jobs were added then.
   */
  private countLater(at: number): void {
    // Beyond the horizon the look-ahead counts them (and arms that count) when it comes.
    if (at - Date.now() <= COUNT_DELAY_MS * 2 || at - Date.now() > ARM_HORIZON_MS || this.counting.has(at)) return;
    this.counting.add(at);
    const timer = setTimeout(() => {
      this.counting.delete(at);
      this.options.pool
        .query<{ jobs: string; publishing: boolean }>(
          `select count(*) as jobs, task.identifier = $2 as publishing from graphile_worker._private_jobs job
           join graphile_worker._private_tasks task on task.id = job.task_id
           where job.run_at = $1::timestamptz and job.is_available = true group by task.identifier = $2`,
          [new Date(at).toISOString(), PUBLISH_TASK],
        )
        .then(({ rows }) => {
          // The count replaces the notification's timer, which did not know which slots to wake.
          const unknown = this.timers.get(`${at}:a`);
          if (unknown) {
            clearTimeout(unknown.timer);
            this.timers.delete(`${at}:a`);
          }
          for (const row of rows) this.arm(at, Number(row.jobs), true, row.publishing);
        })
        .catch((error: Error) => this.options.logger.warn({ err: error.message }, 'could not count the jobs due at a time'));
    }, COUNT_DELAY_MS);
    timer.unref();
  }

  /** After graphile-worker has stopped (nothing of this process runs any more): releases what is still locked in its name. */
  async stop(): Promise<void> {
    for (const interval of this.intervals) clearInterval(interval);
    clearTimeout(this.confirmTimer);
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    try {
      await this.options.pool.query('select graphile_worker.force_unlock_workers($1::text[])', [[...this.ownIds.keys()]]);
      await this.options.pool.query('delete from herald_worker where process_id = $1', [this.processId]);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not release the jobs of this process: another worker process (or the next start) releases them');
    }
    await this.listener.stop();
  }

  /** Releases the jobs interrupted in this process, and those of processes that are gone (crashed, killed, their machine lost). */
  async recover(): Promise<void> {
    try {
      await this.releaseOwn();
      await this.releaseGone();
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not check for interrupted jobs');
    }
  }

  /** Jobs locked in this process's name that it is not running: their run ended without its outcome being recorded. */
  private async releaseOwn(): Promise<void> {
    if (this.ownIds.size === 0) return;
    // graphile-worker's own table: there is no function that releases some jobs of a worker and not others. Herald uses no
    // named job queues, so the jobs' rows are all there is to release.
    const { rowCount } = await this.options.pool.query(
      `update graphile_worker._private_jobs set locked_by = null, locked_at = null
       where locked_by = any($1::text[]) and locked_at < now() - make_interval(secs => $3) and not (id = any($2::bigint[]))`,
      [[...this.ownIds.keys()], this.busyJobs(), OWN_GRACE_MS / 1000],
    );
    if (!rowCount) return;
    this.options.logger.warn({ jobs: rowCount }, 'released jobs of this process whose run ended without recording its outcome (the database was unreachable)');
    this.options.wake();
  }

  /** The jobs this process is running, holds in a local queue, or finished less than OWN_GRACE_MS ago. */
  private busyJobs(): string[] {
    for (const [id, at] of this.ended) if (at < Date.now() - OWN_GRACE_MS) this.ended.delete(id);
    return [...this.running.values(), ...this.queued, ...this.ended.keys()];
  }

  private async releaseGone(): Promise<void> {
    const { rows } = await this.options.pool.query<{ process_id: string; worker_ids: string[] }>(
      `select process_id, array_agg(worker_id) as worker_ids from herald_worker w
       where process_id <> $2 and not exists (select 1 from pg_stat_activity a where a.application_name = $1 || w.process_id)
       group by process_id`,
      [APPLICATION_PREFIX, this.processId],
    );
    const now = Date.now();
    const gone = new Set(rows.map((row) => row.process_id));
    for (const processId of this.missing.keys()) if (!gone.has(processId)) this.missing.delete(processId);
    const confirmed = rows.filter((row) => now - (this.missing.get(row.process_id) ?? now) >= CONFIRM_GONE_MS);
    for (const row of rows) if (!this.missing.has(row.process_id)) this.missing.set(row.process_id, now);
    if (confirmed.length < rows.length && !this.confirmTimer) {
      // Checked again as soon as a newly missing process may be confirmed gone, not only at the next round.
      this.confirmTimer = setTimeout(() => {
        this.confirmTimer = undefined;
        void this.recover();
      }, CONFIRM_GONE_MS);
      this.confirmTimer.unref();
    }
    if (confirmed.length === 0) return;
    const ids = confirmed.flatMap((row) => row.worker_ids);
    await this.options.pool.query('select graphile_worker.force_unlock_workers($1::text[])', [ids]);
    await this.options.pool.query('delete from herald_worker where worker_id = any($1::text[])', [ids]);
    for (const row of confirmed) this.missing.delete(row.process_id);
    this.options.logger.info({ processes: confirmed.length, workers: ids.length }, 'released the jobs of worker processes that stopped without finishing them');
    this.options.wake();
  }

  /** Arms a timer for each job due within the next 35 seconds. */
  private async lookAhead(): Promise<void> {
    try {
      const { rows } = await this.options.pool.query<{ at: number; jobs: string; publishing: boolean }>(
        `select (extract(epoch from job.run_at) * 1000)::float8 as at, count(*) as jobs, task.identifier = $1 as publishing
         from graphile_worker._private_jobs job join graphile_worker._private_tasks task on task.id = job.task_id
         where job.is_available = true and job.run_at > now() and job.run_at <= now() + interval '${LOOKAHEAD_SPAN}'
         group by job.run_at, task.identifier = $1 limit 1000`,
        [PUBLISH_TASK],
      );
      for (const row of rows) this.arm(Math.round(Number(row.at)), Number(row.jobs), true, row.publishing);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not look ahead for due jobs');
    }
  }
}
