// The express application: REST v1 (twice mounted), MCP, and the JSON 404 and error answers.
import express, { type NextFunction, type Request, type Response } from 'express';
import { DomainError } from '../errors.js';
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

export function createApp(services: Services, sessions: McpSessions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use((request: Request, response: Response, next: NextFunction) => {
    const incoming = request.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && /^[\w-]{1,64}$/.test(incoming) ? incoming : newId();
    response.locals.requestId = requestId;
    response.setHeader('X-Request-Id', requestId);
    // Browsers may call the REST API from other origins; the credential is a header, never a cookie.
    response.setHeader('Access-Control-Expose-Headers', 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, Idempotent-Replayed');
    next();
  });
  app.get('/healthz', (_request, response) => {
    response.json({ status: 'ok' });
  });
  // The OpenAPI document is public (no key), so tools can read the contract before they have one.
  app.get([`/api/public/v1${OPENAPI_PATH}`, `/public/v1${OPENAPI_PATH}`], (_request, response) => {
    response.setHeader('Access-Control-Allow-Origin', '*');
    response.json(openApiDocument(services.config.publicUrl));
  });
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
