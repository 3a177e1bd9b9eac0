// REST v1: a thin adapter over the tool registry. Paths and bodies are the spec's; each route calls the shared runner.
import { counted } from '../lib/words.js';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import busboy from 'busboy';
import { DomainError, invalidInput, unauthenticated } from '../errors.js';
import { consumeRateLimit, HOUR_MS, MINUTE_MS, perWindow, type RateLimitState } from '../lib/rate-limit.js';
import { tools } from '../../tools/index.js';
import { runTool } from '../../tools/runner.js';
import type { Caller, Services } from '../../tools/types.js';
import type { IncomingMedia } from '../../tools/internal/media.js';
import { resolveCallerCounting } from './credentials.js';
import { rateLimitRefused } from '../lib/metrics.js';

const SMALL_BODY = '1mb';
const LARGE_BODY = '50mb';
/** How long the rest of a refused upload is read and discarded before the connection is closed. */
const LINGER_MS = 2000;

export function setRateLimitHeaders(response: Response, state: RateLimitState): void {
  response.setHeader('RateLimit-Limit', String(state.limit));
  response.setHeader('RateLimit-Remaining', String(state.remaining));
  response.setHeader('RateLimit-Reset', String(state.resetSeconds));
}

function rateLimited(state: RateLimitState, ofKey = false): DomainError {
  return new DomainError('rate_limited', `Rate limit reached: ${state.limit} REST requests ${perWindow(state.windowSeconds)} for this ${ofKey ? 'API key' : 'organization'}.`, {
    hint: `Wait ${counted(state.resetSeconds, 'second')} before the next request.`,
    details: { limit: state.limit, remaining: 0, resetSeconds: state.resetSeconds },
  });
}

/**
 * The general REST limits of an organization: per minute always (counted with the credential lookup, in one statement), per
 * hour when set (API_RATE_LIMIT_PER_HOUR=30 is the spec's strict reading). Answers the caller and the refused limit, or the
 * one closest to running out; undefined for a missing, unknown or revoked credential (which counts nothing).
 */
async function authenticateCounting(services: Services, request: Request): Promise<{ caller: Caller; state: RateLimitState; ofKey?: boolean } | undefined> {
  const now = services.now();
  const use = { address: request.ip, client: request.headers['user-agent'] };
  const counted = await resolveCallerCounting(services, request.headers.authorization, { name: 'rest_minute', limit: services.config.apiRateLimitPerMinute, windowMs: MINUTE_MS, now }, use);
  if (!counted) return undefined;
  const minute = counted.limit;
  if (!minute.allowed || services.config.apiRateLimitPerHour === 0) return { caller: counted.caller, state: minute, ofKey: counted.limitOfKey };
  const hour = await consumeRateLimit(services.orm.em, counted.caller.organizationId, 'rest_hour', services.config.apiRateLimitPerHour, now, HOUR_MS);
  return { caller: counted.caller, state: !hour.allowed || hour.remaining < minute.remaining ? hour : minute };
}

