// Google's API error body as the Business Profile APIs answer it (details, field violations, the zero-quota case), and calls.
// References: https://developers.google.com/identity/protocols/oauth2/web-server (code exchange and refresh at
// oauth2.googleapis.com/token, client credentials in the form), https://cloud.google.com/apis/design/errors (error body
// {error: {code, message, status, details}}). Tokens and the account come from ../google.ts, shared with YouTube.
import { z } from 'zod';
import { parsedBody, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ConnectContext } from '../types.js';
import { bearerFetch } from '../shared.js';

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
  const parsed = parsedBody(errorSchema, body);
  if (!parsed) return { message: `HTTP ${status}` };
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

export async function googleCall<T>(context: Pick<ConnectContext, 'fetch'>, token: string, request: Omit<PlatformRequest<T>, 'classify'>): Promise<T> {
  return (await bearerFetch(context, token, classify, request)).data;
}
