// The SSRF guard: every server-side fetch of a URL a client supplied goes through here (upload-from-url, media at publish time,
// and platform calls to a host a user typed, through `pin`).
// The host is resolved once, every address is checked, and the connection is pinned to the checked addresses (no DNS-rebinding
// window between check and connect). Redirects are followed by hand, each hop checked again. Time-outs on connect and overall.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Dispatcher } from 'undici';
import { DomainError } from '../errors.js';
import { onFirstUse } from './on-first-use.js';

// undici's Agent, required with the first call pinned to the addresses checked.
const undici = onFirstUse<typeof import('undici')>('undici');

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
  /**
   * Tests only: loopback addresses pass (all, or those listed; every other blocked range stays blocked). Never set from
   * configuration.
   */
  allowLoopback?: LoopbackAllowance;
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
  /**
   * Checks the URL and answers a connection pool (undici) that dials only the addresses just checked, for one call to that
   * URL: a host a user typed is reached at the address that was checked, whatever DNS answers later. Destroy it after use.
   */
  pin(url: URL): Promise<Dispatcher>;
  /**
   * Checks the URL (ws:// and wss:// as http:// and https://) and answers a `lookup` for Node's connect that dials only the
   * addresses just checked: for connections that are not HTTP requests (WebSocket relays).
   */
  lookup(url: URL): Promise<LookupFunction>;
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
  deprecatedSiteLocal: 'site-local IPv6',
  discard: 'discard-only IPv6',
};

/** Tests only: true lets every loopback address pass; a list lets only those (e.g. the fakes' 127.0.0.1, not 127.0.0.2). */
export type LoopbackAllowance = boolean | readonly string[];

/**
 * Why an address may not be fetched, or undefined when it is public unicast.
 * Only public unicast passes: anything ipaddr.js files under another range is blocked, unparseable addresses too; an IPv6
 * address passes only inside global unicast (2000::/3). Every IPv6 form that carries an IPv4 address is judged by that
 * address as well (see embeddedIPv4), and the forms no public host uses are refused whatever they carry.
 */
export function blockedRange(address: string, options: { allowLoopback?: LoopbackAllowance } = {}): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(canonicalIPv6(address.replace(/^\[|\]$/g, '')));
  } catch {
    return 'not a valid IP address';
  }
  return parsed.kind() === 'ipv4' ? blockedIPv4(parsed as ipaddr.IPv4, options.allowLoopback) : blockedIPv6(parsed as ipaddr.IPv6, options.allowLoopback);
}

/**
 * An IPv6 address as the URL standard writes it (hex only): ipaddr.js reads `::a.b.c.d` as IPv4-mapped, the URL parser
 * and the socket as IPv4-compatible. Anything the URL parser refuses (a zone id) is left to ipaddr.js.
 */
function canonicalIPv6(address: string): string {
  if (!address.includes(':')) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

function loopbackAllowed(address: string, allowance: LoopbackAllowance | undefined): boolean {
  return allowance === true || (Array.isArray(allowance) && allowance.includes(address));
}

function blockedIPv4(address: ipaddr.IPv4, allowance: LoopbackAllowance | undefined): string | undefined {
  const range = address.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && loopbackAllowed(address.toString(), allowance)) return undefined;
  return RANGE_NAMES[range] ?? range;
}

function blockedIPv6(address: ipaddr.IPv6, allowance: LoopbackAllowance | undefined): string | undefined {
  const range = address.range();
  if (range === 'loopback') return loopbackAllowed('::1', allowance) ? undefined : 'loopback';
  if (range === 'unspecified') return 'unspecified';
  const bytes = address.toByteArray();
  const embedded = embeddedIPv4(bytes);
  if (embedded) {
    const inner = embedded.address && blockedIPv4(embedded.address, allowance);
    if (inner) return inner;
    if (embedded.refused) return embedded.refused;
    // The other forms are routed to the IPv4 address they carry: a public one passes. ISATAP is routed by its prefix.
    if (!embedded.prefixRouted) return undefined;
  }
  // Only 2000::/3 is global unicast; ipaddr.js files what lies outside it under a named range or plain "unicast".
  if ((bytes[0] & 0xe0) !== 0x20) return range === 'unicast' ? 'reserved' : (RANGE_NAMES[range] ?? range);
  return range === 'unicast' ? undefined : (RANGE_NAMES[range] ?? range);
}

