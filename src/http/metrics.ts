// GET /metrics: the Prometheus text format. The process's own counters (src/lib/metrics.ts), and what Postgres knows exactly,
// read at scrape time so no hot path pays for it: the job queue (graphile_worker's tables), posts due and not yet out,
// webhook deliveries, channel health, and the ORM's connection pool. Off the public internet by default: only addresses in
// METRICS_ALLOW (loopback unless set) or a request with `Authorization: Bearer <METRICS_TOKEN>` may read it.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import ipaddr from 'ipaddr.js';
import { Gauge, Registry } from 'prom-client';
import { DomainError } from '../errors.js';
import { safeEqual, sha256 } from '../lib/crypto.js';
import { registry } from '../lib/metrics.js';
import { IntegrationSchema } from '../db/entities.js';
import { healthOf } from '../../tools/internal/channel-health.js';
import type { Services } from '../../tools/types.js';

export const METRICS_PATH = '/metrics';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** METRICS_ALLOW's entries (validated by config.ts) as address ranges. */
export function allowedRanges(entries: string[]): Range[] {
  return entries.map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : ([ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128] as Range)));
}

function inRanges(address: string | undefined, ranges: Range[]): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  // An IPv4 client on a dual-stack socket is seen as ::ffff:a.b.c.d: compared as the IPv4 address it is.
  const parsed = ipaddr.process(address);
  return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
}

/**
 * The scrape-time gauges of one Herald (its services): each scrape runs a few indexed queries. When the database does not
 * answer, `herald_database_up` is 0 and the database gauges are left out rather than stale.
 */
