// Resolves the Authorization header (raw key or pos_ token on REST, "Bearer <...>" on MCP; both accepted on REST) to a caller.
import { isOAuthToken, resolveApiKey, resolveApiKeyCounting, type KeyUse } from '../../tools/internal/credentials.js';
import { consumeRateLimit, type RateLimitState, type Window } from '../lib/rate-limit.js';
import { resolveOAuthToken, type Audience } from '../../tools/internal/oauth.js';
import type { Caller, Services } from '../../tools/types.js';

export function extractCredential(header: string | undefined, options: { allowRaw: boolean }): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const bearer = /^bearer\s+(.+)$/i.exec(value);
  if (bearer) return bearer[1].trim();
  return options.allowRaw ? value : undefined;
}

/**
 * REST: the caller and one request counted against `window` of its organization. An API key does both in one statement; an
 * OAuth token is looked up, then counted. Undefined (nothing counted) when the credential is missing, unknown, revoked,
 * expired, or a token for another resource (an MCP token is not a REST key).
 */
export async function resolveCallerCounting(
  services: Services,
  header: string | undefined,
  window: Window,
  use?: Omit<KeyUse, 'now'>,
): Promise<{ caller: Caller; limit: RateLimitState; limitOfKey?: boolean } | undefined> {
  const credential = extractCredential(header, { allowRaw: true });
  if (!credential) return undefined;
  // An API key is looked up with plain SQL on the pool (no entity manager of its own to fork: measured 2-3% of a request).
  if (!isOAuthToken(credential)) return resolveApiKeyCounting(services.orm.em, credential, window, { ...use, now: window.now });
  const em = services.orm.em.fork();
  const caller = await resolveOAuthToken(em, credential, services.now(), 'rest');
  if (!caller) return undefined;
  return { caller, limit: await consumeRateLimit(em, caller.organizationId, window.name, window.limit, window.now, window.windowMs) };
}

/**
 * An API key or a `pos_` OAuth token for `audience`; undefined when missing, unknown, revoked, expired, of a deleted app or a
 * token for another resource.
 */
export async function resolveCredentialValue(services: Services, credential: string | undefined, audience: Audience, use?: Omit<KeyUse, 'now'>): Promise<Caller | undefined> {
  if (!credential) return undefined;
  if (isOAuthToken(credential)) return resolveOAuthToken(services.orm.em.fork(), credential, services.now(), audience);
  return resolveApiKey(services.orm.em, credential, use && { ...use, now: services.now() });
}
