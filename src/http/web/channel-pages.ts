// Channels in the console: list with status, connect (OAuth redirect or credential form), the page/account picker,
// disable/enable/disconnect, posting times and the preferred customer. Operations go through the tools, as on REST.
import type { Request, Response, Router } from 'express';
import { CustomerSchema, IntegrationSchema, type Integration } from '../../db/entities.js';
import { DomainError, notSupported } from '../../errors.js';
import { findProvider, providers } from '../../../providers/index.js';
import type { Provider } from '../../../providers/types.js';
import { connectChannel } from '../../../tools/connect-channel.js';
import { deleteIntegration } from '../../../tools/delete-integration.js';
import { setPostingTimes } from '../../../tools/set-posting-times.js';
import { socialConnectUrl } from '../../../tools/social-connect-url.js';
import { callbackPath, channelAccounts, chooseChannelAccount, completeOAuthConnect } from '../../../tools/internal/channel-connect.js';
import {
  channelStatus,
  formatPostingTime,
  providerEndpoints,
  type ChannelStatus,
} from '../../../tools/internal/integrations.js';
import { healthByChannel } from '../../../tools/internal/channel-health.js';
import type { Services } from '../../../tools/types.js';
import { clientError, csrfField, html, safeUrl, sendPage, sentence } from './html.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { setChannelZone } from '../../../tools/internal/time-zones.js';
import { consoleZones, localTimes, pageZone, zoneDatalist, zoneField } from './zones.js';
import { setChannelDisabled, setPreferredCustomer } from '../../../tools/internal/channel-settings.js';
import { SignatureSchema } from '../../db/workflow-entities.js';
import { signatureFieldset } from './set-pages.js';

const STATUS_LABELS: Record<ChannelStatus, [string, string]> = {
  active: ['Active', 'ok'],
  disabled: ['Disabled', 'warn'],
  needs_reconnection: ['Needs reconnection', 'error'],
  choose_account: ['Waiting for a page/account choice', 'warn'],
};

const NOTICES: Record<string, string> = {
  connected: 'Channel connected.',
  disabled: 'Channel disabled: its scheduled posts wait until you enable it.',
  enabled: 'Channel enabled.',
  deleted: 'Channel disconnected and its scheduled posts deleted.',
  times: 'Posting times saved.',
  zone: 'Time zone of the channel saved.',
  customer: 'Preferred customer saved.',
  signature: 'Signature saved: new posts on the channel carry it.',
};

export function parseTimes(text: string): { time: number }[] {
  const parts = text.split(/[\s,;]+/).filter(Boolean);
  return parts.map((part) => {
    const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(part);
    if (!match) throw new DomainError('invalid_input', `"${part}" is not a time; write times as HH:MM (24-hour clock, in the zone below), separated by commas.`);
    return { time: Number(match[1]) * 60 + Number(match[2]) };
  });
}

function configured(services: Services, provider: Provider): boolean {
  if (provider.auth.kind === 'credentials') return Boolean(provider.connect);
  return Boolean(provider.authorizeUrl && services.config.oauthClients[provider.identifier]);
}

const avatar = (url: string | null | undefined, name: string) =>
  safeUrl(url) ? html`<img class="avatar" src="${safeUrl(url)}" alt="" referrerpolicy="no-referrer">` : html`<span class="avatar" aria-hidden="true"></span><span class="visually-hidden">${name}</span>`;