function databaseRegistry(services: Services): { registry: Registry; refresh(): Promise<void> } {
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
  const up = gauge('herald_database_up', 'Whether the database answered the queries of this scrape (1) or not (0).');
  const jobs = gauge('herald_jobs', 'Jobs in the queue by task and state: scheduled (later), due (due and not started), running, failed (out of attempts).', ['task', 'state']);
  const lateness = gauge('herald_jobs_due_lateness_seconds', 'How long the oldest due job of each task has waited past its run time without starting (0 when none is due).', ['task']);
  const postsDue = gauge('herald_posts_due', 'Posts whose date has passed and whose first item is not published yet (waiting for a worker, a retry or the platform).');
  const postsLateness = gauge('herald_posts_due_oldest_seconds', "Seconds since the date of the oldest post still due (0 when none).");
  const deliveries = gauge('herald_webhook_deliveries', 'Webhook deliveries of the last 30 days by state (pending, delivered, failed: given up).', ['state']);
  const channels = gauge('herald_channels', 'Channels by platform and health (active, token_expiring, needs_reconnection, disabled).', ['platform', 'health']);
  const pool = gauge('herald_db_pool_connections', "Connections of this process's ORM pool by state (used, idle, pending: being opened).", ['state']);
  const waiting = gauge('herald_db_pool_waiting', "Requests of this process waiting for an ORM pool connection.");
  const poolMax = gauge('herald_db_pool_max', "Size limit of this process's ORM pool.");
  const databaseGauges = [jobs, lateness, postsDue, postsLateness, deliveries, channels];

  async function read(): Promise<void> {
    const em = services.orm.em.fork();
    const connection = em.getConnection();
    const [queue, due, webhookStates, integrations] = await Promise.all([
      connection.execute<{ task: string; state: string; jobs: number; oldest: number }[]>(
        `select task.identifier as task,
                case when job.locked_at is not null then 'running'
                     when job.attempts >= job.max_attempts then 'failed'
                     when job.run_at > now() then 'scheduled'
                     else 'due' end as state,
                count(*)::int as jobs,
                coalesce(extract(epoch from now() - min(job.run_at)), 0)::float8 as oldest
           from graphile_worker._private_jobs job join graphile_worker._private_tasks task on task.id = job.task_id
          group by 1, 2`,
      ),
      // post_due_idx: roots in QUEUE by date.
      connection.execute<{ posts: number; oldest: number }[]>(
        `select count(*)::int as posts, coalesce(extract(epoch from now() - min(publish_date)), 0)::float8 as oldest
           from post where deleted_at is null and state = 'QUEUE' and position = 0 and publish_date <= now()`,
      ),
      connection.execute<{ state: string; deliveries: number }[]>('select state, count(*)::int as deliveries from webhook_delivery group by state'),
      em.find(IntegrationSchema, { deletedAt: null }),
    ]);
    for (const gauge of databaseGauges) gauge.reset();
    for (const row of queue) {
      jobs.set({ task: row.task, state: row.state }, row.jobs);
      if (row.state === 'due') lateness.set({ task: row.task }, Math.max(0, row.oldest));
      else if (!queue.some((other) => other.task === row.task && other.state === 'due')) lateness.set({ task: row.task }, 0);
    }
    postsDue.set(due[0]?.posts ?? 0);
    postsLateness.set(Math.max(0, due[0]?.oldest ?? 0));
    for (const state of ['pending', 'delivered', 'failed']) deliveries.set({ state }, webhookStates.find((row) => row.state === state)?.deliveries ?? 0);
    const now = services.now();
    const counts = new Map<string, number>();
    for (const integration of integrations) {
      const key = `${integration.providerIdentifier}\u0000${healthOf(services, integration, undefined, now).state}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, count] of counts) {
      const [platform, health] = key.split('\u0000');
      channels.set({ platform, health }, count);
    }
  }

  async function refresh(): Promise<void> {
    // The pool is this process's own: read whether or not the database answers.
    const tarn = (services.orm.em.getConnection().getKnex().client as { pool?: TarnPool }).pool;
    if (tarn) {
      pool.set({ state: 'used' }, tarn.numUsed());
      pool.set({ state: 'idle' }, tarn.numFree());
      pool.set({ state: 'pending' }, tarn.numPendingCreates());
      waiting.set(tarn.numPendingAcquires());
      poolMax.set(tarn.max);
    }
    try {
      await read();
      up.set(1);
    } catch (error) {
      for (const gauge of databaseGauges) gauge.reset();
      services.logger.warn({ err: (error as Error).message }, 'metrics: the database did not answer');
      up.set(0);
    }
  }
  return { registry, refresh };
}

/** The pool of knex (tarn.js) under MikroORM: the counts it exposes. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingCreates(): number;
  numPendingAcquires(): number;
}

export function metricsRouter(services: Services): Router {
  const router = express.Router();
  const { token, allow } = services.config.metrics;
  const ranges = allowedRanges(allow);
  const tokenHash = token ? sha256(token) : undefined;
  const perHerald = databaseRegistry(services);
  router.get(METRICS_PATH, async (request: Request, response: Response, next: NextFunction) => {
    try {
      const bearer = /^bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
      // request.ip: behind a reverse proxy on loopback (trust proxy), the client it forwards for, never the proxy itself.
      const permitted = (tokenHash !== undefined && bearer !== undefined && safeEqual(sha256(bearer), tokenHash)) || inRanges(request.ip, ranges);
      if (!permitted) {
        if (tokenHash) {
          response.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
          throw new DomainError('unauthenticated', 'The metrics need the metrics token.', { hint: 'Send Authorization: Bearer <METRICS_TOKEN> (the token set in Herald\'s settings), or scrape from an address in METRICS_ALLOW.' });
        }
        throw new DomainError('forbidden', `The metrics are served only to the addresses in METRICS_ALLOW (${allow.join(', ') || 'none'}); this request comes from ${request.ip}.`, {
          hint: 'Scrape from one of those addresses, add the scraper\'s address to METRICS_ALLOW, or set METRICS_TOKEN and send it as a Bearer token.',
        });
      }
      // Read before the text is made: prom-client serializes the gauges together, so values set during it could be missed.
      await perHerald.refresh();
      const body = (await registry.metrics()) + (await perHerald.registry.metrics());
      response.setHeader('Content-Type', registry.contentType);
      response.setHeader('Cache-Control', 'no-store');
      response.send(body);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
