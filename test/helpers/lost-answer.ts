// Simulates a create whose answer never came back (a cut connection, a crash before the result was recorded): the call
// reaches the platform, then fails as a network error of unknown outcome. For tests of recorded steps and their recovery.
import { PlatformHttpError, type PlatformFetch, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { Herald } from './harness.js';

/** Loses the answer of the first platform call `matches` selects; answers a function that puts the real fetch back. */
export function loseAnswerOf(herald: Herald, matches: (request: PlatformRequest<unknown>) => boolean): () => void {
  const realFetch = herald.services.fetch;
  let lost = false;
  herald.services.fetch = async (request) => {
    const response = await realFetch(request);
    if (!lost && matches(request as PlatformRequest<unknown>)) {
      lost = true;
      throw new PlatformHttpError({ status: 0, retryable: true, outcomeUnknown: true, bodyExcerpt: '', message: 'Could not reach the platform: the connection was reset' });
    }
    return response;
  };
  return () => {
    herald.services.fetch = realFetch;
  };
}

/**
 * Loses the first platform call `matches` selects before it reaches the platform (the connection drops while sending): it
 * fails as a network error of unknown outcome, so the recovery must find that nothing was created and make the call again.
 */
export function loseRequestOf(herald: Herald, matches: (request: PlatformRequest<unknown>) => boolean): () => void {
  const realFetch = herald.services.fetch;
  let lost = false;
  herald.services.fetch = async (request) => {
    if (!lost && matches(request as PlatformRequest<unknown>)) {
      lost = true;
      throw new PlatformHttpError({ status: 0, retryable: true, outcomeUnknown: true, bodyExcerpt: '', message: 'Could not reach the platform: the connection was reset' });
    }
    return realFetch(request);
  };
  return () => {
    herald.services.fetch = realFetch;
  };
}

/** A time `hours` hours ago: what an older post with the same text was created at. */
export const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);

/** Runs `run` with Herald's platform fetch wrapped (a crash, a lost answer, a refused call), restoring it afterwards. */
export async function withPlatformFetch<T>(services: { fetch: PlatformFetch }, wrap: (real: PlatformFetch) => PlatformFetch, run: () => Promise<T>): Promise<T> {
  const real = services.fetch;
  services.fetch = wrap(real);
  try {
    return await run();
  } finally {
    services.fetch = real;
  }
}
