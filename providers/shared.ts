// Small pieces shared by the provider descriptors: settings shapes, media-count rules, OAuth2 authorization URLs and token
// answers, refusals, and the small call helpers (bearer calls, paging, presigned uploads).
import { z } from 'zod';
import { PlatformHttpError, type PlatformFetch, type PlatformRequest, type PlatformResponse } from '../src/lib/platform-http.js';
import type { AnalyticsMetric, Provider, HelperToolDeclaration, MediaFile, PublishedRef, ValidationItem } from './types.js';

/** A refusal decided here, before or after a call, with the words a user acts on. */
export function permanent(message: string, status = 400): PlatformHttpError {
  return new PlatformHttpError({ status, retryable: false, bodyExcerpt: '', message });
}

/**
 * Publishing calls in flight at once when a provider declares no limit of its own (Provider.concurrency): per account, and
 * across all the accounts of one platform, in one worker process. Enough for an agency's 1,000 posts due at 09:00:00 to go
 * out together against platforms that answer in a second, few enough not to look like a flood to any one account.
 */
export const PLATFORM_CONCURRENCY = { perAccount: 8, perPlatform: 256 } as const;

/** The limits of `provider`: its own where it declares them, the defaults otherwise. */
export const concurrencyOf = (provider: Pick<Provider, 'concurrency'>): { perAccount: number; perPlatform: number } => ({
  perAccount: provider.concurrency?.perAccount ?? PLATFORM_CONCURRENCY.perAccount,
  perPlatform: provider.concurrency?.perPlatform ?? PLATFORM_CONCURRENCY.perPlatform,
});

/** Tags as the editor sends them: `[{value, label}]`. */
export const tagsSchema = z.array(z.object({ value: z.string(), label: z.string() }));

/** An http(s) URL (other schemes are refused). */
export const httpUrl = () => z.url({ protocol: /^https?$/ });

/** A required id picked from one of the channel's tools. */
export const pickedId = (description: string) => z.string().min(1).describe(description);

export interface MediaCount {
  images: number;
  videos: number;
  total: number;
}

export function countMedia(item: ValidationItem): MediaCount {
  const videos = item.media.filter((media) => media.kind === 'video').length;
  return { images: item.media.length - videos, videos, total: item.media.length };
}

/** How an item is named in a problem sentence: the post itself, or its position in the chain. */
export function itemName(index: number): string {
  return index === 0 ? 'The post' : `Item ${index + 1}`;
}

/** Runs `check` on the chosen items and returns the first problem, prefixed with the item's name. */
export function firstProblem(
  items: ValidationItem[],
  check: (count: MediaCount, item: ValidationItem, index: number) => string | undefined,
  which: 'all' | 'first' | 'rest' = 'all',
): string | undefined {
  for (const [index, item] of items.entries()) {
    if ((which === 'first' && index > 0) || (which === 'rest' && index === 0)) continue;
    const problem = check(countMedia(item), item, index);
    if (problem) return `${itemName(index)} ${problem}`;
  }
  return undefined;
}

/** Platforms that take no media at all (chat messages, text posts). */
export function textOnly(platform: string) {
  return (items: ValidationItem[]) =>
    firstProblem(items, ({ total }) => (total > 0 ? `has attachments, but ${platform} takes text only: remove them.` : undefined));
}

/** Platforms whose comments are text only. */
export function textOnlyComments(items: ValidationItem[], platform: string): string | undefined {
  return firstProblem(items, ({ total }) => (total > 0 ? `has attachments, but comments on ${platform} take text only: remove them.` : undefined), 'rest');
}

/** Platforms that take pictures but no video. */
export function noVideo(items: ValidationItem[], platform: string): string | undefined {
  return firstProblem(items, ({ videos }) => (videos > 0 ? `has a video, but ${platform} takes pictures only: remove it.` : undefined));
}

