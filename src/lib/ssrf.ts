// The SSRF guard: every server-side fetch of a URL a client supplied goes through here (upload-from-url, media at publish time).
// The host is resolved once, every address is checked, and the connection is pinned to the checked addresses (no DNS-rebinding
// window between check and connect). Redirects are followed by hand, each hop checked again. Time-outs on connect and overall.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../errors.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface UrlGuardOptions {
  userAgent: string;
  connectTimeoutMs: number;
  /** The whole fetch, body included. */
  timeoutMs: number;
  maxRedirects?: number;
  /** Hostnames that may be fetched (exact, or `*.example.com`); empty = any public host. */
  allowedHosts?: string[];
  /** False only when the deployment turned the guard off (DISABLE_SSRF_PROTECTION): private addresses become reachable. */
  protection?: boolean;
  /** Tests only: loopback addresses pass (every other blocked range stays blocked). Never set from configuration. */
  allowLoopback?: boolean;
  /** DNS resolution; tests inject one. Defaults to the system resolver (all addresses). */
  resolve?: Resolver;
}

export interface GuardedResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType?: string;
  contentLength?: number;
  /** The body; errors with a FetchFailedError on the overall time-out. Destroy it when not read to the end. */
  body: http.IncomingMessage;
}

/** A request with a body (webhook deliveries): sent once to the checked addresses, redirects not followed, any status answered. */
export interface GuardedSend {
  method: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
}

export interface UrlGuard {
  /** Checks the URL and resolves its host; answers the addresses a connection may use. */
  check(url: URL): Promise<ResolvedAddress[]>;
  fetch(url: string): Promise<GuardedResponse>;
  send(url: string, request: GuardedSend): Promise<GuardedResponse>;
}

/** The spec's `fetch failed`, with the reason after a colon. Client input, so 400 `invalid_input`. */
export class FetchFailedError extends DomainError {
  constructor(reason: string, hint?: string) {
    super('invalid_input', `fetch failed: ${reason}`, {
      hint: hint ?? 'Check that the URL is public, reachable without authentication and answers within the time limit; or upload the file with POST /upload.',
    });
    this.name = 'FetchFailedError';
  }
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private network',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique-local IPv6',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
  benchmarking: 'benchmarking',
  teredo: 'Teredo tunnel',
};

/**
 * Why an address may not be fetched, or undefined when it is public unicast.
 * Only public unicast passes: anything ipaddr.js files under another range is blocked, unparseable addresses too.
 * Addresses that embed an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by that address.
 */
export function blockedRange(address: string, options: { allowLoopback?: boolean } = {}): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return 'not a valid IP address';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const range = v6.range();
    const embedded = embeddedIPv4(v6, range);
    if (embedded === null) return RANGE_NAMES[range] ?? range;
    if (embedded) return blockedRange(embedded.toString(), options);
    if (range === 'loopback' && options.allowLoopback) return undefined;
    return range === 'unicast' ? undefined : (RANGE_NAMES[range] ?? range);
  }
  const range = parsed.range();
  if (range === 'loopback' && options.allowLoopback) return undefined;
  return range === 'unicast' ? undefined : (RANGE_NAMES[range] ?? range);
}

/** True for a host name the internet cannot reach: localhost, *.localhost, *.local, or an address outside public unicast. */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || (ipaddr.isValid(host) && blockedRange(host) !== undefined);
}

/** The IPv4 address inside an IPv6 one; undefined when there is none, null when the form is one we refuse outright. */
function embeddedIPv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined | null {
  const bytes = address.toByteArray();
  try {
    if (range === 'ipv4Mapped') return address.toIPv4Address();
  } catch {
    return null;
  }
  if (range === 'rfc6052') return new ipaddr.IPv4(bytes.slice(12, 16));
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  if (range === 'teredo') return null;
  return undefined;
}

export function hostAllowed(hostname: string, allowedHosts: readonly string[]): boolean {
  if (allowedHosts.length === 0) return true;
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return allowedHosts.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
}

