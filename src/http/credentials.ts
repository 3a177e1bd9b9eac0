// Resolves the Authorization header (raw key or pos_ token on REST, "Bearer <...>" on MCP; both accepted on REST) to a caller.
import { resolveApiKey } from '../../tools/internal/credentials.js';
import { resolveOAuthToken } from '../../tools/internal/oauth.js';
import type { Caller, Services } from '../../tools/types.js';

export function extractCredential(header: string | undefined, options: { allowRaw: boolean }): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const bearer = /^bearer\s+(.+)$/i.exec(value);
  if (bearer) return bearer[1].trim();
  return options.allowRaw ? value : undefined;
}

/** REST: the raw key, or `Bearer <key>`. */
export async function resolveCaller(services: Services, header: string | undefined): Promise<Caller | undefined> {
  const credential = extractCredential(header, { allowRaw: true });
  return resolveCredentialValue(services, credential);
}

/** An API key or a `pos_` OAuth token; undefined when missing, unknown, revoked or of a deleted app. */
export async function resolveCredentialValue(services: Services, credential: string | undefined): Promise<Caller | undefined> {
  if (!credential) return undefined;
  const em = services.orm.em.fork();
  if (credential.startsWith('pos_')) return resolveOAuthToken(em, credential, services.now());
  return resolveApiKey(em, credential);
}
