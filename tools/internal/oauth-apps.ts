// Third-party OAuth apps: registered in the console (one Redirect URL, a client secret) or dynamically by MCP clients
// (RFC 7591); secret rotation, deletion, the apps a user approved, and the daily clean-up. Secrets are stored as hashes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { OAuthAppSchema, OAuthCodeSchema, type OAuthApp, type TokenEndpointAuthMethod } from '../../src/db/account-entities.js';
import { invalidInput, notFound } from '../../src/errors.js';
import { newId, sha256 } from '../../src/lib/crypto.js';
import { newClientId, newClientSecret, OAuthError, revokeTokens, SCOPES } from './oauth.js';
import { DEVICE_GRANT_TYPE } from './device.js';
import { recordChange } from './audit.js';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'ftp:', 'ws:', 'wss:']);

/**
 * https, http on a loopback host (RFC 8252 §7.3), or a private-use scheme of a native app (RFC 8252 §7.1, e.g.
 * `cursor://...`). No fragment. Returns the problem as a sentence, or undefined.
 */
export function redirectUriProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not an absolute URL.`;
  }
  if (url.hash) return `"${value}" must not contain a fragment (#...).`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname) ? undefined : `"${value}" must use https (plain http is allowed only on 127.0.0.1, [::1] or localhost).`;
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `"${value}" uses a scheme that cannot be a redirect URL.`;
  return undefined;
}

export interface AppInput {
  name: string;
  description?: string;
  pictureUrl?: string;
  redirectUrl: string;
}