async function channelsPage(services: Services, request: Request, response: Response, flash?: { kind: 'ok' | 'error'; text: string }, status = 200) {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const organizationZone = zones.organization;
  const caller = consoleCaller(response);
  const em = services.orm.em.fork();
  const channels = await em.find(IntegrationSchema, { organizationId: caller.organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const health = await healthByChannel(services, em, channels);
  const customers = await em.find(CustomerSchema, { organizationId: caller.organizationId }, { orderBy: { name: 'asc' } });
  const signatures = new Map((await em.find(SignatureSchema, { organizationId: caller.organizationId })).map((signature) => [signature.integrationId, signature]));
  const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
  const available = providers.filter((provider) => configured(services, provider));
  const unconfigured = providers.filter((provider) => !configured(services, provider) && provider.auth.kind !== 'credentials');
  const row = (channel: Integration) => {
    const provider = findProvider(channel.providerIdentifier);
    const state = channelStatus(channel);
    const channelHealth = health.get(channel.id);
    // An active channel may still be about to break (a token Herald cannot refresh): its health says so.
    const shown: ChannelStatus = state === 'active' && channelHealth?.state === 'needs_reconnection' ? 'needs_reconnection' : state;
    const [label, kind] = state === 'active' && channelHealth?.state === 'token_expiring' ? ['Token expiring', 'warn'] : STATUS_LABELS[shown];
    return html`<tr id="channel-${channel.id}">
      <td>${avatar(channel.picture, channel.name)} <strong>${channel.name}</strong><br><span class="hint">${channel.profile}</span></td>
      <td>${provider?.name ?? channel.providerIdentifier}<br><span class="hint">${channel.timeZone ?? organizationZone}</span></td>
      <td><span class="badge ${kind}">${label}</span>
        ${state === 'choose_account' ? html`<br><a href="/channels/${channel.id}/choose">Choose the page or account</a>` : ''}
        ${channelHealth?.reason && state !== 'choose_account' ? html`<br><span class="hint">${localTimes(channelHealth.reason, zones.viewer, channelHealth.tokenExpiresAt)}</span>` : ''}
        <br><a href="/channels/${channel.id}/analytics">Analytics</a>
        ${shown === 'needs_reconnection' || channelHealth?.state === 'token_expiring' ? html`<br><a href="/channels/connect/${channel.providerIdentifier}?refresh=${channel.id}">Reconnect</a>` : ''}</td>
      <td>
        <details><summary>Settings</summary>
          <form method="post" action="/channels/${channel.id}/time-zone">${csrfField(csrf)}
            ${zoneField(`zone-${channel.id}`, 'timeZone', channel.timeZone ?? '', 'Time zone of the channel', `Empty: the organization's (${organizationZone}). Set it for a client elsewhere.`)}
            <button type="submit" class="secondary">Save time zone</button>
          </form>
          <form method="post" action="/channels/${channel.id}/posting-times">${csrfField(csrf)}
            <label for="times-${channel.id}">Posting times (HH:MM)</label>
            <input id="times-${channel.id}" name="times" type="text" value="${channel.postingTimes.map(formatPostingTime).join(', ')}" aria-describedby="times-hint-${channel.id}">
            <p class="hint" id="times-hint-${channel.id}">Daily times the next free slot is chosen among; they stay at that wall-clock time across daylight-saving changes.</p>
            ${zoneField(`times-zone-${channel.id}`, 'timeZone', channel.postingTimesZone, 'Posting times are in time zone')}
            <button type="submit" class="secondary">Save times</button>
          </form>
          <form method="post" action="/channels/${channel.id}/customer">${csrfField(csrf)}
            <label for="customer-${channel.id}">Preferred customer</label>
            <select id="customer-${channel.id}" name="customerId"><option value="">None</option>${customers.map(
              (customer) => html`<option value="${customer.id}"${customer.id === channel.customerId ? html` selected` : ''}>${customer.name}</option>`,
            )}</select>
            <label for="new-customer-${channel.id}">or a new customer</label>
            <input id="new-customer-${channel.id}" name="newCustomer" type="text" maxlength="100">
            <button type="submit" class="secondary">Save customer</button>
          </form>
          ${signatureFieldset(csrf, channel.id, signatures.get(channel.id), `Signature of ${channel.name}`)}
        </details>
        <div class="actions">
          <form method="post" action="/channels/${channel.id}/${channel.disabled ? 'enable' : 'disable'}">${csrfField(csrf)}<button type="submit" class="secondary">${channel.disabled ? 'Enable' : 'Disable'}</button></form>
          <form method="post" action="/channels/${channel.id}/delete">${csrfField(csrf)}
            <label class="hint"><input type="checkbox" name="confirm" value="yes" required> delete its scheduled posts too</label>
            <button type="submit" class="danger">Disconnect</button></form>
        </div>
      </td>
    </tr>`;
  };
  sendPage(
    response,
    { title: 'Channels', signedIn, csrf, section: 'channels', status, zone: pageZone(zones), flash: flash ?? (notice ? { kind: 'ok', text: notice } : undefined) },
    html`<h1>Channels</h1>
    ${channels.length === 0
      ? html`<p class="card">No channel yet. Connect one below.</p>`
      : html`<table><caption class="visually-hidden">Connected channels</caption><thead><tr><th scope="col">Channel</th><th scope="col">Platform</th><th scope="col">Status</th><th scope="col">Manage</th></tr></thead><tbody>${channels.map(row)}</tbody></table>`}
    <h2>Connect a channel</h2>
    <ul class="grid" aria-label="Platforms">${available.map(
      (provider) => html`<li><a class="button secondary" href="/channels/connect/${provider.identifier}">${provider.name}</a></li>`,
    )}</ul>
    ${unconfigured.length
      ? html`<p class="hint">Not configured on this Herald: ${unconfigured.map((provider) => provider.name).join(', ')}. The operator sets
        <code>&lt;PLATFORM&gt;_CLIENT_ID</code> and <code>&lt;PLATFORM&gt;_CLIENT_SECRET</code> from the platform's developer app to enable them.</p>`
      : ''}
    ${zoneDatalist()}`,
  );
}

function credentialForm(services: Services, response: Response, provider: Provider, values: Record<string, string>, error?: string, status = 200): void {
  const { signedIn, csrf } = consoleLocals(response);
  const fields = provider.auth.fields ?? [];
  const endpoints = providerEndpoints(services, provider);
  sendPage(
    response,
    { title: `Connect ${provider.name}`, signedIn, csrf, section: 'channels', status, flash: error ? { kind: 'error', text: error } : undefined },
    html`<div class="narrow"><h1>Connect ${provider.name}</h1>
    <form method="post" action="/channels/connect/${provider.identifier}" class="card">${csrfField(csrf)}
      ${fields.map(
        (item) => html`<label for="field-${item.key}">${item.label}</label>
        <input id="field-${item.key}" name="${item.key}" type="${item.type}" ${item.required ? html`required` : ''}
          value="${item.type === 'password' ? '' : (values[item.key] ?? (item.endpoint ? '' : (item.defaultValue ?? '')))}"${item.endpoint && endpoints[item.endpoint] ? html` placeholder="${endpoints[item.endpoint]}"` : ''} autocomplete="off"${item.description ? html` aria-describedby="hint-${item.key}"` : ''}>
        ${item.description ? html`<p class="hint" id="hint-${item.key}">${item.description}</p>` : ''}`,
      )}
      <button type="submit">Connect</button>
    </form><p><a href="/channels">Back to channels</a></p></div>`,
  );
}

function formValues(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries((body ?? {}) as Record<string, unknown>)) if (key !== '_csrf' && typeof value === 'string') out[key] = value;
  return out;
}

export function channelPages(router: Router, services: Services): void {
  /** Runs a channel action; a client mistake re-renders the list with the message instead of an error page. */
  const action = (perform: (request: Request, response: Response, id: string) => Promise<string>) =>
    async (request: Request, response: Response) => {
      try {
        const notice = await perform(request, response, String(request.params.id));
        response.redirect(303, `/channels?notice=${notice}`);
      } catch (raw) {
        const error = clientError(raw);
        await channelsPage(services, request, response, { kind: 'error', text: sentence(error) }, error.status);
      }
    };

  router.get('/channels', requireSignedIn, (request, response) => channelsPage(services, request, response));

  router.post('/channels/:id/disable', requireSignedIn, action(async (_request, response, id) => {
    await setChannelDisabled(services.orm.em.fork(), consoleCaller(response).organizationId, id, true);
    return 'disabled';
  }));
  router.post('/channels/:id/enable', requireSignedIn, action(async (_request, response, id) => {
    await setChannelDisabled(services.orm.em.fork(), consoleCaller(response).organizationId, id, false);
    return 'enabled';
  }));
  router.post('/channels/:id/delete', requireSignedIn, action(async (request, response, id) => {
    if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', 'Tick the box to confirm: disconnecting deletes the channel\'s scheduled posts.');
    await runConsoleTool(deleteIntegration, { id }, response, services);
    return 'deleted';
  }));
  router.post('/channels/:id/posting-times', requireSignedIn, action(async (request, response, id) => {
    const timeZone = typeof request.body?.timeZone === 'string' && request.body.timeZone.trim() ? request.body.timeZone.trim() : undefined;
    await runConsoleTool(setPostingTimes, { id, postingTimes: parseTimes(String(request.body?.times ?? '')), timeZone }, response, services);
    return 'times';
  }));
  router.post('/channels/:id/time-zone', requireSignedIn, action(async (request, response, id) => {
    await setChannelZone(services.orm.em.fork(), consoleCaller(response).organizationId, id, String(request.body?.timeZone ?? ''));
    return 'zone';
  }));
  router.post('/channels/:id/customer', requireSignedIn, action(async (request, response, id) => {
    const customerId = typeof request.body?.customerId === 'string' ? request.body.customerId : undefined;
    const newName = typeof request.body?.newCustomer === 'string' ? request.body.newCustomer : undefined;
    await setPreferredCustomer(services.orm.em.fork(), consoleCaller(response).organizationId, id, { customerId: customerId || undefined, newName }, services.now());
    return 'customer';
  }));

  router.get('/channels/connect/:identifier', requireSignedIn, async (request, response) => {
    const provider = findProvider(String(request.params.identifier));
    if (!provider) throw new DomainError('not_found', `Unknown platform "${request.params.identifier}".`);
    if (provider.auth.kind === 'credentials') {
      if (!provider.connect) throw notSupported(`Connecting ${provider.name} channels is not built yet in this Herald.`);
      return credentialForm(services, response, provider, {});
    }
    const refresh = typeof request.query.refresh === 'string' ? request.query.refresh : undefined;
    const { url } = await runConsoleTool(socialConnectUrl, { integration: provider.identifier, refresh }, response, services);
    response.redirect(303, url);
  });

  router.post('/channels/connect/:identifier', requireSignedIn, async (request, response) => {
    const provider = findProvider(String(request.params.identifier));
    if (!provider) throw new DomainError('not_found', `Unknown platform "${request.params.identifier}".`);
    const values = formValues(request.body);
    try {
      await runConsoleTool(connectChannel, { identifier: provider.identifier, fields: values }, response, services);
    } catch (raw) {
      const error = clientError(raw);
      return credentialForm(services, response, provider, values, sentence(error), error.status);
    }
    response.redirect(303, '/channels?notice=connected');
  });

  // The page/account picker of platforms that connect a user first and a page second.
  router.get('/channels/:id/choose', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const id = String(request.params.id);
    const accounts = await channelAccounts(services, services.orm.em.fork(), consoleCaller(response).organizationId, id);
    sendPage(
      response,
      { title: 'Choose a page', signedIn, csrf, section: 'channels' },
      html`<h1>Choose the page or account to publish as</h1>
      <form method="post" action="/channels/${id}/choose" class="card">${csrfField(csrf)}
        <fieldset><legend>Publish as</legend>${accounts.map(
          (account, index) => html`<label><input type="radio" name="account" value="${account.id}"${index === 0 ? html` checked` : ''}> ${avatar(account.picture, account.name)} ${account.name}</label>`,
        )}</fieldset>
        <button type="submit">Use this one</button></form>`,
    );
  });

  router.post('/channels/:id/choose', requireSignedIn, async (request, response) => {
    await chooseChannelAccount(services, services.orm.em.fork(), consoleCaller(response).organizationId, String(request.params.id), String(request.body?.account ?? ''));
    response.redirect(303, '/channels?notice=connected');
  });

  // The platform sends the user back here after OAuth; the sealed state says for which organization and channel.
  router.get(callbackPath(':identifier'), async (request, response) => {
    const integration = await completeOAuthConnect(services, String(request.params.identifier), request.query as Record<string, unknown>);
    response.redirect(303, integration.inBetweenSteps ? `/channels/${integration.id}/choose` : '/channels?notice=connected');
  });
}

