// Reddit API plumbing: the descriptive User-Agent Reddit's API rules require on every call, the token endpoint (confidential
// client: HTTP Basic, `invalid_grant` answered as HTTP 200 `{error}`), and Reddit's errors — HTTP statuses with the
// `x-ratelimit-reset` header, and the HTTP 200 `{json: {errors: [[CODE, message, field]]}}` of the form endpoints.
import { createRequire } from 'node:module';
import { z } from 'zod';
import { PlatformHttpError, type PlatformFetch, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ChannelAuth, ProviderContext } from '../types.js';
import { basicAuth } from '../shared.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * `<platform>:<app ID>:<version> (by /u/<username>)`, the format Reddit asks for: the app id is the deployment's Reddit client
 * id (unique to this Herald), the username the connected account's (unknown before the first profile call).
 */
export function userAgent(clientId: string | undefined, username?: string): string {
  return `web:herald.${clientId ?? 'app'}:${version}${username ? ` (by /u/${username})` : ''}`;
}

/** Seconds until Reddit's rate-limit window resets (`x-ratelimit-reset` counts seconds), at least one. */
function resetSeconds(headers: Headers): number | undefined {
  const reset = Number(headers.get('x-ratelimit-reset'));
  return Number.isFinite(reset) && reset > 0 ? Math.ceil(reset) : undefined;
}

function classifyReddit(status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> {
  let said = body.slice(0, 200) || 'no answer body';
  try {
    const parsed = JSON.parse(body) as { message?: string; reason?: string; explanation?: string; error?: unknown };
    said = [parsed.message, parsed.reason, parsed.explanation].filter(Boolean).join(': ') || said;
  } catch {
    /* not JSON (S3 answers XML) */
  }
  if (status === 429) {
    const wait = resetSeconds(headers);
    return { retryAfterSeconds: wait, message: `rate limit reached (${said})${wait ? `; Reddit opens the next window in ${wait} s` : ''}` };
  }
  if (status === 401) return { status: 401, retryable: false, message: `the access token was refused (${said}); it expired or was revoked` };
  // A channel connected before Herald asked for a scope (edit, modposts) holds a token without it.
  if (status === 403 && /insufficient_scope/.test(headers.get('www-authenticate') ?? '')) {
    return { message: `Reddit refused this: the channel's authorization lacks the scope it needs (insufficient_scope); reconnect the channel to grant it` };
  }
  if (status === 403) return { message: `Reddit refused this (${said}): the subreddit may be private, restricted or have banned the account` };
  if (status === 404) return { message: `not found (${said}): check the subreddit's name` };
  return { message: `${said} (HTTP ${status})` };
}

/** The `[[CODE, message, field]]` list Reddit answers with HTTP 200 (RATELIMIT is a wait, USER_REQUIRED a dead token). */
function redditFormError(errors: unknown[][]): PlatformHttpError {
  const [code, message, field] = (errors[0] ?? []).map((part) => String(part ?? ''));
  const said = `${message || code}${field ? ` (${code}, field ${field})` : ` (${code})`}`;
  const excerpt = JSON.stringify(errors).slice(0, 500);
  if (code === 'RATELIMIT') {
    const minutes = /(\d+)\s*minute/i.exec(message)?.[1];
    const seconds = /(\d+)\s*second/i.exec(message)?.[1];
    const wait = minutes ? Number(minutes) * 60 : seconds ? Number(seconds) : 60;
    return new PlatformHttpError({ status: 429, retryable: true, retryAfterSeconds: wait, bodyExcerpt: excerpt, message: `Reddit asks to wait: ${said}` });
  }
  if (code === 'USER_REQUIRED') return new PlatformHttpError({ status: 401, retryable: false, bodyExcerpt: excerpt, message: `Reddit wants a logged-in user: ${said}` });
  const hints: Record<string, string> = {
    SUBMIT_VALIDATION_FLAIR_REQUIRED: 'this subreddit requires a flair: pick one with getFlairs',
    NO_SELFS: 'this subreddit takes no text posts: post a link or an image',
    NO_LINKS: 'this subreddit takes only text posts',
    SUBREDDIT_NOEXIST: 'the subreddit does not exist: check its name with the subreddits tool',
    SUBREDDIT_NOTALLOWED: 'the account may not post in this subreddit',
    ALREADY_SUB: 'this link was already posted in this subreddit',
  };
  const hint = hints[code];
  return new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: excerpt, message: hint ? `${hint} (${said})` : said });
}

