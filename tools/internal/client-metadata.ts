// Clients known by their metadata document (CIMD: draft-ietf-oauth-client-id-metadata-document, as the MCP client-registration
// page asks): the client_id is the https URL of a JSON document naming the client and its redirect URIs. Herald fetches it
// through the SSRF guard (pinned to the checked address, no redirects, 5 KB, 5 seconds), keeps it as an app row whose
// `metadataExpiresAt` follows the document's HTTP caching headers, and remembers a failure for a minute (in this process).
// Such a client is public (no secret: PKCE with S256), and the consent screen names the domain that serves its document.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { fetch as pinnedFetch } from 'undici';
import { onFirstUse } from '../../src/lib/on-first-use.js';

/** undici (its fetch takes the SSRF guard's pinned dispatcher), required on the first fetch. */
const undici = onFirstUse<typeof import('undici')>('undici');
import { OAuthAppSchema, type OAuthApp } from '../../src/db/account-entities.js';
import { DomainError, invalidInput } from '../../src/errors.js';
import { blockedRange } from '../../src/lib/ssrf.js';
import { newId } from '../../src/lib/crypto.js';
import type { Services } from '../types.js';
import { redirectUriProblem } from './oauth-apps.js';

const MAX_BYTES = 5 * 1024;
const TIMEOUT_MS = 5000;
/** A document served without caching headers is fetched again after an hour; none is kept longer than a day. */
const DEFAULT_TTL_MS = 60 * 60 * 1000;
const MAX_TTL_MS = 24 * 60 * 60 * 1000;
const FAILURE_TTL_MS = 60 * 1000;
const MAX_REMEMBERED_FAILURES = 1000;
const MAX_URL_LENGTH = 2000;

const HINT = 'The app that sent you here publishes a broken description of itself. Contact its developer, or connect it with an API key.';

/** Failures by client_id, so a broken document is not fetched again on every attempt. */
const failures = new Map<string, { message: string; until: number }>();

/** A client known by its metadata document (its client_id is the document's URL). */
export const isMetadataDocumentClient = (app: Pick<OAuthApp, 'metadataExpiresAt'>) => app.metadataExpiresAt !== null;

/** The live app of a client_id (registered in the console, dynamically, or by its metadata document). */
export const findApp = (em: EntityManager, clientId: string) => em.findOne(OAuthAppSchema, { clientId, deletedAt: null });

/** The app an authorization request names: a registered one, or the client whose metadata document the URL serves. */
export async function appOfClientId(em: EntityManager, clientId: string, services?: Services): Promise<OAuthApp> {
  if (!services || !/^[a-z][a-z0-9+.-]*:\/\//i.test(clientId)) {
    const app = await findApp(em, clientId);
    if (!app) throw invalidInput('Invalid client_id: no app is registered with this id.', { hint: 'The app may have been deleted. Contact its developer.' });
    return app;
  }
  const url = clientIdUrl(clientId, services);
  const now = services.now();
  const cached = await findApp(em, clientId);
  if (cached?.metadataExpiresAt && cached.metadataExpiresAt > now) return cached;
  const failure = failures.get(clientId);
  if (failure && failure.until > now.getTime()) throw invalidInput(failure.message, { hint: HINT });
  try {
    const { document, ttlMs } = await fetchDocument(url, services);
    return await storeApp(em, clientId, checkDocument(document, clientId), new Date(now.getTime() + ttlMs), now);
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'invalid_input') throw error;
    if (failures.size >= MAX_REMEMBERED_FAILURES) failures.delete(failures.keys().next().value!);
    failures.set(clientId, { message: error.message, until: now.getTime() + FAILURE_TTL_MS });
    throw invalidInput(error.message, { hint: HINT });
  }
}

const refused = (reason: string) => invalidInput(`The client_id's metadata document cannot be used: ${reason}.`, { hint: HINT });

/**
 * A client_id URL as the draft requires: https, a path, no fragment, no user name or password, in canonical form (so no dot
 * segments). Plain http is taken only for a loopback address while the SSRF guard is on: production's guard refuses
 * loopback, so only tests (the guard's allowLoopback, never set from configuration) reach a fake document that way.
 */
function clientIdUrl(clientId: string, services: Services): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw invalidInput('Invalid client_id: it starts like a URL but is not one.', { hint: HINT });
  }
  const testLoopback = url.protocol === 'http:' && services.config.ssrfProtection && blockedRange(url.hostname) === 'loopback';
  const problem =
    clientId.length > MAX_URL_LENGTH ? `it is longer than ${MAX_URL_LENGTH} characters`
    : url.protocol !== 'https:' && !testLoopback ? 'it must be an https URL'
    : url.username || url.password ? 'it must not contain a user name or password'
    : url.hash || clientId.includes('#') ? 'it must not contain a fragment (#...)'
    : url.pathname === '/' ? 'it must have a path, such as https://app.example/oauth/client.json'
    : url.href !== clientId ? `it must be written in canonical form (${url.href})`
    : undefined;
  if (problem) throw invalidInput(`Invalid client_id URL: ${problem}.`, { hint: HINT });
  return url;
}

