// X API v2 plumbing: bearer calls, the OAuth 2.0 token endpoint (confidential client: HTTP Basic), and X's error bodies
// (problem+json `{title, detail, type, status}`, `{errors: [...]}`, OAuth `{error, error_description}`) turned into what the
// core acts on: 429 waits for `x-rate-limit-reset`, 401 refreshes, a duplicate is refused for good with a sentence to act on.
import { z } from 'zod';
import { parsedBody, type PlatformFetch, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ChannelAuth, ProviderContext } from '../types.js';
import { basicAuth, secondsUntilReset, storedTokens } from '../shared.js';

const problemSchema = z.looseObject({
  title: z.string().optional(),
  detail: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
  errors: z.array(z.looseObject({ message: z.string().optional(), detail: z.string().optional() })).optional(),
});

/** What X says went wrong, in its own words (the most specific field it filled). */
function problemText(body: string): string {
  const parsed = parsedBody(problemSchema, body);
  const listed = parsed?.errors?.map((error) => error.message ?? error.detail).filter(Boolean).join('; ');
  return parsed?.detail ?? (listed || undefined) ?? parsed?.error_description ?? parsed?.error ?? parsed?.title ?? body.slice(0, 200);
}

export function classifyX(status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> {
  const text = problemText(body);
  if (status === 429) {
    const wait = secondsUntilReset(headers, 'x-rate-limit-reset');
    return { retryable: true, retryAfterSeconds: wait, message: `rate limit reached (${text})${wait ? `; X opens the next window in ${wait} s` : ''}` };
  }
  if (status === 401) return { status: 401, retryable: false, message: `the access token was refused (${text}); it expired or was revoked` };
  if (/duplicate content/i.test(text)) {
    return { retryable: false, message: 'this account already posted exactly this text (duplicate content); change the text, then retry the post' };
  }
  if (status === 403 && /not permitted/i.test(text)) {
    return { retryable: false, message: `${text} (HTTP 403): X refuses this for the account, e.g. a community it is not a member of, or a post longer than 280 without X Premium` };
  }
  if (/usage.?cap/i.test(body)) return { retryable: false, message: `the X developer app has used up its monthly post quota (${text}); raise the app's plan or wait for the next month` };
  return { message: `${text} (HTTP ${status})` };
}

type XRequest<T> = Omit<PlatformRequest<T>, 'url' | 'classify'> & { path: string };

/** A call to the X API with the channel's bearer token. */
export async function xCall<T>(context: Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: Pick<ChannelAuth, 'accessToken'> }, request: XRequest<T>) {
  const { path, headers, ...rest } = request;
  const response = await context.fetch<T>({
    ...rest,
    url: `${context.endpoints.api}/${path}`,
    headers: { authorization: `Bearer ${context.auth.accessToken}`, ...headers },
    classify: classifyX,
  });
  return response.data;
}

const tokenSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().optional(),
  expires_in: z.number().int().positive().optional(),
  scope: z.string().optional(),
});

/** POST /2/oauth2/token as a confidential client: the app's id and secret in HTTP Basic, the grant in the form body. */
export async function tokenRequest(
  fetch: PlatformFetch,
  endpoints: Record<string, string>,
  client: { clientId: string; clientSecret?: string },
  form: Record<string, string>,
): Promise<Pick<ChannelAuth, 'accessToken' | 'refreshToken' | 'expiresAt'>> {
  const { data } = await fetch({
    method: 'POST',
    url: `${endpoints.api}/2/oauth2/token`,
    headers: { authorization: basicAuth(encodeURIComponent(client.clientId), encodeURIComponent(client.clientSecret ?? '')) },
    form,
    schema: tokenSchema,
    classify: classifyX,
  });
  return storedTokens(data);
}

const metricsSchema = z.looseObject({
  followers_count: z.number().optional(),
  following_count: z.number().optional(),
  // X renamed tweet_count to post_count in its 2026 API description; both are read.
  post_count: z.number().optional(),
  tweet_count: z.number().optional(),
});

export const userSchema = z.object({
  data: z.object({
    id: z.string(),
    name: z.string(),
    username: z.string(),
    profile_image_url: z.string().optional(),
    public_metrics: metricsSchema.optional(),
    // None, Basic, Premium or PremiumPlus for the authenticated user (https://docs.x.com/x-api/fundamentals/data-dictionary).
    subscription_type: z.string().optional(),
  }),
});

export const USER_FIELDS = 'profile_image_url,public_metrics,subscription_type';

/** X Premium tiers: each lets the account post up to 25,000 weighted characters ("Longer posts"). */
const SUBSCRIBER_TYPES = new Set(['basic', 'premium', 'premiumplus']);

/**
 * What the channel keeps about the account: its subscription type as X reports it, and `premium` (the key the console and
 * `integrationSettings` read) when it lets the account post long posts.
 */
export function accountFacts(user: z.infer<typeof userSchema>['data']): Record<string, unknown> {
  const type = user.subscription_type;
  return type === undefined ? {} : { subscription_type: type, premium: SUBSCRIBER_TYPES.has(type.toLowerCase()) };
}

/** X serves `_normal` (48 px) avatars by default; the 400 px variant has the same path with another suffix. */
export const largeAvatar = (url: string | undefined) => url?.replace(/_normal(\.[a-z]+)$/i, '_400x400$1');
