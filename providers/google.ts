// Google OAuth 2.0 for web server apps and Google's error bodies, shared by YouTube and Google Business Profile.
// References: https://developers.google.com/identity/protocols/oauth2/web-server (authorization request, code exchange,
// refresh; PKCE parameters as in https://developers.google.com/identity/protocols/oauth2/native-app, which Google also
// accepts from web clients that send their secret), https://developers.google.com/identity/openid-connect/openid-connect
// (userinfo), https://cloud.google.com/apis/design/errors (the `{error: {code, message, errors: [{reason}]}}` body).
import { z } from 'zod';
import { parsedBody, type PlatformFetch, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ChannelAuth, ConnectContext, ProviderContext } from './types.js';
import { permanent, storedTokens } from './shared.js';

const tokenSchema = z.object({
  access_token: z.string(),
  expires_in: z.number().optional(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
});

const apiErrorSchema = z.object({
  error: z.object({ code: z.number().optional(), message: z.string().optional(), errors: z.array(z.object({ reason: z.string().optional() })).optional() }),
});
const oauthErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

/** The reason and message of a Google error body (API or OAuth shape). */
export function googleError(body: string): { reason?: string; message?: string } {
  const api = parsedBody(apiErrorSchema, body);
  if (api) return { reason: api.error.errors?.[0]?.reason, message: api.error.message };
  const oauth = parsedBody(oauthErrorSchema, body);
  return oauth ? { reason: oauth.error, message: oauth.error_description ?? oauth.error } : {};
}

const RATE_LIMITED = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'backendError', 'internalError']);

/**
 * Google's errors: 401 → refresh; per-user rate limits (403 rateLimitExceeded) and backend errors → retryable; the rest
 * permanent with Google's own message, or the sentence `explain` gives for a reason (e.g. YouTube's quotaExceeded).
 */
export function classifyGoogle(explain: Record<string, string> = {}) {
  return (status: number, body: string): Partial<PlatformHttpErrorInit> => {
    const { reason, message } = googleError(body);
    const text = reason && explain[reason] ? explain[reason] : message ? `${message}${reason ? ` (${reason})` : ''}` : `HTTP ${status}`;
    if (status === 401) return { status: 401, retryable: false, message: text };
    if (reason && RATE_LIMITED.has(reason)) return { status: status === 403 ? 429 : status, retryable: true, message: text };
    return { retryable: status === 429 || status >= 500, message: text };
  };
}

export interface GoogleTokens {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: Date;
}

/** Trades the code (with its PKCE verifier) for tokens; refuses a consent that left out one of `requiredScopes`. */
export async function exchangeGoogleCode(
  context: ConnectContext,
  options: { code: string; codeVerifier: string; redirectUri: string; clientId: string; clientSecret?: string },
  requiredScopes: string[],
): Promise<GoogleTokens> {
  const { data } = await context.fetch({
    method: 'POST',
    url: `${context.endpoints.token}/token`,
    form: {
      grant_type: 'authorization_code',
      code: options.code,
      code_verifier: options.codeVerifier,
      redirect_uri: options.redirectUri,
      client_id: options.clientId,
      client_secret: options.clientSecret,
    },
    schema: tokenSchema,
    classify: classifyGoogle(),
  });
  // Google's consent screen lets the user untick permissions: without them every later call fails, so say it now.
  const granted = new Set((data.scope ?? '').split(' '));
  const missing = requiredScopes.filter((scope) => !granted.has(scope));
  if (data.scope !== undefined && missing.length > 0) {
    throw permanent(`the permission${missing.length > 1 ? 's' : ''} ${missing.map((scope) => scope.split('/').pop()).join(', ')} ${missing.length > 1 ? 'were' : 'was'} not granted; connect again and allow every permission asked`, 403);
  }
  return storedTokens(data);
}

/** A new access token from the stored refresh token (Google keeps the refresh token; it answers a new one only rarely). */
export async function refreshGoogleToken(context: ProviderContext): Promise<Partial<ChannelAuth>> {
  if (!context.auth.refreshToken) {
    throw permanent('the channel has no refresh token: reconnect it', 401);
  }
  if (!context.client) throw new Error('No Google OAuth app is configured on this Herald to refresh the token with.');
  const { data } = await context.fetch({
    method: 'POST',
    url: `${context.endpoints.token}/token`,
    form: {
      grant_type: 'refresh_token',
      refresh_token: context.auth.refreshToken,
      client_id: context.client.clientId,
      client_secret: context.client.clientSecret,
    },
    schema: tokenSchema,
    classify: classifyGoogle(),
  });
  return storedTokens(data);
}

const userInfoSchema = z.object({ sub: z.string(), name: z.string().optional(), picture: z.string().optional(), email: z.string().optional() });

/** The Google account behind a token (OpenID Connect userinfo; name and picture need the userinfo.profile scope). */
export async function googleUserInfo(context: { fetch: PlatformFetch; endpoints: Record<string, string> }, accessToken: string) {
  const { data } = await context.fetch({
    url: `${context.endpoints.api}/oauth2/v3/userinfo`,
    headers: { authorization: `Bearer ${accessToken}` },
    schema: userInfoSchema,
    classify: classifyGoogle(),
  });
  return data;
}