async function fetchDocument(url: URL, services: Services): Promise<{ document: unknown; ttlMs: number }> {
  // The guard checks the address (public unicast only) and pins the connection to it; its message starts "fetch failed:".
  const dispatcher = await services.platformGuard.pin(url).catch((error: Error) => {
    throw refused(error.message);
  });
  try {
    let response: Awaited<ReturnType<typeof pinnedFetch>>;
    try {
      response = await undici().fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', dispatcher, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (error) {
      const name = (error as Error).name;
      throw refused(name === 'TimeoutError' || name === 'AbortError' ? `${url.host} did not answer within ${TIMEOUT_MS / 1000} seconds` : `${url.host} could not be reached`);
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw refused(`${url.host} answered a redirect (${response.status}); the document must be served at the client_id URL itself`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw refused(`${url.host} answered HTTP ${response.status}`);
    }
    const text = await readCapped(response);
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw refused('it is not JSON');
    }
    return { document, ttlMs: cacheLifetime(response.headers) };
  } finally {
    await dispatcher.destroy();
  }
}

async function readCapped(response: Awaited<ReturnType<typeof pinnedFetch>>): Promise<string> {
  const tooLarge = refused(`it is larger than ${MAX_BYTES / 1024} KB`);
  if (Number(response.headers.get('content-length')) > MAX_BYTES) {
    await response.body?.cancel();
    throw tooLarge;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      if (size > MAX_BYTES) throw tooLarge;
      chunks.push(chunk);
    }
  } catch (error) {
    if (error === tooLarge) throw error;
    throw refused('the answer was cut off or took too long');
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** How long the document may be kept (RFC 9111): no-store/no-cache none, else max-age, else Expires, else an hour; a day at most. */
export function cacheLifetime(headers: Headers): number {
  const control = (headers.get('cache-control') ?? '').toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\b/.test(control)) return 0;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)/.exec(control);
  let ms = DEFAULT_TTL_MS;
  if (maxAge) ms = Number(maxAge[1]) * 1000;
  else if (headers.get('expires')) {
    const expires = Date.parse(headers.get('expires')!);
    const date = Date.parse(headers.get('date') ?? '') || Date.now();
    ms = Number.isNaN(expires) ? 0 : expires - date;
  }
  return Math.min(Math.max(ms, 0), MAX_TTL_MS);
}

interface ClientMetadata {
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  logoUri: string | null;
}

/** The document as the draft and the MCP page require: client_id equal to its URL, a name, redirect URIs, a public client. */
function checkDocument(document: unknown, clientId: string): ClientMetadata {
  if (!document || typeof document !== 'object' || Array.isArray(document)) throw refused('it is not a JSON object');
  const body = document as Record<string, unknown>;
  if (body.client_id !== clientId) throw refused(`its client_id (${JSON.stringify(body.client_id)?.slice(0, 200)}) is not the URL it is served at`);
  if (typeof body.client_name !== 'string' || !body.client_name.trim()) throw refused('it has no client_name');
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 20 || !uris.every((uri) => typeof uri === 'string')) throw refused('redirect_uris must be an array of 1 to 20 URLs');
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw refused(`redirect_uris: ${problem}`);
  }
  // A document anyone can read holds no secret: the client is public and proves itself with PKCE.
  if ('client_secret' in body || 'client_secret_expires_at' in body) throw refused('it contains a client secret');
  if (body.token_endpoint_auth_method !== undefined && body.token_endpoint_auth_method !== 'none') {
    throw refused(`token_endpoint_auth_method "${String(body.token_endpoint_auth_method).slice(0, 50)}" is not supported here; Herald takes public clients ("none", with PKCE)`);
  }
  if (body.grant_types !== undefined && !(Array.isArray(body.grant_types) && body.grant_types.includes('authorization_code'))) throw refused('its grant_types do not include authorization_code');
  if (body.response_types !== undefined && !(Array.isArray(body.response_types) && body.response_types.includes('code'))) throw refused('its response_types do not include code');
  return {
    name: body.client_name.trim().slice(0, 100),
    redirectUris: uris as string[],
    clientUri: typeof body.client_uri === 'string' && /^https:\/\//.test(body.client_uri) ? body.client_uri.slice(0, 500) : null,
    logoUri: typeof body.logo_uri === 'string' && /^https:\/\//.test(body.logo_uri) ? body.logo_uri.slice(0, 1000) : null,
  };
}

/** The app row of the client, created on first use and refreshed from each new copy of its document. */
async function storeApp(em: EntityManager, clientId: string, metadata: ClientMetadata, expiresAt: Date, now: Date): Promise<OAuthApp> {
  await em.getConnection().execute(
    `insert into oauth_app (id, organization_id, name, description, picture_url, redirect_uris, client_id, client_secret_hash, token_endpoint_auth_method, dynamic, metadata_expires_at, created_at)
     values (?, null, ?, ?, ?, ?, ?, null, 'none', false, ?, ?)
     on conflict (client_id) do update set name = excluded.name, description = excluded.description, picture_url = excluded.picture_url,
       redirect_uris = excluded.redirect_uris, metadata_expires_at = excluded.metadata_expires_at
     where oauth_app.metadata_expires_at is not null`,
    [newId(), metadata.name, metadata.clientUri, metadata.logoUri, JSON.stringify(metadata.redirectUris), clientId, expiresAt, now],
  );
  // Read past this request's identity map, which may hold the copy before this one.
  const app = await em.fork().findOne(OAuthAppSchema, { clientId, deletedAt: null, metadataExpiresAt: { $ne: null } });
  if (!app) throw invalidInput('Invalid client_id: this app was removed from this Herald.', { hint: 'Contact the Herald owner.' });
  return app;
}
