// Browser sessions and CSRF protection of the console.
// The session cookie is HttpOnly, SameSite=Lax and Secure behind HTTPS. Every form carries a CSRF token: an HMAC of a
// per-browser cookie and the session, checked on every POST together with the Origin header.
import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { DomainError } from '../../errors.js';
import { randomToken, safeEqual, sha256 } from '../../lib/crypto.js';
import { resolveSession, SESSION_DAYS, type SignedIn } from '../../../tools/internal/accounts.js';
import { runTool } from '../../../tools/runner.js';
import type { Caller, Services, ToolDefinition } from '../../../tools/types.js';
import { OWNER_SCOPES } from '../../../tools/internal/scopes.js';
import { asCaller } from '../../../tools/internal/visibility.js';

export const SESSION_COOKIE = 'herald_session';
const CSRF_COOKIE = 'herald_csrf';

export interface ConsoleLocals {
  signedIn?: SignedIn;
  csrf: string;
  sessionToken?: string;
}

export function cookies(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    const name = part.slice(0, index).trim();
    try {
      out[name] = decodeURIComponent(part.slice(index + 1).trim());
    } catch {
      // A malformed cookie is ignored, like a missing one.
    }
  }
  return out;
}

const secure = (services: Services, request: Request) => request.secure || services.config.publicUrl.startsWith('https:');

function cookieOptions(services: Services, request: Request, maxAgeMs?: number) {
  return { httpOnly: true, sameSite: 'lax' as const, secure: secure(services, request), path: '/', ...(maxAgeMs ? { maxAge: maxAgeMs } : {}) };
}

export function setSessionCookie(services: Services, request: Request, response: Response, token: string): void {
  response.cookie(SESSION_COOKIE, token, cookieOptions(services, request, SESSION_DAYS * 24 * 60 * 60 * 1000));
}

export function clearSessionCookie(services: Services, request: Request, response: Response): void {
  response.clearCookie(SESSION_COOKIE, cookieOptions(services, request));
}

/** The token for forms rendered now: bound to this browser's CSRF cookie and to its session (none before log-in). */
export function csrfToken(services: Services, browserSecret: string, sessionToken: string | undefined): string {
  return services.secrets.mac('csrf', `${browserSecret}|${sessionToken ? sha256(sessionToken) : ''}`);
}

/** Loads the session (if any) and the CSRF token into response.locals; checks the CSRF token of every POST. */
export function consoleSession(services: Services) {
  // Express 5 passes a rejected promise of a handler to the error handlers.
  return async (request: Request, response: Response, next: NextFunction) => {
    const jar = cookies(request);
    let browserSecret = jar[CSRF_COOKIE];
    if (!browserSecret || !/^[\w-]{20,100}$/.test(browserSecret)) {
      browserSecret = randomToken(24);
      response.cookie(CSRF_COOKIE, browserSecret, cookieOptions(services, request, 365 * 24 * 60 * 60 * 1000));
    }
    const sessionToken = jar[SESSION_COOKIE];
    const signedIn = await resolveSession(services.orm.em.fork(), sessionToken, services.now());
    const locals: ConsoleLocals = { signedIn, sessionToken: signedIn ? sessionToken : undefined, csrf: csrfToken(services, browserSecret, signedIn ? sessionToken : undefined) };
    Object.assign(response.locals, locals);
    if (request.method === 'POST') {
      const origin = request.headers.origin;
      if (origin && origin !== 'null' && origin !== new URL(services.config.publicUrl).origin && origin !== `${request.protocol}://${request.headers.host}`) {
        throw new DomainError('forbidden', 'This form was sent from another site.', { hint: 'Open the page on this Herald and send the form again.' });
      }
      const sent = typeof request.body?._csrf === 'string' ? request.body._csrf : '';
      if (!sent || !safeEqual(sent, locals.csrf)) {
        throw new DomainError('forbidden', 'The form expired or was not sent from this console.', { hint: 'Go back, reload the page and send the form again.' });
      }
    }
    // Everything the page does runs as the signed-in person: the audit trail names them (tools/internal/audit.ts).
    if (signedIn?.organization) await asCaller(consoleCaller(response), async () => next());
    else next();
  };
}

export const consoleLocals = (response: Response) => response.locals as ConsoleLocals;

