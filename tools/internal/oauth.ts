// Third-party OAuth apps (registered in the console, or dynamically by MCP clients per RFC 7591), authorization codes and
// `pos_` access tokens. Client secrets, codes and tokens are random and stored only as SHA-256 hashes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash } from 'node:crypto';
import { OrganizationSchema } from '../../src/db/entities.js';
import { OAuthAppSchema, OAuthCodeSchema, OAuthTokenSchema, type OAuthApp, type TokenEndpointAuthMethod } from '../../src/db/account-entities.js';
import { invalidInput, notFound } from '../../src/errors.js';
import { newId, randomToken, safeEqual, sha256 } from '../../src/lib/crypto.js';
import type { Caller } from '../types.js';

export const SCOPES = ['mcp:read', 'mcp:write'] as const;
export type Scope = (typeof SCOPES)[number];
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'mcp:read': 'See your channels, posts, analytics and notifications',
  'mcp:write': 'Create, schedule, change and delete posts, and change channel settings, on your behalf',
};
const CODE_TTL_MS = 10 * 60 * 1000;

const token = (prefix: string, characters: number) => `${prefix}${randomToken(Math.ceil((characters * 3) / 4)).slice(0, characters)}`;
export const newClientId = () => token('pca_', 32);
const newClientSecret = () => token('pcs_', 48);
const newAccessToken = () => token('pos_', 40);

/** RFC 6749 error answered as `{error, error_description}` by the token and registration endpoints. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

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
  return { app, clientSecret };
}

/** Soft-deletes the app, revokes all its tokens and unused codes. Returns the revoked token ids (to end their MCP sessions). */
export async function deleteApp(em: EntityManager, organizationId: string, appId: string, now: Date): Promise<string[]> {
  const app = await ownApp(em, organizationId, appId);
  app.deletedAt = now;
  const revoked = await revokeTokens(em, { appId: app.id }, now);
  await em.nativeDelete(OAuthCodeSchema, { appId: app.id, usedAt: null });
  await em.flush();
  return revoked;
}

