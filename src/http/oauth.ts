// The OAuth endpoints of the API: the token endpoint (RFC 6749 bodies; authorization_code, refresh_token and the device
// grant), dynamic client registration (RFC 7591, the fallback to client metadata documents), and the discovery documents
// of every MCP URL that takes a bearer token (RFC 9728 protected resource, RFC 8414 authorization server).
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { consumeRateLimit } from '../lib/rate-limit.js';
import { OAuthError, SCOPES, tokenGrant } from '../../tools/internal/oauth.js';
import { GRANT_TYPES, registerDynamicClient } from '../../tools/internal/oauth-apps.js';
import { DEVICE_GRANT_TYPE, pollDeviceToken, startDeviceAuthorization, type DeviceClient, type DeviceForm } from '../../tools/internal/device.js';
import type { Services } from '../../tools/types.js';

/** Where the MCP endpoints answer: under /api (the documented base) and at the root (some clients rewrite a URL to `<host>/mcp...`). */
export const MCP_BASES = ['/api', ''];
const MCP_OAUTH_PATH = '/api/mcp-oauth';
/** The MCP URLs that take a bearer token (an API key or an OAuth token), under each of MCP_BASES: each is a protected resource. */
const MCP_BEARER_PATHS = MCP_BASES.flatMap((base) => [`${base}/mcp`, `${base}/mcp-oauth`]);
const TOKEN_PATH = '/api/oauth/token';
const TOKEN_PATHS = [TOKEN_PATH, '/oauth/token'];
const REGISTER_PATH = '/api/oauth/register';
const DEVICE_AUTHORIZATION_PATH = '/api/oauth/device_authorization';
/** Device authorization (RFC 8628): the standard endpoint, and the postiz CLI's /device/code (with or without /api). */
const DEVICE_START_PATHS: Record<DeviceForm, string[]> = { standard: [DEVICE_AUTHORIZATION_PATH, '/oauth/device_authorization'], cli: ['/device/code', '/api/device/code'] };
/** The postiz CLI's poll of a device login. */
const DEVICE_TOKEN_PATHS = ['/device/token', '/api/device/token'];
const REGISTRATIONS_PER_ADDRESS_PER_HOUR = 30;
const DEVICE_CODES_PER_ADDRESS_PER_HOUR = 30;

/** RFC 9728 §3.1: the metadata of a resource lives at the well-known prefix followed by the resource's path. */
export const protectedResourceMetadataUrl = (services: Services, resourcePath = MCP_OAUTH_PATH) =>
  `${services.config.publicUrl}/.well-known/oauth-protected-resource${resourcePath}`;

/** Browser-based MCP clients (MCP Inspector) call discovery, registration and token endpoints cross-origin; no cookie is involved. */
function openCors(request: Request, response: Response, next: NextFunction): void {
  response.setHeader('Access-Control-Allow-Origin', '*');
  response.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  response.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, MCP-Protocol-Version');
  if (request.method === 'OPTIONS') {
    response.status(204).end();
    return;
  }
  next();
}

function sendOAuthError(response: Response, error: OAuthError): void {
  if (error.status === 401) response.setHeader('WWW-Authenticate', 'Basic realm="herald"');
  response.status(error.status).json({ error: error.error, error_description: error.description });
}

/** client_secret_basic: `Authorization: Basic base64(urlencoded id ":" urlencoded secret)` (RFC 6749 §2.3.1). */
function basicCredentials(header: string | undefined): { client_id?: string; client_secret?: string } {
  const match = header ? /^basic\s+(.+)$/i.exec(header.trim()) : null;
  if (!match) return {};
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const index = decoded.indexOf(':');
  if (index < 0) return {};
  try {
    return { client_id: decodeURIComponent(decoded.slice(0, index)), client_secret: decodeURIComponent(decoded.slice(index + 1)) };
  } catch {
    return {};
  }
}

/** The client named by a request (client_id, and client_secret from the body or HTTP Basic). */
function deviceClientOf(body: Record<string, unknown>): DeviceClient {
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  return { clientId: text(body.client_id), clientSecret: text(body.client_secret) };
}

