// MCP over streamable HTTP: credential check (401 before any MCP message), DNS-rebinding protection, then the session layer.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { DomainError, unauthenticated } from '../errors.js';
import type { Services } from '../../tools/types.js';
import { extractCredential, resolveCredentialValue } from '../http/credentials.js';
import { MCP_BASES, protectedResourceMetadataUrl } from '../http/oauth.js';
import { SCOPES } from '../../tools/internal/oauth.js';
import { isOAuthToken } from '../../tools/internal/credentials.js';
import type { McpSessions } from './sessions.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Host must be the public host (or loopback when the public URL is loopback); Origin, when sent, must match it. */
export function hostGuard(services: Services) {
  return (request: Request, _response: Response, next: NextFunction) => {
    const publicUrl = new URL(services.config.publicUrl);
    const local = LOOPBACK_HOSTS.has(publicUrl.hostname);
    const port = publicUrl.port;
    const allowed = (host: string) => {
      if (host === publicUrl.host) return true;
      if (!local) return false;
      const [name, hostPort = ''] = host.startsWith('[') ? [host.slice(0, host.indexOf(']') + 1), host.slice(host.indexOf(']') + 2)] : host.split(':');
      return LOOPBACK_HOSTS.has(name) && hostPort === port;
    };
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
      const caller = await resolveCredentialValue(services, credential, { address: request.ip, client });
      if (!caller || (source === 'path' && caller.credentialKind !== 'api_key')) {
        // /api/mcp-oauth points clients at its discovery document (RFC 9728 §5.1) so they can get a token on their own.
        if (source !== 'oauth') {
          response.setHeader('WWW-Authenticate', 'Bearer');
          throw unauthenticated();
        }
        const metadata = protectedResourceMetadataUrl(services, request.baseUrl + request.path);
        response.setHeader('WWW-Authenticate', `Bearer resource_metadata="${metadata}", scope="${SCOPES.join(' ')}"${credential ? ', error="invalid_token"' : ''}`);
        // This endpoint is for clients that get an OAuth token themselves: the answer speaks of that token, not of an API key.
        throw new DomainError('unauthenticated', 'Missing or invalid OAuth access token.', {
          hint: `Send "Authorization: Bearer <access token>". An MCP client gets one by itself: it reads ${metadata}, registers, and sends you to approve it in the browser. A client set up with an API key connects to ${services.config.publicUrl}/api/mcp instead.`,
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
