// Slack Web API plumbing. Slack answers most failures with HTTP 200 and `{ok: false, error}` (and rate limits with HTTP 429,
// `{ok: false, error: "ratelimited"}` and Retry-After), so every answer's `ok` is checked and its error code classified here.
// References: https://docs.slack.dev/apis/web-api/ (calling methods, the `ok`/`error` envelope, Bearer tokens),
// https://docs.slack.dev/apis/web-api/rate-limits (429 + Retry-After), each method's page for its errors.
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../../src/lib/platform-http.js';
import type { ConnectContext } from '../types.js';

/** The token is dead or revoked: the core refreshes once (rotating tokens), then asks for a reconnection. */
const AUTH_ERRORS = new Set(['invalid_auth', 'not_authed', 'token_revoked', 'token_expired', 'account_inactive']);
const TRANSIENT_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

const EXPLAIN: Record<string, string> = {
  channel_not_found: 'the channel does not exist or the app cannot see it (channel_not_found): pick one from listChannels',
  not_in_channel: 'the app is not a member of the channel and could not join it (not_in_channel): invite the app to the channel',
  is_archived: 'the channel is archived (is_archived): pick another one from listChannels',
  restricted_action: 'the workspace does not let the app post in this channel (restricted_action)',
  msg_too_long: 'the message is too long for Slack (msg_too_long): shorten it',
  msg_blocks_too_long: 'the message is too long for Slack (msg_blocks_too_long): shorten it',
  invalid_blocks: 'Slack refused the message layout (invalid_blocks)',
  file_uploads_disabled: 'the workspace does not allow file uploads (file_uploads_disabled): remove the media',
  file_uploads_except_images_disabled: 'the workspace allows only pictures to be uploaded (file_uploads_except_images_disabled): remove the video',
  file_upload_size_restricted: 'the file is larger than the workspace allows (file_upload_size_restricted)',
  invalid_code: 'the authorization code is invalid or was already used (invalid_code): connect again',
  invalid_refresh_token: 'the refresh token is invalid (invalid_refresh_token): reconnect the channel',
};

function slackError(code: string, needed?: string): Partial<PlatformHttpErrorInit> {
  if (AUTH_ERRORS.has(code)) return { status: 401, retryable: false, message: `Slack refused the token (${code})` };
  if (TRANSIENT_ERRORS.has(code)) return { retryable: true, message: code === 'ratelimited' ? "Slack's rate limit was reached (ratelimited)" : `Slack had a temporary problem (${code})` };
  if (code === 'missing_scope') return { retryable: false, message: `the Slack app lacks the ${needed ?? 'needed'} scope (missing_scope): add it in the app's settings, then reconnect the channel` };
  return { retryable: false, message: EXPLAIN[code] ?? `Slack answered ${code}` };
}

const envelopeSchema = z.looseObject({ ok: z.boolean(), error: z.string().optional(), needed: z.string().optional() });

/** The Slack error code a failed call carried, e.g. `not_in_channel`. */
export function slackCode(error: unknown): string | undefined {
  if (!(error instanceof PlatformHttpError)) return undefined;
  try {
    return envelopeSchema.safeParse(JSON.parse(error.bodyExcerpt)).data?.error;
  } catch {
    return undefined;
  }
}

function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  let envelope: z.infer<typeof envelopeSchema> | undefined;
  try {
    envelope = envelopeSchema.safeParse(JSON.parse(body)).data;
  } catch {
    envelope = undefined;
  }
  if (envelope?.error) return { ...slackError(envelope.error, envelope.needed), ...(status === 429 ? { retryable: true } : {}) };
  return { message: `Slack answered HTTP ${status}` };
}

export interface SlackContext extends Pick<ConnectContext, 'fetch' | 'endpoints'> {
  auth: { accessToken: string };
}

/**
 * Calls a Web API method (POST, form or JSON body) with the bot token, or with `headers` (the OAuth methods' Basic client
 * credentials). An answer with `ok: false` throws the classified error; a good one is parsed with `schema`.
 */
export async function slack<T>(
  context: SlackContext,
  method: string,
  schema: z.ZodType<T>,
  body: { form?: Record<string, string | undefined>; json?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const { headers = { authorization: `Bearer ${context.auth.accessToken}` }, ...payload } = body;
  const response = await context.fetch({ method: 'POST', url: `${context.endpoints.api}/api/${method}`, headers, ...payload, classify });
  const envelope = envelopeSchema.safeParse(response.data);
  if (envelope.success && !envelope.data.ok) {
    throw new PlatformHttpError({ status: response.status, retryable: false, bodyExcerpt: response.text.slice(0, 500), ...slackError(envelope.data.error ?? 'unknown_error', envelope.data.needed) });
  }
  const parsed = schema.safeParse(response.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PlatformHttpError({ status: response.status, retryable: false, bodyExcerpt: response.text.slice(0, 500), message: `Slack's ${method} answered with an unexpected shape (${issue?.path.join('.')}: ${issue?.message})` });
  }
  return parsed.data;
}
