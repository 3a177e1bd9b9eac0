// The authorization-code flow: scopes, authorization requests, codes, the token endpoint's grants and `pos_` access tokens.
// Codes and tokens are random and stored only as SHA-256 hashes. The apps themselves are in oauth-apps.ts, clients known by
// their metadata document (CIMD) in client-metadata.ts.
//
// Two kinds of token come out of a code. A client of the spec's app flow (an app registered in the console, asking for no
// `resource`) gets the spec's answer: `{id, cus, access_token, token_type, scope}`, a token that lasts until revoked. Every
// other client (registered dynamically or by its metadata document, or naming a `resource`) gets an OAuth 2.1 answer: an
// access token of an hour (`expires_in`) bound to the resource it asked for (RFC 8707), and a rotating refresh token.
// Over 400 lines on purpose: the resources, the codes and the three grants read and write the same token rows and answer
// with the same OAuthError; split apart, each part would import the others.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlOf, statement } from '../../src/db/sql.js';
import { createHash } from 'node:crypto';
import { OrganizationSchema } from '../../src/db/entities.js';
import { OAuthCodeSchema, OAuthRefreshTokenSchema, OAuthTokenSchema, type OAuthApp } from '../../src/db/account-entities.js';
import { invalidInput } from '../../src/errors.js';
import { newId, randomToken, safeEqual, sha256 } from '../../src/lib/crypto.js';
import type { Caller, Services } from '../types.js';
import { expandScopes, type ApiScope } from './scopes.js';
import { recordChange } from './audit.js';
import { appOfClientId, findApp } from './client-metadata.js';

export const SCOPES = ['mcp:read', 'mcp:write'] as const;
export type Scope = (typeof SCOPES)[number];
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'mcp:read': 'See your channels, posts, analytics and notifications',
  'mcp:write': 'Create, schedule, change and delete posts, and change channel settings, on your behalf',
};
const CODE_TTL_MS = 10 * 60 * 1000;
export const ACCESS_TOKEN_SECONDS = 60 * 60;
/** A refresh token lasts 90 days; each use gives a new one, so a client in use stays connected. */
const REFRESH_TOKEN_MS = 90 * 24 * 60 * 60 * 1000;

/** The OAuth scope that grants a named scope, when an app may be granted it (approving and managing the organization are not). */
export function oauthScopeFor(scope: ApiScope): Scope | undefined {
  if (scope === 'read') return 'mcp:read';
  if (scope === 'posts:write' || scope === 'channels:manage') return 'mcp:write';
  return undefined;
}

// ----- Resources (RFC 8707) -----

/** What a token may be used on: the MCP endpoints or the REST API. */
export type Audience = 'mcp' | 'rest';
/** Herald's resources: each MCP URL that takes a bearer token and the REST base, under /api and at the root. */
const RESOURCE_PATHS: Record<string, Audience> = { '/api/mcp': 'mcp', '/mcp': 'mcp', '/api/mcp-oauth': 'mcp', '/mcp-oauth': 'mcp', '/api/public/v1': 'rest', '/public/v1': 'rest' };

const withoutTrailingSlash = (value: string) => value.replace(/\/+$/, '');

/**
 * A `resource` parameter (absent, or one absolute URL without fragment naming one of Herald's resources) in canonical form;
 * anything else is `invalid_target` (RFC 8707 §2).
 */