export function restRouter(services: Services): Router {
  const router = express.Router();

  // Authentication first, then the per-organization limit: a 401 never counts.
  router.use(async (request: Request, response: Response, next: NextFunction) => {
    try {
      const authenticated = await authenticateCounting(services, request);
      if (!authenticated) throw unauthenticated();
      // Where the request came from, for the audit trail (tools/internal/audit.ts).
      response.locals.caller = { ...authenticated.caller, origin: { via: 'rest', address: request.ip ?? null, client: request.get('user-agent') ?? null } };
      const state = authenticated.state;
      setRateLimitHeaders(response, state);
      if (!state.allowed) rateLimitRefused('rest');
      if (!state.allowed) throw rateLimited(state, authenticated.ofKey);
      next();
    } catch (error) {
      next(error);
    }
  });

  for (const tool of tools) {
    const binding = tool.rest;
    if (!binding) continue;
    const parseBody = express.json({ limit: binding.largeBody ? LARGE_BODY : SMALL_BODY, strict: false, type: () => true });
    const method = binding.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    const bodyless = binding.method === 'GET' || binding.multipartFile !== undefined;
    // A DELETE may carry an optional JSON body (e.g. {"deleteOnPlatform": true}); without one it stays bodyless.
    const optionalBody = express.json({ limit: SMALL_BODY, strict: false });
    const handlers = bodyless ? [] : binding.method === 'DELETE' ? [optionalBody] : [requireJsonBody, parseBody];
    router[method](binding.path, ...handlers, async (request: Request, response: Response, next: NextFunction) => {
      try {
        // A multipart body is streamed into the tool, never parsed whole here.
        const body = binding.multipartFile ? { file: await multipartFile(request, binding.multipartFile) } : request.body;
        const restRequest = { params: { ...request.params } as Record<string, string>, query: { ...(request.query as Record<string, unknown>) }, body };
        const input = binding.toInput ? binding.toInput(restRequest) : { ...restRequest.query, ...(isObject(restRequest.body) ? restRequest.body : {}), ...restRequest.params };
        const output = await runTool(tool, input, response.locals.caller as Caller, services, response.locals.requestId as string, {
          idempotencyKey: request.get('idempotency-key'),
          onReplay: () => response.setHeader('Idempotent-Replayed', 'true'),
        });
        const status = typeof binding.status === 'function' ? binding.status(output) : (binding.status ?? 200);
        if (binding.file) {
          const file = binding.file.of(output);
          response.status(status).type(binding.file.contentType).attachment(file.filename).send(file.body);
          return;
        }
        response.status(status).json(binding.toResponse ? binding.toResponse(output) : output);
      } catch (error) {
        if (binding.multipartFile && !request.complete) {
          // Refused mid-stream (too large, wrong type): answer at once, then discard what the client is still sending for a
          // short while (closing at once would make most clients report a broken pipe instead of this answer), then hang up.
          request.unpipe();
          request.resume();
          response.once('finish', () => {
            const hangUp = setTimeout(() => request.socket.destroy(), LINGER_MS);
            hangUp.unref();
            request.once('end', () => clearTimeout(hangUp));
          });
        }
        next(error);
      }
    });
  }
  return router;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The file of `field` in a multipart/form-data request, as a stream; other parts are skipped. */
function multipartFile(request: Request, field: string): Promise<IncomingMedia> {
  return new Promise((resolve, reject) => {
    if (!request.is('multipart/form-data')) {
      reject(
        new DomainError('invalid_input', `Unsupported content type "${request.headers['content-type'] ?? 'none'}".`, {
          hint: `Send the file as multipart/form-data in the field "${field}" (curl -F ${field}=@picture.png).`,
          status: 415,
        }),
      );
      return;
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { files: 2, fields: 20, fieldSize: 64 * 1024, parts: 30 } });
    } catch {
      reject(invalidInput('The multipart body could not be read: its boundary is missing.', { hint: 'Let your HTTP client build the multipart body.' }));
      return;
    }
    let file: IncomingMedia | undefined;
    parser.on('file', (name, stream, info) => {
      if (name !== field || file) {
        stream.resume();
        return;
      }
      file = { stream, filename: info.filename };
      resolve(file);
    });
    parser.on('error', (error: Error) => {
      if (file) file.stream.destroy(error);
      else reject(invalidInput(`The multipart body could not be read: ${error.message}.`, { hint: 'Let your HTTP client build the multipart body.' }));
    });
    parser.on('close', () => {
      if (!file) reject(invalidInput(`No file provided: send it in the multipart form field "${field}".`, { hint: `curl -F ${field}=@picture.png ...` }));
    });
    request.on('close', () => {
      // The client went away mid-upload: end the file stream with an error so nothing half-written is kept.
      if (!request.complete) file?.stream.destroy(invalidInput('The upload was interrupted before the whole file arrived.'));
    });
    request.pipe(parser);
  });
}

/** Bodies must be JSON; anything else is refused before parsing (an empty body is treated as `{}`). */
function requireJsonBody(request: Request, _response: Response, next: NextFunction): void {
  const length = Number(request.headers['content-length'] ?? 0);
  const chunked = request.headers['transfer-encoding'] !== undefined;
  if (length === 0 && !chunked) {
    request.body = {};
    return next();
  }
  if (!request.is('application/json') && !request.is('application/*+json')) {
    return next(
      new DomainError('invalid_input', `Unsupported content type "${request.headers['content-type'] ?? 'none'}".`, {
        hint: 'Send the body as JSON with the header Content-Type: application/json.',
        status: 415,
      }),
    );
  }
  next();
}

export type { Caller };