/** Pictures (up to `maxImages` when given), or one video alone, per item. */
export function picturesOrOneVideo(
  items: ValidationItem[],
  platform: string,
  options: { maxImages?: number; which?: 'all' | 'first' } = {},
): string | undefined {
  const { maxImages, which = 'all' } = options;
  const pictures = maxImages === undefined ? 'pictures' : `up to ${maxImages} pictures`;
  return firstProblem(
    items,
    ({ images, videos }) => {
      if (videos > 1 || (videos === 1 && images > 0)) return `mixes media: ${platform} takes ${pictures} or one video alone.`;
      if (maxImages !== undefined && images > maxImages) return `has ${images} pictures; ${platform} takes at most ${maxImages}.`;
      return undefined;
    },
    which,
  );
}

/** A helper tool declaration (running it is not built yet: the caller answers not_supported). */
export function tool(methodName: string, description: string, dataSchema: HelperToolDeclaration['dataSchema'] = []): HelperToolDeclaration {
  return { methodName, description, dataSchema };
}

/** `base + path` with the query parameters in order; empty values are left out. */
export function authorizationUrl(base: string, path: string, query: Record<string, string | undefined>): string {
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') url.searchParams.set(key, value);
  return url.toString();
}

/**
 * The usual OAuth 2.0 authorization URL of a provider: `response_type=code`, `client_id`, `redirect_uri`, the scopes
 * (space- or comma-separated, as the platform wants), `state`, PKCE (S256) when the platform takes it, and any extra
 * parameters of the platform's own.
 */
export function oauth2AuthorizeUrl(
  endpointKey: string,
  path: string,
  scopes: readonly string[],
  options: { pkce?: boolean; separator?: string; extra?: Record<string, string> } = {},
): NonNullable<Provider['authorizeUrl']> {
  return ({ clientId, redirectUri, state, codeChallenge, endpoints }) =>
    authorizationUrl(endpoints[endpointKey], path, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(options.separator ?? ' '),
      state,
      ...(options.pkce ? pkce(codeChallenge) : {}),
      ...options.extra,
    });
}

/** Query parameters of PKCE with S256. */
export function pkce(codeChallenge: string): Record<string, string> {
  return { code_challenge: codeChallenge, code_challenge_method: 'S256' };
}

/**
 * Default Graph API version of the Meta providers (Facebook Pages, Instagram, Instagram standalone). It is an endpoint
 * setting, `graphVersion`, so a deployment moves to a newer version with SOCIAL_ENDPOINTS, not a release.
 */
export const META_GRAPH_VERSION = 'v25.0';

/** The Graph API version a Meta provider calls: its `graphVersion` endpoint setting. */
export function metaGraphVersion(endpoints: Record<string, string>): string {
  const version = endpoints.graphVersion;
  if (!version || !/^v\d+\.\d+$/.test(version)) throw new Error(`The Graph API version "${version ?? ''}" is not of the form v25.0: fix graphVersion in SOCIAL_ENDPOINTS.`);
  return version;
}

/** `{base}/{version}` of an endpoint key and its version key (trailing slashes of the base removed). */
export const versionedBase = (endpoints: Record<string, string>, key = 'api', versionKey = 'apiVersion') => `${endpoints[key].replace(/\/+$/, '')}/${endpoints[versionKey]}`;

/** A call with a bearer token (the request's own headers after it) and the platform's classification of errors. */
export function bearerFetch<T>(
  context: { fetch: PlatformFetch },
  token: string,
  classify: PlatformRequest<T>['classify'],
  request: Omit<PlatformRequest<T>, 'classify'>,
): Promise<PlatformResponse<T>> {
  return context.fetch({ ...request, classify, headers: { authorization: `Bearer ${token}`, ...request.headers } });
}

/** A user-typed instance or site URL: `https://` added when no scheme was typed, trailing slashes removed. */
export function normalizeInstance(value: string): string {
  const trimmed = value.trim().replace(/\/+$/, '');
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
}

/** Google's default hosts, shared by YouTube and Google Business Profile. */
export const googleEndpoints = {
  authorize: 'https://accounts.google.com',
  token: 'https://oauth2.googleapis.com',
  api: 'https://www.googleapis.com',
};

/** Google scope names are URIs under this prefix; they are identifiers, never fetched. */
export const googleScope = (name: string) => `https://www.googleapis.com/auth/${name}`;

