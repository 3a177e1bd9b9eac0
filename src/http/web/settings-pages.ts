// Settings of the person and the organization: time zones. A person's zone defaults to the one their browser reports; the
// organization's default applies to channels without their own and to people whose browser says nothing.
import type { Request, Response, Router } from 'express';
import { setOrganizationZone, setUserZone } from '../../../tools/internal/time-zones.js';
import type { Services } from '../../../tools/types.js';
import { clientError, csrfField, html, sendPage, sentence } from './html.js';
import { consoleCaller, consoleLocals, requireOwner, requireSignedIn } from './session.js';
import { renameOrganization } from '../../../tools/internal/members.js';
import { consoleZones, pageZone, zoneDatalist, zoneField } from './zones.js';
import { SignatureSchema } from '../../db/workflow-entities.js';
import { signatureFieldset } from './set-pages.js';

const NOTICES: Record<string, string> = {
  mine: 'Your time zone is saved: every page shows and reads times in it.',
  browser: "Saved: pages follow your browser's time zone.",
  organization: "The organization's default time zone is saved.",
  renamed: 'The organization is renamed.',
  signature: 'The default signature is saved: new posts on channels without their own carry it.',
};

async function settingsPage(services: Services, request: Request, response: Response, problem?: { text: string; status: number }): Promise<void> {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const owner = signedIn!.organization!.role === 'owner';
  const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
  const signature = await services.orm.em.fork().findOne(SignatureSchema, { organizationId: consoleCaller(response).organizationId, integrationId: '' });
  sendPage(
    response,
    {
      title: 'Settings',
      signedIn,
      csrf,
      section: 'settings',
      status: problem?.status,
      zone: pageZone(zones),
      flash: problem ? { kind: 'error', text: problem.text } : notice ? { kind: 'ok', text: notice } : undefined,
    },
    html`<h1>Settings</h1>
    <form method="post" action="/settings/time-zone" class="card" aria-labelledby="mine-title">${csrfField(csrf)}
      <h2 id="mine-title">Your time zone</h2>
      <p>Pages show times in <strong>${zones.viewer}</strong>${zones.source === 'person' ? ' (your choice)' : zones.source === 'browser' ? " (your browser's)" : " (the organization's default: your browser did not say)"}.
        Dates you type in forms are read in it too.</p>
      ${zoneField('my-zone', 'timeZone', signedIn!.user.timeZone ?? '', 'Time zone (IANA name)', `Leave empty to follow your browser${zones.browser ? ` (now ${zones.browser})` : ''}.`)}
      <button type="submit">Save my time zone</button>
    </form>
    ${owner
      ? html`<form method="post" action="/settings/organization-name" class="card" aria-labelledby="name-title">${csrfField(csrf)}
        <h2 id="name-title">Organization name</h2>
        <label for="organization-name">Name</label>
        <input id="organization-name" name="name" type="text" required maxlength="100" value="${signedIn!.organization!.name}">
        <button type="submit">Rename</button>
      </form>`
      : ''}
    ${owner
      ? html`<form method="post" action="/settings/organization-time-zone" class="card" aria-labelledby="organization-title">${csrfField(csrf)}
        <h2 id="organization-title">Organization default</h2>
        <p>For channels without a zone of their own, and people whose browser does not say. A channel's own zone (a client elsewhere) is set on the Channels page.</p>
        ${zoneField('organization-zone', 'timeZone', zones.organization, 'Default time zone (IANA name)')}
        <button type="submit">Save the default</button>
      </form>`
      : html`<p class="card">The organization's default time zone is <strong>${zones.organization}</strong>. Only owners change it.</p>`}
    <section class="card" aria-labelledby="signature-title"><h2 id="signature-title">Signature</h2>
      ${signatureFieldset(csrf, 'default', signature ?? undefined, "The organization's default signature")}
      <p class="hint">A channel's own signature (its settings on the Channels page) replaces this one on that channel.</p></section>
    ${zoneDatalist()}`,
  );
}

export function settingsPages(router: Router, services: Services): void {
  router.get('/settings', requireSignedIn, (request, response) => settingsPage(services, request, response));

  router.post('/settings/time-zone', requireSignedIn, async (request, response) => {
    try {
      const zone = await setUserZone(services.orm.em.fork(), consoleLocals(response).signedIn!.user.id, String(request.body?.timeZone ?? ''));
      response.redirect(303, `/settings?notice=${zone ? 'mine' : 'browser'}`);
    } catch (raw) {
      const error = clientError(raw);
      await settingsPage(services, request, response, { text: sentence(error), status: error.status });
    }
  });

  router.post('/settings/organization-name', requireSignedIn, requireOwner, async (request, response) => {
    try {
      await renameOrganization(services.orm.em.fork(), consoleCaller(response).organizationId, request.body?.name);
      response.redirect(303, '/settings?notice=renamed');
    } catch (raw) {
      const error = clientError(raw);
      await settingsPage(services, request, response, { text: sentence(error), status: error.status });
    }
  });

  router.post('/settings/organization-time-zone', requireSignedIn, requireOwner, async (request, response) => {
    try {
      await setOrganizationZone(services.orm.em.fork(), consoleCaller(response).organizationId, String(request.body?.timeZone ?? ''));
      response.redirect(303, '/settings?notice=organization');
    } catch (raw) {
      const error = clientError(raw);
      await settingsPage(services, request, response, { text: sentence(error), status: error.status });
    }
  });
}
