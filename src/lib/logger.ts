import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config.js';

export type { Logger };

/**
 * An error as it is logged: its name, code and message, never the SQL of a failed query or its parameters (a database
 * error's message starts with the statement and its values, which can hold key hashes): only what Postgres said.
 */
export function errorForLog(error: unknown): Record<string, unknown> {
  const value = error as { name?: string; code?: unknown; message?: unknown; sql?: unknown; query?: unknown; stack?: string } | undefined;
  const message = typeof value?.message === 'string' ? value.message : String(error);
  const fromDatabase = value?.sql !== undefined || value?.query !== undefined || /^\s*(select|insert|update|delete|with|create|alter|drop)\b/i.test(message);
  const cut = message.lastIndexOf(' - ');
  return {
    type: value?.name ?? typeof error,
    ...(value?.code !== undefined ? { code: value.code } : {}),
    message: fromDatabase ? (cut >= 0 ? message.slice(cut + 3) : 'database error') : message.slice(0, 1000),
    ...(!fromDatabase && value?.stack ? { stack: value.stack.split('\n').slice(0, 8).join('\n') } : {}),
  };
}

/** JSON lines; anything that looks like a credential is redacted before it is written. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    serializers: { err: errorForLog },
    redact: {
      paths: [
        'authorization',
        'headers.authorization',
        'request.headers.authorization',
        '*.accessToken',
        '*.refreshToken',
        '*.password',
        '*.apiKey',
        '*.token',
        '*.clientSecret',
      ],
      censor: '[redacted]',
    },
  });
}
