// The compose page's markup: channels grouped by customer, the items (text, delay, media: upload, drop, or the library),
// each channel's own text and settings, when to publish, and the preview of each post as its platform shows it.
import type { Integration, Media } from '../../db/entities.js';
import { platformName } from '../../../tools/internal/channel-health.js';
import { providerOf } from '../../../tools/internal/integrations.js';
import type { PostPreview } from '../../../tools/internal/preview.js';
import { html, safeUrl, type Markup } from './html.js';
import { platformPreview } from './platform-preview.js';
import type { ComposeState } from './compose-form.js';
import { settingsMarkup } from './settings-fields.js';
import { formatWhen, zoneField } from './zones.js';
import { saveSetMarkup } from './set-pages.js';
import { repeatFieldset } from './recurring-pages.js';

/** Each platform's post as it will show it (platform-preview.ts), channel by channel, from validatePost's answer. */
export function previewMarkup(previews: PostPreview[], zone: string, undated = false): Markup {
  const entries = previews.flatMap((preview) => preview.entries);
  if (entries.length === 0) return html`<p class="hint">Choose a channel and write something: the preview shows each post as its platform will show it.</p>`;
  const valid = previews.every((preview) => preview.valid);
  return html`<p class="flash ${valid ? 'ok' : 'error'} preview-verdict">${valid ? 'Ready: every channel accepts this post.' : 'Not ready: fix what is marked below.'}</p>
    ${entries.map(
      (entry) => html`<section class="card preview-entry${entry.valid ? '' : ' over'}" aria-label="Preview for ${entry.channel}">
        <h3>${entry.channel} <span class="hint">${entry.platform ?? ''}</span></h3>
        <p class="hint">${undated ? 'No date chosen yet: Schedule needs one; Save as draft keeps it without a date, taking no posting slot' : html`${entry.state === 'DRAFT' ? 'Saved as a draft for' : 'To be published'} ${formatWhen(entry.slot.date, zone)}`}${entry.slot.nextFreeSlot ? html` · next free slot ${formatWhen(entry.slot.nextFreeSlot, zone)}` : ''}</p>
        ${platformPreview(entry, { zone, dated: false })}
        ${entry.items.some((item) => item.text !== item.visibleText)
          ? html`<details class="preview-sent"><summary>What Herald sends</summary>${entry.items.map((item) => html`<pre>${item.text}</pre>`)}</details>`
          : ''}
      </section>`,
    )}`;
}

const mediaLabel = (media: Media) => `${media.name} (${media.type.startsWith('video/') ? 'video' : 'picture'})`;

function mediaChoice(media: Media, index: number, checked: boolean, alt?: string): Markup {
  const id = `media-${index}-${media.id}`;
  // A chosen picture takes an alt text: what a screen reader says of it on the platform.
  const altField = checked && media.type.startsWith('image/')
    ? html`<label for="alt-${index}-${media.id}" class="hint">Alt text of ${media.name}</label><input id="alt-${index}-${media.id}" name="alt-${index}-${media.id}" type="text" maxlength="1000" value="${alt ?? ''}">`
    : '';
  return html`<li><input type="checkbox" id="${id}" name="media-${index}" value="${media.id}"${checked ? html` checked` : ''}>
    <label for="${id}" class="media-choice">${media.type.startsWith('image/') && safeUrl(media.path) ? html`<img src="${safeUrl(media.path)}" alt="" referrerpolicy="no-referrer">` : ''}<span>${mediaLabel(media)}</span></label>${altField}</li>`;
}

