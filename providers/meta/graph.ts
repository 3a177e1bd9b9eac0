// The Graph API as Facebook Pages and both Instagram providers call it: versioned URLs on configurable hosts, the token in
// the Authorization header, zod-parsed answers, and Meta's error body turned into the right class with a sentence a user
// can act on. References:
//   https://developers.facebook.com/docs/graph-api/guides/error-handling
//   https://developers.facebook.com/docs/graph-api/overview/rate-limiting
//   https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes
//   https://developers.facebook.com/docs/graph-api/reference/insights (values and end_time)
import { z } from 'zod';
import { parsedBody, type PlatformFetch, type PlatformHttpErrorInit } from '../../src/lib/platform-http.js';
import type { AnalyticsMetric } from '../types.js';
import { currentMetric, isoDay, metaGraphVersion } from '../shared.js';

export interface GraphContext {
  fetch: PlatformFetch;
  endpoints: Record<string, string>;
  auth?: { accessToken: string };
}

export interface GraphCall<T> {
  schema: z.ZodType<T>;
  query?: Record<string, string | number | boolean | undefined>;
  /** A POST with a JSON body: Graph takes nested parameters (attached_media, trial_params) as they are. */
  json?: Record<string, unknown>;
  /** A POST with a form body (Instagram Login's code exchange takes nothing else). */
  form?: Record<string, string>;
  /** Another token than the channel's (during OAuth), or null for none. */
  token?: string | null;
  /** DELETE (a comment, a post); otherwise POST when a body is given, else GET. */
  method?: 'DELETE';
  /** Endpoint key of the host; `graph` by default. */
  host?: string;
  /** Paths outside the versioned API (Instagram Login's token endpoints). */
  unversioned?: boolean;
}

/** An id as one path segment. */
export const node = (id: string) => encodeURIComponent(id);

export async function graph<T>(context: GraphContext, path: string, call: GraphCall<T>): Promise<T> {
  const base = (context.endpoints[call.host ?? 'graph'] ?? '').replace(/\/+$/, '');
  const url = call.unversioned ? `${base}/${path}` : `${base}/${metaGraphVersion(context.endpoints)}/${path}`;
  const token = call.token === undefined ? context.auth?.accessToken : call.token;
  const response = await context.fetch({
    method: call.method ?? (call.json || call.form ? 'POST' : 'GET'),
    url,
    query: call.query,
    json: call.json,
    form: call.form,
    headers: token ? { authorization: `Bearer ${token}` } : undefined,
    schema: call.schema,
    classify: classifyMetaError,
  });
  return response.data;
}

export const idSchema = z.object({ id: z.string() });

/** The file extension of a media URL's path (".png"), or "" when it has none. */
export function extensionOf(url: string): string {
  try {
    return /\.[a-z0-9]+$/i.exec(new URL(url).pathname)?.[0].toLowerCase() ?? '';
  } catch {
    return '';
  }
}

/** What to do about an Instagram media problem, by error subcode (the same subcodes come back in a container's `status`). */
const MEDIA_FIXES: Record<number, string> = {
  2207004: 'the image must be under 8 MB: compress or resize it, then upload it again',
  2207005: 'the image must be a JPEG (Instagram publishes no PNG, WebP, GIF or HEIC): convert it to JPEG, then upload it again',
  2207009: 'the picture\'s aspect ratio must be between 4:5 (portrait) and 1.91:1 (landscape): crop it, then upload it again',
  2207010: 'the caption is too long: at most 2,200 characters, 30 hashtags and 20 @mentions',
  2207023: 'the media type is not one Instagram publishes: send JPEG pictures or MP4/MOV videos',
  2207026: 'the video format is not supported: send an MP4 or MOV with H.264 or HEVC video and AAC sound, 3 seconds to 15 minutes long',
  2207028: 'a carousel takes 2 to 10 pictures or videos',
  2207052: 'Instagram could not download the media from its URL: PUBLIC_URL (or S3_PUBLIC_URL) must be a public https address Meta can reach',
  2207057: 'the video\'s thumbnail offset is outside the video',
  2207020: 'the media container expired before it was published (containers live 24 hours): create the post again',
  2207006: 'Instagram no longer finds the media container: create the post again',
  2207050: 'the Instagram account is restricted or inactive: open Instagram, resolve the notice, then retry',
  2207051: 'Instagram blocked this publication as suspected spam: change the content or wait before publishing again',
  2207018: 'a collaborator could not be invited: check the username, and that the account is public and accepts collaboration invites',
  2207081: 'this account cannot publish trial reels: remove is_trial_reel',
};

/** Subcodes Meta documents as "try again". */
const TRANSIENT_SUBCODES = new Set([2207001, 2207003, 2207008, 2207027, 2207032, 2207053]);

/** Application (4), user (17), Page (32), custom (613) and business use case (80001…) rate limits; 2207042: daily publishing cap. */
const isRateLimit = (code?: number, subcode?: number) =>
  code === 4 || code === 17 || code === 32 || code === 613 || (code !== undefined && code >= 80000 && code < 80100) || subcode === 2207042;

/** The sentence for an Instagram media problem, from a subcode found in an error or a container status. */
export function mediaProblem(subcode: number | undefined): string | undefined {
  return subcode === undefined ? undefined : MEDIA_FIXES[subcode];
}

export const isTransientSubcode = (subcode: number | undefined) => subcode !== undefined && TRANSIENT_SUBCODES.has(subcode);

