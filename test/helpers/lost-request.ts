// The other half of lost-answer.ts: a create whose request never reached the platform, though Herald cannot know it (the
// connection broke while the request was being sent). The recovery then finds nothing of this attempt, and must not take an
// older post with the same text for it.
import { PlatformHttpError, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { Herald } from './harness.js';

/** Loses the first platform call `matches` selects before it is sent; answers a function that puts the real fetch back. */
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
