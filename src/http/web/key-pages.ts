// The Developer page's keys: the organization's named keys (an agent key is what an agent should get), created with the
// scopes chosen here and shown once, and revoked; the scopes say what each key may do (tools/internal/scopes.ts).
import type { Request, Response, Router } from 'express';
import { when } from './zones.js';
import { DomainError } from '../../errors.js';
import { createKey, listKeys, revokeKey, rotateKey, type KeyRecord } from '../../../tools/internal/api-keys.js';
import { AGENT_PRESET, API_SCOPE_DESCRIPTIONS, API_SCOPES, type ApiScope } from '../../../tools/internal/scopes.js';
import type { Services } from '../../../tools/types.js';
import type { McpSessions } from '../../mcp/sessions.js';
import { csrfField, html, type Markup } from './html.js';
import { consoleCaller, requireOwner, requireSignedIn, revealAfterRedirect } from './session.js';

/** The Developer page's one reveal: the organization key ({key}) or a new named key ({name, secret}). */
export const KEY_REVEAL = 'api-key';

/** The keys of the organization, the scopes explained, and (for owners) the form that makes an agent key. */
export async function keysSection(
  services: Services,
  response: Response,
  options: { csrf: string; owner: boolean; zone: string; created?: { name: string; secret: string; rotated?: boolean } },
): Promise<Markup> {
  const keys = options.owner ? await listKeys(services.orm.em.fork(), consoleCaller(response)) : [];
  return html`<section class="card" aria-labelledby="keys-title"><h2 id="keys-title">Agent keys</h2>
    <p>Give each agent its own key with only what it needs: an agent key (read and write posts) cannot approve posts, open the
    approval gate, or manage keys, members and webhooks; its posts wait for approval when the gate is on. The organization key
    above is the owner key, for your own scripts and the postiz CLI: never give it to an agent.</p>
    ${options.created
      ? html`<p>${options.created.rotated ? 'New secret of the key' : 'New key'} "${options.created.name}":</p><code class="secret" id="new-agent-key">${options.created.secret}</code>
        <p class="hint">Copy it now: it is shown only once.${options.created.rotated ? ' The old secret has stopped working.' : ''}</p>`
      : ''}
    <dl>${API_SCOPES.map((scope) => html`<dt><code>${scope}</code></dt><dd>${API_SCOPE_DESCRIPTIONS[scope]}</dd>`)}</dl>
    ${options.owner
      ? html`${keys.length > 0 ? keyTable(keys, options.csrf, options.zone) : ''}
        <form method="post" action="/developer/keys">${csrfField(options.csrf)}
          <label for="key-name">Name</label> <input id="key-name" name="name" type="text" required maxlength="100" placeholder="Claude Desktop">
          <fieldset><legend>Scopes</legend>${API_SCOPES.map(
            (scope) => html`<label><input type="checkbox" name="scopes" value="${scope}"${AGENT_PRESET.includes(scope) ? ' checked' : ''}> <code>${scope}</code></label> `,
          )}</fieldset>
          <button type="submit">Create key</button></form>
        <p class="hint">Channel limits, expiry and rates: <code>POST /api/public/v1/keys</code> or <code>npm run herald -- key:create --name …</code>.</p>`
      : html`<p class="hint">Only owners see and create keys.</p>`}
  </section>`;
}

function keyTable(keys: KeyRecord[], csrf: string, zone: string): Markup {
  return html`<table><thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Limited to</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Rotate or revoke</span></th></tr></thead>
    <tbody>${keys.map(
      (key) => html`<tr><td>${key.name} <code>…${key.lastFour}</code></td><td>${key.scopes.join(', ')}</td>
        <td>${key.channels ? `${key.channels.length} channel(s)` : key.customers ? `${key.customers.length} customer(s)` : 'every channel'}${key.expiresAt ? html`, until ${when(key.expiresAt, zone)}` : ''}</td>
        <td>${key.lastUsed ? html`${when(key.lastUsed.at, zone)}${key.lastUsed.client ? ` (${key.lastUsed.client})` : ''}` : 'never'}</td>
        <td>${key.organizationKey
          ? ''
          : html`<div class="actions"><form method="post" action="/developer/keys/${key.id}/rotate">${csrfField(csrf)}
              <label class="hint"><input type="checkbox" name="confirm" value="yes" required> the current secret of "${key.name}" stops working</label>
              <button type="submit" class="secondary" aria-label="Rotate ${key.name}">Rotate</button></form>
            <form method="post" action="/developer/keys/${key.id}/revoke">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Revoke ${key.name}">Revoke</button></form></div>`}</td></tr>`,
    )}</tbody></table>`;
}

/** The scopes ticked on the form: at least one, each a known scope. */
function chosenScopes(request: Request): ApiScope[] {
  const raw = request.body?.scopes;
  const values: unknown[] = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const scopes = values.filter((value): value is ApiScope => (API_SCOPES as readonly unknown[]).includes(value));
  if (scopes.length === 0) throw new DomainError('invalid_input', 'Tick at least one scope for the key.', { hint: 'An agent needs read and posts:write.' });
  return scopes;
}

export function keyRoutes(router: Router, services: Services, sessions: McpSessions): void {
  router.post('/developer/keys', requireSignedIn, requireOwner, async (request, response) => {
    const name = String(request.body?.name ?? '').trim();
    const { key, secret } = await createKey(services.orm.em.fork(), consoleCaller(response), { name, scopes: chosenScopes(request) }, services.now());
    revealAfterRedirect(services, request, response, KEY_REVEAL, { name: key.name, secret });
    response.redirect(303, '/developer');
  });

  // A new secret for the same key (name, scopes, limits): shown once; the old secret stops working at once.
  router.post('/developer/keys/:id/rotate', requireSignedIn, requireOwner, async (request, response) => {
    if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', 'Tick the box to confirm: the current secret of the key stops working.');
    const { key, secret } = await rotateKey(services.orm.em.fork(), consoleCaller(response), String(request.params.id), services.now());
    revealAfterRedirect(services, request, response, KEY_REVEAL, { name: key.name, secret, rotated: 'yes' });
    response.redirect(303, '/developer');
  });

  router.post('/developer/keys/:id/revoke', requireSignedIn, requireOwner, async (request, response) => {
    const key = await revokeKey(services.orm.em.fork(), consoleCaller(response), String(request.params.id), services.now());
    await sessions.closeForCredential(key.id);
    response.redirect(303, '/developer');
  });
}

