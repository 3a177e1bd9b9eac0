// The one fetch wrapper providers use to call platforms: timeouts, JSON/form/multipart bodies, zod-parsed responses,
// and one error type that says whether a retry is safe. A call to a host a user typed carries the SSRF guard (set by
// platformFetchFor): it dials only the address the guard checked, and each redirect hop is checked again (DESIGN §9).
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import { onFirstUse } from './on-first-use.js';

/** undici, required on the first platform call (a tenth of a second of every start, and its code at idle, otherwise). */
const undici = onFirstUse<typeof import('undici')>('undici');
import type { z } from 'zod';
import { DomainError } from '../errors.js';
import type { UrlGuard } from './ssrf.js';

export interface PlatformHttpErrorInit {
  status: number;
  retryable: boolean;
  bodyExcerpt: string;
  /** true when the request may have reached the platform and we cannot know whether it acted on it. */
  outcomeUnknown?: boolean;
  /** Seconds the platform asked us to wait. */
  retryAfterSeconds?: number;
  message?: string;
}

export class PlatformHttpError extends Error {
  readonly status: number;
  readonly retryable: boolean;
  readonly bodyExcerpt: string;
  readonly outcomeUnknown: boolean;
  readonly retryAfterSeconds?: number;
  constructor(init: PlatformHttpErrorInit) {
    super(init.message ?? `Platform answered ${init.status}: ${init.bodyExcerpt}`);
    this.name = 'PlatformHttpError';
    this.status = init.status;
    this.retryable = init.retryable;
    this.bodyExcerpt = init.bodyExcerpt;
    this.outcomeUnknown = init.outcomeUnknown ?? false;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
  get isAuthError(): boolean {
    return this.status === 401;
  }
  /** No answer came back (DNS, connection, time-out): the platform was not reached or did not reply. */
  get isNetworkError(): boolean {
    return this.status === 0;
  }
}

export interface PlatformRequest<T> {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string | string[] | undefined>;
  multipart?: FormData;
  body?: Buffer | Uint8Array | string;
  /** Parses the response body; without it the body is returned as parsed JSON (or text when not JSON). */
  schema?: z.ZodType<T>;
  timeoutMs?: number;
  /**
   * Statuses outside 2xx that are answers, not errors (YouTube's `308 Resume Incomplete`); the response is returned as is,
   * and redirects are not followed.
   */
  okStatuses?: number[];
  /**
   * Lets a provider turn a platform-specific error body into the right classification (e.g. Telegram's 400 "retry after");
   * `headers` carries the platform's own rate-limit headers (e.g. X's `x-rate-limit-reset`).
   */
  classify?: (status: number, body: string, headers: Headers) => Partial<PlatformHttpErrorInit> | undefined;
  /**
   * Set by Herald (platformFetchFor), not by providers, on a call to a host a user typed (an instance, a site, a PDS): the
   * call dials only the addresses this guard checked, and redirects are followed by hand, each hop checked again.
   */
  guard?: Pick<UrlGuard, 'pin'>;
}

export interface PlatformResponse<T> {
  status: number;
  headers: Headers;
  data: T;
  /** The body as received: for values JSON numbers cannot hold exactly (TikTok's 19-digit int64 post ids). */
  text: string;
}

export type PlatformFetch = <T = unknown>(request: PlatformRequest<T>) => Promise<PlatformResponse<T>>;

/** An error body parsed as JSON and by `schema`; undefined when it is not JSON or not of that shape. */
export function parsedBody<T>(schema: z.ZodType<T>, body: string): T | undefined {
  try {
    return schema.safeParse(JSON.parse(body)).data;
  } catch {
    return undefined;
  }
}

const excerpt = (text: string) => (text.length > 500 ? `${text.slice(0, 500)}…` : text);

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET_BEFORE_SEND', 'EHOSTUNREACH', 'ENETUNREACH']);

/** What a network failure was, in words a user can act on. */
export function networkReason(code: string | undefined, name: string, detail?: string): string {
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'DNS lookup failed';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'no route to the host';
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
      return `its TLS certificate was refused (${code})`;
    default:
      if (name === 'TimeoutError' || name === 'AbortError') return 'no answer before the time-out';
      return code ? `network error ${code}` : `network error${detail ? ` (${detail})` : ''}`;
  }
}

function networkErrorCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: string } })?.cause;
  return cause?.code ?? (error as { code?: string })?.code;
}

function buildUrl(url: string, query?: PlatformRequest<unknown>['query']): string {
  if (!query) return url;
  const target = new URL(url);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) target.searchParams.set(key, String(value));
  return target.toString();
}

/** What a call answered, its body read. */
interface Answer {
  status: number;
  ok: boolean;
  headers: Headers;
  text: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Headers fetch does not carry to another origin on a redirect. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

interface Call {
  method: string;
  headers: Record<string, string>;
  body?: BodyInit;
  /** Emits 'abort' at the call's time-out (undici takes an emitter: an AbortSignal per call costs more than the call). */
  signal: EventEmitter;
  /** False: a redirect is an answer (okStatuses), not followed. */
  follow: boolean;
}

/** A body undici sends as it is; any other (FormData, Blob, a stream) is encoded first by Node's own Request. */
const sentAsIs = (body: unknown): body is string | Uint8Array | undefined => body === undefined || typeof body === 'string' || body instanceof Uint8Array;

/** The response's headers as fetch's `Headers` (what providers read). */
function headersOf(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else headers.append(name, value);
  }
  return headers;
}

