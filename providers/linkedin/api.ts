// LinkedIn plumbing shared by the personal profile and the company page: versioned Rest.li calls, LinkedIn's error body
// mapped to retry / refresh / permanent, OAuth tokens, profiles and the "little text" format of post commentary.
// References:
//   https://learn.microsoft.com/linkedin/shared/authentication/authorization-code-flow (code, token, refresh_token grant)
//   https://learn.microsoft.com/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2 (GET /v2/userinfo)
//   https://learn.microsoft.com/linkedin/shared/integrations/people/profile-api (GET /v2/me, r_basicprofile)
//   https://learn.microsoft.com/linkedin/marketing/versioning (LinkedIn-Version, X-Restli-Protocol-Version)
//   https://learn.microsoft.com/linkedin/shared/api-guide/concepts/error-handling ({status, serviceErrorCode, code, message})
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/little-text-format
import { z } from 'zod';
import { parsedBody, type PlatformHttpErrorInit, type PlatformRequest, type PlatformResponse } from '../../src/lib/platform-http.js';
import type { ConnectContext, ConnectedAccount, Provider, ProviderContext } from '../types.js';
import { oauth2AuthorizeUrl, permanent } from '../shared.js';

export const linkedinEndpoints = {
  oauth: 'https://www.linkedin.com',
  api: 'https://api.linkedin.com',
  web: 'https://www.linkedin.com',
  // Monthly versions are supported for at least a year after release: 202608 (August 2026) until about August 2027.
  linkedinVersion: '202608',
};

/** What the calls need of a context: connecting has a token but no channel yet. */
export type LinkedinContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: Pick<ProviderContext['auth'], 'accessToken'> };

const errorBodySchema = z.object({
  status: z.number().optional(),
  serviceErrorCode: z.number().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});

function errorBody(body: string): z.infer<typeof errorBodySchema> {
  return parsedBody(errorBodySchema, body) ?? {};
}

/** LinkedIn's error body turned into a sentence a user can act on, and the right class (retry, refresh, permanent). */
export function classify(status: number, body: string): Partial<PlatformHttpErrorInit> | undefined {
  const { code, message, error, error_description: description } = errorBody(body);
  // The OAuth endpoints answer RFC 6749 bodies: the code is refused, the client unknown, the refresh token dead.
  if (error) return { retryable: status >= 500, message: `${description ?? error} (${error})` };
  const said = message ?? '';
  if (status === 401) return { status: 401, retryable: false, message: `the access token was refused (${said || 'expired or revoked'}).` };
  if (status === 429) return { retryable: true, message: `LinkedIn's rate limit was reached${said ? ` (${said})` : ''}; the post will be retried.` };
  if (code === 'DUPLICATE_POST' || /duplicate/i.test(said)) {
    return {
      retryable: false,
      message: `this text was already posted on this account recently (LinkedIn: "${said}"). Change the text, or check the account: the post may already be there.`,
    };
  }
  if (status === 426) {
    return { retryable: false, message: `LinkedIn no longer serves this API version (${said}): set SOCIAL_ENDPOINTS {"linkedin":{"linkedinVersion":"YYYYMM"}} to a current version.` };
  }
  if (status === 403) {
    return { retryable: false, message: `LinkedIn denied access${said ? ` (${said})` : ''}: the member may lack the permission or the page role; reconnect the channel with an administrator of the page.` };
  }
  if (status >= 500) return { message: `LinkedIn is unavailable (${status}${said ? `: ${said}` : ''}).` };
  return said ? { message: code ? `${said} (${code})` : said } : undefined;
}

const encode = encodeURIComponent;

/** A URN as a Rest.li 2.0 path key or query value: URL-encoded. */
export const urnParam = (urn: string) => encode(urn);

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

type RestRequest<T> = Omit<PlatformRequest<T>, 'url' | 'classify'> & { path: string };

/**
 * A call to the versioned API (`/rest/<path>`). `path` carries its own query string so that Rest.li structures
 * (`List(...)`, `(timeRange:(start:..,end:..))`) keep their literal parentheses, which URLSearchParams would encode.
 */
export function rest<T>(context: LinkedinContext, { path, headers, ...request }: RestRequest<T>): Promise<PlatformResponse<T>> {
  return context.fetch({
    ...request,
    url: `${context.endpoints.api}/rest/${path}`,
    headers: {
      ...bearer(context.auth.accessToken),
      'linkedin-version': context.endpoints.linkedinVersion,
      'x-restli-protocol-version': '2.0.0',
      ...headers,
    },
    classify,
  });
}

/** A call to the unversioned `/v2` resources that have no versioned form (OpenID userinfo, the member profile). */
async function v2<T>(context: LinkedinContext, path: string, schema: z.ZodType<T>): Promise<T> {
  const { data } = await context.fetch({ url: `${context.endpoints.api}/v2/${path}`, headers: bearer(context.auth.accessToken), schema, classify });
  return data;
}

// ---- OAuth ----------------------------------------------------------------------------------------------------------

/** The consent page. LinkedIn offers PKCE to native apps only; a web app authenticates with its client secret. */
export const linkedinAuthorizeUrl = (scopes: string[]): NonNullable<Provider['authorizeUrl']> => oauth2AuthorizeUrl('oauth', 'oauth/v2/authorization', scopes);

const tokenSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.number().positive(),
  refresh_token: z.string().min(1).optional(),
  refresh_token_expires_in: z.number().positive().optional(),
  scope: z.string().optional(),
});

type Tokens = Pick<ConnectedAccount, 'accessToken' | 'refreshToken' | 'expiresAt'> & { data: Record<string, string> };

async function tokenRequest(context: Pick<ConnectContext, 'fetch' | 'endpoints'>, form: Record<string, string | undefined>): Promise<Tokens> {
  const { data } = await context.fetch({ method: 'POST', url: `${context.endpoints.oauth}/oauth/v2/accessToken`, form, schema: tokenSchema, classify });
  const now = Date.now();
  return {
    accessToken: data.access_token,
    refreshToken: data.refresh_token,
    // Stored so that a channel without a refresh token is flagged and its owner warned before the 60 days run out.
    expiresAt: new Date(now + data.expires_in * 1000),
    data: data.refresh_token_expires_in ? { refreshTokenExpiresAt: new Date(now + data.refresh_token_expires_in * 1000).toISOString() } : {},
  };
}

/** Authorization code → tokens. LinkedIn web apps authenticate with the client secret in the form; PKCE is for native apps only. */
export function exchangeCode(
  context: ConnectContext,
  options: { code: string; redirectUri: string; clientId: string; clientSecret?: string },
): Promise<Tokens> {
  return tokenRequest(context, {
    grant_type: 'authorization_code',
    code: options.code,
    redirect_uri: options.redirectUri,
    client_id: options.clientId,
    client_secret: options.clientSecret,
  });
}

/**
 * LinkedIn gives refresh tokens only to apps of its approved programs; other apps' members reconnect every 60 days. Without
 * one there is nothing to pretend: the refresh fails, and the core flags the channel for reconnection and notifies.
 */
export async function refresh(context: ProviderContext) {
  const { refreshToken } = context.auth;
  if (!refreshToken) {
    throw permanent('LinkedIn gave this channel no refresh token (its app is not in a refresh-token program): reconnect it; LinkedIn tokens last 60 days.', 401);
  }
  if (!context.client) throw new Error('LinkedIn is not configured on this Herald (LINKEDIN_CLIENT_ID): the token cannot be refreshed.');
  const tokens = await tokenRequest(context, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: context.client.clientId,
    client_secret: context.client.clientSecret,
  });
  // LinkedIn's refresh tokens do not rotate (the same one comes back with its remaining life): keep ours when none is sent.
  return { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? refreshToken, expiresAt: tokens.expiresAt, data: { ...context.auth.data, ...tokens.data } };
}

// ---- Profiles -------------------------------------------------------------------------------------------------------

const userinfoSchema = z.object({ sub: z.string().min(1), name: z.string().optional(), given_name: z.string().optional(), family_name: z.string().optional(), picture: z.string().optional() });

/** The member through OpenID Connect (Sign In with LinkedIn): id, name and picture. */
export async function openIdProfile(context: LinkedinContext) {
  const info = await v2(context, 'userinfo', userinfoSchema);
  const name = info.name?.trim() || [info.given_name, info.family_name].filter(Boolean).join(' ') || 'LinkedIn member';
  return { urn: `urn:li:person:${info.sub}`, name, picture: info.picture };
}

const meSchema = z.object({ id: z.string().min(1), localizedFirstName: z.string().optional(), localizedLastName: z.string().optional(), vanityName: z.string().optional() });

/** The member through the Profile API (r_basicprofile), for apps of the Community Management API, which cannot add OpenID Connect. */
export async function basicProfile(context: LinkedinContext) {
  const me = await v2(context, 'me', meSchema);
  const name = [me.localizedFirstName, me.localizedLastName].filter(Boolean).join(' ') || 'LinkedIn member';
  return { urn: `urn:li:person:${me.id}`, name, vanityName: me.vanityName };
}

// ---- Text -----------------------------------------------------------------------------------------------------------

const RESERVED = /[\\|{}@[\]()<>#*_~]/g;
const escapeLittleText = (text: string) => text.replace(RESERVED, (character) => `\\${character}`);

/**
 * Post commentary is "little text": the reserved characters \ | { } @ [ ] ( ) < > # * _ ~ are escaped (unescaped, LinkedIn
 * drops the rest of the text), and #hashtags become hashtag templates so that they stay clickable.
 */
export function littleText(text: string): string {
  const parts: string[] = [];
  let last = 0;
  for (const match of text.matchAll(/(^|[^\p{L}\p{N}_&])#([\p{L}\p{N}_]+)/gu)) {
    const start = match.index + match[1].length;
    parts.push(escapeLittleText(text.slice(last, start)), `{hashtag|\\#|${escapeLittleText(match[2])}}`);
    last = start + 1 + match[2].length;
  }
  parts.push(escapeLittleText(text.slice(last)));
  return parts.join('');
}

/** The member or organization URN of the channel (internalId holds the URN itself). */
export const authorOf = (context: ProviderContext) => context.auth.internalId;

/** Link to a post (or comment) on linkedin.com. */
export const postUrl = (context: Pick<ProviderContext, 'endpoints'>, urn: string) => `${context.endpoints.web}/feed/update/${urn}`;
