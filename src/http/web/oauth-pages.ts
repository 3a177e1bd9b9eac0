// OAuth apps (register, rotate the secret, delete), the apps a user approved, and the consent screen of /oauth/authorize.
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import { appsOf, approvedApps, deleteApp, registerApp, revokeApproval, rotateSecret } from '../../../tools/internal/oauth-apps.js';
import {
  approve,
  checkAuthorizationRequest,
  denialUrl,
  SCOPE_DESCRIPTIONS,
  type AuthorizationParams,
  type AuthorizationRequest,
} from '../../../tools/internal/oauth.js';
import { isMetadataDocumentClient } from '../../../tools/internal/client-metadata.js';
import type { Services } from '../../../tools/types.js';
import type { McpSessions } from '../../mcp/sessions.js';
import { clientError, consentActions, csrfField, html, organizationField, safeUrl, sendPage, sentence, type Markup } from './html.js';
import { consoleCaller, consoleLocals, requireOwner, requireSignedIn, revealAfterRedirect, takeReveal } from './session.js';
import { consoleZones, pageZone, when } from './zones.js';

const text = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

const logo = (name: string, pictureUrl: string | null | undefined) =>
  safeUrl(pictureUrl)
    ? html`<img class="app-logo" src="${safeUrl(pictureUrl)}" alt="" referrerpolicy="no-referrer">`
    : html`<span class="initial" aria-hidden="true">${(name.trim()[0] ?? '?').toUpperCase()}</span>`;

const APP_NOTICES: Record<string, string> = { deleted: 'App deleted. Its tokens no longer work.', revoked: 'Access revoked. The app can no longer act for you.' };

