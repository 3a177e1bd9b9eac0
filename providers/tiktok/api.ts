// TikTok API v2 calls: the `{data, error: {code, message, log_id}}` envelope, its error codes as sentences a user can act on
// (https://developers.tiktok.com/doc/tiktok-api-v2-error-handling and the Content Posting API error lists).
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ProviderContext } from '../types.js';

const EXPLAIN: Record<string, string> = {
  spam_risk_too_many_posts: "the account reached TikTok's daily post limit (spam_risk_too_many_posts): retry tomorrow",
  spam_risk_too_many_pending_share:
    "five posts already wait in the account's TikTok inbox (spam_risk_too_many_pending_share): finish or delete them in the TikTok app, then retry",
  spam_risk_user_banned_from_posting: 'TikTok has banned this account from posting (spam_risk_user_banned_from_posting)',
  unaudited_client_can_only_post_to_private_accounts:
    "TikTok lets an app it has not audited post only to private accounts (unaudited_client_can_only_post_to_private_accounts): make the TikTok account private, or have the app audited and set TIKTOK_APP_AUDITED=true",
  url_ownership_unverified:
    'TikTok pulls photos only from a domain verified for the TikTok app (url_ownership_unverified): verify the domain of PUBLIC_URL (or S3_PUBLIC_URL) in the TikTok developer portal',
  privacy_level_option_mismatch: "the privacy level is not one this TikTok account allows (privacy_level_option_mismatch): call creatorInfo and choose one of its privacy levels",
  reached_active_user_cap: "the TikTok app reached its daily quota of active users (reached_active_user_cap): retry tomorrow",
  scope_not_authorized: 'the TikTok account did not grant the permission this needs (scope_not_authorized): reconnect it and allow every permission',
  scope_permission_missed: 'the TikTok app lacks a permission this needs (scope_permission_missed): reconnect the channel',
};

/** A TikTok error body, API v2 (`error.code`) or OAuth (`error` string). */
function errorOf(body: string): { code?: string; message?: string } {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; error_description?: string };
    if (typeof parsed.error === 'string') return { code: parsed.error, message: parsed.error_description };
    const error = parsed.error as { code?: string; message?: string } | undefined;
    return { code: error?.code, message: error?.message };
  } catch {
    return {};
  }
}

export function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  const { code, message } = errorOf(body);
  const text = (code && EXPLAIN[code]) ?? (message ? `${message}${code ? ` (${code})` : ''}` : `HTTP ${status}`);
  if (code === 'access_token_invalid' || code === 'scope_not_authorized' || status === 401) return { status: 401, retryable: false, message: text };
  if (code === 'rate_limit_exceeded' || status === 429) return { status: 429, retryable: true, message: text };
  return { retryable: code === 'internal_error' || status >= 500, message: text };
}

/** A definite refusal of ours (a setting the account does not allow): permanent, with the reason. */
export const url = (context: Pick<ProviderContext, 'endpoints'>, path: string) => `${context.endpoints.api}/${context.endpoints.apiVersion}/${path}`;

/** Calls TikTok with the channel's token; an answer whose `error.code` is not `ok` is an error even with HTTP 200. */
export async function call<T>(
  context: Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: { accessToken: string } },
  path: string,
  schema: z.ZodType<T>,
  request: Omit<PlatformRequest<unknown>, 'url' | 'schema' | 'classify'> = {},
): Promise<{ data: T; text: string }> {
  const response = await context.fetch({
    method: request.json !== undefined ? 'POST' : 'GET',
    ...request,
    url: url(context, path),
    headers: { authorization: `Bearer ${context.auth.accessToken}`, ...request.headers },
    classify,
  });
  const envelope = z.object({ data: z.unknown(), error: z.object({ code: z.string() }).optional() }).safeParse(response.data);
  if (envelope.success && envelope.data.error && envelope.data.error.code !== 'ok') {
    throw new PlatformHttpError({ status: response.status, retryable: false, bodyExcerpt: response.text.slice(0, 500), ...classify(400, response.text) });
  }
  const parsed = schema.safeParse(envelope.success ? envelope.data.data : undefined);
  if (!parsed.success) {
    throw new PlatformHttpError({ status: response.status, retryable: false, bodyExcerpt: response.text.slice(0, 500), message: `TikTok answered with an unexpected shape: ${parsed.error.issues[0]?.message}` });
  }
  return { data: parsed.data, text: response.text };
}

export const creatorSchema = z.object({
  creator_username: z.string().optional(),
  creator_nickname: z.string().optional(),
  privacy_level_options: z.array(z.string()),
  comment_disabled: z.boolean().default(false),
  duet_disabled: z.boolean().default(false),
  stitch_disabled: z.boolean().default(false),
  max_video_post_duration_sec: z.number().optional(),
});
export type CreatorInfo = z.infer<typeof creatorSchema>;

/** What the creator may post (Content Posting API: query it before each post). */
export const creatorInfo = (context: ProviderContext) => call(context, 'post/publish/creator_info/query/', creatorSchema, { json: {} }).then((result) => result.data);