function itemMarkup(state: ComposeState, index: number, library: Media[], chainKind: string): Markup {
  const item = state.items[index];
  const chosen = new Set(item.media);
  const selected = library.filter((media) => chosen.has(media.id));
  // Media of an edited post that are not library files (URLs the platform fetches): kept unless unticked.
  const urls = item.media.filter((id) => !library.some((media) => media.id === id) && state.kept?.[id]).map((id) => state.kept![id]);
  const others = library.filter((media) => !chosen.has(media.id));
  return html`<fieldset class="item" data-item="${index}"><legend>${index === 0 ? 'Post' : `Item ${index + 1} (${chainKind})`}</legend>
    <label for="content-${index}">Text</label>
    <textarea id="content-${index}" name="content-${index}" rows="${index === 0 ? 6 : 4}" aria-describedby="content-hint">${item.content}</textarea>
    ${index > 0
      ? html`<label for="delay-${index}">Wait before this item (minutes)</label><input id="delay-${index}" name="delay-${index}" type="number" min="0" max="10080" value="${item.delay}" class="short">`
      : ''}
    <div class="dropzone" data-item="${index}">
      <label for="upload-${index}">Add pictures or videos</label>
      <input id="upload-${index}" name="upload-${index}" type="file" multiple accept="image/*,video/mp4,video/quicktime">
      <p class="hint">Or drop files here. They go to the media library.</p>
      <ul class="media-choices selected" aria-label="Media of this item">${selected.map((media) => mediaChoice(media, index, true, item.alt?.[media.id] ?? state.kept?.[media.id]?.alt))}${urls.map(
        (media, position) => html`<li><input type="checkbox" id="media-${index}-url-${position}" name="media-${index}" value="${media.id}" checked>
          <label for="media-${index}-url-${position}" class="media-choice"><span>${media.path}</span></label></li>`,
      )}</ul>
    </div>
    ${others.length
      ? html`<details><summary>From the media library</summary><ul class="media-choices">${others.map((media) => mediaChoice(media, index, false))}</ul></details>`
      : ''}
    ${index > 0 ? html`<button type="submit" name="action" value="remove-${index}" class="secondary">Remove item ${index + 1}</button>` : ''}
  </fieldset>`;
}

export function channelChoices(state: ComposeState, channels: Integration[], customers: Map<string, string>): Markup {
  if (state.editing) {
    const channel = channels.find((candidate) => candidate.id === state.channels[0]);
    return html`<p>On <strong>${channel?.name ?? 'its channel'}</strong> ${channel ? html`<span class="hint">${platformName(channel)}</span>` : ''}</p>
      <input type="hidden" name="channel" value="${state.channels[0] ?? ''}"><input type="hidden" name="edit" value="${state.editing}">`;
  }
  const groups = new Map<string, Integration[]>();
  for (const channel of channels) {
    const key = channel.customerId && customers.has(channel.customerId) ? channel.customerId : '';
    groups.set(key, [...(groups.get(key) ?? []), channel]);
  }
  const ordered = [...groups].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : customers.get(a)!.localeCompare(customers.get(b)!)));
  return html`<fieldset class="channels"><legend>Channels</legend>
    ${channels.length === 0 ? html`<p>No channel yet: <a href="/channels">connect one</a> first.</p>` : ''}
    ${ordered.map(
      ([customer, members]) => html`<fieldset class="customer"><legend>${customer ? customers.get(customer) : ordered.length > 1 ? 'No customer' : 'All channels'}</legend>
        <ul class="choice-list">${members.map(
          (channel) => html`<li><input type="checkbox" id="channel-${channel.id}" name="channel" value="${channel.id}"${state.channels.includes(channel.id) ? html` checked` : ''}${channel.disabled ? html` disabled` : ''}>
            <label for="channel-${channel.id}">${channel.name} <span class="hint">${platformName(channel)}${channel.disabled ? ', disabled' : ''}</span></label></li>`,
        )}</ul></fieldset>`,
    )}</fieldset>`;
}

function channelOptions(state: ComposeState, channel: Integration): Markup {
  const provider = providerOf(channel);
  const chosen = state.channels.includes(channel.id);
  return html`<details class="channel-options${chosen ? '' : ' unchosen'}" data-channel="${channel.id}"${chosen && (state.overrides[channel.id]?.some(Boolean) || Object.values(state.settings[channel.id] ?? {}).some(Boolean)) ? html` open` : ''}>
    <summary>${channel.name} (${provider.name}): its own text and settings</summary>
    ${state.items.map(
      (_, index) => html`<label for="override-${channel.id}-${index}">${state.items.length > 1 ? `Item ${index + 1}` : 'Text'} for ${channel.name} only</label>
      <textarea id="override-${channel.id}-${index}" name="override:${channel.id}:${index}" rows="3" aria-describedby="override-hint">${state.overrides[channel.id]?.[index] ?? ''}</textarea>`,
    )}
    ${settingsMarkup(provider, channel.id, state.settings[channel.id] ?? {})}
  </details>`;
}

export interface ComposeView {
  state: ComposeState;
  channels: Integration[];
  customers: Map<string, string>;
  library: Media[];
  csrf: string;
  zone: string;
  previews?: PostPreview[];
}

