// The authorization-code flow: scopes, authorization requests, codes, the token exchange and `pos_` access tokens.
// Codes and tokens are random and stored only as SHA-256 hashes. The apps themselves are in oauth-apps.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlOf, statement } from '../../src/db/sql.js';
import { createHash } from 'node:crypto';
import { OrganizationSchema } from '../../src/db/entities.js';
import { OAuthAppSchema, OAuthCodeSchema, OAuthTokenSchema, type OAuthApp } from '../../src/db/account-entities.js';
import { invalidInput } from '../../src/errors.js';
import { newId, randomToken, safeEqual, sha256 } from '../../src/lib/crypto.js';
import type { Caller } from '../types.js';
import { expandScopes } from './scopes.js';
import { recordChange } from './audit.js';

export const SCOPES = ['mcp:read', 'mcp:write'] as const;
export type Scope = (typeof SCOPES)[number];
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'mcp:read': 'See your channels, posts, analytics and notifications',
  'mcp:write': 'Create, schedule, change and delete posts, and change channel settings, on your behalf',
};
const CODE_TTL_MS = 10 * 60 * 1000;

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
  await recordChange(em, organizationId, {
    action: 'app.authorized',
    target: { kind: 'oauth_app', id: request.app.id },
    did: `authorized the app "${request.app.name}" (${request.scopes.join(', ')})`,
    changes: { scopes: request.scopes },
  });
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
  const app = await authenticateClient(em, { clientId: body.client_id, clientSecret: body.client_secret });
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
  const { accessToken, tokenId } = await issueAccessToken(em, { appId: app.id, userId: code.userId, organizationId: code.organizationId, scopes: code.scopes }, now);
  await em.nativeUpdate(OAuthCodeSchema, { id: code.id }, { tokenId });
  const organization = await em.findOneOrFail(OrganizationSchema, { id: code.organizationId });
  return { id: organization.id, cus: organization.billingCustomer ?? '', access_token: accessToken, token_type: 'bearer', scope: code.scopes.join(' ') };
}

/**
 * The client of a token request (RFC 6749 §2.3.1): a public client names itself with client_id, a confidential one also
 * sends its secret (in the body or with HTTP Basic). Every endpoint that takes a client_id checks it here.
 */
export async function authenticateClient(em: EntityManager, client: { clientId: string; clientSecret?: string }): Promise<OAuthApp> {
  const app = await em.findOne(OAuthAppSchema, { clientId: client.clientId, deletedAt: null });
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
 * hash and flushed. Answers the token, shown once, and its row's id.
 */
export async function issueAccessToken(
  em: EntityManager,
  grant: { appId: string; userId: string; organizationId: string; scopes: string[] },
  now: Date,
): Promise<{ accessToken: string; tokenId: string }> {
  const accessToken = newAccessToken();
  const tokenId = newId();
  em.create(OAuthTokenSchema, {
    id: tokenId,
    appId: grant.appId,
    userId: grant.userId,
    organizationId: grant.organizationId,
    tokenHash: sha256(accessToken),
    scopes: grant.scopes,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  });
  await em.flush();
  return { accessToken, tokenId };
}

/** A live `pos_` token of a live app, as a caller; undefined otherwise. */
export async function resolveOAuthToken(em: EntityManager, raw: string, now: Date): Promise<Caller | undefined> {
  if (!raw.startsWith('pos_') || raw.length > 200) return undefined;
  const [row] = await sqlOf(em).rows<{ id: string; organization_id: string; scopes: string[]; last_used_at: string | null }>(FIND_OAUTH_TOKEN, [sha256(raw)]);
  if (!row) return undefined;
  // Recorded at most once a minute: a write on every request would cost every request a disk flush.
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > 60_000) {
    await sqlOf(em).rows(TOUCH_OAUTH_TOKEN, [row.id, now]);
  }
  return { organizationId: row.organization_id, credentialId: row.id, credentialKind: 'oauth_token', scopes: expandScopes(row.scopes) };
}

const FIND_OAUTH_TOKEN = statement(
  'oauth_token_by_hash',
  `select t.id, t.organization_id, t.scopes, t.last_used_at from oauth_token t join oauth_app a on a.id = t.app_id
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
