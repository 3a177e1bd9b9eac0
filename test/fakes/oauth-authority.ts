// The bookkeeping of a fake OAuth 2.0 authorization server, shared by the platform fakes: authorization codes bound to the
// client, redirect URI and PKCE challenge; access and refresh tokens that expire, rotate and can be revoked. Each fake
// wires it to its platform's own HTTP shapes (form or JSON, Basic or body credentials, GET on Meta), so a provider that
// sends the wrong shape still fails against its fake.
import { createHash, randomBytes } from 'node:crypto';
import type { FakeHandler, FakeReply, RecordedRequest } from '../helpers/fake-server.js';

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  scope?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
}

export interface IssuedToken {
  accessToken: string;
  refreshToken?: string;
  expiresIn: number;
  scope?: string;
}

export class OAuthRefusal extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type',
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }
}

export interface OAuthAuthorityOptions {
  clientId?: string;
  clientSecret?: string;
  /** Codes without a PKCE challenge are refused (X, Kick, VK...). */
  requirePkce?: boolean;
  /** Seconds an access token lives. */
  expiresIn?: number;
  /** Refresh tokens are single use: each refresh answers a new one (X). */
  rotateRefreshTokens?: boolean;
  /** No refresh token is issued (Meta, LinkedIn without the refresh program). */
  noRefreshTokens?: boolean;
}

const token = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;