const metaErrorSchema = z.object({
  error: z.object({
    message: z.string().default(''),
    type: z.string().optional(),
    code: z.number().optional(),
    error_subcode: z.number().optional(),
    error_user_msg: z.string().optional(),
    is_transient: z.boolean().optional(),
    fbtrace_id: z.string().optional(),
  }),
});
/** Instagram Login's OAuth endpoints answer errors in an older shape. */
const oauthErrorSchema = z.object({ error_type: z.string().optional(), error_message: z.string() });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Minutes to wait, from Meta's usage headers (`estimated_time_to_regain_access`, anywhere in their JSON). */
function resetSeconds(headers: Headers | undefined): number | undefined {
  let minutes = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'estimated_time_to_regain_access' && typeof inner === 'number') minutes = Math.max(minutes, inner);
        else visit(inner);
      }
    }
  };
  for (const name of ['x-business-use-case-usage', 'x-ad-account-usage', 'x-app-usage']) visit(parseJson(headers?.get(name) ?? ''));
  return minutes > 0 ? minutes * 60 : undefined;
}

/** Meta's `{error: {message, type, code, error_subcode, fbtrace_id}}` as retry, refresh, or a permanent error naming the fix. */
export function classifyMetaError(status: number, body: string, headers?: Headers): Partial<PlatformHttpErrorInit> | undefined {
  const meta = parsedBody(metaErrorSchema, body);
  if (!meta) {
    const legacy = parsedBody(oauthErrorSchema, body);
    return legacy ? { retryable: status >= 500, message: legacy.error_message } : undefined;
  }
  const { message, type, code, error_subcode: subcode, error_user_msg: userMessage, is_transient: transient, fbtrace_id: trace } = meta.error;
  const reference = `Meta error ${code ?? '?'}${subcode ? `/${subcode}` : ''}${trace ? `, fbtrace_id ${trace}` : ''}`;
  const say = (sentence: string, init: Partial<PlatformHttpErrorInit>) => ({ ...init, message: `${sentence} (${reference}: ${message})` });
  if (code === 190 || code === 102) {
    return say('the access token expired or was revoked; Herald refreshes it where it can, otherwise reconnect the channel', { status: 401, retryable: false });
  }
  if (isRateLimit(code, subcode)) {
    const daily = subcode === 2207042;
    return say(daily ? 'the account reached Instagram\'s daily limit of API-published posts; Herald tries again later' : 'Meta\'s rate limit was reached; Herald tries again after the reset', {
      status: 429,
      retryable: true,
      retryAfterSeconds: resetSeconds(headers) ?? (daily ? 3600 : undefined),
    });
  }
  const fix = mediaProblem(subcode);
  if (fix) return say(fix, { retryable: false });
  // Codes 1 and 2 are Meta's "unknown" and "service" hiccups, except as OAuthException (code 1: "Error validating client secret").
  const hiccup = (code === 1 || code === 2) && type !== 'OAuthException';
  if (transient || hiccup || isTransientSubcode(subcode) || status >= 500) return say('Meta had a temporary problem', { retryable: true });
  if (code === 324 || code === 9004) return say('Meta could not download the media from its URL: PUBLIC_URL (or S3_PUBLIC_URL) must be a public https address Meta can reach', { retryable: false });
  if (code === 10 || (code !== undefined && code >= 200 && code < 300)) {
    return say('the app lacks a permission for this: reconnect the channel and grant every permission asked', { status: 403, retryable: false });
  }
  return { retryable: false, message: `${userMessage ?? message} (${reference})` };
}

const insightValue = z.union([z.number(), z.record(z.string(), z.number())]).transform((value) =>
  typeof value === 'number' ? value : Object.values(value).reduce((sum, part) => sum + part, 0),
);

export const insightsSchema = z.object({
  data: z.array(
    z.object({
      name: z.string(),
      values: z.array(z.object({ value: insightValue.optional(), end_time: z.string().optional() })).optional(),
      total_value: z.object({ value: z.number() }).optional(),
    }),
  ),
});

export const today = () => isoDay(new Date());

/** A daily value's date: Graph stamps it with the end of its day (the next day, in the Page's time zone). */
function dayOf(endTime: string | undefined): string {
  if (!endTime) return today();
  const time = Date.parse(endTime.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
  return Number.isNaN(time) ? endTime.slice(0, 10) : new Date(time - 86_400_000).toISOString().slice(0, 10);
}

function change(points: { total: string }[]): number {
  if (points.length < 2) return 0;
  const first = Number(points[0].total);
  const last = Number(points.at(-1)!.total);
  return first === 0 ? 0 : Math.round(((last - first) / first) * 10_000) / 100;
}

export function metric(label: string, data: AnalyticsMetric['data']): AnalyticsMetric {
  return { label, data, percentageChange: change(data) };
}

/** Insights in the spec's metric shape, in the order of `labels` (metric name → label); metrics Meta did not answer are left out. */
export function insightMetrics(response: z.output<typeof insightsSchema>, labels: Record<string, string>): AnalyticsMetric[] {
  return Object.entries(labels).flatMap(([name, label]) => {
    const entry = response.data.find((candidate) => candidate.name === name);
    if (!entry) return [];
    if (entry.total_value) return [currentMetric(label, entry.total_value.value)];
    return [metric(label, (entry.values ?? []).map((value) => ({ total: String(value.value ?? 0), date: dayOf(value.end_time) })))];
  });
}

/** `since`/`until` (Unix seconds) of the last `days` days, at most `max` (Graph answers at most 90 days of daily values). */
export function insightsRange(days: number, max = 90): { since: number; until: number } {
  const until = Math.floor(Date.now() / 1000);
  return { since: until - Math.max(1, Math.min(days, max)) * 86_400, until };
}
