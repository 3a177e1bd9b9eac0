// Reading a feed's document from the URL a person gave: through the SSRF guard (each hop's address checked and pinned, so
// a redirect to a private or metadata address is refused), at most 5 redirects, a size cap, a short overall time-out,
// and conditional requests (If-None-Match / If-Modified-Since from the last answer's ETag / Last-Modified: 304 means
// nothing changed). A 429 or 503 says when to come back (Retry-After), which the poll honours.
import type { fetch as pinnedFetch } from 'undici';
import { onFirstUse } from '../../src/lib/on-first-use.js';

/** undici (its fetch takes the SSRF guard's pinned dispatcher), required on the first fetch. */
const undici = onFirstUse<typeof import('undici')>('undici');
import type { UrlGuard } from '../../src/lib/ssrf.js';

export const FEED_MAX_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT = 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5';
export const FEED_USER_AGENT = 'Herald-Feeds/0.1';

export interface FeedValidators {
  etag?: string | null;
  lastModified?: string | null;
}

export type FeedDocument =
  | { kind: 'not_modified' }
  | { kind: 'document'; text: string; url: string; etag?: string; lastModified?: string };

/** Why a read failed, for the person (no internals); `retryAfterMs` when the server said when to come back. */
export class FeedFetchError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'FeedFetchError';
  }
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now.getTime());
}

function decode(bytes: Buffer, contentType: string | null): string {
  const declared = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1] ?? /^<\?xml[^>]*encoding=["']([\w-]+)["']/i.exec(bytes.subarray(0, 200).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

async function readCapped(body: AsyncIterable<Uint8Array> | null): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += chunk.byteLength;
    if (size > FEED_MAX_BYTES) throw new FeedFetchError(`the feed is larger than ${FEED_MAX_BYTES / 1024 / 1024} MB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function fetchFeed(guard: Pick<UrlGuard, 'pin'>, url: string, validators: FeedValidators, now: Date): Promise<FeedDocument> {
  let target = new URL(url);
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  const headers: Record<string, string> = {
    accept: ACCEPT,
    'user-agent': FEED_USER_AGENT,
    ...(validators.etag ? { 'if-none-match': validators.etag } : {}),
    ...(validators.lastModified ? { 'if-modified-since': validators.lastModified } : {}),
  };
  for (let hop = 0; ; hop++) {
    // The guard's refusal reads "fetch failed: <why>": the why is what the person needs.
    const dispatcher = await guard.pin(target).catch((error: Error) => {
      throw new FeedFetchError(`${hop > 0 ? `it redirected to ${target.host}, which` : `${target.host}`} is refused: ${error.message.replace(/^fetch failed: /, '')}`);
    });
    try {
      let response: Awaited<ReturnType<typeof pinnedFetch>>;
      try {
        response = await undici().fetch(target, { headers, redirect: 'manual', dispatcher, signal });
      } catch (error) {
        const name = (error as Error).name;
        throw new FeedFetchError(name === 'TimeoutError' || name === 'AbortError' ? `${target.host} did not answer within ${TIMEOUT_MS / 1000} seconds` : `${target.host} could not be reached`);
      }
      const location = response.headers.get('location');
      if (REDIRECTS.has(response.status) && location) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new FeedFetchError(`more than ${MAX_REDIRECTS} redirects`);
        try {
          target = new URL(location, target);
        } catch {
          throw new FeedFetchError('it redirected to an invalid URL');
        }
        continue;
      }
      if (response.status === 304) {
        await response.body?.cancel();
        return { kind: 'not_modified' };
      }
      if (response.status < 200 || response.status >= 300) {
        await response.body?.cancel();
        const wait = response.status === 429 || response.status === 503 ? retryAfterMs(response.headers.get('retry-after'), now) : undefined;
        throw new FeedFetchError(`${target.host} answered HTTP ${response.status}${response.status === 429 ? ' (too many requests)' : ''}`, wait);
      }
      if (Number(response.headers.get('content-length')) > FEED_MAX_BYTES) {
        await response.body?.cancel();
        throw new FeedFetchError(`the feed is larger than ${FEED_MAX_BYTES / 1024 / 1024} MB`);
      }
      let bytes: Buffer;
      try {
        bytes = await readCapped(response.body);
      } catch (error) {
        if (error instanceof FeedFetchError) throw error;
        throw new FeedFetchError('the answer was cut off or took too long');
      }
      return {
        kind: 'document',
        text: decode(bytes, response.headers.get('content-type')),
        url: target.toString(),
        etag: response.headers.get('etag') ?? undefined,
        lastModified: response.headers.get('last-modified') ?? undefined,
      };
    } finally {
      await dispatcher.destroy();
    }
  }
}