export function createOAuthAuthority(options: OAuthAuthorityOptions = {}) {
  const clientId = options.clientId ?? 'test-client-id';
  const clientSecret = options.clientSecret ?? 'test-client-secret';
  const codes = new Map<string, AuthorizeRequest & { used: boolean }>();
  const access = new Map<string, { expiresAt: number; revoked: boolean; subject: string }>();
  const refresh = new Map<string, { used: boolean; subject: string }>();
  let subject = 'user-1';

  const issue = (forSubject: string): IssuedToken => {
    const expiresIn = options.expiresIn ?? 7200;
    const accessToken = token('access');
    access.set(accessToken, { expiresAt: Date.now() + expiresIn * 1000, revoked: false, subject: forSubject });
    let refreshToken: string | undefined;
    if (!options.noRefreshTokens) {
      refreshToken = token('refresh');
      refresh.set(refreshToken, { used: false, subject: forSubject });
    }
    return { accessToken, refreshToken, expiresIn };
  };

  return {
    clientId,
    clientSecret,
    /** The user the next authorization is for. */
    setSubject(value: string) {
      subject = value;
    },
    /** The consent screen, approved: checks the request and answers the code to send back. */
    authorize(request: AuthorizeRequest): string {
      if (request.clientId !== clientId) throw new OAuthRefusal('invalid_client', `unknown client_id ${request.clientId}`);
      if (!request.redirectUri) throw new OAuthRefusal('invalid_request', 'redirect_uri is required');
      if (!request.state) throw new OAuthRefusal('invalid_request', 'state is required');
      if (options.requirePkce && (!request.codeChallenge || request.codeChallengeMethod !== 'S256')) {
        throw new OAuthRefusal('invalid_request', 'code_challenge with code_challenge_method=S256 is required');
      }
      const code = token('code');
      codes.set(code, { ...request, used: false });
      return code;
    },
    /** The redirect a user's approval produces. */
    approvalRedirect(request: AuthorizeRequest): string {
      const code = this.authorize(request);
      const url = new URL(request.redirectUri);
      url.searchParams.set('code', code);
      url.searchParams.set('state', request.state);
      return url.toString();
    },
    /** The approval of an authorization request read from the usual query (client_id, redirect_uri, state, scope, PKCE). */
    approveQuery(query: URLSearchParams): string {
      return this.approvalRedirect({
        clientId: query.get('client_id') ?? '',
        redirectUri: query.get('redirect_uri') ?? '',
        state: query.get('state') ?? '',
        scope: query.get('scope') ?? undefined,
        codeChallenge: query.get('code_challenge') ?? undefined,
        codeChallengeMethod: query.get('code_challenge_method') ?? undefined,
      });
    },
    checkClient(id: string | undefined, secret: string | undefined, options: { secretRequired?: boolean } = { secretRequired: true }): void {
      if (id !== clientId) throw new OAuthRefusal('invalid_client', 'client_id is wrong or missing');
      if (options.secretRequired !== false && secret !== clientSecret) throw new OAuthRefusal('invalid_client', 'client_secret is wrong or missing');
    },
    /** Redeems a code: same client and redirect URI as the authorization, single use, and the PKCE verifier when a challenge was sent. */
    redeemCode(request: { code?: string; redirectUri?: string; codeVerifier?: string; clientId?: string }): IssuedToken & { subject: string } {
      const entry = request.code ? codes.get(request.code) : undefined;
      if (!entry || entry.used) throw new OAuthRefusal('invalid_grant', 'authorization code is invalid, expired or already used');
      entry.used = true;
      if (request.clientId !== undefined && request.clientId !== entry.clientId) throw new OAuthRefusal('invalid_grant', 'code was issued to another client');
      if (request.redirectUri !== entry.redirectUri) throw new OAuthRefusal('invalid_grant', 'redirect_uri does not match the authorization request');
      if (entry.codeChallenge) {
        const computed = createHash('sha256').update(request.codeVerifier ?? '').digest('base64url');
        if (computed !== entry.codeChallenge) throw new OAuthRefusal('invalid_grant', 'code_verifier does not match the code_challenge');
      }
      return { ...issue(subject), scope: entry.scope, subject };
    },
    redeemRefreshToken(value: string | undefined): IssuedToken {
      const entry = value ? refresh.get(value) : undefined;
      if (!entry || entry.used) throw new OAuthRefusal('invalid_grant', 'refresh token is invalid or was already used');
      if (options.rotateRefreshTokens) entry.used = true;
      const issued = issue(entry.subject);
      if (!options.rotateRefreshTokens && issued.refreshToken) {
        refresh.delete(issued.refreshToken);
        issued.refreshToken = value;
      }
      return issued;
    },
    /** Issues a token directly (a channel connected without going through the consent screen in a test). */
    issue: (forSubject = subject) => issue(forSubject),
    /** Answers the subject of a valid bearer token, or undefined (expired, revoked or unknown). */
    subjectOf(bearer: string | undefined): string | undefined {
      const entry = bearer ? access.get(bearer) : undefined;
      if (!entry || entry.revoked || entry.expiresAt < Date.now()) return undefined;
      return entry.subject;
    },
    /**
     * Wraps a handler so it runs only for a valid bearer token, with the token's subject; any other request is answered
     * `refusal` (a function when each refusal must be made anew).
     */
    guard(refusal: FakeReply | (() => FakeReply)) {
      return (handler: (request: RecordedRequest, subject: string) => FakeReply | Promise<FakeReply>): FakeHandler =>
        (request) => {
          const subject = this.subjectOf(bearerOf(request.headers.authorization));
          if (subject) return handler(request, subject);
          return typeof refusal === 'function' ? refusal() : refusal;
        };
    },
    /** Makes every access token issued so far expired (the next call gets a 401; a refresh fixes it). */
    expireAccessTokens() {
      for (const entry of access.values()) entry.expiresAt = 0;
    },
    /** Revokes every token: access and refresh (the channel must be reconnected). */
    revokeAll() {
      for (const entry of access.values()) entry.revoked = true;
      for (const entry of refresh.values()) entry.used = true;
    },
  };
}

export type OAuthAuthority = ReturnType<typeof createOAuthAuthority>;

/** `Authorization: Basic base64(id:secret)` of a request, decoded. */
export function basicCredentials(header: string | undefined): { id?: string; secret?: string } {
  if (!header?.startsWith('Basic ')) return {};
  const [id, ...rest] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
  return { id: decodeURIComponent(id), secret: decodeURIComponent(rest.join(':')) };
}

/** The bearer token of a request. */
export const bearerOf = (header: string | undefined) => (header?.startsWith('Bearer ') ? header.slice(7) : undefined);

/** The standard OAuth 2.0 error answer of a token endpoint (RFC 6749 5.2): 401 for invalid_client, else 400. */
export const refusalReply = (refusal: OAuthRefusal): FakeReply => ({ status: refusal.error === 'invalid_client' ? 401 : 400, json: { error: refusal.error, error_description: refusal.description } });