/**
 * Calls `url` with undici's request (a fraction of the CPU of fetch, which wraps every body in web streams): at a configured
 * platform host through the shared connection pool, at a host a user typed (`guard`) dialling only the addresses the guard
 * checked (a connection pool of its own per hop, closed after it). Redirects are followed by hand as fetch would (303, and
 * 301/302 after a POST, become a GET without body; credentials stay with their origin), at most 5, each hop checked again.
 */
async function callPlatform(guard: Pick<UrlGuard, 'pin'> | undefined, url: string, call: Call): Promise<Answer> {
  let target = new URL(url);
  let headers = call.headers;
  let body: string | Uint8Array | undefined;
  if (sentAsIs(call.body)) {
    body = call.body;
    // As fetch labels a text body.
    if (typeof body === 'string' && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers = { ...headers, 'content-type': 'text/plain;charset=UTF-8' };
  } else if (call.body instanceof URLSearchParams) body = call.body.toString();
  else {
    // Encoded once (form encoding, multipart boundary), so every hop sends the same bytes.
    const encoded = new Request('http://body.invalid/', { method: call.method, headers: call.headers, body: call.body });
    headers = Object.fromEntries(encoded.headers);
    body = new Uint8Array(await encoded.arrayBuffer());
  }
  let method = call.method;
  for (let hop = 0; ; hop++) {
    const dispatcher = guard ? await guard.pin(target) : undefined;
    try {
      const response = await undici().request(target, { method: method as Dispatcher.HttpMethod, headers, body, signal: call.signal, ...(dispatcher ? { dispatcher } : {}) });
      const location = response.headers.location;
      if (!call.follow || !REDIRECTS.has(response.statusCode) || typeof location !== 'string') {
        const status = response.statusCode;
        return { status, ok: status >= 200 && status < 300, headers: headersOf(response.headers), text: await response.body.text() };
      }
      await response.body.dump();
      if (hop >= MAX_REDIRECTS) throw new PlatformHttpError({ status: response.statusCode, retryable: false, bodyExcerpt: '', message: `The platform redirected more than ${MAX_REDIRECTS} times` });
      let next: URL;
      try {
        next = new URL(location, target);
      } catch {
        throw new PlatformHttpError({ status: response.statusCode, retryable: false, bodyExcerpt: '', message: 'The platform redirected to an invalid URL' });
      }
      if (next.origin !== target.origin) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())));
      if ((response.statusCode === 303 && method !== 'HEAD') || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.toLowerCase().startsWith('content-')));
      }
      target = next;
    } finally {
      await dispatcher?.destroy();
    }
  }
}

export function createPlatformFetch(options: { timeoutMs: number; userAgent: string }): PlatformFetch {
  return async function platformFetch<T>(request: PlatformRequest<T>): Promise<PlatformResponse<T>> {
    const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: 'application/json', ...request.headers };
    let body: BodyInit | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form) {
      const form = new URLSearchParams();
      for (const [key, value] of Object.entries(request.form)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value]) form.append(key, item);
      }
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = form;
    } else if (request.multipart) {
      body = request.multipart;
    } else if (request.body !== undefined) {
      body = request.body as BodyInit;
    }
    const signal = new EventEmitter();
    const timer = setTimeout(() => signal.emit('abort'), request.timeoutMs ?? options.timeoutMs);
    const call: Call = { method: request.method ?? (body ? 'POST' : 'GET'), headers, body, signal, follow: !request.okStatuses };
    let response: Answer;
    try {
      response = await callPlatform(request.guard, buildUrl(request.url, request.query), call);
    } catch (error) {
      // The guard's refusals (a blocked address, at the first hop or a later one) and our own are answers, not outages.
      if (error instanceof DomainError || error instanceof PlatformHttpError) throw error;
      const code = networkErrorCode(error);
      const refused = code !== undefined && CONNECT_ERRORS.has(code);
      throw new PlatformHttpError({
        status: 0,
        retryable: true,
        outcomeUnknown: !refused,
        bodyExcerpt: '',
        message: `Could not reach the platform: ${networkReason(code, (error as Error).name, (error as { cause?: Error }).cause?.message)}`,
      });
    } finally {
      clearTimeout(timer);
    }
    const text = response.text;
    if (!response.ok && !request.okStatuses?.includes(response.status)) {
      const retryAfter = Number(response.headers.get('retry-after'));
      const base: PlatformHttpErrorInit = {
        status: response.status,
        retryable: response.status === 429 || response.status >= 500 || /rate.?limit/i.test(text),
        bodyExcerpt: excerpt(text),
        retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
      };
      throw new PlatformHttpError({ ...base, ...request.classify?.(response.status, text, response.headers) });
    }
    let parsed: unknown = text;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    } else {
      parsed = undefined;
    }
    if (request.schema) {
      const result = request.schema.safeParse(parsed);
      if (!result.success) {
        throw new PlatformHttpError({
          status: response.status,
          retryable: false,
          bodyExcerpt: excerpt(text),
          message: `The platform answered with an unexpected shape: ${result.error.issues
            .slice(0, 3)
            .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
            .join('; ')}`,
        });
      }
      return { status: response.status, headers: response.headers, data: result.data, text };
    }
    return { status: response.status, headers: response.headers, data: parsed as T, text };
  };
}