async function revokeTokens(em: EntityManager, where: { appId: string; organizationId?: string; userId?: string }, now: Date): Promise<string[]> {
  const live = await em.find(OAuthTokenSchema, { ...where, revokedAt: null });
  for (const item of live) item.revokedAt = now;
  await em.flush();
  return live.map((item) => item.id);
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

export async function registerDynamicClient(em: EntityManager, metadata: unknown, now: Date): Promise<RegistrationResponse> {
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata.');
  const body = metadata as Record<string, unknown>;
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((uri) => typeof uri === 'string')) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be an array of 1 to 10 URLs.');
  }
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const method = (body.token_endpoint_auth_method ?? 'client_secret_post') as string;
  if (!['client_secret_post', 'client_secret_basic', 'none'].includes(method)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method "${method}" is not supported; use none, client_secret_post or client_secret_basic.`);
  }
  const grantTypes = body.grant_types;
  if (grantTypes !== undefined && (!Array.isArray(grantTypes) || !grantTypes.includes('authorization_code'))) {
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code (the only grant of this server).');
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
    grant_types: ['authorization_code'],
    response_types: ['code'],
    scope: SCOPES.join(' '),
  };
}

/**
 * Daily clean-up: expired browser sessions, authorization codes past their life (kept a day so a reused code can still
 * revoke its token), and dynamic clients that never got a token within 30 days.
 */
export async function pruneExpiredAccess(em: EntityManager, now: Date): Promise<void> {
  const connection = em.getConnection();
  await connection.execute('delete from web_session where expires_at < ?', [now]);
  await connection.execute('delete from oauth_code where expires_at < ?', [new Date(now.getTime() - 24 * 60 * 60 * 1000)]);
  await connection.execute('delete from invitation where expires_at < ?', [new Date(now.getTime() - 24 * 60 * 60 * 1000)]);
  await connection.execute(
    'delete from oauth_app a where a.dynamic and a.created_at < ? and not exists (select 1 from oauth_token t where t.app_id = a.id)',
    [new Date(now.getTime() - 30 * 24 * 60 * 60 * 1000)],
  );
}

// ----- Authorization request -----

export interface AuthorizationParams {
  client_id?: string;
  response_type?: string;
  redirect_uri?: string;
  state?: string;
  scope?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

export interface AuthorizationRequest {
  app: OAuthApp;
  redirectUri: string;
  redirectUriGiven: boolean;
  state?: string;
  scopes: Scope[];
  codeChallenge?: string;
}

/** Validates an authorization request. Every problem is shown to the user; nothing here redirects to an unverified URL. */
export async function checkAuthorizationRequest(em: EntityManager, params: AuthorizationParams): Promise<AuthorizationRequest> {
  const clientId = params.client_id?.trim();
  if (!clientId) throw invalidInput('The link is missing client_id.', { hint: 'The app that sent you here must name itself with client_id.' });
  const app = await em.findOne(OAuthAppSchema, { clientId, deletedAt: null });
  if (!app) throw invalidInput('Invalid client_id: no app is registered with this id.', { hint: 'The app may have been deleted. Contact its developer.' });
  if (params.response_type !== 'code') {
    throw invalidInput(`response_type must be "code"${params.response_type ? `, not "${params.response_type}"` : ''}.`, { hint: 'Only the authorization-code flow is supported.' });
  }
  let redirectUri: string;
  if (params.redirect_uri) {
    if (!app.redirectUris.includes(params.redirect_uri)) {
      throw invalidInput('redirect_uri does not match a Redirect URL registered for this app.', { hint: 'Redirect URLs must match exactly, character for character.' });
    }
    redirectUri = params.redirect_uri;
  } else if (app.redirectUris.length === 1) {
    redirectUri = app.redirectUris[0];
  } else {
    throw invalidInput('redirect_uri is required: this app registered several.');
  }
  if (params.code_challenge_method && params.code_challenge_method !== 'S256') throw invalidInput('Only the S256 code_challenge_method is supported.');
  if (params.code_challenge && !/^[A-Za-z0-9._~-]{43,128}$/.test(params.code_challenge)) throw invalidInput('code_challenge must be 43 to 128 characters of base64url.');
  if (params.code_challenge && !params.code_challenge_method) throw invalidInput('code_challenge_method=S256 must accompany code_challenge.');
  if (app.tokenEndpointAuthMethod === 'none' && !params.code_challenge) {
    throw invalidInput('This app must use PKCE: code_challenge and code_challenge_method=S256 are required.');
  }
  let scopes: Scope[] = [...SCOPES];
  if (params.scope?.trim()) {
    const requested = params.scope.trim().split(/\s+/);
    scopes = SCOPES.filter((scope) => requested.includes(scope));
    if (scopes.length === 0) throw invalidInput(`None of the requested scopes (${requested.join(', ')}) exists here; use mcp:read and/or mcp:write.`);
  }
  if (params.state !== undefined && params.state.length > 1000) throw invalidInput('state is too long (at most 1000 characters).');
  return { app, redirectUri, redirectUriGiven: Boolean(params.redirect_uri), state: params.state, scopes, codeChallenge: params.code_challenge };
}

function withQuery(uri: string, query: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

export async function approve(em: EntityManager, request: AuthorizationRequest, userId: string, organizationId: string, now: Date): Promise<string> {
  const code = randomToken(24);
  em.create(OAuthCodeSchema, {
    id: newId(),
    codeHash: sha256(code),
    appId: request.app.id,
    userId,
    organizationId,
    scopes: request.scopes,
    redirectUri: request.redirectUri,
    redirectUriGiven: request.redirectUriGiven,
    codeChallenge: request.codeChallenge ?? null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CODE_TTL_MS),
    usedAt: null,
    tokenId: null,
  });
  await em.flush();
  return withQuery(request.redirectUri, { code, state: request.state });
}

export const denialUrl = (request: AuthorizationRequest) => withQuery(request.redirectUri, { error: 'access_denied', state: request.state });

// ----- Token endpoint -----

export interface TokenRequest {
  grant_type?: string;
  code?: string;
  client_id?: string;
  client_secret?: string;
  code_verifier?: string;
  redirect_uri?: string;
}

export interface TokenResponse {
  id: string;
  cus: string;
  access_token: string;
  token_type: 'bearer';
  scope: string;
}

const asString = (value: unknown) => (typeof value === 'string' ? value : undefined);

export async function exchangeCode(em: EntityManager, raw: Record<string, unknown>, now: Date): Promise<TokenResponse> {
  const body: TokenRequest = {
    grant_type: asString(raw.grant_type),
    code: asString(raw.code),
    client_id: asString(raw.client_id),
    client_secret: asString(raw.client_secret),
    code_verifier: asString(raw.code_verifier),
    redirect_uri: asString(raw.redirect_uri),
  };
  if (!body.grant_type) throw new OAuthError('invalid_request', 'grant_type is required (authorization_code).');
  if (body.grant_type !== 'authorization_code') throw new OAuthError('unsupported_grant_type', `grant_type "${body.grant_type}" is not supported; use authorization_code.`);
  if (!body.client_id) throw new OAuthError('invalid_request', 'client_id is required.');
  if (!body.code) throw new OAuthError('invalid_request', 'code is required.');
  const app = await em.findOne(OAuthAppSchema, { clientId: body.client_id, deletedAt: null });
  if (!app) throw new OAuthError('invalid_client', 'Client authentication failed: unknown client_id.', 401);
  if (app.tokenEndpointAuthMethod !== 'none') {
    if (!body.client_secret || !app.clientSecretHash || !safeEqual(sha256(body.client_secret), app.clientSecretHash)) {
      throw new OAuthError('invalid_client', 'Client authentication failed: client_secret is missing or wrong.', 401);
    }
  }
  const code = await em.findOne(OAuthCodeSchema, { codeHash: sha256(body.code) });
  if (!code || code.appId !== app.id) throw new OAuthError('invalid_grant', 'The code is invalid or was issued to another client.');
  if (code.usedAt) {
    // RFC 6749 §4.1.2: a code used twice may have leaked; the token it gave is revoked.
    if (code.tokenId) await em.nativeUpdate(OAuthTokenSchema, { id: code.tokenId, revokedAt: null }, { revokedAt: now });
    throw new OAuthError('invalid_grant', 'The code was already used.');
  }
  if (code.expiresAt <= now) throw new OAuthError('invalid_grant', 'Code has expired');
  if (code.codeChallenge) {
    if (!body.code_verifier) throw new OAuthError('invalid_grant', 'code_verifier is required');
    const challenge = createHash('sha256').update(body.code_verifier).digest('base64url');
    if (!safeEqual(challenge, code.codeChallenge)) throw new OAuthError('invalid_grant', 'Invalid code_verifier');
  }
  if (code.redirectUriGiven && body.redirect_uri !== code.redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
  }
  // Single use even under concurrent exchanges: only one update finds the code unused.
  const claimed = await em.nativeUpdate(OAuthCodeSchema, { id: code.id, usedAt: null }, { usedAt: now });
  if (claimed !== 1) throw new OAuthError('invalid_grant', 'The code was already used.');
  const accessToken = newAccessToken();
  const tokenId = newId();
  em.create(OAuthTokenSchema, {
    id: tokenId,
    appId: app.id,
    userId: code.userId,
    organizationId: code.organizationId,
    tokenHash: sha256(accessToken),
    scopes: code.scopes,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  });
  await em.flush();
  await em.nativeUpdate(OAuthCodeSchema, { id: code.id }, { tokenId });
  const organization = await em.findOneOrFail(OrganizationSchema, { id: code.organizationId });
  return { id: organization.id, cus: organization.billingCustomer ?? '', access_token: accessToken, token_type: 'bearer', scope: code.scopes.join(' ') };
}

/** A live `pos_` token of a live app, as a caller; undefined otherwise. */
export async function resolveOAuthToken(em: EntityManager, raw: string, now: Date): Promise<Caller | undefined> {
  if (!raw.startsWith('pos_') || raw.length > 200) return undefined;
  const rows = await em.getConnection().execute<{ id: string; organization_id: string; scopes: string[]; last_used_at: Date | null }[]>(
    `select t.id, t.organization_id, t.scopes, t.last_used_at from oauth_token t join oauth_app a on a.id = t.app_id
     where t.token_hash = ? and t.revoked_at is null and a.deleted_at is null`,
    [sha256(raw)],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > 60_000) {
    await em.nativeUpdate(OAuthTokenSchema, { id: row.id }, { lastUsedAt: now });
  }
  return { organizationId: row.organization_id, credentialId: row.id, credentialKind: 'oauth_token', scopes: row.scopes };
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

export async function approvedApps(em: EntityManager, organizationId: string, userId: string): Promise<ApprovedApp[]> {
  const rows = await em.getConnection().execute<
    { app_id: string; name: string; description: string | null; picture_url: string | null; scopes: string[][]; approved_at: Date; last_used_at: Date | null }[]
  >(
    `select a.id as app_id, a.name, a.description, a.picture_url, array_agg(t.scopes) as scopes, min(t.created_at) as approved_at, max(t.last_used_at) as last_used_at
     from oauth_token t join oauth_app a on a.id = t.app_id
     where t.organization_id = ? and t.user_id = ? and t.revoked_at is null and a.deleted_at is null
     group by a.id, a.name, a.description, a.picture_url order by min(t.created_at)`,
    [organizationId, userId],
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
  return revoked;
}
