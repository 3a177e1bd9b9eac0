// The express application: REST v1 (twice mounted), MCP, and the JSON 404 and error answers.
import express, { type NextFunction, type Request, type Response } from 'express';
import { DomainError, invalidInput, refuseUnstorableText, UNAVAILABLE_RETRY_SECONDS } from '../errors.js';
import { newId } from '../lib/crypto.js';
import type { Services } from '../../tools/types.js';
import { mcpRouter } from '../mcp/http.js';
import type { McpSessions } from '../mcp/sessions.js';
import { errorMiddleware } from './errors.js';
import { oauthRouter } from './oauth.js';
import { restRouter } from './rest.js';
import { consoleRouter } from './web/index.js';
import { uploadsHandler } from './uploads.js';
import { OPENAPI_PATH, openApiDocument } from './openapi.js';
import { shortLinkRouter } from './short-links.js';
import { httpMetrics } from '../lib/metrics.js';
import { metricsRouter } from './metrics.js';

/** Whether the database answers `select 1` within two seconds; one check at a time, its answer reused for a second. */
function databaseHealth(services: Services): () => Promise<boolean> {
  let last: { at: number; reachable: Promise<boolean> } | undefined;
  return () => {
    if (last && Date.now() - last.at < 1000) return last.reachable;
    const check = services.orm.em
      .fork()
      .getConnection()
      .execute('select 1')
      .then(() => true)
      .catch(() => false);
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref());
    last = { at: Date.now(), reachable: Promise.race([check, timeout]) };
    return last.reachable;
  };
}

export function createApp(services: Services, sessions: McpSessions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Answers are dynamic JSON and pages: no ETag (express hashes every body to make one; measured 2-3% of a REST request).
  app.set('etag', false);
  app.set('trust proxy', 'loopback');
  app.use(httpMetrics());
  app.use((request: Request, response: Response, next: NextFunction) => {
    const incoming = request.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && /^[\w-]{1,64}$/.test(incoming) ? incoming : newId();
    response.locals.requestId = requestId;
    response.setHeader('X-Request-Id', requestId);
    // Browsers may call the REST API from other origins; the credential is a header, never a cookie.
    response.setHeader('Access-Control-Expose-Headers', 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, Idempotent-Replayed');
    next();
  });
  // A NUL character in the path or the query can never be stored: refused here once, for every route (bodies are checked
  // by the tool runner, which names the field).
  app.use((request: Request, _response: Response, next: NextFunction) => {
    if (request.path.includes('\u0000')) return next(invalidInput('The path contains a NUL character (%00), which no id or name can hold.', { hint: 'Remove it from the URL.' }));
    try {
      refuseUnstorableText(request.query, 'query parameter ');
    } catch (error) {
      return next(error);
    }
    next();
  });
  const health = databaseHealth(services);
  // Liveness: the process answers (and says whether its database is reachable). Readiness: 503 while it is not.
  app.get('/healthz', async (_request, response) => {
    response.json({ status: 'ok', database: (await health()) ? 'ok' : 'unreachable' });
  });
  app.get('/readyz', async (_request, response) => {
    const reachable = await health();
    if (!reachable) response.setHeader('Retry-After', String(UNAVAILABLE_RETRY_SECONDS));
    response.status(reachable ? 200 : 503).json({ status: reachable ? 'ready' : 'unavailable', database: reachable ? 'ok' : 'unreachable' });
  });
  // The OpenAPI document is public (no key), so tools can read the contract before they have one.
  app.get([`/api/public/v1${OPENAPI_PATH}`, `/public/v1${OPENAPI_PATH}`], (_request, response) => {
    response.setHeader('Access-Control-Allow-Origin', '*');
    response.json(openApiDocument(services.config.publicUrl));
  });
  app.use(metricsRouter(services));
  const rest = restRouter(services);
  app.use('/api/public/v1', rest);
  app.use('/public/v1', rest);
  app.use(oauthRouter(services));
  app.use(mcpRouter(services, sessions));
  if (services.storage.kind === 'local') app.use('/uploads', uploadsHandler(services.config));
  app.use(shortLinkRouter(services));
  app.use(consoleRouter(services, sessions));
  app.use((request: Request, _response: Response, next: NextFunction) => {
    next(new DomainError('not_found', `No route ${request.method} ${request.path}.`, { hint: 'REST endpoints live under /api/public/v1; MCP under /api/mcp.' }));
  });
  app.use(errorMiddleware(services.logger));
  return app;
}