/** Google's consent URL, asking for a refresh token (offline access, consent every time), with a PKCE S256 challenge when given. */
export function googleAuthorizeUrl(
  options: { clientId: string; redirectUri: string; state: string; codeChallenge?: string; endpoints: Record<string, string> },
  scopes: string[],
): string {
  return authorizationUrl(options.endpoints.authorize, 'o/oauth2/v2/auth', {
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: scopes.join(' '),
    access_type: 'offline',
    prompt: 'consent',
    include_granted_scopes: 'true',
    state: options.state,
    ...(options.codeChallenge !== undefined ? pkce(options.codeChallenge) : {}),
  });
}

/** The Facebook login dialog, used by Instagram (business login) and Facebook Pages; Meta takes comma-separated scopes, no PKCE. */
export function facebookDialogUrl(options: { clientId: string; redirectUri: string; state: string; endpoints: Record<string, string> }, scopes: string[]): string {
  return authorizationUrl(options.endpoints.dialog, `${metaGraphVersion(options.endpoints)}/dialog/oauth`, {
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    state: options.state,
    response_type: 'code',
    scope: scopes.join(','),
  });
}

/** A metric known only as today's total (platforms that expose counters, not history). */
export const currentMetric = (label: string, value: number | undefined): AnalyticsMetric => ({
  label,
  data: [{ total: String(value ?? 0), date: new Date().toISOString().slice(0, 10) }],
  percentageChange: 0,
});

/** `YYYY-MM-DD` (UTC) of a date. */
export const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/** The last `days` days up to today (UTC), at most `maxDays` when the platform caps its window. */
export function analyticsPeriod(days: number, maxDays = days): { start: Date; end: Date } {
  const end = new Date();
  return { start: new Date(end.getTime() - (Math.min(days, maxDays) - 1) * 86_400_000), end };
}

/**
 * A metric from daily values, oldest first; `percentageChange` compares the total of the period's second half with its
 * first half (0 when the first half is 0).
 */
export function dailyMetric(label: string, points: { date: string; value: number }[]): AnalyticsMetric {
  const sorted = [...points].sort((a, b) => a.date.localeCompare(b.date));
  const half = Math.floor(sorted.length / 2);
  const sum = (list: typeof sorted) => list.reduce((total, point) => total + point.value, 0);
  const before = sum(sorted.slice(0, half));
  const after = sum(sorted.slice(sorted.length - half));
  return {
    label,
    data: sorted.map((point) => ({ total: String(point.value), date: point.date })),
    percentageChange: before > 0 ? Math.round(((after - before) / before) * 10_000) / 100 : 0,
  };
}

/**
 * The ids of an item published in several places at once (subreddits, communities): the first is its id, the others are
 * in `meta.others`.
 */
export const idsOf = (ref: PublishedRef) => [ref.id, ...(ref.meta?.others ? ref.meta.others.split(',') : [])];

/** The `meta.others` of the ids after the first (nothing when there are none): see {@link idsOf}. */
export const othersMeta = (others: string[]) => (others.length > 0 ? { meta: { others: others.join(',') } } : {});

/** The name a media file is uploaded under: the last segment of its URL when it has an extension, else `file-<n>.<type>`. */
export function mediaFilename(file: Pick<MediaFile, 'url'>, mimeType: string, index: number): string {
  let last: string | undefined;
  try {
    last = /[^/]+\.[a-z0-9]{2,5}$/i.exec(new URL(file.url).pathname)?.[0];
  } catch {
    last = undefined;
  }
  return last ? decodeURIComponent(last) : `file-${index + 1}.${mimeType.split('/')[1]?.split(/[;+]/)[0]?.replace('jpeg', 'jpg') || 'bin'}`;
}

/** An RFC 6749 token answer as the channel stores it; `expires_in` (seconds), when given, becomes the expiry. */
export function storedTokens(data: { access_token: string; refresh_token?: string; expires_in?: number }): { accessToken: string; refreshToken?: string; expiresAt?: Date } {
  return { accessToken: data.access_token, refreshToken: data.refresh_token, expiresAt: data.expires_in ? new Date(Date.now() + data.expires_in * 1000) : undefined };
}

