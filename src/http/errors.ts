// The one express error middleware: DomainErrors become the JSON error body; anything else is `internal`, logged, without internals.
import type { NextFunction, Request, Response } from 'express';
import { asDomainError, DomainError, toErrorBody, UNAVAILABLE_RETRY_SECONDS } from '../errors.js';
import type { Logger } from '../lib/logger.js';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

function fromBodyParser(error: BodyParserError): DomainError | undefined {
  switch (error.type) {
    case 'entity.too.large':
      return new DomainError('payload_too_large', `The request body is larger than the ${Math.round((error.limit ?? 0) / 1024 / 1024) || 1} MB allowed here.`, {
        hint: 'Upload media first (POST /upload or /upload-from-url) and reference it by path instead of inlining it in the JSON.',
      });
    case 'entity.parse.failed':
      return new DomainError('invalid_input', 'The request body is not valid JSON.', { hint: 'Check quotes, commas and brackets; send Content-Type: application/json.' });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new DomainError('invalid_input', 'Unsupported body encoding.', { hint: 'Send UTF-8 JSON.', status: 415 });
    case 'request.aborted':
      return new DomainError('invalid_input', 'The request was aborted by the client.');
    default:
      return error.status && error.status >= 400 && error.status < 500
        ? new DomainError('invalid_input', error.message, { status: error.status })
        : undefined;
  }
}

export function errorMiddleware(logger: Logger) {
  return (raw: unknown, request: Request, response: Response, _next: NextFunction) => {
    const error = raw instanceof DomainError ? raw : (fromBodyParser(raw as BodyParserError) ?? asDomainError(raw));
    const requestId = String(response.locals.requestId ?? '');
    if (error.code === 'internal') logger.error({ err: raw, requestId, path: request.path }, 'unhandled error');
    if (error.code === 'unavailable') {
      logger.warn({ err: raw, requestId, path: request.path }, 'database unreachable');
      response.setHeader('Retry-After', String(UNAVAILABLE_RETRY_SECONDS));
    }
    if (error.code === 'rate_limited') {
      const details = error.details as { limit: number; resetSeconds: number } | undefined;
      if (details) {
        response.setHeader('Retry-After', String(details.resetSeconds));
        response.setHeader('RateLimit-Limit', String(details.limit));
        response.setHeader('RateLimit-Remaining', '0');
        response.setHeader('RateLimit-Reset', String(details.resetSeconds));
      }
    }
    if (response.headersSent) return;
    response.status(error.status).json(toErrorBody(error, requestId));
  };
}
