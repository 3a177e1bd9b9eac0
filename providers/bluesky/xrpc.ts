// XRPC over context.fetch for Bluesky: the PDS (the user's service), its sessions, and service-auth tokens for other services.
// References: https://docs.bsky.app/docs/api/com-atproto-server-create-session, …-refresh-session, …-get-session,
// …-get-service-auth.
import { z } from 'zod';
import { notSupported } from '../../src/errors.js';
import { PlatformHttpError, type PlatformFetch, type PlatformHttpErrorInit, type PlatformRequest } from '../../src/lib/platform-http.js';
import type { ChannelAuth, ProviderContext } from '../types.js';
import { jwtExpiry } from '../shared.js';

export const endpoints = { service: 'https://bsky.social', web: 'https://bsky.app', video: 'https://video.bsky.app' };

export const sessionSchema = z.object({ accessJwt: z.string(), refreshJwt: z.string(), did: z.string(), handle: z.string() });
export type Session = z.infer<typeof sessionSchema>;
type XrpcRequest<T> = Omit<PlatformRequest<T>, 'url' | 'schema' | 'classify'> & { token?: string };

/**
 * Bluesky answers an expired or revoked token with 400 ExpiredToken/InvalidToken: call it 401 so the core refreshes. A 429
 * waits until the `ratelimit-reset` the PDS sends (Unix seconds).
 */
function classify(status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> | undefined {
  if (status === 429) {
    const reset = Number(headers.get('ratelimit-reset'));
    return Number.isFinite(reset) && reset > Date.now() / 1000 ? { retryable: true, retryAfterSeconds: Math.ceil(reset - Date.now() / 1000) } : undefined;
  }
  if (status !== 400) return undefined;
  try {
    const { error } = JSON.parse(body) as { error?: unknown };
    if (error === 'ExpiredToken' || error === 'InvalidToken') return { status: 401, retryable: false };
  } catch {
    /* not JSON: keep the default classification */
  }
  return undefined;
}

export const trimSlashes = (url: string) => url.replace(/\/+$/, '');
export const serviceOf = (context: ProviderContext) => trimSlashes(context.auth.data.service || context.endpoints.service || endpoints.service);

/** `did:web` of a host (a port is percent-encoded, as did:web requires). */
export const didWeb = (url: string) => `did:web:${new URL(url).host.replace(':', '%3A')}`;

export async function xrpc<T>(fetch: PlatformFetch, service: string, nsid: string, schema: z.ZodType<T>, request: XrpcRequest<T> = {}): Promise<T> {
  const { token, headers, ...rest } = request;
  const response = await fetch({
    ...rest,
    url: `${service}/xrpc/${nsid}`,
    schema,
    classify,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
  });
  return response.data;
}

/** An XRPC call to the channel's PDS with its access token. */
export const call = <T>(context: ProviderContext, nsid: string, schema: z.ZodType<T>, request: XrpcRequest<T> = {}) =>
  xrpc(context.fetch, serviceOf(context), nsid, schema, { token: context.auth.accessToken, ...request });

export const createSession = (fetch: PlatformFetch, service: string, identifier: string, password: string) =>
  xrpc(fetch, service, 'com.atproto.server.createSession', sessionSchema, { method: 'POST', json: { identifier, password } });

/**
 * A write to the PDS (a blob, the post). When the PDS refuses it (a 4xx other than 401 and 429), the login is checked: an app
 * password revoked since the session began leaves the access JWT valid until it expires, about two hours, so a refusal may
 * hide a login that is gone. The stored app password is tried once (createSession); when the PDS refuses it, the error is
 * a 401, so the core's refresh fails at once and the channel asks to be reconnected. Otherwise the refusal stands.
 */
export async function checkedWrite<T>(context: ProviderContext, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const refused = error instanceof PlatformHttpError && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 429 && error.bodyExcerpt !== '';
    const { identifier, appPassword } = context.auth.data;
    if (!refused || !identifier || !appPassword) throw error;
    const login = await createSession(context.fetch, serviceOf(context), identifier, appPassword).catch((failure: unknown) => failure);
    if (login instanceof PlatformHttpError && login.status === 401) {
      throw new PlatformHttpError({
        status: 401,
        retryable: false,
        bodyExcerpt: login.bodyExcerpt,
        message: `Bluesky refused the post (${error.message}) and no longer accepts this channel's app password (${login.message}): it was revoked or changed. Reconnect the channel with a new app password.`,
      });
    }
    throw error;
  }
}

/**
 * A read of Bluesky's AppView (profiles, feeds, post counts) through the PDS, which proxies app.bsky.* methods. A PDS with no
 * AppView behind it (a self-hosted one) answers 501 or 502 to them: that is said as such, not as a temporary failure.
 */
export async function appViewRead<T>(context: ProviderContext, nsid: string, schema: z.ZodType<T>, request: XrpcRequest<T> = {}): Promise<T> {
  try {
    return await call(context, nsid, schema, request);
  } catch (error) {
    if (!(error instanceof PlatformHttpError) || (error.status !== 501 && error.status !== 502)) throw error;
    throw notSupported(`The Bluesky server ${serviceOf(context)} has no AppView to answer ${nsid} (it answered ${error.status}: ${error.bodyExcerpt.slice(0, 200)}), so Bluesky analytics and recent posts are not available for this channel.`, {
      hint: 'Analytics need a PDS connected to an AppView (such as bsky.social, or a self-hosted PDS with PDS_BSKY_APP_VIEW_URL set). Publishing works without one.',
    });
  }
}


export const tokensOf = (session: Session): Required<Pick<ChannelAuth, 'accessToken' | 'refreshToken'>> & Pick<ChannelAuth, 'expiresAt'> => ({ accessToken: session.accessJwt, refreshToken: session.refreshJwt, expiresAt: jwtExpiry(session.accessJwt) });

/** A short-lived token the PDS signs for another service (`aud`), good for one method (`lxm`). */
export async function serviceAuth(context: ProviderContext, aud: string, lxm: string, lifetimeSeconds = 60): Promise<string> {
  const query = { aud, lxm, exp: Math.floor(Date.now() / 1000) + lifetimeSeconds };
  return (await call(context, 'com.atproto.server.getServiceAuth', z.object({ token: z.string() }), { query })).token;
}

const didDocSchema = z.object({ service: z.array(z.object({ id: z.string(), serviceEndpoint: z.unknown() })).optional() });

/** The account's own PDS (its DID document's #atproto_pds), which may differ from the entryway it logs in at (bsky.social). */
export async function pdsOf(context: ProviderContext): Promise<string> {
  const session = await call(context, 'com.atproto.server.getSession', z.object({ didDoc: didDocSchema.optional() }));
  const pds = session.didDoc?.service?.find((entry) => entry.id.endsWith('#atproto_pds'))?.serviceEndpoint;
  return typeof pds === 'string' ? trimSlashes(pds) : serviceOf(context);
}