export function composeMarkup(view: ComposeView): Markup {
  const { state, channels, csrf } = view;
  const chainKinds = new Set(channels.filter((channel) => state.channels.includes(channel.id)).map((channel) => providerOf(channel).chain));
  const chainKind = chainKinds.size === 1 && chainKinds.has('comments') ? 'comment' : 'thread reply or comment';
  return html`<form id="compose" class="compose" method="post" action="/compose?_csrf=${encodeURIComponent(csrf)}" enctype="multipart/form-data" data-csrf="${csrf}">
    <button type="submit" name="action" value="preview" class="default-action" tabindex="-1">Preview</button>
    <input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="idempotencyKey" value="${state.idempotencyKey}">
    <input type="hidden" name="items" value="${state.items.length}">
    <div class="compose-grid"><div class="compose-main">
      ${channelChoices(state, channels, view.customers)}
      <section aria-labelledby="text-title"><h2 id="text-title">Text and media</h2>
        <p class="hint" id="content-hint">Plain text, or HTML (p, strong, u, ul/li, h1–h3, a). Each channel receives it converted to what it shows; the preview says exactly what.</p>
        ${state.items.map((_, index) => itemMarkup(state, index, view.library, chainKind))}
        ${state.items.length < 25 ? html`<button type="submit" name="action" value="add-item" class="secondary">Add a thread item or comment</button>` : ''}
      </section>
      <section aria-labelledby="channels-title"><h2 id="channels-title">Per channel</h2>
        <p class="hint" id="override-hint">Leave a text empty to send the shared text.</p>
        ${channels.map((channel) => channelOptions(state, channel))}
      </section>
      <section aria-labelledby="when-title"><h2 id="when-title">When</h2>
        <fieldset><legend>Date</legend>
          <div class="choice"><input type="radio" id="timing-date" name="timing" value="date"${state.timing === 'date' ? html` checked` : ''}><label for="timing-date">At this date and time</label></div>
          <div class="choice"><input type="radio" id="timing-slot" name="timing" value="slot"${state.timing === 'slot' ? html` checked` : ''}><label for="timing-slot">At the next free slot of each channel (its posting times)</label></div>
          <label for="date">Date and time</label>
          <input id="date" name="date" type="datetime-local" step="60" value="${state.date}">
          ${zoneField('compose-zone', 'timeZone', state.timeZone, 'Time zone of the date', 'Daylight-saving time is taken into account: 09:00 is 09:00 on the clock of that zone on that day.')}
        </fieldset>
        ${state.editing ? '' : repeatFieldset(state.repeat)}
        <div class="choice"><input type="checkbox" id="shortLink" name="shortLink" value="yes"${state.shortLink ? html` checked` : ''}><label for="shortLink">Shorten links</label></div>
        ${state.editing ? '' : html`<div class="choice"><input type="checkbox" id="noSignature" name="noSignature" value="yes"${state.noSignature ? html` checked` : ''}><label for="noSignature">Without the signature (Settings, Channels) on this post</label></div>`}
        <div class="choice"><input type="checkbox" id="allowDuplicate" name="allowDuplicate" value="yes"${state.allowDuplicate ? html` checked` : ''}><label for="allowDuplicate">Posting this text again on purpose (allows a near-duplicate)</label></div>
      </section>
      <div class="actions compose-actions">
        ${state.editing
          ? html`<button type="submit" name="action" value="save">Save changes</button><a href="/posts/${state.editing}">Cancel</a>`
          : html`<button type="submit" name="action" value="schedule">Schedule</button>
        <button type="submit" name="action" value="draft" class="secondary">Save as draft</button>
        <button type="submit" name="action" value="now" class="secondary">Publish now</button>`}
        <button type="submit" name="action" value="preview" class="secondary">Preview</button>
        ${state.editing ? '' : saveSetMarkup()}
      </div>
    </div>
    <aside class="compose-preview" aria-labelledby="preview-title" tabindex="0"><h2 id="preview-title">Preview</h2>
      <div id="preview" aria-live="polite" aria-busy="false">${view.previews ? previewMarkup(view.previews, view.zone, !state.date && state.timing === 'date') : html`<p class="hint">The preview shows what each platform receives. It updates as you type (or press Preview).</p>`}</div>
    </aside></div>
  </form>`;
}