const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function createUrlGuard(options: UrlGuardOptions): UrlGuard {
  const protection = options.protection ?? true;
  const allowedHosts = options.allowedHosts ?? [];
  const maxRedirects = options.maxRedirects ?? 5;
  const resolve = options.resolve ?? systemResolver;
  const blocked = (address: string) => (protection ? blockedRange(address, { allowLoopback: options.allowLoopback }) : undefined);

  async function check(url: URL): Promise<ResolvedAddress[]> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchFailedError(`only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}`);
    if (url.username || url.password) throw new FetchFailedError('URLs with a user name or password are not fetched');
    // WHATWG URL parsing already turned decimal, octal and hex IPv4 forms into dotted quads and bracketed IPv6.
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    if (!hostAllowed(hostname, allowedHosts)) {
      throw new FetchFailedError(`${hostname} is not an allowed upload host`, `This Herald fetches media only from: ${allowedHosts.join(', ')}.`);
    }
    if (ipaddr.isValid(hostname)) {
      const reason = blocked(hostname);
      if (reason) throw new FetchFailedError(`${hostname} is a blocked address (${reason})`);
      return [{ address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv6' ? 6 : 4 }];
    }
    let addresses: ResolvedAddress[];
    try {
      addresses = await resolve(hostname);
    } catch {
      throw new FetchFailedError(`${hostname} could not be resolved`);
    }
    if (addresses.length === 0) throw new FetchFailedError(`${hostname} could not be resolved`);
    for (const { address } of addresses) {
      const reason = blocked(address);
      if (reason) throw new FetchFailedError(`${hostname} resolves to ${address}, a blocked address (${reason})`);
    }
    return addresses;
  }

  function request(url: URL, addresses: ResolvedAddress[], deadline: number, send?: GuardedSend): Promise<http.IncomingMessage> {
    // Node's connect asks this for the host's addresses: it gets the checked ones, never a second DNS answer.
    const lookup = ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      if (lookupOptions?.all) callback(null, addresses.map(({ address, family }) => ({ address, family })));
      else callback(null, addresses[0].address, addresses[0].family);
    }) as unknown as LookupFunction;
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolvePromise, reject) => {
      let response: http.IncomingMessage | undefined;
      const headers = { 'user-agent': options.userAgent, accept: '*/*', ...send?.headers, ...(send ? { 'content-length': String(Buffer.byteLength(send.body)) } : {}) };
      const outgoing = client.request(url, { method: send?.method ?? 'GET', agent: false, lookup, headers });
      const connectTimer = setTimeout(
        () => outgoing.destroy(new FetchFailedError(`${url.hostname} did not accept a connection within ${options.connectTimeoutMs / 1000} s`)),
        options.connectTimeoutMs,
      );
      const overallTimer = setTimeout(() => {
        const error = new FetchFailedError(`timed out after ${options.timeoutMs / 1000} s`);
        if (response) response.destroy(error);
        else outgoing.destroy(error);
      }, Math.max(0, deadline - Date.now()));
      const stopTimers = () => {
        clearTimeout(connectTimer);
        clearTimeout(overallTimer);
      };
      outgoing.on('socket', (socket) => {
        socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      outgoing.on('response', (incoming) => {
        clearTimeout(connectTimer);
        response = incoming;
        incoming.once('close', stopTimers);
        resolvePromise(incoming);
      });
      outgoing.on('error', (error) => {
        stopTimers();
        reject(error instanceof FetchFailedError ? error : new FetchFailedError(`${url.hostname}: ${describeNetworkError(error)}`));
      });
      outgoing.end(send?.body);
    });
  }

  async function fetchUrl(raw: string): Promise<GuardedResponse> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FetchFailedError('not an absolute URL', 'Send an absolute http(s) URL such as https://cdn.example.com/picture.png.');
    }
    const deadline = Date.now() + options.timeoutMs;
    for (let hop = 0; ; hop++) {
      const addresses = await check(url);
      const response = await request(url, addresses, deadline);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location) {
        response.destroy();
        if (hop >= maxRedirects) throw new FetchFailedError(`more than ${maxRedirects} redirects`);
        try {
          url = new URL(location, url);
        } catch {
          throw new FetchFailedError('the server redirected to an invalid URL');
        }
        continue;
      }
      if (status < 200 || status >= 300) {
        response.destroy();
        throw new FetchFailedError(`the server answered ${status}`);
      }
      const length = Number(response.headers['content-length']);
      return {
        url: url.toString(),
        status,
        contentType: response.headers['content-type']?.split(';')[0].trim().toLowerCase(),
        contentLength: Number.isFinite(length) && length >= 0 ? length : undefined,
        body: response,
      };
    }
  }

  async function sendTo(raw: string, send: GuardedSend): Promise<GuardedResponse> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FetchFailedError('not an absolute URL', 'Use an absolute http(s) URL such as https://example.com/webhooks.');
    }
    const response = await request(url, await check(url), Date.now() + options.timeoutMs, send);
    const length = Number(response.headers['content-length']);
    return {
      url: url.toString(),
      status: response.statusCode ?? 0,
      contentType: response.headers['content-type']?.split(';')[0].trim().toLowerCase(),
      contentLength: Number.isFinite(length) && length >= 0 ? length : undefined,
      body: response,
    };
  }

  return { check, fetch: fetchUrl, send: sendTo };
}

function describeNetworkError(error: Error & { code?: string }): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    default:
      return error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') ? 'TLS certificate problem' : (error.code ?? 'network error');
  }
}
