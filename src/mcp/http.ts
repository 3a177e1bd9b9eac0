// MCP over streamable HTTP: credential check (401 before any MCP message, 403 when an OAuth token lacks a tool's scope),
// DNS-rebinding protection, then the session layer.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { DomainError, unauthenticated } from '../errors.js';
import type { Caller, Services } from '../../tools/types.js';
import { extractCredential, resolveCredentialValue } from '../http/credentials.js';
import { MCP_BASES, protectedResourceMetadataUrl } from '../http/oauth.js';
import { oauthScopeFor, SCOPES, type Scope } from '../../tools/internal/oauth.js';
import { isOAuthToken } from '../../tools/internal/credentials.js';
import { toolScope } from '../../tools/internal/scopes.js';
import { tools } from '../../tools/index.js';
import { canCall } from '../../tools/runner.js';
import type { McpSessions } from './sessions.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Host must be the public host (or loopback when the public URL is loopback); Origin, when sent, must match it. */
export function hostGuard(services: Services) {
  // The public URL parsed once (again only if the setting changes: the test harness sets it once the port is known).
  let parsed: { source: string; host: string; local: boolean; port: string } | undefined;
  const allowed = (host: string) => {
    if (parsed?.source !== services.config.publicUrl) {
      const url = new URL(services.config.publicUrl);
      parsed = { source: services.config.publicUrl, host: url.host, local: LOOPBACK_HOSTS.has(url.hostname), port: url.port };
    }
    if (host === parsed.host) return true;
    if (!parsed.local) return false;
    const [name, hostPort = ''] = host.startsWith('[') ? [host.slice(0, host.indexOf(']') + 1), host.slice(host.indexOf(']') + 2)] : host.split(':');
    return LOOPBACK_HOSTS.has(name) && hostPort === parsed.port;
  };
  return (request: Request, _response: Response, next: NextFunction) => {
    const host = request.headers.host ?? '';
    const origin = request.headers.origin;
    let originHost: string | undefined;
    try {
      originHost = origin ? new URL(origin).host : undefined;
    } catch {
      originHost = '\u0000';
    }
    if (!allowed(host) || (originHost !== undefined && !allowed(originHost))) {
      return next(
        new DomainError('forbidden', 'Host or Origin not allowed for the MCP endpoint.', {
          hint: `Connect through ${services.config.publicUrl}; the operator sets PUBLIC_URL to the address clients use.`,
        }),
      );
    }
    next();
  };
}

/**
 * The OAuth scope an OAuth token must add for a tools/call of this request (RFC 6750 §3.1 insufficient_scope), so the client
 * can ask the person for it instead of failing; undefined when the request calls nothing it lacks, or needs what no app is
 * granted (the tool then answers its own refusal).
 */
function missingOAuthScope(caller: Caller, body: unknown): { scope: Scope; tool: string } | undefined {
  if (caller.credentialKind !== 'oauth_token') return undefined;
  for (const message of Array.isArray(body) ? body : [body]) {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method !== 'tools/call') continue;
    const tool = tools.find((candidate) => candidate.name === call.params?.name);
    const scope = tool && !canCall(caller, tool) ? oauthScopeFor(toolScope(tool)) : undefined;
    if (tool && scope) return { scope, tool: tool.name };
  }
  return undefined;
}

export function mcpRouter(services: Services, sessions: McpSessions): Router {
  const router = express.Router();
  const json = express.json({ limit: '5mb' });
  const serve = (source: 'header' | 'path' | 'oauth') => async (request: Request, response: Response, next: NextFunction) => {
    try {
      const credential = source === 'path' ? String(request.params.key) : extractCredential(request.headers.authorization, { allowRaw: false });
      // A request of a session with an API key (most of them): the key and the session in one query.
      const sessionId = request.headers['mcp-session-id'];
      if (typeof sessionId === 'string' && credential && !isOAuthToken(credential)) {
        const found = await sessions.resolveWithApiKey(credential, sessionId);
        if (found) return await sessions.handle(request, response, found.caller, found.session);
      }
      // Where and with what client the key was used (the initialize request names the MCP client).
      const clientInfo = (request.body as { params?: { clientInfo?: { name?: unknown; version?: unknown } } } | undefined)?.params?.clientInfo;
      const client = typeof clientInfo?.name === 'string' ? `${clientInfo.name}${typeof clientInfo.version === 'string' ? ` ${clientInfo.version}` : ''} (MCP)` : request.headers['user-agent'];
      const caller = await resolveCredentialValue(services, credential, 'mcp', { address: request.ip, client });
      const metadata = protectedResourceMetadataUrl(services, request.baseUrl + request.path);
      if (!caller || (source === 'path' && caller.credentialKind !== 'api_key')) {
        // The key is the URL itself there: nothing to discover.
        if (source === 'path') {
          response.setHeader('WWW-Authenticate', 'Bearer');
          throw unauthenticated();
        }
        // Every URL that takes a bearer token points clients at its discovery document (RFC 9728 §5.1), so an MCP client
        // given the bare URL gets a token on its own.
        response.setHeader('WWW-Authenticate', `Bearer resource_metadata="${metadata}", scope="${SCOPES.join(' ')}"${credential ? ', error="invalid_token"' : ''}`);
        const signIn = `An MCP client gets an OAuth token by itself: it reads ${metadata} and sends you to approve it in the browser.`;
        if (source === 'header') {
          throw new DomainError('unauthenticated', 'Missing or invalid API key or OAuth access token.', {
            hint: `Send "Authorization: Bearer <API key>" (create one in the console or with \`npm run herald -- key:create\`), or an OAuth access token. ${signIn}`,
          });
        }
        // This endpoint is for clients that get an OAuth token themselves: the answer speaks of that token, not of an API key.
        throw new DomainError('unauthenticated', 'Missing or invalid OAuth access token.', {
          hint: `Send "Authorization: Bearer <access token>". ${signIn} A client set up with an API key connects to ${services.config.publicUrl}/api/mcp instead.`,
        });
      }
      const missing = missingOAuthScope(caller, request.body);
      if (missing) {
        const held = new Set(caller.scopes.map((scope) => oauthScopeFor(scope as Parameters<typeof oauthScopeFor>[0])));
        const wanted = SCOPES.filter((scope) => scope === missing.scope || held.has(scope));
        response.setHeader('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${wanted.join(' ')}", resource_metadata="${metadata}"`);
        throw new DomainError('forbidden', `This OAuth token lacks the ${missing.scope} scope, which ${missing.tool} needs.`, {
          hint: `Authorize the app again and grant ${missing.scope}: an MCP client does so by itself when it follows this answer's WWW-Authenticate challenge.`,
          details: { requiredScope: missing.scope },
        });
      }
      await sessions.handle(request, response, caller);
    } catch (error) {
      next(error);
    }
  };
  // Under /api (the documented base) and at the root, as the spec's `{backend_url}/mcp` allows: some clients (an MCP
  // Inspector on Node 20) rewrite a URL to `<host>/mcp`.
  for (const base of MCP_BASES) {
    router.all(`${base}/mcp`, hostGuard(services), json, serve('header'));
    router.all(`${base}/mcp-oauth`, hostGuard(services), json, serve('oauth'));
    router.all(`${base}/mcp/:key`, hostGuard(services), json, serve('path'));
  }
  return router;
}
