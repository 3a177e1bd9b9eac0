// Threads Graph API plumbing: calls carry the user token as Meta documents it (the `access_token` parameter), the API
// version comes from the endpoints (`graphVersion`), and Meta's error body `{error: {message, type, code, error_subcode,
// error_user_msg}}` becomes what the core acts on: code 190 refreshes/reconnects, throttling and transient errors retry,
// everything else is refused with Meta's own words and what to do about it.
import { z } from 'zod';
import { parsedBody, type PlatformFetch, type PlatformHttpErrorInit } from '../../src/lib/platform-http.js';

const metaErrorSchema = z.object({
  error: z.looseObject({
    message: z.string().optional(),
    type: z.string().optional(),
    code: z.number().optional(),
    error_subcode: z.number().optional(),
    error_user_title: z.string().optional(),
    error_user_msg: z.string().optional(),
    is_transient: z.boolean().optional(),
  }),
});

/** Meta's throttling codes: app (4), user (17), custom (32) and call-rate (613) limits. */
const THROTTLED = new Set([4, 17, 32, 613]);

export function classifyThreads(status: number, body: string): Partial<PlatformHttpErrorInit> {
  const error = parsedBody(metaErrorSchema, body)?.error;
  if (!error) return { message: `${body.slice(0, 200) || 'no answer body'} (HTTP ${status})` };
  const said = error.error_user_msg ?? error.message ?? 'no message';
  const code = `code ${error.code ?? '?'}${error.error_subcode ? `/${error.error_subcode}` : ''}`;
  if (error.code === 190) return { status: 401, retryable: false, message: `the access token was refused (${said}); it expired or was revoked` };
  if (status === 429 || (error.code !== undefined && THROTTLED.has(error.code))) return { retryable: true, message: `rate limit reached (${said}, ${code})` };
  // Publishing a container a moment before Threads has it ready: ask again shortly.
  if (error.error_subcode === 2207027) return { retryable: true, message: `the media is not ready yet (${said}, ${code})` };
  if (error.is_transient || error.code === 1 || error.code === 2) return { retryable: true, message: `Threads is temporarily unavailable (${said}, ${code})` };
  if (/LINK_LIMIT_EXCEEDED/.test(body)) return { retryable: false, message: 'a post may contain at most 5 links; remove some, then retry the post' };
  if (error.code === 10 || (error.code !== undefined && error.code >= 200 && error.code < 300)) {
    return { retryable: false, message: `the Threads app lacks a permission (${said}, ${code}); reconnect the channel and grant every permission asked` };
  }
  return { retryable: false, message: `${said} (${code})` };
}

interface GraphContext {
  fetch: PlatformFetch;
  endpoints: Record<string, string>;
  auth: { accessToken: string };
}

type Parameters = Record<string, string | number | undefined>;

/** A versioned Graph call: GET (and DELETE) with query parameters, POST with a form body, the token among the parameters. */
export async function graph<T>(context: GraphContext, request: { method?: 'GET' | 'POST' | 'DELETE'; path: string; params?: Parameters; schema: z.ZodType<T> }): Promise<T> {
  const url = `${context.endpoints.graph}/${context.endpoints.graphVersion}/${request.path}`;
  const params = { ...request.params, access_token: context.auth.accessToken };
  const response =
    request.method === 'POST'
      ? await context.fetch({ method: 'POST', url, form: Object.fromEntries(Object.entries(params).map(([key, value]) => [key, value === undefined ? undefined : String(value)])), schema: request.schema, classify: classifyThreads })
      : await context.fetch({ method: request.method ?? 'GET', url, query: params, schema: request.schema, classify: classifyThreads });
  return response.data;
}

const longLivedSchema = z.object({ access_token: z.string().min(1), expires_in: z.number().int().positive() });

/** The long-lived (60 days) token as the channel stores it. */
const stored = (token: z.infer<typeof longLivedSchema>) => ({ accessToken: token.access_token, expiresAt: new Date(Date.now() + token.expires_in * 1000) });

/** Authorization code → short-lived token (one hour) → long-lived token (60 days). */
export async function exchangeForLongLived(
  fetch: PlatformFetch,
  endpoints: Record<string, string>,
  options: { code: string; redirectUri: string; clientId: string; clientSecret?: string },
) {
  const short = await fetch({
    method: 'POST',
    url: `${endpoints.graph}/oauth/access_token`,
    form: { client_id: options.clientId, client_secret: options.clientSecret, code: options.code, grant_type: 'authorization_code', redirect_uri: options.redirectUri },
    schema: z.object({ access_token: z.string().min(1), user_id: z.union([z.string(), z.number()]).optional() }),
    classify: classifyThreads,
  });
  const long = await fetch({
    url: `${endpoints.graph}/access_token`,
    query: { grant_type: 'th_exchange_token', client_secret: options.clientSecret, access_token: short.data.access_token },
    schema: longLivedSchema,
    classify: classifyThreads,
  });
  return stored(long.data);
}

/** A long-lived token at least a day old and not expired becomes valid for 60 days again; an expired one is dead for good. */
export async function refreshLongLived(fetch: PlatformFetch, endpoints: Record<string, string>, accessToken: string) {
  const { data } = await fetch({
    url: `${endpoints.graph}/refresh_access_token`,
    query: { grant_type: 'th_refresh_token', access_token: accessToken },
    schema: longLivedSchema,
    classify: classifyThreads,
  });
  return stored(data);
}
