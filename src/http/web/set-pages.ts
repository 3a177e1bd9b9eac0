// Saved sets and signatures in the console (issue 35). Sets: the Sets page (each set's channels as they are now, start a
// post from it, delete it), the composer's "Start from a set" choice (the composer opens filled from it) and its "Save as
// set" button. Signatures: the fieldset on each channel's settings and on the Settings page. Everything goes through the
// tools (showPostSet, createPostSet, setSignature…) as the signed-in person, as on REST.
import type { Request, Response, Router } from 'express';
import type { Integration, Media } from '../../db/entities.js';
import type { Signature } from '../../db/workflow-entities.js';
import { providerOf } from '../../../tools/internal/integrations.js';
import { listPostSets } from '../../../tools/internal/post-sets.js';
import { createPostSetTool, deletePostSetTool, listSetsTool, showPostSetTool } from '../../../tools/post-sets.js';
import { clearSignatureTool, setSignatureTool } from '../../../tools/signatures.js';
import { SIGNATURE_MAX_LENGTH } from '../../../tools/internal/signature.js';
import type { Services } from '../../../tools/types.js';
import { DomainError } from '../../errors.js';
import { clientError, csrfField, html, sendPage, sentence, type Markup } from './html.js';
import { emptyState, type ComposeState } from './compose-form.js';
import { composedContent } from './compose-text.js';
import { settingsTyped, settingsValues } from './settings-fields.js';
import { consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { consoleZones, pageZone } from './zones.js';

type SetRecord = Awaited<ReturnType<typeof showPostSetTool.handler>>;

/** The composer's "Start from a set": a GET form of its own (the composer opens filled from the chosen set). */
export async function setChoiceMarkup(services: Services, organizationId: string): Promise<Markup> {
  const sets = await listPostSets(services.orm.em.fork(), organizationId);
  if (sets.length === 0) return html`<p class="hint">No saved set yet: write a post and press "Save as set" to start the next one from it. <a href="/sets">Sets</a></p>`;
  return html`<form method="get" action="/compose" class="card actions set-choice">
    <div><label for="start-set">Start from a set</label>
    <select id="start-set" name="set">${sets.map((set) => html`<option value="${set.id}">${set.name}</option>`)}</select></div>
    <button type="submit" class="secondary">Start from this set</button> <a href="/sets">Manage sets</a>
  </form>`;
}

/** The composer's "Save as set" fields (inside the compose form): a name and the button. */
export const saveSetMarkup = () =>
  html`<details class="save-set"><summary>Save as set</summary>
    <label for="set-name">Name of the set</label><input id="set-name" name="setName" type="text" maxlength="100">
    <p class="hint">Saves the channels, the first item's text and media, and each platform's settings: a new post starts from them in one step.</p>
    <button type="submit" name="action" value="save-set" class="secondary">Save as set</button></details>`;

/** A set as the compose form: its connected channels, text, media, each channel's settings from its platform's. */
export async function stateOfSet(services: Services, response: Response, id: string, zone: string, channels: Integration[]): Promise<{ state: ComposeState; warnings: string[] }> {
  const set = await runConsoleTool(showPostSetTool, { id }, response, services);
  const usable = new Set(set.socialPost.map((item) => String(item.integrationId)));
  const state = emptyState(zone);
  state.channels = set.channels.filter((channel) => usable.has(channel.id)).map((channel) => channel.id);
  state.items = [{ content: set.content, delay: '', media: set.media.map((media) => media.id), alt: Object.fromEntries(set.media.filter((media) => media.alt).map((media) => [media.id, media.alt!])) }];
  state.kept = Object.fromEntries(set.media.map((media) => [media.id, media]));
  for (const channel of channels.filter((candidate) => state.channels.includes(candidate.id))) {
    const provider = providerOf(channel);
    state.settings[channel.id] = settingsTyped(provider, set.settings[provider.identifier] ?? {});
  }
  return { state, warnings: set.warnings };
}

/** "Save as set": the form's channels, first item and settings (by platform: the first chosen channel of each) as a new set. */
export async function saveSetFromCompose(services: Services, response: Response, state: ComposeState, fields: { name: string; channels: Integration[]; library: Map<string, Media> }): Promise<SetRecord> {
  if (!fields.name.trim()) throw new DomainError('invalid_input', 'Give the set a name (under "Save as set").');
  const byId = new Map(fields.channels.map((channel) => [channel.id, channel]));
  const settings: Record<string, Record<string, unknown>> = {};
  for (const id of state.channels) {
    const channel = byId.get(id);
    if (!channel) continue;
    const provider = providerOf(channel);
    settings[provider.identifier] ??= settingsValues(provider, channel.name, state.settings[id] ?? {});
  }
  const item = state.items[0];
  const media = item.media.flatMap((id) => {
    const file = fields.library.get(id) ?? state.kept?.[id];
    return file ? [{ id, path: file.path, ...(item.alt?.[id] ? { alt: item.alt[id] } : {}) }] : [];
  });
  return runConsoleTool(createPostSetTool, { name: fields.name, channels: state.channels, content: composedContent(item.content), media, settings }, response, services);
}

/** A signature's form: its text and place, saved or cleared (`target` "default" or a channel id). */
export function signatureFieldset(csrf: string, target: string, signature: Signature | undefined, label: string): Markup {
  const id = `signature-${target}`;
  return html`<form method="post" action="/signatures/${target}" class="signature-form">${csrfField(csrf)}
    <fieldset><legend>${label}</legend>
      <label for="${id}">Signature text</label>
      <textarea id="${id}" name="text" rows="2" maxlength="${SIGNATURE_MAX_LENGTH}" aria-describedby="${id}-hint">${signature?.text ?? ''}</textarea>
      <p class="hint" id="${id}-hint">Plain text added once to each new post${target === 'default' ? ' on every channel without a signature of its own' : ' on this channel (instead of the default)'}; it counts against the platform's length. Posts already made keep theirs.</p>
      <div class="choice"><input type="radio" id="${id}-end" name="position" value="end"${signature?.position !== 'start' ? html` checked` : ''}><label for="${id}-end">At the end (the last item of a thread)</label></div>
      <div class="choice"><input type="radio" id="${id}-start" name="position" value="start"${signature?.position === 'start' ? html` checked` : ''}><label for="${id}-start">At the start (the first item)</label></div>
      <button type="submit" name="action" value="save" class="secondary">Save signature</button>
      ${signature ? html`<button type="submit" name="action" value="clear" class="secondary">Clear signature</button>` : ''}
    </fieldset></form>`;
}

const NOTICES: Record<string, string> = { saved: 'Set saved: start a post from it on the New post page.', deleted: 'Set deleted.' };

async function setsPage(services: Services, request: Request, response: Response, problem?: { text: string; status: number }) {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const { sets } = await runConsoleTool(listSetsTool, {}, response, services);
  const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
  sendPage(
    response,
    { title: 'Sets', signedIn, csrf, section: 'posts', zone: pageZone(zones), status: problem?.status, flash: problem ? { kind: 'error', text: problem.text } : notice ? { kind: 'ok', text: notice } : undefined },
    html`<h1>Sets</h1>
    <p>Saved presets (channels, text, media, settings per platform) a new post starts from. Save one from the <a href="/compose">New post</a> page.</p>
    ${sets.length === 0
      ? html`<p class="card">No set yet.</p>`
      : html`<table><caption class="visually-hidden">Saved sets</caption><thead><tr><th scope="col">Set</th><th scope="col">Channels</th><th scope="col">Actions</th></tr></thead><tbody>${sets.map(
          (set) => html`<tr><td><strong>${set.name}</strong></td>
            <td><ul>${set.channels.map((channel) => html`<li>${channel.name} <span class="hint">${channel.platform}</span>${channel.state === 'connected' ? '' : html` <span class="badge error">${channel.state.replace('_', ' ')}</span>`}</li>`)}</ul>
              ${set.warnings.length ? html`<ul class="warnings">${set.warnings.map((warning) => html`<li>${warning}</li>`)}</ul>` : ''}</td>
            <td class="actions"><a class="button secondary" href="/compose?set=${set.id}">Start a post</a>
              <form method="post" action="/sets/${set.id}/delete">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Delete the set ${set.name}">Delete</button></form></td></tr>`,
        )}</tbody></table>`}`,
  );
}

export function setPages(router: Router, services: Services): void {
  router.get('/sets', requireSignedIn, (request, response) => setsPage(services, request, response));

  router.post('/sets/:id/delete', requireSignedIn, async (request, response) => {
    try {
      await runConsoleTool(deletePostSetTool, { id: String(request.params.id) }, response, services);
      response.redirect(303, '/sets?notice=deleted');
    } catch (raw) {
      const error = clientError(raw);
      await setsPage(services, request, response, { text: sentence(error), status: error.status });
    }
  });

  // A signature's form, from a channel's settings (back to Channels) or the Settings page (the default).
  router.post('/signatures/:target', requireSignedIn, async (request, response) => {
    const target = String(request.params.target);
    const back = target === 'default' ? '/settings' : '/channels';
    // A refusal (an empty text, one too long) is the console's error page: what is wrong, and the way back.
    if (request.body?.action === 'clear') await runConsoleTool(clearSignatureTool, { channel: target }, response, services);
    else await runConsoleTool(setSignatureTool, { channel: target, text: String(request.body?.text ?? ''), position: request.body?.position === 'start' ? 'start' : 'end' }, response, services);
    response.redirect(303, `${back}?notice=signature`);
  });
}
