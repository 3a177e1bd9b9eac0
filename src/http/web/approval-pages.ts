// The approval queue: what agents asked to publish, each item as the platform will receive it, approve or reject; and
// the gate's settings (owners): the organization's rule for agents and each OAuth app's override.
import type { Router } from 'express';
import { approvalSettings, awaitingApproval, setApprovalSettings } from '../../../tools/internal/approval.js';
import { postView } from '../../../tools/internal/post-view.js';
import type { Services } from '../../../tools/types.js';
import { csrfField, html, sendPage } from './html.js';
import { DECISION_NOTICES, postSummary } from './post-pages.js';
import { consoleCaller, consoleLocals, requireOwner, requireSignedIn } from './session.js';
import { consoleZones, pageZone, zoneNote } from './zones.js';

const NOTICES: Record<string, string> = {
  ...DECISION_NOTICES,
  settings: 'Approval settings saved.',
};

export function approvalPages(router: Router, services: Services): void {
  router.get('/approvals', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    const organizationId = consoleCaller(response).organizationId;
    const owner = signedIn!.organization!.role === 'owner';
    const em = services.orm.em.fork();
    const settings = await approvalSettings(em, organizationId);
    const views = await Promise.all((await awaitingApproval(em, organizationId)).map((post) => postView(em, organizationId, post.id)));
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    sendPage(
      response,
      { title: 'Approvals', signedIn, csrf, section: 'approvals', zone: pageZone(zones), flash: notice ? { kind: 'ok', text: notice } : undefined },
      html`<h1>Approvals</h1>
      <p>Agents are AI assistants and apps posting for you: anything using Herald over MCP, and OAuth apps on the REST API. The organization's own API key on REST and people in this console are not agents.</p>
      ${owner
        ? html`<form method="post" action="/approvals/settings" class="card" aria-labelledby="gate-title">${csrfField(csrf)}
          <h2 id="gate-title">Approval gate</h2>
          <label><input type="checkbox" name="agents" value="yes"${settings.agents ? html` checked` : ''}> Posts created by agents wait for an owner's approval</label>
          ${settings.apps.length
            ? html`<fieldset><legend>OAuth apps</legend>${settings.apps.map(
                (app) => html`<label for="app-${app.appId}">${app.name}</label>
                <select id="app-${app.appId}" name="app:${app.appId}">
                  <option value="inherit"${app.required === null ? html` selected` : ''}>The organization's rule</option>
                  <option value="always"${app.required === true ? html` selected` : ''}>Always wait for approval</option>
                  <option value="never"${app.required === false ? html` selected` : ''}>Never wait</option></select>`,
              )}</fieldset>`
            : ''}
          <button type="submit">Save</button></form>`
        : html`<p class="card">The approval gate is ${settings.agents ? 'on' : 'off'} for agents. Only owners change it.</p>`}
      <h2>Waiting for approval (${views.length})</h2>
      ${views.length ? zoneNote(zones) : ''}
      ${views.length === 0 ? html`<p class="card">Nothing waits for approval.</p>` : ''}
      ${views.map(
        (view) => html`<article class="card awaiting" aria-labelledby="awaiting-${view.root.id}">
          <h3 id="awaiting-${view.root.id}"><a href="/posts/${view.root.id}">Post on ${view.integration.name}</a></h3>
          ${postSummary(view, csrf, owner, 'approvals', zones)}</article>`,
      )}`,
    );
  });

  router.post('/approvals/settings', requireSignedIn, requireOwner, async (request, response) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const choices: Record<string, boolean | null> = { inherit: null, always: true, never: false };
    const apps = Object.entries(body)
      .filter(([key, value]) => key.startsWith('app:') && typeof value === 'string' && value in choices)
      .map(([key, value]) => ({ appId: key.slice(4), required: choices[value as string] }));
    await setApprovalSettings(services.orm.em.fork(), consoleCaller(response).organizationId, { agents: body.agents === 'yes', apps });
    response.redirect(303, '/approvals?notice=settings');
  });
}
