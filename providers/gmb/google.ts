// Google OAuth 2.0 for a web server app and Google's API error body, as Google Business Profile uses them.
// References: https://developers.google.com/identity/protocols/oauth2/web-server (code exchange and refresh at
// oauth2.googleapis.com/token, client credentials in the form), https://cloud.google.com/apis/design/errors (error body
// {error: {code, message, status, details}}). Kept with gmb until the Google providers share one module.
import { z } from 'zod';
import { PlatformHttpError, type PlatformFetch, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ChannelAuth, ConnectContext } from '../types.js';

const errorSchema = z.object({
  error: z.union([
    z.string(),
    z.object({
      message: z.string().optional(),
      status: z.string().optional(),
      details: z
        .array(
          z.looseObject({
            errorDetails: z.array(z.object({ field: z.string().optional(), message: z.string().optional() })).optional(),
            fieldViolations: z.array(z.object({ field: z.string().optional(), description: z.string().optional() })).optional(),
            metadata: z.record(z.string(), z.string()).optional(),
          }),
        )
        .optional(),
    }),
  ]),
  error_description: z.string().optional(),
});

export function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  let parsed: z.infer<typeof errorSchema> | undefined;
  try {
    parsed = errorSchema.parse(JSON.parse(body));
  } catch {
    return { message: `HTTP ${status}` };
  }
  if (typeof parsed.error === 'string') return { message: parsed.error_description ? `${parsed.error_description} (${parsed.error})` : parsed.error };
  const details = (parsed.error.details ?? []).flatMap((detail) => [
    ...(detail.errorDetails ?? []).map((item) => [item.field, item.message].filter(Boolean).join(': ')),
    ...(detail.fieldViolations ?? []).map((item) => [item.field, item.description].filter(Boolean).join(': ')),
  ]);
  const message = `${parsed.error.message ?? parsed.error.status ?? `HTTP ${status}`}${details.length ? ` (${details.join('; ')})` : ''}`;
  // Until Google approves a project for the Business Profile APIs its quota is 0: waiting does not help.
  if (status === 429 && parsed.error.details?.some((detail) => detail.metadata?.quota_limit_value === '0')) {
    return {
      retryable: false,
      message: `${message}. Google gives this project no quota for the Business Profile APIs yet: request access (https://developers.google.com/my-business/content/prereqs), then retry.`,
    };
  }
  return { message };
}

/** `{base}/{version}` of an endpoint key and its `…Version` key. */
export const versioned = (endpoints: Record<string, string>, key: string, versionKey: string) => `${endpoints[key].replace(/\/+$/, '')}/${endpoints[versionKey]}`;

export async function googleCall<T>(context: Pick<ConnectContext, 'fetch'>, token: string, request: Omit<PlatformRequest<T>, 'classify'>): Promise<T> {
  const { headers, ...rest } = request;
  return (await context.fetch({ ...rest, classify, headers: { authorization: `Bearer ${token}`, ...headers } })).data;
}

const tokenSchema = z.object({ access_token: z.string(), expires_in: z.number(), refresh_token: z.string().optional() });

/** The token endpoint, client credentials in the form (client_secret_post). */
export async function googleToken(fetch: PlatformFetch, endpoints: Record<string, string>, form: Record<string, string | undefined>): Promise<Partial<ChannelAuth>> {
  const { data } = await fetch({ method: 'POST', url: `${endpoints.token.replace(/\/+$/, '')}/token`, form, schema: tokenSchema, classify });
  return { accessToken: data.access_token, refreshToken: data.refresh_token, expiresAt: new Date(Date.now() + data.expires_in * 1000) };
}

const userSchema = z.object({ sub: z.string(), name: z.string().optional(), email: z.string().optional(), picture: z.string().optional() });

/** Trades the code for tokens (a refresh token is required: without one the channel would die within the hour) and loads the user. */
export async function googleAccount(context: ConnectContext, options: { code: string; redirectUri: string; clientId: string; clientSecret?: string }) {
  const tokens = await googleToken(context.fetch, context.endpoints, {
    grant_type: 'authorization_code',
    code: options.code,
    client_id: options.clientId,
    client_secret: options.clientSecret,
    redirect_uri: options.redirectUri,
  });
  if (!tokens.refreshToken) {
    throw new PlatformHttpError({
      status: 400,
      retryable: false,
      bodyExcerpt: '',
      message: 'Google sent no refresh token: remove Herald from https://myaccount.google.com/permissions and connect again.',
    });
  }
  const user = await googleCall(context, tokens.accessToken!, { url: `${context.endpoints.api.replace(/\/+$/, '')}/oauth2/v3/userinfo`, schema: userSchema });
  return { tokens, user };
}
