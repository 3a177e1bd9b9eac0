// Resolves the Authorization header (raw key on REST, "Bearer <key>" on MCP; both accepted on REST) to a caller.
import { resolveApiKey } from '../../tools/internal/credentials.js';
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

export async function resolveCredentialValue(services: Services, credential: string | undefined): Promise<Caller | undefined> {
  if (!credential) return undefined;
  return resolveApiKey(services.orm.em.fork(), credential);
}
