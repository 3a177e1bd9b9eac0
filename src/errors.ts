// The DomainError family and the one table from error code to HTTP status.
export const errorStatus = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  /** Another request with the same Idempotency-Key is still running (or never finished). */
  request_in_progress: 409,
  payload_too_large: 413,
  /** The Idempotency-Key was used before with another body or on another operation. */
  idempotency_conflict: 422,
  rate_limited: 429,
  reauth_required: 401,
  not_supported: 400,
  provider_error: 502,
  unavailable: 503,
  internal: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorOptions {
  hint?: string;
  details?: unknown;
  /** Overrides the status of the code table where the spec fixes another one (e.g. 400 for an unknown post on /status). */
  status?: number;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly hint?: string;
  readonly details?: unknown;
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'DomainError';
    this.hint = options.hint;
    this.details = options.details;
    this.status = options.status ?? errorStatus[code];
  }
}

export const invalidInput = (message: string, options?: ErrorOptions) => new DomainError('invalid_input', message, options);

/**
 * The first string in `value` that Postgres cannot store (a NUL character), as a path such as `posts.0.value.0.content`;
 * undefined when there is none. Keys are checked too.
 */
export function unstorableText(value: unknown, path: string[] = [], depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || '(the value)' : undefined;
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, key.replace(/\u0000/g, '\\0')].join('.');
    const found = unstorableText(item, [...path, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Refuses a request carrying a NUL character anywhere, naming where (one check for every REST route and MCP tool). */
export function refuseUnstorableText(value: unknown, where = ''): void {
  const path = unstorableText(value);
  if (path) {
    throw invalidInput(`${where}${path} contains a NUL character (\\u0000), which cannot be stored.`, { hint: 'Remove the NUL character from that value and send the request again.' });
  }
}
export const notFound = (message: string, options?: ErrorOptions) => new DomainError('not_found', message, options);
export const conflict = (message: string, options?: ErrorOptions) => new DomainError('conflict', message, options);
export const notSupported = (message: string, options?: ErrorOptions) => new DomainError('not_supported', message, options);
export const unauthenticated = () =>
  new DomainError('unauthenticated', 'Missing or invalid API key.', {
    hint: 'Send the API key in the Authorization header (raw on REST, "Bearer <key>" on MCP). Create or regenerate one in the console or with `npm run herald -- key:create`.',
  });

export interface ErrorBody {
  statusCode: number;
  code: ErrorCode;
  message: string;
  hint?: string;
  details?: unknown;
  requestId: string;
}

export function toErrorBody(error: DomainError, requestId: string): ErrorBody {
  const body: ErrorBody = { statusCode: error.status, code: error.code, message: error.message, requestId };
  if (error.hint) body.hint = error.hint;
  if (error.details !== undefined) body.details = error.details;
  return body;
}

/** Connection failures and the server states Postgres answers while it starts, stops or restarts. */
const DATABASE_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300']);

/** True when the error says the database cannot be reached now (as opposed to a query it refused). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; current && depth < 4; current = current.cause as typeof current, depth++) {
    if (typeof current.code === 'string' && DATABASE_DOWN_CODES.has(current.code)) return true;
    if (typeof current.message === 'string' && /Connection terminated|Knex: Timeout acquiring a connection|Client has encountered a connection error|connect ECONNREFUSED|the database system is (starting up|shutting down)/i.test(current.message)) return true;
  }
  return false;
}

/** Seconds a client should wait before trying again while the database is away. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

/** Anything that is not a DomainError becomes `internal` (or `unavailable` when the database is away), with no internals in the message. */
export function asDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (isDatabaseUnavailable(error)) {
    return new DomainError('unavailable', 'Herald cannot reach its database right now.', {
      hint: `Nothing was changed. Try again in ${UNAVAILABLE_RETRY_SECONDS} seconds; if it lasts, the operator should check that Postgres is running.`,
      cause: error,
    });
  }
  return new DomainError('internal', 'Something went wrong on our side. The error was logged; try again, and report the request id if it persists.', {
    cause: error,
  });
}

/** MCP tool error text: starts with the code so agents can branch on it. */
export function toToolErrorText(error: DomainError): string {
  return `${error.code}: ${error.message}${error.hint ? ` ${error.hint}` : ''}`;
}

/** A start that cannot go on: its message is one sentence saying what is wrong and what to do, printed without a stack. */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartError';
  }
}
