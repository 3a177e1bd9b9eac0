// The verification page of the device authorization grant: a signed-in person enters the code their terminal shows,
// sees what is asking, for which organization and with which permissions, and approves or denies.
import { counted } from '../../lib/words.js';
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import { consumeRateLimit } from '../../lib/rate-limit.js';
import { decideDevice, findPendingDevice, formatUserCode, normalizeUserCode, type PendingDevice } from '../../../tools/internal/device.js';
import { SCOPE_DESCRIPTIONS, SCOPES, type Scope } from '../../../tools/internal/oauth.js';
import type { Services } from '../../../tools/types.js';
import { clientError, consentActions, csrfField, html, organizationField, sendPage, sentence, type Markup } from './html.js';
import { consoleLocals, requireSignedIn } from './session.js';
import { consoleZones, pageZone, when } from './zones.js';

/** Wrong codes a person may enter per hour: the code space is 20^8, so guessing a live code this way is hopeless. */
const ENTRIES_PER_HOUR = 20;

export function devicePages(router: Router, services: Services): void {
  function codeForm(response: Response, code: string, error?: DomainError): void {
    const { signedIn, csrf } = consoleLocals(response);
    sendPage(
      response,
      { title: 'Log in a device', signedIn, csrf, status: error?.status ?? 200, flash: error ? { kind: 'error', text: sentence(error) } : undefined },
      html`<div class="narrow"><h1>Log in a command-line client or device</h1>
      <p>Enter the code your terminal or device shows. You will see what is asking before anything is granted.</p>
      <form method="post" action="/device" class="card">${csrfField(csrf)}
        <label for="device-code">Code</label>
        <input id="device-code" name="code" type="text" value="${code}" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="BCDF-GHJK" required>
        <button type="submit">Continue</button>
      </form></div>`,
    );
  }

  async function confirmation(request: Request, response: Response, pending: PendingDevice): Promise<void> {
    const { signedIn, csrf } = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    const { device, app } = pending;
    const scopes = (device.scopes as string[]).filter((scope): scope is Scope => (SCOPES as readonly string[]).includes(scope));
    const details: Markup[] = [];
    if (device.clientUserAgent) details.push(html`<li>Program: <code>${device.clientUserAgent}</code></li>`);
    if (device.clientAddress) details.push(html`<li>From address: <code>${device.clientAddress}</code></li>`);
    details.push(html`<li>Asked at ${when(device.createdAt, zones.viewer)}</li>`);
    sendPage(
      response,
      { title: `Authorize ${app.name}`, signedIn, csrf, zone: pageZone(zones) },
      html`<div class="narrow consent"><h1>${app.name} wants to access your Herald account</h1>
      ${app.description ? html`<p>${app.description}</p>` : ''}
      <ul class="hint">${details}</ul>
      <p class="hint">Continue only if you started this login yourself just now, and the code matches: <strong>${formatUserCode(device.userCode)}</strong>.</p>
      <form method="post" action="/device/decide" class="card">${csrfField(csrf)}
        <input type="hidden" name="code" value="${formatUserCode(device.userCode)}">
        <fieldset><legend>Permissions</legend>${scopes.map(
          (scope) => html`<label><input type="checkbox" name="scope" value="${scope}" checked> ${SCOPE_DESCRIPTIONS[scope]} <span class="hint">(${scope})</span></label>`,
        )}</fieldset>
        ${organizationField(signedIn!, 'device-organization')}
        <p class="hint">Access lasts until you revoke it in Approved apps.</p>
        ${consentActions()}
      </form></div>`,
    );
  }

  function done(response: Response, approved: boolean): void {
    const { signedIn, csrf } = consoleLocals(response);
    sendPage(
      response,
      { title: approved ? 'Device authorized' : 'Request denied', signedIn, csrf },
      html`<div class="narrow"><h1>${approved ? 'Done: go back to your terminal' : 'Denied'}</h1>
      <p>${approved ? 'The client gets its access within a few seconds. You can revoke it in ' : 'Nothing was granted. Apps you approved are listed in '}<a href="/approved">Approved apps</a>.</p></div>`,
    );
  }

  /** Counts an attempt to enter a code; past the hourly allowance the person is told to wait. */
  async function allowEntry(response: Response, ip: string | undefined): Promise<boolean> {
    const signedIn = consoleLocals(response).signedIn!;
    const now = services.now();
    const em = services.orm.em.fork();
    for (const subject of [`device-user:${signedIn.user.id}`, `device-address:${ip ?? ''}`]) {
      const limit = await consumeRateLimit(em, subject, 'device_code_entry', ENTRIES_PER_HOUR, now);
      if (!limit.allowed) {
        response.setHeader('Retry-After', String(limit.resetSeconds));
        codeForm(response, '', new DomainError('rate_limited', 'Too many codes entered.', { hint: `Wait ${counted(Math.ceil(limit.resetSeconds / 60), 'minute')}, then try again.` }));
        return false;
      }
    }
    return true;
  }

  router.get('/device', requireSignedIn, (request, response) => {
    codeForm(response, typeof request.query.code === 'string' ? formatUserCode(normalizeUserCode(request.query.code).slice(0, 8)) : '');
  });

  router.post('/device', requireSignedIn, async (request, response) => {
    const code = String(request.body?.code ?? '');
    if (!(await allowEntry(response, request.ip))) return;
    try {
      await confirmation(request, response, await findPendingDevice(services.orm.em.fork(), code, services.now()));
    } catch (raw) {
      codeForm(response, code, clientError(raw));
    }
  });

  router.post('/device/decide', requireSignedIn, async (request, response) => {
    const signedIn = consoleLocals(response).signedIn!;
    const code = String(request.body?.code ?? '');
    const approve = request.body?.action === 'approve';
    const organizationId = String(request.body?.organizationId ?? '');
    const chosen = ([] as unknown[]).concat(request.body?.scope ?? []).map(String);
    try {
      if (request.body?.action !== 'approve' && request.body?.action !== 'deny') throw new DomainError('invalid_input', 'Choose Authorize or Deny.');
      if (approve && !signedIn.organizations.some((item) => item.id === organizationId)) throw new DomainError('invalid_input', 'Choose one of your organizations.');
      const scopes = SCOPES.filter((scope) => chosen.includes(scope));
      await decideDevice(services.orm.em.fork(), code, { approve, userId: signedIn.user.id, organizationId, scopes }, services.now());
    } catch (raw) {
      return codeForm(response, code, clientError(raw));
    }
    done(response, approve);
  });
}