export function requestedResource(value: unknown, publicUrl: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  const known = Object.keys(RESOURCE_PATHS).map((path) => `${publicUrl}${path}`);
  const usage = `use the URL the client connects to, e.g. ${publicUrl}/api/mcp (MCP) or ${publicUrl}/api/public/v1 (REST)`;
  if (typeof value !== 'string') throw new OAuthError('invalid_target', `Send one resource per request; ${usage}.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('invalid_target', `resource must be an absolute URL; ${usage}.`);
  }
  const canonical = withoutTrailingSlash(url.href);
  if (url.hash || url.search || !known.includes(canonical)) throw new OAuthError('invalid_target', `The resource "${value.slice(0, 200)}" is not one of this server's; ${usage}.`);
  return canonical;
}

/** The audience of a stored resource (null: any). */
function audienceOf(resource: string): Audience | undefined {
  const path = withoutTrailingSlash(new URL(resource).pathname);
  return Object.entries(RESOURCE_PATHS).find(([suffix]) => path.endsWith(suffix))?.[1];
}

const token = (prefix: string, characters: number) => `${prefix}${randomToken(Math.ceil((characters * 3) / 4)).slice(0, characters)}`;
export const newClientId = () => token('pca_', 32);
export const newClientSecret = () => token('pcs_', 48);
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

// ----- Authorization request -----

export interface AuthorizationParams {
  client_id?: string;
  response_type?: string;
  redirect_uri?: string;
  state?: string;
  scope?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
}

export interface AuthorizationRequest {
  app: OAuthApp;
  redirectUri: string;
  redirectUriGiven: boolean;
  state?: string;
  scopes: Scope[];
  codeChallenge?: string;
  /** The resource the token will be bound to (RFC 8707), canonical. */
  resource?: string;
  /** This server's issuer, sent back as `iss` with every answer (RFC 9207); tests that call this directly may leave it out. */
  issuer?: string;
}

/**
 * Validates an authorization request. Every problem is shown to the user; nothing here redirects to an unverified URL. A
 * client_id that is an https URL is a client known by its metadata document, fetched (or read from the cache) here.
 */
export async function checkAuthorizationRequest(em: EntityManager, params: AuthorizationParams, services?: Services): Promise<AuthorizationRequest> {
  const clientId = params.client_id?.trim();
  if (!clientId) throw invalidInput('The link is missing client_id.', { hint: 'The app that sent you here must name itself with client_id.' });
  const app = await appOfClientId(em, clientId, services);
  if (params.response_type !== 'code') {
    throw invalidInput(`response_type must be "code"${params.response_type ? `, not "${params.response_type}"` : ''}.`, { hint: 'Only the authorization-code flow is supported.' });
  }
  let redirectUri: string;
  if (app.redirectUris.length === 0) {
    throw invalidInput('This app registered no Redirect URL, so it cannot be approved on this page.', { hint: 'It logs in with a device code: enter the code it shows on the Device login page.' });
  } else if (params.redirect_uri) {
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
  let resource: string | undefined;
  try {
    resource = requestedResource(params.resource, services?.config.publicUrl ?? '');
  } catch (error) {
    throw invalidInput((error as OAuthError).description, { hint: 'The app asked for access to another server than this Herald. Contact its developer.' });
  }
  return { app, redirectUri, redirectUriGiven: Boolean(params.redirect_uri), state: params.state, scopes, codeChallenge: params.code_challenge, resource, issuer: services?.config.publicUrl };
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
    resource: request.resource ?? null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CODE_TTL_MS),
    usedAt: null,
    tokenId: null,
  });
  await em.flush();
  await recordChange(em, organizationId, {
    action: 'app.authorized',
    target: { kind: 'oauth_app', id: request.app.id },
    did: `authorized the app "${request.app.name}" (${request.scopes.join(', ')})`,
    changes: { scopes: request.scopes },
  });
  return withQuery(request.redirectUri, { code, state: request.state, iss: request.issuer });
}

export const denialUrl = (request: AuthorizationRequest) => withQuery(request.redirectUri, { error: 'access_denied', state: request.state, iss: request.issuer });

// ----- Token endpoint -----

/** The spec's answer to its app flow (long-lived token; the organization and its billing customer). */
export interface SpecTokenResponse {
  id: string;
  cus: string;
  access_token: string;
  token_type: 'bearer';
  scope: string;
}

/** The OAuth 2.1 answer (RFC 6749 §5.1): nothing but standard fields. */
export interface StandardTokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export type TokenResponse = SpecTokenResponse | StandardTokenResponse;