export function oauthPages(router: Router, services: Services, sessions: McpSessions): void {
  async function appsPage(request: Request, response: Response, options: { secret?: { appName: string; clientId: string; clientSecret: string; created: boolean }; error?: string; status?: number } = {}) {
    const { signedIn, csrf } = consoleLocals(response);
    const organization = signedIn!.organization!;
    const apps = await appsOf(services.orm.em.fork(), organization.id);
    const zones = await consoleZones(services, request, response);
    const owner = organization.role === 'owner';
    const notice = typeof request.query.notice === 'string' ? APP_NOTICES[request.query.notice] : undefined;
    const flash = options.error ? { kind: 'error' as const, text: options.error } : notice ? { kind: 'ok' as const, text: notice } : undefined;
    sendPage(
      response,
      { title: 'OAuth apps', signedIn, csrf, section: 'apps', status: options.status, flash, zone: pageZone(zones) },
      html`<h1>OAuth apps</h1>
      <p>Register an app to let it act for Herald users through the authorization-code flow: send users to
      <code>${services.config.publicUrl}/oauth/authorize?client_id=…&amp;response_type=code&amp;state=…</code>, then exchange the code at
      <code>${services.config.publicUrl}/api/oauth/token</code>.</p>
      ${options.secret
        ? html`<section class="card" aria-labelledby="secret-title"><h2 id="secret-title">${options.secret.created ? 'App registered' : 'Secret rotated'}: ${options.secret.appName}</h2>
          <p>Client ID: <code id="client-id">${options.secret.clientId}</code></p>
          <p>Client Secret (shown only now; copy it):</p><code class="secret" id="client-secret">${options.secret.clientSecret}</code>
          ${options.secret.created ? '' : html`<p class="hint">The previous secret no longer works for new exchanges; tokens already issued stay valid.</p>`}</section>`
        : ''}
      ${apps.length === 0
        ? html`<p class="card">No app registered yet.</p>`
        : apps.map(
            (app) => html`<section class="card" aria-label="${app.name}"><div class="app-head">${logo(app.name, app.pictureUrl)}<div><h2>${app.name}</h2>
            ${app.description ? html`<p>${app.description}</p>` : ''}</div></div>
            <p>Client ID: <code>${app.clientId}</code><br>Redirect URL: <code>${app.redirectUris[0]}</code><br>
            <span class="hint">Registered ${when(app.createdAt, zones.viewer)}${app.secretRotatedAt ? html`, secret rotated ${when(app.secretRotatedAt, zones.viewer)}` : ''}</span></p>
            ${owner
              ? html`<div class="actions">
                <form method="post" action="/apps/${app.id}/rotate-secret">${csrfField(csrf)}
                  <label class="hint"><input type="checkbox" name="confirm" value="yes" required> the current secret stops working</label>
                  <button type="submit" class="secondary">Rotate secret</button></form>
                <form method="post" action="/apps/${app.id}/delete">${csrfField(csrf)}
                  <label class="hint"><input type="checkbox" name="confirm" value="yes" required> revoke all its tokens; this cannot be undone</label>
                  <button type="submit" class="danger">Delete app</button></form></div>`
              : ''}</section>`,
          )}
      ${owner
        ? html`<h2>Register an app</h2>
        <form method="post" action="/apps" class="card">${csrfField(csrf)}
          <label for="app-name">App Name</label><input id="app-name" name="name" type="text" required maxlength="100" value="${text(request.body, 'name')}">
          <label for="app-description">Description (optional)</label><textarea id="app-description" name="description" maxlength="500">${text(request.body, 'description')}</textarea>
          <label for="app-picture">Profile Picture URL (optional)</label><input id="app-picture" name="pictureUrl" type="url" value="${text(request.body, 'pictureUrl')}">
          <label for="app-redirect">Redirect URL</label><input id="app-redirect" name="redirectUrl" type="url" required value="${text(request.body, 'redirectUrl')}" aria-describedby="redirect-hint">
          <p class="hint" id="redirect-hint">https, or http on 127.0.0.1/localhost while developing. Users return here with code and state.</p>
          <button type="submit">Register app</button></form>`
        : html`<p class="hint">Only owners can register apps.</p>`}`,
    );
  }

  router.get('/apps', requireSignedIn, async (request, response) => {
    const secret = takeReveal(services, request, response, 'app-secret');
    await appsPage(request, response, secret ? { secret: { appName: secret.appName, clientId: secret.clientId, clientSecret: secret.clientSecret, created: secret.created === 'yes' } } : {});
  });

  router.post('/apps', requireSignedIn, requireOwner, async (request, response) => {
    try {
      const { app, clientSecret } = await registerApp(
        services.orm.em.fork(),
        consoleCaller(response).organizationId,
        { name: text(request.body, 'name'), description: text(request.body, 'description'), pictureUrl: text(request.body, 'pictureUrl'), redirectUrl: text(request.body, 'redirectUrl') },
        services.now(),
      );
      revealAfterRedirect(services, request, response, 'app-secret', { appName: app.name, clientId: app.clientId, clientSecret, created: 'yes' });
      response.redirect(303, '/apps');
    } catch (raw) {
      const error = clientError(raw);
      await appsPage(request, response, { error: sentence(error), status: error.status });
    }
  });

  const confirmed = (request: Request, what: string) => {
    if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', `Tick the box to confirm: ${what}.`);
  };

  router.post('/apps/:id/rotate-secret', requireSignedIn, requireOwner, async (request, response) => {
    confirmed(request, 'the current secret stops working');
    const { app, clientSecret } = await rotateSecret(services.orm.em.fork(), consoleCaller(response).organizationId, String(request.params.id), services.now());
    revealAfterRedirect(services, request, response, 'app-secret', { appName: app.name, clientId: app.clientId, clientSecret, created: 'no' });
    response.redirect(303, '/apps');
  });

  router.post('/apps/:id/delete', requireSignedIn, requireOwner, async (request, response) => {
    confirmed(request, 'deleting the app revokes all its tokens and cannot be undone');
    const revoked = await deleteApp(services.orm.em.fork(), consoleCaller(response).organizationId, String(request.params.id), services.now());
    for (const id of revoked) await sessions.closeForCredential(id);
    response.redirect(303, '/apps?notice=deleted');
  });

  router.get('/approved', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const apps = await approvedApps(services.orm.em.fork(), signedIn!.organization!.id, signedIn!.user.id, services.now());
    const zones = await consoleZones(services, request, response);
    const notice = typeof request.query.notice === 'string' ? APP_NOTICES[request.query.notice] : undefined;
    sendPage(
      response,
      { title: 'Approved apps', signedIn, csrf, section: 'approved', zone: pageZone(zones), flash: notice ? { kind: 'ok', text: notice } : undefined },
      html`<h1>Approved apps</h1><p>Apps you allowed to act for you in ${signedIn!.organization!.name}.</p>
      ${apps.length === 0 ? html`<p class="card">You have not approved any app.</p>` : ''}
      ${apps.map(
        (app) => html`<section class="card" aria-label="${app.name}"><div class="app-head">${logo(app.name, app.pictureUrl)}<div><h2>${app.name}</h2>
          ${app.description ? html`<p>${app.description}</p>` : ''}</div></div>
          <p>Can: ${app.scopes.map((scope) => SCOPE_DESCRIPTIONS[scope as keyof typeof SCOPE_DESCRIPTIONS] ?? scope).join('; ')}.<br>
          <span class="hint">Approved ${when(app.approvedAt, zones.viewer)}${app.lastUsedAt ? html`, last used ${when(app.lastUsedAt, zones.viewer)}` : ''}</span></p>
          <form method="post" action="/approved/${app.appId}/revoke">${csrfField(csrf)}<button type="submit" class="danger">Revoke access</button></form></section>`,
      )}`,
    );
  });

  router.post('/approved/:appId/revoke', requireSignedIn, async (request, response) => {
    const signedIn = consoleLocals(response).signedIn!;
    const revoked = await revokeApproval(services.orm.em.fork(), signedIn.organization!.id, signedIn.user.id, String(request.params.appId), services.now());
    for (const id of revoked) await sessions.closeForCredential(id);
    response.redirect(303, '/approved?notice=revoked');
  });

  // ----- Consent screen -----

  const PARAMS = ['client_id', 'response_type', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method', 'resource'] as const;
  const paramsOf = (source: unknown): AuthorizationParams => {
    const out: Record<string, string> = {};
    for (const name of PARAMS) {
      const value = (source as Record<string, unknown> | undefined)?.[name];
      if (typeof value === 'string') out[name] = value;
    }
    return out;
  };

  function consentPage(response: Response, request: AuthorizationRequest, params: AuthorizationParams): void {
    const { signedIn, csrf } = consoleLocals(response);
    const app = request.app;
    const target = new URL(request.redirectUri);
    // A client known by its metadata document is the one its domain publishes; a loopback redirect still lets any program
    // on this computer claim to be it (the MCP security page asks for a warning then).
    const verifiedDomain = isMetadataDocumentClient(app) ? new URL(app.clientId).host : undefined;
    const returnsToThisComputer = app.redirectUris.every((uri) => /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:|\/|$)/.test(uri));
    const hidden: Markup[] = PARAMS.filter((name) => params[name] !== undefined).map((name) => html`<input type="hidden" name="${name}" value="${params[name]}">`);
    sendPage(
      response,
      { title: `Authorize ${app.name}`, signedIn, csrf },
      html`<div class="narrow consent"><div class="app-head">${logo(app.name, app.pictureUrl)}<h1>${app.name} wants to access your Herald account</h1></div>
      ${app.description ? html`<p>${app.description}</p>` : ''}
      ${verifiedDomain
        ? html`<p class="verified">Published by <strong>${verifiedDomain}</strong>: Herald read this app's description from ${verifiedDomain}.</p>
          ${returnsToThisComputer ? html`<p class="hint">It returns to a program on this computer; continue only if you just started connecting ${app.name} here.</p>` : ''}`
        : ''}
      ${app.dynamic ? html`<p class="hint">This app registered itself; Herald has not verified who runs it. Continue only if you just started connecting it.</p>` : ''}
      <form method="post" action="/oauth/authorize" class="card">${csrfField(csrf)}${hidden}
        <p>If you authorize it, ${app.name} can:</p>
        <ul>${request.scopes.map((scope) => html`<li>${SCOPE_DESCRIPTIONS[scope]} <span class="hint">(${scope})</span></li>`)}</ul>
        ${request.scopes.includes('mcp:write')
          ? html`<label class="hint"><input type="checkbox" name="read_only" value="yes"> Only let it read: no creating, changing or deleting (grants mcp:read alone)</label>`
          : html`<p class="hint">It will not be able to create, change or delete anything.</p>`}
        ${organizationField(signedIn!, 'consent-organization')}
        <p class="hint">You will be sent back to ${target.protocol === 'https:' || target.protocol === 'http:' ? target.host : target.protocol}. Access lasts until you revoke it in Approved apps.</p>
        ${consentActions()}
      </form></div>`,
    );
  }

  function authorizationError(response: Response, error: DomainError): void {
    const { signedIn, csrf } = consoleLocals(response);
    sendPage(
      response,
      { title: 'Authorization error', signedIn, csrf, status: 400 },
      html`<div class="narrow"><h1>This authorization request cannot be completed</h1><p class="flash error" role="alert">${error.message}</p>
      ${error.hint ? html`<p>${error.hint}</p>` : ''}<p>You were not sent back to the app. You can close this page.</p></div>`,
    );
  }

  /** The checked request, or undefined after showing what is wrong (never redirecting to an unverified URL). */
  async function checkOrExplain(response: Response, params: AuthorizationParams): Promise<AuthorizationRequest | undefined> {
    try {
      return await checkAuthorizationRequest(services.orm.em.fork(), params, services);
    } catch (raw) {
      authorizationError(response, clientError(raw));
      return undefined;
    }
  }

  router.get('/oauth/authorize', requireSignedIn, async (request, response) => {
    const params = paramsOf(request.query);
    const checked = await checkOrExplain(response, params);
    if (checked) consentPage(response, checked, params);
  });

  router.post('/oauth/authorize', requireSignedIn, async (request, response) => {
    const signedIn = consoleLocals(response).signedIn!;
    const checked = await checkOrExplain(response, paramsOf(request.body));
    if (!checked) return;
    if (request.body?.action === 'deny') return response.redirect(303, denialUrl(checked));
    if (request.body?.action !== 'approve') return authorizationError(response, new DomainError('invalid_input', 'Choose Authorize or Deny.'));
    const organizationId = text(request.body, 'organizationId');
    if (!signedIn.organizations.some((item) => item.id === organizationId)) {
      return authorizationError(response, new DomainError('invalid_input', 'Choose one of your organizations.'));
    }
    // The person may grant less than the app asked for.
    const granted = request.body?.read_only === 'yes' ? { ...checked, scopes: checked.scopes.filter((scope) => scope !== 'mcp:write') } : checked;
    response.redirect(303, await approve(services.orm.em.fork(), granted, signedIn.user.id, organizationId, services.now()));
  });
}
