// Webhooks in the console: the endpoints (secret shown once after creating or rotating), a test event, and each endpoint's
// deliveries with every attempt and a replay button. Operations go through the webhook tools, as on REST.
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import type { Services } from '../../../tools/types.js';
import { WEBHOOK_EVENTS } from '../../../tools/internal/webhook-events.js';
import {
  createWebhookTool,
  deleteWebhookTool,
  listWebhooksTool,
  replayWebhookDeliveryTool,
  rotateWebhookSecretTool,
  testWebhookTool,
  webhookDeliveriesTool,
} from '../../../tools/webhooks.js';
import { clientError, csrfField, html, sendPage, sentence } from './html.js';
import { consoleLocals, requireOwner, requireSignedIn, revealAfterRedirect, runConsoleTool, takeReveal } from './session.js';
import { consoleZones, pageZone, when, zoneNote } from './zones.js';

const NOTICES: Record<string, string> = { deleted: 'Webhook deleted: nothing more is sent to it.' };
const STATES: Record<string, [string, string]> = { delivered: ['Delivered', 'ok'], pending: ['Retrying', 'warn'], failed: ['Failed', 'error'] };

export function webhookPages(router: Router, services: Services): void {
  async function listPage(request: Request, response: Response, options: { error?: string; status?: number } = {}) {
    const { signedIn, csrf } = consoleLocals(response);
    const owner = signedIn!.organization!.role === 'owner';
    const { output: webhooks } = await runConsoleTool(listWebhooksTool, {}, response, services);
    const revealed = takeReveal(services, request, response, 'webhook-secret');
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    const chosen = (event: string) => !request.body?.events || [request.body.events].flat().includes(event);
    sendPage(
      response,
      { title: 'Webhooks', signedIn, csrf, section: 'webhooks', status: options.status, flash: options.error ? { kind: 'error', text: options.error } : notice ? { kind: 'ok', text: notice } : undefined },
      html`<h1>Webhooks</h1>
      <p>Herald POSTs the events you choose to your URL as JSON <code>{type, timestamp, data}</code>, signed as
      <a href="https://www.standardwebhooks.com" rel="noopener noreferrer">Standard Webhooks</a> describes (headers <code>webhook-id</code>,
      <code>webhook-timestamp</code>, <code>webhook-signature</code>). Failed deliveries are retried for about a day.</p>
      ${revealed
        ? html`<section class="card" aria-labelledby="secret-title"><h2 id="secret-title">Signing secret for ${revealed.url}</h2>
          <p>Copy it now: it is shown only once.</p><code class="secret" id="webhook-secret">${revealed.secret}</code></section>`
        : ''}
      ${webhooks.length === 0
        ? html`<p class="card">No webhook yet.</p>`
        : html`<table><caption class="visually-hidden">Webhooks</caption><thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Manage</th></tr></thead><tbody>${webhooks.map(
            (webhook) => html`<tr><td><code>${webhook.url}</code>${webhook.description ? html`<br><span class="hint">${webhook.description}</span>` : ''}</td>
            <td>${webhook.events.join(', ')}</td>
            <td><div class="actions"><a class="button secondary" href="/webhooks/${webhook.id}">Deliveries</a>
              <form method="post" action="/webhooks/${webhook.id}/test">${csrfField(csrf)}<button type="submit" class="secondary">Send test event</button></form>
              ${owner
                ? html`<form method="post" action="/webhooks/${webhook.id}/rotate">${csrfField(csrf)}
                  <label class="hint"><input type="checkbox" name="confirm" value="yes" required> the old secret signs for 24 more hours only</label>
                  <button type="submit" class="secondary">Rotate secret</button></form>
                  <form method="post" action="/webhooks/${webhook.id}/delete">${csrfField(csrf)}
                  <label class="hint"><input type="checkbox" name="confirm" value="yes" required> stop all deliveries</label>
                  <button type="submit" class="danger">Delete</button></form>`
                : ''}</div></td></tr>`,
          )}</tbody></table>`}
      ${owner
        ? html`<h2>Add a webhook</h2>
        <form method="post" action="/webhooks" class="card">${csrfField(csrf)}
          <label for="webhook-url">URL</label><input id="webhook-url" name="url" type="url" required value="${String(request.body?.url ?? '')}" aria-describedby="url-hint">
          <p class="hint" id="url-hint">A public http(s) address of your receiver. Private and loopback addresses are refused unless the operator sets WEBHOOKS_ALLOW_PRIVATE=true.</p>
          <label for="webhook-description">Description (optional)</label><input id="webhook-description" name="description" type="text" maxlength="200" value="${String(request.body?.description ?? '')}">
          <fieldset><legend>Events</legend>${WEBHOOK_EVENTS.map(
            (event) => html`<label><input type="checkbox" name="events" value="${event}"${chosen(event) ? html` checked` : ''}> ${event}</label>`,
          )}</fieldset>
          <button type="submit">Add webhook</button></form>`
        : html`<p class="hint">Only owners can add, rotate or delete webhooks.</p>`}`,
    );
  }

  /** Runs a form action; a client mistake re-renders the list with the message. */
  const action = (perform: (request: Request, response: Response) => Promise<string>) => async (request: Request, response: Response) => {
    try {
      response.redirect(303, await perform(request, response));
    } catch (raw) {
      const error = clientError(raw);
      await listPage(request, response, { error: sentence(error), status: error.status });
    }
  };
  const confirmed = (request: Request, what: string) => {
    if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', `Tick the box to confirm: ${what}.`);
  };

  router.get('/webhooks', requireSignedIn, (request, response) => listPage(request, response));

  router.post('/webhooks', requireSignedIn, requireOwner, action(async (request, response) => {
    const events = [request.body?.events ?? []].flat();
    const created = await runConsoleTool(createWebhookTool, { url: request.body?.url, events, description: request.body?.description || undefined }, response, services);
    revealAfterRedirect(services, request, response, 'webhook-secret', { secret: created.secret, url: created.url });
    return '/webhooks';
  }));

  router.post('/webhooks/:id/rotate', requireSignedIn, requireOwner, action(async (request, response) => {
    confirmed(request, 'the old secret keeps signing for 24 hours only');
    const rotated = await runConsoleTool(rotateWebhookSecretTool, { id: request.params.id }, response, services);
    revealAfterRedirect(services, request, response, 'webhook-secret', { secret: rotated.secret, url: rotated.url });
    return '/webhooks';
  }));

  router.post('/webhooks/:id/delete', requireSignedIn, requireOwner, action(async (request, response) => {
    confirmed(request, 'deleting stops all deliveries');
    await runConsoleTool(deleteWebhookTool, { id: request.params.id }, response, services);
    return '/webhooks?notice=deleted';
  }));

  router.post('/webhooks/:id/test', requireSignedIn, action(async (request, response) => {
    await runConsoleTool(testWebhookTool, { id: request.params.id }, response, services);
    return `/webhooks/${request.params.id}`;
  }));

  router.post('/webhooks/:id/deliveries/:deliveryId/replay', requireSignedIn, action(async (request, response) => {
    await runConsoleTool(replayWebhookDeliveryTool, { id: request.params.id, deliveryId: request.params.deliveryId }, response, services);
    return `/webhooks/${request.params.id}`;
  }));

  router.get('/webhooks/:id', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const id = String(request.params.id);
    const page = Math.max(0, Number.parseInt(String(request.query.page ?? '0'), 10) || 0);
    const { output: webhooks } = await runConsoleTool(listWebhooksTool, {}, response, services);
    const webhook = webhooks.find((item) => item.id === id);
    if (!webhook) throw new DomainError('not_found', 'This webhook does not exist (any more).');
    const result = await runConsoleTool(webhookDeliveriesTool, { id, page, pageSize: 20 }, response, services);
    // Attempts are seconds apart: their times keep the seconds, in the person's zone like every console time.
    const zones = await consoleZones(services, request, response);
    const at = (iso: string | null) => when(iso, zones.viewer, true);
    sendPage(
      response,
      { title: 'Webhook deliveries', signedIn, csrf, section: 'webhooks', zone: pageZone(zones) },
      html`<h1>Deliveries to <code>${webhook.url}</code></h1>
      ${zoneNote(zones)}
      <p><a href="/webhooks">← All webhooks</a></p>
      ${result.deliveries.length === 0 ? html`<p class="card">No delivery yet. Send a test event from the webhooks page.</p>` : ''}
      ${result.deliveries.map((delivery) => {
        const [label, kind] = STATES[delivery.state] ?? [delivery.state, ''];
        return html`<section class="card" aria-label="Delivery ${delivery.id}"><h2>${delivery.eventType} <span class="badge ${kind}">${label}</span></h2>
          <p class="hint">webhook-id <code>${delivery.id}</code>, created ${at(delivery.createdAt)}${delivery.nextAttemptAt ? html`, next attempt ${at(delivery.nextAttemptAt)}` : ''}</p>
          <table><thead><tr><th scope="col">Attempt</th><th scope="col">Answer</th><th scope="col">Time</th></tr></thead><tbody>${delivery.attemptLog.map(
            (attempt) => html`<tr><td>${at(attempt.attemptedAt)}${attempt.trigger === 'replay' ? ' (replay)' : ''}</td>
              <td>${attempt.status ?? '—'} ${attempt.error ?? ''}</td><td>${attempt.durationMs} ms</td></tr>`,
          )}</tbody></table>
          <details><summary>Payload</summary><pre><code>${JSON.stringify(delivery.payload, null, 2)}</code></pre></details>
          <form method="post" action="/webhooks/${id}/deliveries/${delivery.id}/replay">${csrfField(csrf)}<button type="submit" class="secondary">Replay</button></form></section>`;
      })}
      <p>${page > 0 ? html`<a href="/webhooks/${id}?page=${page - 1}">← Newer</a> ` : ''}${result.hasMore ? html`<a href="/webhooks/${id}?page=${page + 1}">Older →</a>` : ''}</p>`,
    );
  });
}
