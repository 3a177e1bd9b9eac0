// Hosts a user typed (an instance, a site, a PDS, a relay) against the platform's configured ones: what a provider's fetch and
// dial trust, and what goes through the SSRF guard, pinned to the checked address (DESIGN §9).
import { FetchFailedError } from '../../src/lib/ssrf.js';
import type { Dial } from '../../providers/types.js';
import type { PlatformFetch } from '../../src/lib/platform-http.js';
import type { Services } from '../types.js';

/**
 * The fetch a provider gets: calls to the platform's configured hosts (its endpoints, as the deployment set them) go
 * straight out; any other host (one the user typed: an instance, a site, a PDS) carries the SSRF guard, which checks it
 * and pins the connection to the checked address, every redirect hop checked again (src/lib/platform-http.ts), so a
 * connect form cannot make Herald call a private address (unless DISABLE_SSRF_PROTECTION), now or at any later call.
 */
export function platformFetchFor(services: Services, endpoints: Record<string, string>): PlatformFetch {
  const trusted = trustedOrigins(endpoints);
  return async (request) => {
    let origin: string;
    try {
      origin = new URL(request.url).origin;
    } catch {
      throw new FetchFailedError('the platform address is not an absolute URL', 'Reconnect the channel with the full address of its server, e.g. https://mastodon.example.');
    }
    return services.fetch(trusted.has(origin) ? request : { ...request, guard: services.platformGuard });
  };
}

/** The origins of the platform's configured hosts (its endpoints, as the deployment set them; lists are comma-separated). */
function trustedOrigins(endpoints: Record<string, string>): Set<string> {
  const trusted = new Set<string>();
  for (const value of Object.values(endpoints)) {
    for (const part of value.split(',')) {
      try {
        trusted.add(new URL(part.trim()).origin);
      } catch {
        /* an API version, not a URL */
      }
    }
  }
  return trusted;
}

/** `platformFetchFor` for connections that are not HTTP requests (Nostr relays): the same trust, the same pinned check. */
export function dialFor(services: Pick<Services, 'platformGuard'>, endpoints: Record<string, string>): Dial {
  const trusted = trustedOrigins(endpoints);
  return async (raw) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FetchFailedError(`"${raw}" is not an absolute URL`, 'Give the full address, e.g. wss://relay.example.');
    }
    return trusted.has(url.origin) ? undefined : services.platformGuard.lookup(url);
  };
}
