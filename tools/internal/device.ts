// The OAuth 2.0 device authorization grant (RFC 8628), so a CLI or a headless agent logs in without copying a key: it asks
// for a device code, the person enters the short user code on the console's /device page, sees what is asking and for
// which organization, and approves or denies; the client's polling then gets a `pos_` access token with the granted
// scopes, listed under approved apps and revocable there. Answered in the standard form (client_id required at both the
// device authorization and the token endpoint, as RFC 8628 §3.1 and §3.4 say; form bodies; the token endpoint's
// device_code grant) and in the postiz CLI's form (POST /device/code and /device/token with JSON, no client_id, answering
// api_url and organization_id). A login is polled in the form it was started in.
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomInt } from 'node:crypto';
import { OrganizationSchema } from '../../src/db/entities.js';
import { DeviceCodeSchema, OAuthAppSchema, type DeviceCode, type OAuthApp } from '../../src/db/account-entities.js';
import { DomainError, invalidInput } from '../../src/errors.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import { authenticateClient, issueAccessToken, OAuthError, SCOPES, type Scope } from './oauth.js';
import { recordChange } from './audit.js';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const LIFETIME_SECONDS = 15 * 60;
/** RFC 8628 §6.1: consonants only (no vowels, no look-alikes), 8 characters shown as XXXX-XXXX: 20^8 codes. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** The app that holds the tokens of clients that sent no client_id (the postiz CLI): one row, created on first use. */
const DEVICE_LOGIN_CLIENT_ID = 'pca_device-login';

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

