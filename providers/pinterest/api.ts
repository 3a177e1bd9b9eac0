// Pinterest API v5 calls: the base URL with its version, bearer auth, and Pinterest's error body `{code, message}` turned
// into the right class (401 refresh, 429/5xx retry, the rest permanent with Pinterest's own message).
import { z } from 'zod';
import { parsedBody, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ConnectContext, ProviderContext } from '../types.js';
import { bearerFetch, versionedBase } from '../shared.js';

const errorSchema = z.object({ code: z.number().optional(), message: z.string().optional() });

export function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  const parsed: z.infer<typeof errorSchema> = parsedBody(errorSchema, body) ?? {};
  const message = parsed.message?.trim() || `HTTP ${status}`;
  const hint =
    status === 401 ? ' (reconnect the Pinterest channel if this persists)' : status === 403 ? ' (the account may lack access to this board or pin)' : '';
  return { message: `${message}${hint}` };
}

type CallRequest<T> = Omit<PlatformRequest<T>, 'url' | 'classify'> & { path: string };

/** A call with the channel's (or a fresh) access token. */
export async function call<T>(context: Pick<ConnectContext, 'fetch' | 'endpoints'>, token: string, request: CallRequest<T>): Promise<T> {
  const { path, ...rest } = request;
  const response = await bearerFetch(context, token, classify, { ...rest, url: `${versionedBase(context.endpoints)}${path}` });
  return response.data;
}

export const channelCall = <T>(context: ProviderContext, request: CallRequest<T>) => call(context, context.auth.accessToken, request);

export const accountSchema = z.object({
  id: z.string().optional(),
  username: z.string(),
  business_name: z.string().nullish(),
  profile_image: z.string().nullish(),
  account_type: z.string().optional(),
});

export const pinSchema = z.object({
  id: z.string(),
  board_id: z.string().nullish(),
  title: z.string().nullish(),
  description: z.string().nullish(),
  link: z.string().nullish(),
  created_at: z.string().optional(),
  media: z.looseObject({ media_type: z.string().optional() }).nullish(),
});

export type Pin = z.infer<typeof pinSchema>;

export const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), bookmark: z.string().nullish() });
