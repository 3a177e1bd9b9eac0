import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config.js';

export type { Logger };

/** JSON lines; anything that looks like a credential is redacted before it is written. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
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
