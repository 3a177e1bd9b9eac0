// Prometheus metrics of this process (prom-client): what only the process can see as it happens (HTTP and MCP durations,
// publish attempts, webhook attempts, rate-limit refusals) plus Node's own process metrics. What Postgres knows exactly (the
// queue, channel health, the pool) is read at scrape time by the /metrics route (src/http/metrics.ts), so the hot paths
// only bump a counter. Label values are bounded: route patterns (never a raw path, which may hold an API key), tool names
// from the registry, platform identifiers, fixed outcome words.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** The one registry of the process (several Heralds in one test process share it: tests compare before and after). */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const seconds = (startedAt: bigint) => Number(process.hrtime.bigint() - startedAt) / 1e9;

const httpDuration = new Histogram({
  name: 'herald_http_request_duration_seconds',
  help: 'HTTP requests by method, route pattern and status (an MCP stream counts until it closes).',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const mcpToolDuration = new Histogram({
  name: 'herald_mcp_tool_duration_seconds',
  help: 'MCP tools/call by tool and outcome (ok, or error when the answer is a tool error).',
  labelNames: ['tool', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

const publishDuration = new Histogram({
  name: 'herald_publish_duration_seconds',
  help: 'One attempt at publishing one item (the platform calls), by platform and outcome: published, failed, retry (a retryable failure, tried again later), processing (the platform is still processing), error (a failure of Herald itself).',
  labelNames: ['platform', 'outcome'] as const,
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

const publishItems = new Counter({
  name: 'herald_publish_items_total',
  help: 'Items (a post, a thread item, a comment) that ended published or failed, by platform. Failed includes items stopped before any platform call (channel needs reconnection, could not confirm).',
  labelNames: ['platform', 'outcome'] as const,
  registers: [registry],
});

const publishRetries = new Counter({
  name: 'herald_publish_retries_total',
  help: 'Retryable publishing failures (429, 5xx, network) scheduled for another attempt, by platform.',
  labelNames: ['platform'] as const,
  registers: [registry],
});

const publishLateness = new Histogram({
  name: 'herald_publish_lateness_seconds',
  help: "Time from a post's date to its publication (the first item of each post), by platform; retries and platform processing count.",
  labelNames: ['platform'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 900, 3600],
  registers: [registry],
});

const webhookAttempts = new Counter({
  name: 'herald_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, failed: a non-2xx answer, no answer or refused by the SSRF guard) and trigger (automatic, replay).',
  labelNames: ['outcome', 'trigger'] as const,
  registers: [registry],
});

const rateLimitRefusals = new Counter({
  name: 'herald_rate_limit_refusals_total',
  help: 'Requests refused by a per-organization rate limit (rest: the general REST limit; post_creation: posts per hour, REST and MCP).',
  labelNames: ['limit'] as const,
  registers: [registry],
});

/** A route's pattern (express allows a list of them) as one label value. */
const patternOf = (route: unknown): string | undefined => {
  const pattern = (route as { path?: unknown } | undefined)?.path;
  return pattern === undefined ? undefined : Array.isArray(pattern) ? pattern.join('|') : String(pattern);
};

const ROUTE = Symbol('route');
const MATCHED = Symbol('matched route');
type Watched = Request & { [ROUTE]?: unknown; [MATCHED]?: string };
const watchedPrototypes = new WeakSet<object>();

/**
 * Records the pattern of the last route express dispatches a request to, with the mount path it had then: when an error
 * leaves a router, express restores `baseUrl` to the parent's, so reading it at the end would drop the router's mount path.
 * An accessor on the app's request prototype (express gives every request of the app that prototype), defined once: an
 * accessor defined on each request gave each its own hidden class, and every later property read on it went slow.
 */
function watchRoutes(request: Request): void {
  const prototype = Object.getPrototypeOf(request) as object;
  if (watchedPrototypes.has(prototype)) return;
  watchedPrototypes.add(prototype);
  Object.defineProperty(prototype, 'route', {
    configurable: true,
    enumerable: true,
    get(this: Watched) {
      return this[ROUTE];
    },
    set(this: Watched, value: unknown) {
      this[ROUTE] = value;
      const pattern = patternOf(value);
      if (pattern !== undefined) this[MATCHED] = `${this.baseUrl}${pattern}`;
    },
  });
}

/** The route pattern that answered (e.g. /api/public/v1/posts/:id), never the raw path. */
function routeOf(request: Request, response: Response, matched: string | undefined): string {
  if (matched !== undefined) return matched;
  if (response.statusCode === 404) return 'unmatched';
  // Middleware that answered without a route (uploads, the console's assets): its mount point only.
  return request.baseUrl ? `${request.baseUrl}/*` : 'other';
}

/** Express middleware timing every request until its response is finished (or the client went away). */
export function httpMetrics(): RequestHandler {
  return (request: Request, response: Response, next: NextFunction) => {
    const startedAt = process.hrtime.bigint();
    watchRoutes(request);
    response.once('close', () => {
      const status = response.writableFinished ? String(response.statusCode) : 'aborted';
      httpDuration.observe({ method: request.method, route: routeOf(request, response, (request as Watched)[MATCHED]), status }, seconds(startedAt));
    });
    next();
  };
}

/** Wraps the MCP tools/call handler: its duration by tool (names outside `known` are "unknown") and outcome. */
export function timedToolCall<Request extends { params: { name?: unknown } }, Extra, Result extends { isError?: boolean }>(
  known: ReadonlySet<string>,
  handler: (request: Request, extra: Extra) => Promise<Result>,
): (request: Request, extra: Extra) => Promise<Result> {
  return async (request, extra) => {
    const startedAt = process.hrtime.bigint();
    const name = typeof request.params.name === 'string' && known.has(request.params.name) ? request.params.name : 'unknown';
    let outcome = 'error';
    try {
      const result = await handler(request, extra);
      if (!result.isError) outcome = 'ok';
      return result;
    } finally {
      mcpToolDuration.observe({ tool: name, outcome }, seconds(startedAt));
    }
  };
}

/** What publishing one item changed on it: read before and after the attempt to name its outcome. */
interface PublishedItem {
  state: string;
  attempts: number;
  position: number;
  publishDate: Date;
}

/** Times one attempt at publishing `item` on `platform` and counts its outcome (failures are counted by `publishFailed`). */
export async function timedPublish<T>(platform: string, item: PublishedItem, attempt: () => Promise<T>): Promise<T> {
  const startedAt = process.hrtime.bigint();
  const attemptsBefore = item.attempts;
  let outcome = 'error';
  try {
    const result = await attempt();
    outcome = item.state === 'PUBLISHED' ? 'published' : item.state === 'ERROR' ? 'failed' : item.attempts > attemptsBefore ? 'retry' : 'processing';
    if (outcome === 'published') {
      publishItems.inc({ platform, outcome });
      if (item.position === 0) publishLateness.observe({ platform }, Math.max(0, (Date.now() - item.publishDate.getTime()) / 1000));
    }
    if (outcome === 'retry') publishRetries.inc({ platform });
    return result;
  } finally {
    publishDuration.observe({ platform, outcome }, seconds(startedAt));
  }
}

/** An item put in ERROR (by the platform's refusal, a give-up after retries, or before any call). */
export function publishFailed(platform: string | undefined): void {
  publishItems.inc({ platform: platform ?? 'unknown', outcome: 'failed' });
}

export function webhookAttempted(trigger: string, delivered: boolean): void {
  webhookAttempts.inc({ outcome: delivered ? 'delivered' : 'failed', trigger });
}

export function rateLimitRefused(limit: 'rest' | 'post_creation'): void {
  rateLimitRefusals.inc({ limit });
}