const asString = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The authorization_code and refresh_token grants (the device grant is device.ts's). */
export async function tokenGrant(em: EntityManager, raw: Record<string, unknown>, now: Date, publicUrl: string): Promise<TokenResponse> {
  const grantType = asString(raw.grant_type);
  if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required (authorization_code or refresh_token).');
  if (grantType === 'refresh_token') return refreshGrant(em, raw, now, publicUrl);
  if (grantType !== 'authorization_code') throw new OAuthError('unsupported_grant_type', `grant_type "${grantType}" is not supported; use authorization_code or refresh_token.`);
  return exchangeCode(em, raw, now, publicUrl);
}

/** The authorization_code grant. `publicUrl` (this server's) checks a `resource`; without it, none is accepted. */
export async function exchangeCode(em: EntityManager, raw: Record<string, unknown>, now: Date, publicUrl = ''): Promise<TokenResponse> {
  const clientId = asString(raw.client_id);
  const given = asString(raw.code);
  const verifier = asString(raw.code_verifier);
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required.');
  if (!given) throw new OAuthError('invalid_request', 'code is required.');
  const app = await authenticateClient(em, { clientId, clientSecret: asString(raw.client_secret) });
  const code = await em.findOne(OAuthCodeSchema, { codeHash: sha256(given) });
  if (!code || code.appId !== app.id) throw new OAuthError('invalid_grant', 'The code is invalid or was issued to another client.');
  if (code.usedAt) {
    // RFC 6749 §4.1.2: a code used twice may have leaked; the token it gave is revoked.
    if (code.tokenId) await em.nativeUpdate(OAuthTokenSchema, { id: code.tokenId, revokedAt: null }, { revokedAt: now });
    throw new OAuthError('invalid_grant', 'The code was already used.');
  }
  if (code.expiresAt <= now) throw new OAuthError('invalid_grant', 'Code has expired');
  if (code.codeChallenge) {
    if (!verifier) throw new OAuthError('invalid_grant', 'code_verifier is required');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (!safeEqual(challenge, code.codeChallenge)) throw new OAuthError('invalid_grant', 'Invalid code_verifier');
  }
  if (code.redirectUriGiven && asString(raw.redirect_uri) !== code.redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
  }
  const requested = requestedResource(raw.resource, publicUrl);
  if (requested && code.resource && requested !== code.resource) {
    throw new OAuthError('invalid_target', `resource must be the one of the authorization request (${code.resource}).`);
  }
  const resource = code.resource ?? requested ?? null;
  // Single use even under concurrent exchanges: only one update finds the code unused.
  const claimed = await em.nativeUpdate(OAuthCodeSchema, { id: code.id, usedAt: null }, { usedAt: now });
  if (claimed !== 1) throw new OAuthError('invalid_grant', 'The code was already used.');
  const grant = { appId: app.id, userId: code.userId, organizationId: code.organizationId, scopes: code.scopes };
  const scope = code.scopes.join(' ');
  if (!app.dynamic && app.metadataExpiresAt === null && resource === null) {
    const { accessToken, tokenId } = await issueAccessToken(em, grant, now);
    await em.nativeUpdate(OAuthCodeSchema, { id: code.id }, { tokenId });
    const organization = await em.findOneOrFail(OrganizationSchema, { id: code.organizationId });
    return { id: organization.id, cus: organization.billingCustomer ?? '', access_token: accessToken, token_type: 'bearer', scope };
  }
  const { accessToken, tokenId, refreshToken } = await issueAccessToken(em, grant, now, { resource });
  await em.nativeUpdate(OAuthCodeSchema, { id: code.id }, { tokenId });
  return { access_token: accessToken, token_type: 'bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refreshToken!, scope };
}

/**
 * A refresh token for a new access token and a new refresh token (RFC 6749 §6, rotated as OAuth 2.1 asks of public clients).
 * The grant keeps its row (its id is the credential MCP sessions and the audit trail know), so the previous access token
 * stops at once. A refresh token presented a second time was stolen or replayed: the whole grant is revoked.
 */
async function refreshGrant(em: EntityManager, raw: Record<string, unknown>, now: Date, publicUrl: string): Promise<StandardTokenResponse> {
  const clientId = asString(raw.client_id);
  const presented = asString(raw.refresh_token);
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required.');
  if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required.');
  const app = await authenticateClient(em, { clientId, clientSecret: asString(raw.client_secret) });
  const stored = await em.findOne(OAuthRefreshTokenSchema, { tokenHash: sha256(presented) });
  const grant = stored && (await em.findOne(OAuthTokenSchema, { id: stored.tokenId }));
  if (!stored || !grant || grant.appId !== app.id) throw new OAuthError('invalid_grant', 'The refresh token is invalid or was issued to another client.');
  const revokeGrant = () => em.nativeUpdate(OAuthTokenSchema, { id: grant.id, revokedAt: null }, { revokedAt: now });
  const reused = new OAuthError('invalid_grant', 'The refresh token was already used, so it may have leaked: every token of this grant is revoked. Authorize again.');
  if (stored.usedAt) {
    await revokeGrant();
    throw reused;
  }
  if (grant.revokedAt) throw new OAuthError('invalid_grant', 'This access was revoked. Authorize again.');
  if (stored.expiresAt <= now) throw new OAuthError('invalid_grant', 'The refresh token expired. Authorize again.');
  const requested = requestedResource(raw.resource, publicUrl);
  if (requested && requested !== grant.resource) {
    throw new OAuthError('invalid_target', grant.resource ? `resource must be the one this grant is for (${grant.resource}).` : 'This grant is not bound to a resource: send none.');
  }
  let scopes = grant.scopes;
  const scope = asString(raw.scope)?.trim();
  if (scope) {
    const asked = scope.split(/\s+/);
    if (asked.some((item) => !grant.scopes.includes(item))) throw new OAuthError('invalid_scope', `A refresh may only keep or narrow the granted scopes (${grant.scopes.join(' ')}).`);
    scopes = asked;
  }
  // One exchange per refresh token, even when two arrive together: the second is a reuse.
  const claimed = await em.nativeUpdate(OAuthRefreshTokenSchema, { tokenHash: stored.tokenHash, usedAt: null }, { usedAt: now });
  if (claimed !== 1) {
    await revokeGrant();
    throw reused;
  }
  const accessToken = newAccessToken();
  const refreshToken = newRefreshToken(em, grant.id, now);
  await em.nativeUpdate(OAuthTokenSchema, { id: grant.id }, { tokenHash: sha256(accessToken), expiresAt: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000), scopes });
  await em.flush();
  return { access_token: accessToken, token_type: 'bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refreshToken, scope: scopes.join(' ') };
}

function newRefreshToken(em: EntityManager, tokenId: string, now: Date): string {
  const refreshToken = `por_${randomToken(36)}`;
  em.create(OAuthRefreshTokenSchema, { tokenHash: sha256(refreshToken), tokenId, createdAt: now, expiresAt: new Date(now.getTime() + REFRESH_TOKEN_MS), usedAt: null });
  return refreshToken;
}

/**
 * The client of a token request (RFC 6749 §2.3.1): a public client names itself with client_id, a confidential one also
 * sends its secret (in the body or with HTTP Basic). Every endpoint that takes a client_id checks it here.
 */
export async function authenticateClient(em: EntityManager, client: { clientId: string; clientSecret?: string }): Promise<OAuthApp> {
  const app = await findApp(em, client.clientId);
  if (!app) throw new OAuthError('invalid_client', 'Client authentication failed: unknown client_id.', 401);
  if (app.tokenEndpointAuthMethod !== 'none') {
    if (!client.clientSecret || !app.clientSecretHash || !safeEqual(sha256(client.clientSecret), app.clientSecretHash)) {
      throw new OAuthError('invalid_client', 'Client authentication failed: client_secret is missing or wrong.', 401);
    }
  }
  return app;
}

/**
 * A new `pos_` access token of an app for a user of an organization (the code exchange, the device grant), stored as its
 * hash and flushed. Answers the token, shown once, and its row's id. With `resource` (null: unbound) it is an OAuth 2.1
 * token: it expires after an hour and comes with a refresh token; without, it lasts until revoked.
 */
export async function issueAccessToken(
  em: EntityManager,
  grant: { appId: string; userId: string; organizationId: string; scopes: string[] },
  now: Date,
  expiring?: { resource: string | null },
): Promise<{ accessToken: string; tokenId: string; refreshToken?: string }> {
  const accessToken = newAccessToken();
  const tokenId = newId();
  em.create(OAuthTokenSchema, {
    id: tokenId,
    appId: grant.appId,
    userId: grant.userId,
    organizationId: grant.organizationId,
    tokenHash: sha256(accessToken),
    scopes: grant.scopes,
    expiresAt: expiring ? new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000) : null,
    resource: expiring?.resource ?? null,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  });
  await em.flush();
  // After the token's row: the refresh token's references it.
  const refreshToken = expiring ? newRefreshToken(em, tokenId, now) : undefined;
  if (refreshToken) await em.flush();
  return { accessToken, tokenId, refreshToken };
}

/** A live `pos_` token of a live app, as a caller, when it is for `audience` (or for any); undefined otherwise. */
export async function resolveOAuthToken(em: EntityManager, raw: string, now: Date, audience: Audience): Promise<Caller | undefined> {
  if (!raw.startsWith('pos_') || raw.length > 200) return undefined;
  const [row] = await sqlOf(em).rows<{ id: string; organization_id: string; scopes: string[]; last_used_at: string | null; expires_at: Date | null; resource: string | null }>(FIND_OAUTH_TOKEN, [
    sha256(raw),
  ]);
  if (!row) return undefined;
  if (row.expires_at && new Date(row.expires_at) <= now) return undefined;
  // RFC 8707: a token asked for one resource is refused by the others (a token for MCP is not a REST key).
  if (row.resource && audienceOf(row.resource) !== audience) return undefined;
  // Recorded at most once a minute: a write on every request would cost every request a disk flush.
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > 60_000) {
    await sqlOf(em).rows(TOUCH_OAUTH_TOKEN, [row.id, now]);
  }
  return { organizationId: row.organization_id, credentialId: row.id, credentialKind: 'oauth_token', scopes: expandScopes(row.scopes) };
}

const FIND_OAUTH_TOKEN = statement(
  'oauth_token_by_hash',
  `select t.id, t.organization_id, t.scopes, t.last_used_at, t.expires_at, t.resource from oauth_token t join oauth_app a on a.id = t.app_id
   where t.token_hash = $1 and t.revoked_at is null and a.deleted_at is null`,
);
const TOUCH_OAUTH_TOKEN = statement('oauth_token_touch', 'update oauth_token set last_used_at = $2 where id = $1');

/** Revokes the live tokens matching `where`; returns their ids (to end their MCP sessions). */
export async function revokeTokens(em: EntityManager, where: { appId: string; organizationId?: string; userId?: string }, now: Date): Promise<string[]> {
  const live = await em.find(OAuthTokenSchema, { ...where, revokedAt: null });
  for (const item of live) item.revokedAt = now;
  await em.flush();
  return live.map((item) => item.id);
}