function newUserCode(): string {
  let code = '';
  for (let index = 0; index < 8; index++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** What a person types, made comparable: case, spaces and dashes do not matter. */
export function normalizeUserCode(value: string): string {
  return value.toUpperCase().replace(/[^A-Z]/g, '');
}

export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

async function deviceLoginApp(em: EntityManager, now: Date): Promise<OAuthApp> {
  await em.getConnection().execute(
    `insert into oauth_app (id, organization_id, name, description, picture_url, redirect_uris, client_id, client_secret_hash, token_endpoint_auth_method, dynamic, created_at)
     values (?, null, 'Command-line login', 'A command-line client (such as the postiz CLI) that logged in with a device code.', null, '[]', ?, null, 'none', false, ?)
     on conflict (client_id) do nothing`,
    [newId(), DEVICE_LOGIN_CLIENT_ID, now],
  );
  return em.findOneOrFail(OAuthAppSchema, { clientId: DEVICE_LOGIN_CLIENT_ID });
}

/**
 * Which form a device request has: `standard` (RFC 8628 §3.1 and §3.4: the device authorization endpoint and the token
 * endpoint, where client_id is required at both) or `cli` (the postiz CLI's /device/code and /device/token, no client_id).
 */
export type DeviceForm = 'standard' | 'cli';

export interface DeviceClient {
  clientId?: string;
  clientSecret?: string;
}

/**
 * The client of a device request, decided the same way at the start and at every poll: a client_id is authenticated as at
 * the token endpoint (a confidential client sends its secret too); without one, the standard form is refused and the
 * CLI's form is the shared "Command-line login" app.
 */
async function deviceClient(em: EntityManager, client: DeviceClient, form: DeviceForm, now: Date): Promise<OAuthApp> {
  if (client.clientId) {
    if (client.clientId === DEVICE_LOGIN_CLIENT_ID) throw new OAuthError('invalid_client', 'Client authentication failed: unknown client_id.', 401);
    return authenticateClient(em, { clientId: client.clientId, clientSecret: client.clientSecret });
  }
  if (form === 'standard') {
    throw new OAuthError('invalid_request', 'client_id is required: register the client at /api/oauth/register (grant_types ["urn:ietf:params:oauth:grant-type:device_code"]) and send its client_id.');
  }
  return deviceLoginApp(em, now);
}

/** Starts a device authorization for the client of `form`. */
export async function startDeviceAuthorization(
  em: EntityManager,
  request: DeviceClient & { scope?: string; userAgent?: string; address?: string },
  options: { form: DeviceForm; publicUrl: string; interval: number; now: Date },
): Promise<DeviceAuthorization> {
  const app = await deviceClient(em, request, options.form, options.now);
  let scopes: Scope[] = [...SCOPES];
  if (request.scope?.trim()) {
    const requested = request.scope.trim().split(/\s+/);
    scopes = SCOPES.filter((scope) => requested.includes(scope));
    if (scopes.length === 0) throw new OAuthError('invalid_scope', `None of the requested scopes exists here; use mcp:read and/or mcp:write.`);
  }
  const deviceCode = randomToken(32);
  // A collision with a live code is astronomically rare; the unique index decides, and a second draw fixes it.
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    try {
      await em.getConnection().execute(
        `insert into oauth_device_code (id, device_code_hash, user_code, app_id, scopes, client_user_agent, client_address, interval_seconds, status, created_at, expires_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
        [newId(), sha256(deviceCode), userCode, app.id, JSON.stringify(scopes), request.userAgent?.slice(0, 300) ?? null, request.address ?? null, options.interval, options.now, new Date(options.now.getTime() + LIFETIME_SECONDS * 1000)],
      );
      const verification = `${options.publicUrl}/device`;
      return {
        device_code: deviceCode,
        user_code: formatUserCode(userCode),
        verification_uri: verification,
        verification_uri_complete: `${verification}?code=${formatUserCode(userCode)}`,
        expires_in: LIFETIME_SECONDS,
        interval: options.interval,
      };
    } catch (error) {
      if ((error as { code?: string }).code !== '23505' || attempt >= 3) throw error;
    }
  }
}

export interface PendingDevice {
  device: DeviceCode;
  app: OAuthApp;
}

/** The live, undecided request behind a user code, for the verification page; a wrong or used code is one answer. */
export async function findPendingDevice(em: EntityManager, typed: string, now: Date): Promise<PendingDevice> {
  const userCode = normalizeUserCode(typed);
  const device = userCode.length === 8 ? await em.findOne(DeviceCodeSchema, { userCode, status: 'pending', expiresAt: { $gt: now } }) : null;
  if (!device) {
    throw invalidInput('That code is not valid: it may be mistyped, already used or expired (codes last 15 minutes).', {
      hint: 'Check the code your terminal shows, or start the login again there.',
    });
  }
  const app = await em.findOneOrFail(OAuthAppSchema, { id: device.appId });
  if (app.deletedAt) throw invalidInput('The app asking for access was deleted.');
  return { device, app };
}

/** The person's decision. Only a pending, live request changes; its user code can never be entered again. */
export async function decideDevice(
  em: EntityManager,
  typed: string,
  decision: { approve: boolean; userId: string; organizationId: string; scopes: Scope[] },
  now: Date,
): Promise<void> {
  const { device } = await findPendingDevice(em, typed, now);
  const granted = decision.scopes.filter((scope) => (device.scopes as string[]).includes(scope));
  if (decision.approve && granted.length === 0) throw invalidInput('Grant at least one permission, or deny the request.');
  const updated = await em.nativeUpdate(
    DeviceCodeSchema,
    { id: device.id, status: 'pending' },
    decision.approve
      ? { status: 'approved', userId: decision.userId, organizationId: decision.organizationId, scopes: granted, decidedAt: now }
      : { status: 'denied', userId: decision.userId, decidedAt: now },
  );
  if (updated !== 1) throw new DomainError('conflict', 'This request was already decided.');
  if (decision.approve) {
    await recordChange(em, decision.organizationId, { action: 'app.authorized', target: { kind: 'device_login', id: device.id }, did: `authorized a device login (${granted.join(', ')})`, changes: { scopes: granted } });
  }
}

export interface DeviceToken {
  access_token: string;
  token_type: 'bearer';
  scope: string;
  /** The organization the token acts for, and the base the postiz CLI appends /public/v1/... to. */
  organization_id: string;
  api_url: string;
  /** The spec's token answer fields. */
  id: string;
  cus: string;
}

/**
 * One poll of the device code. RFC 8628 §3.5 errors: authorization_pending, slow_down (polled faster than the interval,
 * which then grows by 5 seconds), access_denied, expired_token; a code already exchanged is invalid_grant.
 */
export async function pollDeviceToken(
  em: EntityManager,
  request: DeviceClient & { deviceCode?: string },
  options: { form: DeviceForm; publicUrl: string; now: Date },
): Promise<DeviceToken> {
  const { now } = options;
  const app = await deviceClient(em, request, options.form, now);
  if (!request.deviceCode) throw new OAuthError('invalid_request', 'device_code is required.');
  const device = await em.findOne(DeviceCodeSchema, { deviceCodeHash: sha256(request.deviceCode) });
  if (!device) throw new OAuthError('invalid_grant', 'Unknown device_code.');
  if (device.appId !== app.id) {
    throw new OAuthError('invalid_grant', 'The device_code was issued to another client: poll with the client_id that started the login (or none, for a login started without one).');
  }
  if (device.status === 'used') throw new OAuthError('invalid_grant', 'This device_code was already exchanged for a token.');
  if (device.status === 'denied') throw new OAuthError('access_denied', 'The request was denied.');
  if (device.expiresAt <= now) throw new OAuthError('expired_token', 'The device code expired; start the login again.');
  if (device.status === 'pending') {
    // One second of slack: clients sleep `interval` between polls, and their clocks are not ours.
    const tooSoon = device.lastPolledAt && now.getTime() - device.lastPolledAt.getTime() < (device.intervalSeconds - 1) * 1000;
    await em.nativeUpdate(DeviceCodeSchema, { id: device.id }, { lastPolledAt: now, ...(tooSoon ? { intervalSeconds: device.intervalSeconds + 5 } : {}) });
    if (tooSoon) throw new OAuthError('slow_down', `Poll at most every ${device.intervalSeconds + 5} seconds.`);
    throw new OAuthError('authorization_pending', 'Waiting for the person to enter the code and approve.');
  }
  // Approved: exactly one poll turns it into a token.
  const claimed = await em.nativeUpdate(DeviceCodeSchema, { id: device.id, status: 'approved' }, { status: 'used' });
  if (claimed !== 1) throw new OAuthError('invalid_grant', 'This device_code was already exchanged for a token.');
  const { accessToken, tokenId } = await issueAccessToken(em, { appId: app.id, userId: device.userId!, organizationId: device.organizationId!, scopes: device.scopes }, now);
  await em.nativeUpdate(DeviceCodeSchema, { id: device.id }, { tokenId });
  const organization = await em.findOneOrFail(OrganizationSchema, { id: device.organizationId! });
  return {
    access_token: accessToken,
    token_type: 'bearer',
    scope: (device.scopes as string[]).join(' '),
    organization_id: organization.id,
    api_url: `${options.publicUrl}/api`,
    id: organization.id,
    cus: organization.billingCustomer ?? '',
  };
}