function checkAppInput(input: AppInput): void {
  if (!input.name.trim()) throw invalidInput('App Name is required.');
  if (input.name.trim().length > 100) throw invalidInput('App Name can have at most 100 characters.');
  if ((input.description ?? '').length > 500) throw invalidInput('Description can have at most 500 characters.');
  if (input.pictureUrl && !/^https?:\/\//i.test(input.pictureUrl)) throw invalidInput('Profile Picture must be an http(s) URL of an image.');
  const problem = redirectUriProblem(input.redirectUrl.trim());
  if (problem) throw invalidInput(`Redirect URL: ${problem}`);
}

export async function registerApp(em: EntityManager, organizationId: string, input: AppInput, now: Date): Promise<{ app: OAuthApp; clientSecret: string }> {
  checkAppInput(input);
  const clientSecret = newClientSecret();
  const app = em.create(OAuthAppSchema, {
    id: newId(),
    organizationId,
    name: input.name.trim(),
    description: input.description?.trim() || null,
    pictureUrl: input.pictureUrl?.trim() || null,
    redirectUris: [input.redirectUrl.trim()],
    clientId: newClientId(),
    clientSecretHash: sha256(clientSecret),
    tokenEndpointAuthMethod: 'client_secret_post',
    dynamic: false,
    createdAt: now,
    secretRotatedAt: null,
    deletedAt: null,
  });
  await em.flush();
  await recordChange(em, organizationId, { action: 'app.created', target: { kind: 'oauth_app', id: app.id }, did: `created the OAuth app "${app.name}"`, changes: { name: app.name, redirectUris: app.redirectUris } });
  return { app, clientSecret };
}

export async function appsOf(em: EntityManager, organizationId: string): Promise<OAuthApp[]> {
  return em.find(OAuthAppSchema, { organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc' } });
}

async function ownApp(em: EntityManager, organizationId: string, appId: string): Promise<OAuthApp> {
  const app = await em.findOne(OAuthAppSchema, { id: appId, organizationId, deletedAt: null });
  if (!app) throw notFound('No OAuth app found.');
  return app;
}

/** The old secret stops working at once for new exchanges; issued tokens are not bound to it and stay valid. */
export async function rotateSecret(em: EntityManager, organizationId: string, appId: string, now: Date): Promise<{ app: OAuthApp; clientSecret: string }> {
  const app = await ownApp(em, organizationId, appId);
  const clientSecret = newClientSecret();
  Object.assign(app, { clientSecretHash: sha256(clientSecret), secretRotatedAt: now });
  await em.flush();
  await recordChange(em, organizationId, { action: 'app.secret_rotated', target: { kind: 'oauth_app', id: app.id }, did: `rotated the secret of the OAuth app "${app.name}"` });
  return { app, clientSecret };
}

/** Soft-deletes the app, revokes all its tokens and unused codes. Returns the revoked token ids (to end their MCP sessions). */
export async function deleteApp(em: EntityManager, organizationId: string, appId: string, now: Date): Promise<string[]> {
  const app = await ownApp(em, organizationId, appId);
  app.deletedAt = now;
  const revoked = await revokeTokens(em, { appId: app.id }, now);
  await em.nativeDelete(OAuthCodeSchema, { appId: app.id, usedAt: null });
  await em.flush();
  await recordChange(em, organizationId, { action: 'app.removed', target: { kind: 'oauth_app', id: app.id }, did: `removed the OAuth app "${app.name}" (${revoked.length} token(s) revoked)`, changes: { name: app.name, revokedTokens: revoked.length } });
  return revoked;
}


// ----- Dynamic client registration (RFC 7591) -----

export interface RegistrationResponse {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  grant_types: string[];
  response_types: string[];
  scope: string;
}

/** The grants of this server, as its metadata announces them (grant_types_supported). */
export const GRANT_TYPES = ['authorization_code', 'refresh_token', DEVICE_GRANT_TYPE] as const;
/** The grants that start a login (a refresh token only continues one). */
const FIRST_GRANTS: readonly string[] = ['authorization_code', DEVICE_GRANT_TYPE];

/**
 * The grants a registration asks for (RFC 7591 §2: authorization_code when none is named), narrowed to this server's
 * (§2 lets a server replace requested values); refused when none of them starts a login here.
 */
function registeredGrantTypes(value: unknown): string[] {
  if (value === undefined) return ['authorization_code'];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new OAuthError('invalid_client_metadata', 'grant_types must be an array of strings.');
  const granted = GRANT_TYPES.filter((grant) => value.includes(grant));
  if (!granted.some((grant) => FIRST_GRANTS.includes(grant))) throw new OAuthError('invalid_client_metadata', `grant_types must include ${FIRST_GRANTS.join(' or ')} (the grants of this server).`);
  return granted;
}

export async function registerDynamicClient(em: EntityManager, metadata: unknown, now: Date): Promise<RegistrationResponse> {
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata.');
  const body = metadata as Record<string, unknown>;
  const grantTypes = registeredGrantTypes(body.grant_types);
  // Redirect URIs are for redirect-based flows (RFC 7591 §2): a client of the device grant alone (a CLI) has none.
  const redirecting = grantTypes.includes('authorization_code');
  const uris = body.redirect_uris ?? (redirecting ? undefined : []);
  if (!Array.isArray(uris) || (redirecting && uris.length === 0) || uris.length > 10 || !uris.every((uri) => typeof uri === 'string')) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must be an array of ${redirecting ? 1 : 0} to 10 URLs.`);
  }
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const method = (body.token_endpoint_auth_method ?? 'client_secret_post') as string;
  if (!['client_secret_post', 'client_secret_basic', 'none'].includes(method)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method "${method}" is not supported; use none, client_secret_post or client_secret_basic.`);
  }
  const name = typeof body.client_name === 'string' && body.client_name.trim() ? body.client_name.trim().slice(0, 100) : 'MCP client';
  const clientSecret = method === 'none' ? undefined : newClientSecret();
  const app = em.create(OAuthAppSchema, {
    id: newId(),
    organizationId: null,
    name,
    description: typeof body.client_uri === 'string' && /^https?:\/\//.test(body.client_uri) ? body.client_uri.slice(0, 500) : null,
    pictureUrl: typeof body.logo_uri === 'string' && /^https:\/\//.test(body.logo_uri) ? body.logo_uri.slice(0, 1000) : null,
    redirectUris: uris as string[],
    clientId: newClientId(),
    clientSecretHash: clientSecret ? sha256(clientSecret) : null,
    tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
    dynamic: true,
    createdAt: now,
    secretRotatedAt: null,
    deletedAt: null,
  });
  await em.flush();
  return {
    client_id: app.clientId,
    ...(clientSecret ? { client_secret: clientSecret } : {}),
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_secret_expires_at: 0,
    client_name: app.name,
    redirect_uris: app.redirectUris,
    token_endpoint_auth_method: app.tokenEndpointAuthMethod,
    grant_types: grantTypes,
    response_types: redirecting ? ['code'] : [],
    scope: SCOPES.join(' '),
  };
}

/**
 * Daily clean-up: expired browser sessions, authorization and device codes past their life (kept a day so a reused code can still
 * revoke its token), refresh tokens past their life, and dynamic or metadata-document clients that never got a token within
 * 30 days.
 */
export async function pruneExpiredAccess(em: EntityManager, now: Date): Promise<void> {
  const connection = em.getConnection();
  await connection.execute('delete from web_session where expires_at < ?', [now]);
  await connection.execute('delete from oauth_code where expires_at < ?', [new Date(now.getTime() - 24 * 60 * 60 * 1000)]);
  await connection.execute('delete from invitation where expires_at < ?', [new Date(now.getTime() - 24 * 60 * 60 * 1000)]);
  await connection.execute('delete from oauth_device_code where expires_at < ?', [new Date(now.getTime() - 24 * 60 * 60 * 1000)]);
  await connection.execute('delete from oauth_refresh_token where expires_at < ?', [now]);
  await connection.execute(
    'delete from oauth_app a where (a.dynamic or a.metadata_expires_at is not null) and a.created_at < ? and not exists (select 1 from oauth_token t where t.app_id = a.id)',
    [new Date(now.getTime() - 30 * 24 * 60 * 60 * 1000)],
  );
}

// ----- Approved apps -----

export interface ApprovedApp {
  appId: string;
  name: string;
  description: string | null;
  pictureUrl: string | null;
  scopes: string[];
  approvedAt: Date;
  lastUsedAt: Date | null;
}

/** The apps holding a live grant: a token not revoked that still works, or can be renewed with a live refresh token. */
export async function approvedApps(em: EntityManager, organizationId: string, userId: string, now: Date): Promise<ApprovedApp[]> {
  const rows = await em.getConnection().execute<
    { app_id: string; name: string; description: string | null; picture_url: string | null; scopes: string[][]; approved_at: Date; last_used_at: Date | null }[]
  >(
    `select a.id as app_id, a.name, a.description, a.picture_url, array_agg(t.scopes) as scopes, min(t.created_at) as approved_at, max(t.last_used_at) as last_used_at
     from oauth_token t join oauth_app a on a.id = t.app_id
     where t.organization_id = ? and t.user_id = ? and t.revoked_at is null and a.deleted_at is null
       and (t.expires_at is null or t.expires_at > ? or exists (select 1 from oauth_refresh_token r where r.token_id = t.id and r.used_at is null and r.expires_at > ?))
     group by a.id, a.name, a.description, a.picture_url order by min(t.created_at)`,
    [organizationId, userId, now, now],
  );
  return rows.map((row) => ({
    appId: row.app_id,
    name: row.name,
    description: row.description,
    pictureUrl: row.picture_url,
    scopes: SCOPES.filter((scope) => row.scopes.flat().includes(scope)),
    approvedAt: new Date(row.approved_at),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
  }));
}

/** Revokes every token the user gave the app in this organization. Returns their ids. */
export async function revokeApproval(em: EntityManager, organizationId: string, userId: string, appId: string, now: Date): Promise<string[]> {
  const revoked = await revokeTokens(em, { appId, organizationId, userId }, now);
  if (revoked.length === 0) throw notFound('This app has no access to revoke.');
  const app = await em.findOne(OAuthAppSchema, { id: appId });
  await recordChange(em, organizationId, { action: 'app.access_revoked', target: { kind: 'oauth_app', id: appId }, did: `revoked the access of the app "${app?.name ?? appId}"`, changes: { revokedTokens: revoked.length } });
  return revoked;
}
