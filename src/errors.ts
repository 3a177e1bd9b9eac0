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

/** Anything that is not a DomainError becomes `internal`, with no internals in the message. */
export function asDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
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