export function oauthRouter(services: Services): Router {
  const router = express.Router();
  const bodies = [express.json({ limit: '64kb' }), express.urlencoded({ extended: false, limit: '64kb' })];
  const publicUrl = () => services.config.publicUrl;
  // Every path of this router, preflight included (discovery requests carry MCP-Protocol-Version).
  router.use(
    [
      ...MCP_BEARER_PATHS.map((path) => `/.well-known/oauth-protected-resource${path}`),
      '/.well-known/oauth-authorization-server',
      ...TOKEN_PATHS,
      REGISTER_PATH,
      DEVICE_AUTHORIZATION_PATH,
    ],
    openCors,
  );

  for (const path of MCP_BEARER_PATHS) {
    router.get(`/.well-known/oauth-protected-resource${path}`, (_request, response) => {
      response.json({
        resource: `${publicUrl()}${path}`,
        authorization_servers: [publicUrl()],
        scopes_supported: SCOPES,
        bearer_methods_supported: ['header'],
        resource_name: 'Herald',
      });
    });
  }

  router.get('/.well-known/oauth-authorization-server', (_request, response) => {
    response.json({
      issuer: publicUrl(),
      authorization_endpoint: `${publicUrl()}/oauth/authorize`,
      token_endpoint: `${publicUrl()}${TOKEN_PATH}`,
      registration_endpoint: `${publicUrl()}${REGISTER_PATH}`,
      scopes_supported: SCOPES,
      response_types_supported: ['code'],
      grant_types_supported: GRANT_TYPES,
      // Clients may name themselves by the URL of their metadata document (CIMD) instead of registering.
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      device_authorization_endpoint: `${publicUrl()}${DEVICE_AUTHORIZATION_PATH}`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
      code_challenge_methods_supported: ['S256'],
      service_documentation: `${publicUrl()}/developer`,
    });
  });

  /** A poll of the device_code grant (RFC 8628 §3.4): on the token endpoint (the standard form) and on the postiz CLI's /device/token. */
  const pollDevice = async (body: Record<string, unknown>, form: DeviceForm) => {
    const deviceCode = typeof body.device_code === 'string' ? body.device_code : undefined;
    return pollDeviceToken(services.orm.em.fork(), { ...deviceClientOf(body), deviceCode }, { form, publicUrl: services.config.publicUrl, now: services.now() });
  };

  const token = async (request: Request, response: Response, next: NextFunction) => {
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('Pragma', 'no-cache');
    try {
      const body: Record<string, unknown> = { ...basicCredentials(request.headers.authorization), ...((request.body ?? {}) as Record<string, unknown>) };
      if (body.grant_type === DEVICE_GRANT_TYPE) return response.json(await pollDevice(body, 'standard'));
      response.json(await tokenGrant(services.orm.em.fork(), body, services.now(), services.config.publicUrl));
    } catch (error) {
      if (error instanceof OAuthError) return sendOAuthError(response, error);
      next(error);
    }
  };
  router.post(TOKEN_PATHS, ...bodies, token);

  // Device authorization (RFC 8628): the standard endpoint, and the postiz CLI's /device/code and /device/token (JSON, no
  // client_id; its --auth-server is Herald's URL, with or without /api).
  const deviceStart = (form: DeviceForm) => async (request: Request, response: Response, next: NextFunction) => {
    response.setHeader('Cache-Control', 'no-store');
    try {
      const limit = await consumeRateLimit(services.orm.em.fork(), `device-address:${request.ip ?? ''}`, 'device_code', DEVICE_CODES_PER_ADDRESS_PER_HOUR, services.now());
      if (!limit.allowed) {
        response.setHeader('Retry-After', String(limit.resetSeconds));
        return response.status(429).json({ error: 'slow_down', error_description: `At most ${limit.limit} device logins per hour from one address.` });
      }
      const body: Record<string, unknown> = { ...basicCredentials(request.headers.authorization), ...((request.body ?? {}) as Record<string, unknown>) };
      const authorization = await startDeviceAuthorization(
        services.orm.em.fork(),
        { ...deviceClientOf(body), scope: typeof body.scope === 'string' ? body.scope : undefined, userAgent: request.headers['user-agent'], address: request.ip },
        { form, publicUrl: services.config.publicUrl, interval: services.config.devicePollIntervalSeconds, now: services.now() },
      );
      response.json(authorization);
    } catch (error) {
      if (error instanceof OAuthError) return sendOAuthError(response, error);
      next(error);
    }
  };
  router.post(DEVICE_START_PATHS.standard, ...bodies, deviceStart('standard'));
  router.post(DEVICE_START_PATHS.cli, ...bodies, deviceStart('cli'));
  router.post(DEVICE_TOKEN_PATHS, ...bodies, async (request, response, next) => {
    response.setHeader('Cache-Control', 'no-store');
    try {
      const body: Record<string, unknown> = { ...basicCredentials(request.headers.authorization), ...((request.body ?? {}) as Record<string, unknown>) };
      response.json(await pollDevice(body, 'cli'));
    } catch (error) {
      if (error instanceof OAuthError) return sendOAuthError(response, error);
      next(error);
    }
  });

  router.post(REGISTER_PATH, express.json({ limit: '64kb' }), async (request, response, next) => {
    response.setHeader('Cache-Control', 'no-store');
    try {
      const limit = await consumeRateLimit(services.orm.em.fork(), `register-address:${request.ip ?? ''}`, 'oauth_register', REGISTRATIONS_PER_ADDRESS_PER_HOUR, services.now());
      if (!limit.allowed) {
        response.setHeader('Retry-After', String(limit.resetSeconds));
        return response.status(429).json({ error: 'too_many_requests', error_description: `At most ${limit.limit} registrations per hour from one address.` });
      }
      response.status(201).json(await registerDynamicClient(services.orm.em.fork(), request.body, services.now()));
    } catch (error) {
      if (error instanceof OAuthError) return sendOAuthError(response, error);
      next(error);
    }
  });

  // A token request body that is not JSON or a form still gets an RFC 6749 answer.
  router.use([...TOKEN_PATHS, REGISTER_PATH, ...DEVICE_START_PATHS.standard, ...DEVICE_START_PATHS.cli, ...DEVICE_TOKEN_PATHS], (raw: unknown, _request: Request, response: Response, next: NextFunction) => {
    const status = (raw as { status?: number }).status;
    if (status && status >= 400 && status < 500) return sendOAuthError(response, new OAuthError('invalid_request', 'The request body could not be read: send JSON or application/x-www-form-urlencoded.'));
    next(raw);
  });
  return router;
}