/**
 * The usual token request: the grant as a form POSTed to `url`, the answer parsed by `schema` and stored with
 * {@link storedTokens}.
 */
export async function tokenGrant<T extends { access_token: string; refresh_token?: string; expires_in?: number }>(
  fetch: PlatformFetch,
  url: string,
  form: Record<string, string | undefined>,
  schema: z.ZodType<T>,
  classify: PlatformRequest<T>['classify'],
): Promise<{ accessToken: string; refreshToken?: string; expiresAt?: Date }> {
  const { data } = await fetch({ method: 'POST', url, form, schema, classify });
  return storedTokens(data);
}

/** Bytes as a Blob of `mimeType`, for a multipart form. */
export const blobOf = (bytes: Uint8Array, mimeType: string) => new Blob([new Uint8Array(bytes)], { type: mimeType });

/** The bytes PUT to a presigned storage URL (repeating the PUT is harmless); a refusal names the platform's file storage. */
export async function putPresigned(context: { fetch: PlatformFetch }, url: string, headers: Record<string, string>, bytes: Buffer, platform: string): Promise<void> {
  await context.fetch({
    method: 'PUT',
    url,
    headers,
    body: bytes,
    timeoutMs: 300_000,
    classify: (status, body) => ({ message: `${platform}'s file storage refused the upload (${body.slice(0, 200) || 'no answer body'}, HTTP ${status})` }),
  });
}

/** Seconds until a rate-limit window resets, from a header holding its epoch second (X, Twitch), at least one. */
export function secondsUntilReset(headers: Headers, name: string): number | undefined {
  const reset = Number(headers.get(name));
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  return Math.max(1, Math.ceil(reset - Date.now() / 1000));
}

/** The value of an HTTP Basic `authorization` header for `user` and `secret`. */
export const basicAuth = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;

/** The `exp` claim of a JWT, when the token is one and has it (Bluesky's access JWTs, Skool's session token). */
export function jwtExpiry(token: string): Date | undefined {
  try {
    const { exp } = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof exp === 'number' ? new Date(exp * 1000) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the posts published in the last `days` days received, per day of publication (Mastodon, Bluesky, Farcaster: their
 * APIs give each post's counters, not a history of the account): one daily metric per counter, every day of the period
 * present (0 on days without posts), plus the number of posts published each day as `postsLabel`.
 */
export function engagementByDay(
  days: number,
  posts: { publishedAt: string; counts: Record<string, number | undefined> }[],
  labels: string[],
  postsLabel: string,
): AnalyticsMetric[] {
  const { start, end } = analyticsPeriod(days);
  const dates: string[] = [];
  for (let day = new Date(`${isoDay(start)}T00:00:00Z`); isoDay(day) <= isoDay(end); day = new Date(day.getTime() + 86_400_000)) dates.push(isoDay(day));
  const inPeriod = posts.filter((post) => dates.includes(post.publishedAt.slice(0, 10)));
  const series = (value: (post: (typeof posts)[number]) => number) =>
    dates.map((date) => ({ date, value: inPeriod.filter((post) => post.publishedAt.slice(0, 10) === date).reduce((sum, post) => sum + value(post), 0) }));
  return [dailyMetric(postsLabel, series(() => 1)), ...labels.map((label) => dailyMetric(label, series((post) => post.counts[label] ?? 0)))];
}

/** Every item of a cursor-paged listing: page after page until there is no next cursor, `maxPages` pages at most. */
export async function everyPage<T>(maxPages: number, readPage: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const { items: found, next } = await readPage(cursor);
    items.push(...found);
    if (!next) break;
    cursor = next;
  }
  return items;
}

/**
 * A listing read newest first, page after page, until a page reaches back past `since`, there is no next page, or
 * `maxPages` pages were read (a bound on calls; the oldest days of a long period may then be undercounted).
 */
export async function pagesSince<T>(
  maxPages: number,
  since: Date,
  readPage: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>,
  dateOf: (item: T) => string,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const { items: found, next } = await readPage(cursor);
    items.push(...found);
    cursor = next;
    if (!cursor || found.some((item) => Date.parse(dateOf(item)) < since.getTime())) break;
  }
  return items;
}