const OWN_ORIGIN = 'http://herald.invalid';
/** One slash, not followed by a second slash or a backslash (browsers read "\\" as "/"). */
const ONE_SLASH = /^\/(?![/\\])/;
/** Browsers drop tabs and newlines inside a URL, so "/\t/evil.com" would become "//evil.com". */
const UNSAFE_CHARACTER = /[\\\s\u0000-\u001f\u007f]/;

/**
 * Where to go after logging in or signing up: only a path on this site, never another origin however it is spelled
 * (`//evil.com`, `/\\evil.com`, `https://evil.com`, `/\t/evil.com`, `/.//evil.com`), nor once decoded again
 * (`/%2F%2Fevil.com`), in case something on the way (a proxy) decodes it. Anything doubtful is refused, not repaired.
 */
export function safeNext(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length >= 2000 || !ONE_SLASH.test(value) || UNSAFE_CHARACTER.test(value)) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value).replace(/[\t\n\r]/g, '');
  } catch {
    return undefined;
  }
  // Resolved as a browser would: still this site, and not a path like "/.//evil.com" that resolves to "//evil.com".
  const resolved = new URL(value, OWN_ORIGIN);
  if (!ONE_SLASH.test(decoded) || resolved.origin !== OWN_ORIGIN || !ONE_SLASH.test(resolved.pathname)) return undefined;
  return value;
}

export function requireSignedIn(request: Request, response: Response, next: NextFunction): void {
  const locals = consoleLocals(response);
  if (!locals.signedIn) {
    response.redirect(303, `/login?next=${encodeURIComponent(request.originalUrl)}`);
    return;
  }
  if (!locals.signedIn.organization) {
    next(new DomainError('forbidden', 'You are not a member of any organization.', { hint: 'Ask an owner for an invitation link.' }));
    return;
  }
  next();
}

export function requireOwner(_request: Request, response: Response, next: NextFunction): void {
  if (consoleLocals(response).signedIn?.organization?.role !== 'owner') {
    next(new DomainError('forbidden', 'Only owners of the organization can do this.', { hint: 'Ask an owner of the organization.' }));
    return;
  }
  next();
}

/** The console acts as the signed-in user's current organization, with every scope (pages check owner-only acts themselves). */
export function consoleCaller(response: Response): Caller {
  const signedIn = consoleLocals(response).signedIn!;
  return {
    organizationId: signedIn.organization!.id,
    credentialId: `session:${signedIn.session.id}`,
    credentialKind: 'session',
    scopes: OWNER_SCOPES,
    // Who and from where, for the audit trail.
    name: signedIn.user.name || signedIn.user.email,
    personId: signedIn.user.id,
    origin: { via: 'console', address: response.req.ip ?? null, client: response.req.get('user-agent') ?? null },
  };
}

/** Runs a tool for a console request, as its signed-in user's organization (consoleCaller). */
export function runConsoleTool<Tool extends ToolDefinition>(tool: Tool, input: unknown, response: Response, services: Services): Promise<z.output<Tool['output']>> {
  return runTool(tool, input, consoleCaller(response), services, String(response.locals.requestId));
}

const REVEAL_COOKIE = 'herald_reveal';

/**
 * Shows a secret once after a redirect (Post/Redirect/Get: reloading the page never repeats the action). The secret
 * travels sealed in a short-lived cookie bound to the session, and is cleared when read.
 */
export function revealAfterRedirect(services: Services, request: Request, response: Response, kind: string, value: Record<string, string>): void {
  const sessionToken = consoleLocals(response).sessionToken ?? '';
  const sealed = services.secrets.sealJson({ kind, value, session: sha256(sessionToken), expiresAt: services.now().getTime() + 5 * 60_000 });
  response.cookie(REVEAL_COOKIE, sealed, { ...cookieOptions(services, request, 5 * 60_000) });
}

export function takeReveal(services: Services, request: Request, response: Response, kind: string): Record<string, string> | undefined {
  const sealed = cookies(request)[REVEAL_COOKIE];
  if (!sealed) return undefined;
  response.clearCookie(REVEAL_COOKIE, cookieOptions(services, request));
  try {
    const opened = services.secrets.openJson<{ kind: string; value: Record<string, string>; session: string; expiresAt: number }>(sealed);
    const sessionToken = consoleLocals(response).sessionToken ?? '';
    if (opened.kind !== kind || opened.session !== sha256(sessionToken) || opened.expiresAt < services.now().getTime()) return undefined;
    return opened.value;
  } catch {
    return undefined;
  }
}