const formAnswerSchema = z.looseObject({ json: z.looseObject({ errors: z.array(z.array(z.unknown())).default([]), data: z.unknown().optional() }).optional() });

type RedditContext = Pick<ProviderContext, 'fetch' | 'endpoints' | 'client'> & { auth: Pick<ChannelAuth, 'accessToken' | 'data'> };

type RedditRequest<T> = Omit<PlatformRequest<T>, 'url' | 'classify' | 'schema'> & { path: string; schema: z.ZodType<T> };

/** A Reddit listing: `{data: {children: [{data: item}]}}`. */
export const listing = <T extends z.ZodType>(item: T) => z.object({ data: z.object({ children: z.array(z.object({ data: item })) }) });

/** A call to oauth.reddit.com with the channel's token and the User-Agent; form answers with `json.errors` are refused. */
export async function redditCall<T>(context: RedditContext, request: RedditRequest<T>): Promise<T> {
  const { path, headers, schema, ...rest } = request;
  const { data } = await context.fetch<unknown>({
    ...rest,
    url: `${context.endpoints.oauth}/${path}`,
    query: { raw_json: 1, ...rest.query },
    headers: { authorization: `Bearer ${context.auth.accessToken}`, 'user-agent': userAgent(context.client?.clientId, context.auth.data.username), ...headers },
    classify: classifyReddit,
  });
  const form = formAnswerSchema.safeParse(data);
  if (form.success && form.data.json?.errors.length) throw redditFormError(form.data.json.errors);
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    throw new PlatformHttpError({ status: 200, retryable: false, bodyExcerpt: JSON.stringify(data).slice(0, 500), message: `Reddit answered ${path} with an unexpected shape: ${parsed.error.issues[0]?.message}` });
  }
  return parsed.data;
}

const tokenSchema = z.looseObject({ access_token: z.string().optional(), refresh_token: z.string().optional(), expires_in: z.number().optional(), error: z.string().optional() });

/** POST /api/v1/access_token: the app's id and secret in HTTP Basic, the grant in the form; a refused grant comes back as HTTP 200. */
export async function tokenCall(
  fetch: PlatformFetch,
  endpoints: Record<string, string>,
  client: { clientId: string; clientSecret?: string },
  form: Record<string, string>,
  username?: string,
): Promise<Pick<ChannelAuth, 'accessToken' | 'refreshToken' | 'expiresAt'>> {
  const { data } = await fetch({
    method: 'POST',
    url: `${endpoints.www}/api/v1/access_token`,
    headers: { authorization: basicAuth(client.clientId, client.clientSecret ?? ''), 'user-agent': userAgent(client.clientId, username) },
    form,
    schema: tokenSchema,
    classify: (status, body, headers) => (status === 401 ? { status: 401, message: 'Reddit refused the app\'s client id or secret (HTTP 401): check REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET' } : classifyReddit(status, body, headers)),
  });
  if (data.error || !data.access_token) {
    throw new PlatformHttpError({ status: 401, retryable: false, bodyExcerpt: JSON.stringify(data), message: `Reddit refused the grant (${data.error ?? 'no access token in the answer'})` });
  }
  return { accessToken: data.access_token, refreshToken: data.refresh_token, expiresAt: new Date(Date.now() + (data.expires_in ?? 3600) * 1000) };
}