interface EmbeddedIPv4 {
  /** The IPv4 address the form carries; absent when it cannot be read reliably. */
  address?: ipaddr.IPv4;
  /** Set for the forms refused even around a public IPv4 address: why. */
  refused?: string;
  /** ISATAP: the address is routed by its IPv6 prefix, which must be global unicast too. */
  prefixRouted?: boolean;
}

/**
 * The IPv4 address inside an IPv6 one (byte by byte, so no form depends on how a library version names its ranges);
 * undefined for an address that carries none.
 */
function embeddedIPv4(bytes: number[]): EmbeddedIPv4 | undefined {
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const ipv4At = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  // ::ffff:a.b.c.d, IPv4-mapped (RFC 4291): the socket talks IPv4 to a.b.c.d.
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return { address: ipv4At(12) };
  // ::ffff:0:a.b.c.d, IPv4-translated (SIIT, RFC 6145 / 7915).
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return { address: ipv4At(12) };
  // ::a.b.c.d, IPv4-compatible (RFC 4291 §2.5.5.1, deprecated: no public host has one).
  if (zero(0, 12)) return { address: ipv4At(12), refused: 'IPv4-compatible IPv6, deprecated' };
  // 64:ff9b::a.b.c.d, the NAT64 well-known prefix (RFC 6052): a translator connects to a.b.c.d.
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    if (zero(4, 12)) return { address: ipv4At(12) };
    // 64:ff9b:1::/48, the NAT64 local-use prefix (RFC 8215): its operator chooses where the IPv4 address sits.
    if (bytes[4] === 0 && bytes[5] === 1) return { refused: 'NAT64 local-use prefix' };
  }
  // 2002:AABB:CCDD::/48, 6to4 (RFC 3056): tunnelled to AA.BB.CC.DD.
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { address: ipv4At(2) };
  // 2001:0::/32, Teredo (RFC 4380): a tunnel through the server and the (obfuscated) client IPv4 addresses it carries.
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0 && bytes[3] === 0) return { refused: 'Teredo tunnel' };
  // <prefix>:0:5efe:a.b.c.d (or 200:5efe, with the u/g bits), ISATAP (RFC 5214): the interface identifier carries it.
  if ((bytes[8] & 0xfc) === 0 && bytes[9] === 0 && bytes[10] === 0x5e && bytes[11] === 0xfe) return { address: ipv4At(12), prefixRouted: true };
  return undefined;
}

/** True for a host name the internet cannot reach: localhost, *.localhost, *.local, or an address outside public unicast. */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || (ipaddr.isValid(host) && blockedRange(host) !== undefined);
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
    const lookup = pinnedLookup(addresses);
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

  async function pin(url: URL): Promise<Dispatcher> {
    const addresses = await check(url);
    return new (undici().Agent)({ connect: { lookup: pinnedLookup(addresses), timeout: options.connectTimeoutMs } });
  }

  async function lookup(url: URL): Promise<LookupFunction> {
    const asHttp = new URL(url.href.replace(/^ws(s?):/i, 'http$1:'));
    return pinnedLookup(await check(asHttp));
  }

  return { check, pin, lookup, fetch: fetchUrl, send: sendTo };
}

/** Node's connect asks this for the host's addresses: it gets the checked ones, never a second DNS answer. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, lookupOptions: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
    const family = lookupOptions?.family;
    const usable = family === 4 || family === 6 ? addresses.filter((address) => address.family === family) : addresses;
    if (usable.length === 0) callback(Object.assign(new Error(`no checked IPv${family} address`), { code: 'ENOTFOUND' }));
    else if (lookupOptions?.all) callback(null, usable.map(({ address, family: kind }) => ({ address, family: kind })));
    else callback(null, usable[0].address, usable[0].family);
  }) as unknown as LookupFunction;
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
