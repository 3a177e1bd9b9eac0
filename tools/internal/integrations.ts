// Channels: lookup scoped to the organization, public records, decrypted credentials, provider calls with one token refresh.
// Over 400 lines: the one module every tool, job and adapter takes a channel from (30-odd importers); its parts share the
// channel row, its records and its credentials, and a split would leave each importer two modules for one thing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { coalescedPerDatabase, statement } from '../../src/db/sql.js';
import { CustomerSchema, IntegrationSchema, type Integration } from '../../src/db/entities.js';
import { canSeeChannel } from './visibility.js';
import { DomainError, notFound, notSupported } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { findProvider } from '../../providers/index.js';
import type { ChannelAuth, ConnectContext, ConnectedAccount, Provider, ProviderContext } from '../../providers/types.js';
import { dialFor, platformFetchFor } from './typed-hosts.js';
import type { Services } from '../types.js';
import { notify } from './notifications.js';
import { recordReconnectReason } from './channel-health.js';
import { channelZone, organizationZone } from './time-zones.js';
import { recordChange } from './audit.js';
import { attachEntity } from './publish-chain.js';

export interface IntegrationRecord {
  id: string;
  name: string;
  identifier: string;
  platform: string;
  picture: string;
  disabled: boolean;
  profile: string;
  customer?: { id: string; name: string };
  /** The channel's IANA zone (its own, else the organization's); set in listings. */
  timeZone?: string;
}

export async function findIntegration(em: EntityManager, organizationId: string, id: string): Promise<Integration> {
  const integration = canSeeChannel(id) ? await em.findOne(IntegrationSchema, { id, organizationId, deletedAt: null }) : null;
  if (!integration) {
    throw notFound(`Channel ${id} not found.`, { hint: 'List the channels of this organization with integrationList (MCP) or GET /integrations (REST) and use one of their ids.' });
  }
  return integration;
}

export function providerOf(integration: Integration): Provider {
  const provider = findProvider(integration.providerIdentifier);
  if (!provider) throw notSupported(`Platform "${integration.providerIdentifier}" is not known to this Herald version.`);
  return provider;
}

// The channels of the organizations (each of one customer when given) asked by the requests in flight together: $1 the
// organizations, $2 the customers (null: all), one row per channel with `n`, the request's position.
const LIST_INTEGRATIONS = statement(
  'integrations_of_organizations',
  `with asked as (select a.organization_id, a.customer_id, a.n from unnest($1::text[], $2::text[]) with ordinality as a(organization_id, customer_id, n))
   select asked.n, i.id, i.organization_id, i.provider_identifier, i.internal_id, i.name, i.picture, i.profile, i.credentials, i.token_expires_at, i.disabled,
     i.refresh_needed, i.in_between_steps, i.customer_id, i.posting_times, i.posting_times_zone, i.time_zone, i.additional_settings, i.created_at, i.updated_at, i.deleted_at,
     (select o.time_zone from organization o where o.id = asked.organization_id) as organization_time_zone,
     (select p.release_meta->>'channelNotice' from post p where p.integration_id = i.id and p.position = 0 and p.published_at is not null
        and p.deleted_at is null order by p.published_at desc limit 1) as channel_notice
   from asked join integration i on i.organization_id = asked.organization_id and i.deleted_at is null and (asked.customer_id is null or i.customer_id = asked.customer_id)
   order by asked.n, i.created_at, i.id`,
);

/**
 * The list read of the requests asked while the last was in flight, in one statement (REST and MCP list the channels on
 * many calls: one round trip for all of them instead of one each); sent once every one of them was asked, so each sees what
 * was committed before it.
 */
const listedRows = coalescedPerDatabase<{ organizationId: string; customerId: string | null }, Record<string, any>[]>(async (sql, asked) => {
  const rows = await sql.rows<Record<string, any>>(LIST_INTEGRATIONS, [asked.map((one) => one.organizationId), asked.map((one) => one.customerId)]);
  const byRequest = asked.map((): Record<string, any>[] => []);
  for (const row of rows) byRequest[Number(row.n) - 1].push(row);
  return byRequest;
});

/**
 * What the list query read with each channel, so that the records and the health of a listed channel cost no query of
 * their own (issue 26: a REST request in 2 round trips): the organization's zone and the channel's latest notice.
 */
const listedWith = new WeakMap<Integration, { organizationZone: string; notice: string | null }>();

/** The `channelNotice` of the channel's latest published post, when the channel came from listIntegrations (else undefined). */
export const listedNotice = (integration: Integration): string | null | undefined => listedWith.get(integration)?.notice;

const date = (value: string | Date | null) => (value === null ? null : new Date(value));

/**
 * The organization's channels (of one customer when given), oldest first, read-only: plain objects, not managed by the
 * entity manager (integrationList runs this on every call, and the ORM's query building cost more than the query).
 */
export async function listIntegrations(em: EntityManager, organizationId: string, customerId?: string): Promise<Integration[]> {
  // An empty group is no filter.
  const rows = (await listedRows(em, { organizationId, customerId: customerId || null })).filter((row) => canSeeChannel(row.id));
  return rows.map((row) => {
    const integration = integrationOfRow(row);
    listedWith.set(integration, { organizationZone: row.organization_time_zone ?? 'UTC', notice: row.channel_notice ?? null });
    return integration;
  });
}

/** A channel from its row (column names; timestamps as Date or text, as from `to_jsonb(integration)`), not managed by an entity manager. */
export function integrationOfRow(row: Record<string, any>): Integration {
  return {
    id: row.id,
    organizationId: row.organization_id,
    providerIdentifier: row.provider_identifier,
    internalId: row.internal_id,
    name: row.name,
    picture: row.picture,
    profile: row.profile,
    credentials: row.credentials,
    tokenExpiresAt: date(row.token_expires_at),
    disabled: row.disabled,
    refreshNeeded: row.refresh_needed,
    inBetweenSteps: row.in_between_steps,
    customerId: row.customer_id,
    postingTimes: row.posting_times,
    postingTimesZone: row.posting_times_zone,
    timeZone: row.time_zone,
    additionalSettings: row.additional_settings,
    createdAt: date(row.created_at)!,
    updatedAt: date(row.updated_at)!,
    deletedAt: date(row.deleted_at),
  };
}

/** Records of loaded channels, with their customer (group) when they have one, and their zone. */
export async function recordsOf(em: EntityManager, organizationId: string, integrations: Integration[]): Promise<IntegrationRecord[]> {
  const customerIds = [...new Set(integrations.map((integration) => integration.customerId).filter((id): id is string => Boolean(id)))];
  const customers = customerIds.length ? await em.find(CustomerSchema, { id: { $in: customerIds }, organizationId }) : [];
  const customerById = new Map(customers.map((customer) => [customer.id, customer]));
  const listed = integrations.length > 0 ? listedWith.get(integrations[0]) : undefined;
  const zone = listed ? listed.organizationZone : await organizationZone(em, organizationId);
  return integrations.map((integration) => ({
    ...toIntegrationRecord(integration, integration.customerId ? customerById.get(integration.customerId) : undefined),
    timeZone: channelZone(integration, zone),
  }));
}

export function toIntegrationRecord(integration: Integration, customer?: { id: string; name: string }): IntegrationRecord {
  const record: IntegrationRecord = {
    id: integration.id,
    name: integration.name,
    identifier: integration.providerIdentifier,
    platform: integration.providerIdentifier,
    picture: integration.picture ?? '',
    disabled: integration.disabled,
    profile: integration.profile,
  };
  if (customer) record.customer = { id: customer.id, name: customer.name };
  return record;
}

interface SealedCredentials {
  accessToken: string;
  refreshToken?: string;
  data: Record<string, string>;
}

export function sealCredentials(services: Services, account: Pick<ConnectedAccount, 'accessToken' | 'refreshToken' | 'data'>): string {
  const sealed: SealedCredentials = { accessToken: account.accessToken, refreshToken: account.refreshToken, data: account.data ?? {} };
  return services.secrets.sealJson(sealed);
}

/**
 * Opened credentials by their sealed text, per key (a publication's decryption was 4% of its CPU in a burst): a sealed text
 * is never reused for other credentials (each seal has its own IV), so a changed token is a new entry. The oldest go past
 * SEALED_CACHE_SIZE; they are held in memory as any call holds them while it runs.
 */
const openedCredentials = new WeakMap<object, Map<string, SealedCredentials>>();
const SEALED_CACHE_SIZE = 1000;

function openCredentials(services: Services, sealedText: string): SealedCredentials {
  let opened = openedCredentials.get(services.secrets);
  if (!opened) openedCredentials.set(services.secrets, (opened = new Map()));
  const known = opened.get(sealedText);
  if (known) return known;
  const sealed = services.secrets.openJson<SealedCredentials>(sealedText);
  opened.set(sealedText, sealed);
  if (opened.size > SEALED_CACHE_SIZE) opened.delete(opened.keys().next().value!);
  return sealed;
}

export function channelAuth(services: Services, integration: Integration): ChannelAuth {
  const sealed = openCredentials(services, integration.credentials);
  return {
    accessToken: sealed.accessToken,
    refreshToken: sealed.refreshToken,
    expiresAt: integration.tokenExpiresAt ?? undefined,
    internalId: integration.internalId,
    data: { ...sealed.data },
  };
}

export function providerEndpoints(services: Services, provider: Provider): Record<string, string> {
  return { ...provider.endpoints, ...services.config.socialEndpoints[provider.identifier] };
}

/** What a connect call (credentials form or OAuth code exchange) gets of the platform. */
export function connectContext(services: Services, provider: Provider): ConnectContext {
  const endpoints = providerEndpoints(services, provider);
  return { fetch: platformFetchFor(services, endpoints), dial: dialFor(services, endpoints), endpoints, client: services.config.oauthClients[provider.identifier] };
}

/** Outside publishing a step is just the call: nothing is recorded (helpers and analytics create nothing). */
const runStep: ProviderContext['step'] = (_name, run) => run();

export function providerContext(services: Services, integration: Integration, settings: Record<string, unknown> = {}): ProviderContext {
  const provider = providerOf(integration);
  const endpoints = providerEndpoints(services, provider);
  return {
    fetch: platformFetchFor(services, endpoints),
    dial: dialFor(services, endpoints),
    endpoints,
    auth: channelAuth(services, integration),
    channel: integration.additionalSettings,
    settings,
    step: runStep,
    client: services.config.oauthClients[provider.identifier],
  };
}

export function reauthRequired(integration: Integration): DomainError {
  const why = findProvider(integration.providerIdentifier)?.revokedCredentials ?? 'its token expired or was revoked';
  return new DomainError('reauth_required', `Channel "${integration.name}" was disconnected because ${why}.`, {
    hint: 'Reconnect the channel in the Herald console (or with POST /integrations/{identifier}/connect), then try again.',
  });
}

/** Tokens this close to their expiry are refreshed before the call rather than after a 401. */
const REFRESH_MARGIN_MS = 2 * 60 * 1000;

/**
 * Refreshes the channel's token and stores the new one (rotating refresh tokens included). A refresh that fails with a
 * definite answer flags the channel for reconnection, notifies, and answers `reauth_required`; a network failure is
 * rethrown as it is (the token may still be good).
 */
export async function refreshChannel(services: Services, em: EntityManager, integration: Integration): Promise<void> {
  const provider = providerOf(integration);
  if (!provider.refresh) {
    await markNeedsReconnection(services, em, integration, `${provider.name} refused the token and offers no way to refresh it`);
    throw reauthRequired(integration);
  }
  attachEntity(em, IntegrationSchema, integration);
  let refreshed: Partial<ChannelAuth> & { channelSettings?: Record<string, unknown> };
  try {
    refreshed = await provider.refresh(providerContext(services, integration));
  } catch (error) {
    if (error instanceof PlatformHttpError && (error.isNetworkError || error.status === 429 || error.status >= 500)) throw error;
    await markNeedsReconnection(services, em, integration, `the token refresh failed: ${(error as Error).message}`);
    throw reauthRequired(integration);
  }
  const current = channelAuth(services, integration);
  integration.credentials = sealCredentials(services, {
    accessToken: refreshed.accessToken ?? current.accessToken,
    refreshToken: refreshed.refreshToken ?? current.refreshToken,
    data: { ...current.data, ...refreshed.data },
  });
  integration.tokenExpiresAt = refreshed.expiresAt ?? null;
  if (refreshed.channelSettings) integration.additionalSettings = { ...integration.additionalSettings, ...refreshed.channelSettings };
  await em.flush();
}

/**
 * Runs a provider call with the channel's credentials. A token about to expire is refreshed first; a 401 refreshes the
 * token once and repeats the call; a failed refresh flags the channel for reconnection, notifies the organization and
 * answers `reauth_required`.
 */
export async function withChannel<T>(
  services: Services,
  em: EntityManager,
  integration: Integration,
  settings: Record<string, unknown>,
  call: (context: ProviderContext) => Promise<T>,
): Promise<T> {
  if (integration.refreshNeeded) throw reauthRequired(integration);
  const provider = providerOf(integration);
  const expiresAt = integration.tokenExpiresAt?.getTime();
  if (provider.refresh && expiresAt !== undefined && expiresAt - REFRESH_MARGIN_MS < services.now().getTime()) {
    await refreshChannel(services, em, integration);
  }
  try {
    return await call(providerContext(services, integration, settings));
  } catch (error) {
    if (!(error instanceof PlatformHttpError) || !error.isAuthError) throw error;
    await refreshChannel(services, em, integration);
    try {
      return await call(providerContext(services, integration, settings));
    } catch (retryError) {
      if (retryError instanceof PlatformHttpError && retryError.isAuthError) {
        await markNeedsReconnection(services, em, integration, `${provider.name} refused the refreshed token: ${retryError.message}`);
        throw reauthRequired(integration);
      }
      throw retryError;
    }
  }
}

/**
 * The daily refresh of long-lived tokens that are not refreshed on a 401 alone (providers with `refreshDaysBeforeExpiry`:
 * Threads, Instagram standalone): each active channel whose token expires within its provider's window is refreshed; a
 * refresh that fails for good flags the channel and notifies (refreshChannel), a network failure waits for the next day.
 * Answers how many channels were refreshed.
 */
export async function refreshExpiringTokens(services: Services, now: Date): Promise<number> {
  const em = services.orm.em.fork();
  const channels = await em.find(IntegrationSchema, { deletedAt: null, refreshNeeded: false, inBetweenSteps: false, tokenExpiresAt: { $ne: null } });
  let refreshed = 0;
  for (const integration of channels) {
    const days = findProvider(integration.providerIdentifier)?.refreshDaysBeforeExpiry;
    if (!days || integration.tokenExpiresAt!.getTime() - now.getTime() > days * 86_400_000) continue;
    try {
      await refreshChannel(services, em, integration);
      refreshed += 1;
    } catch (error) {
      services.logger.warn({ integrationId: integration.id, err: (error as Error).message }, 'scheduled token refresh failed');
    }
  }
  return refreshed;
}

export async function markNeedsReconnection(services: Services, em: EntityManager, integration: Integration, reason = 'its token expired or was revoked'): Promise<void> {
  attachEntity(em, IntegrationSchema, integration);
  if (!integration.refreshNeeded) {
    integration.refreshNeeded = true;
    await recordReconnectReason(em, integration, reason, services.now());
    notify(em, integration.organizationId, 'channel_reconnect', `Your ${providerOf(integration).name} channel "${integration.name}" needs to be reconnected.`, undefined, { integration, reason });
    services.logger.warn({ integrationId: integration.id }, 'channel needs reconnection');
  }
  await em.flush();
}

/** Turns a platform failure on a read call (analytics, helper tools) into a clear provider_error. */
export function providerFailure(provider: Provider, error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof PlatformHttpError) {
    return new DomainError('provider_error', `${provider.name} answered with an error: ${error.message}`, {
      hint: error.retryable ? 'This is usually temporary: try again in a minute.' : 'Check the channel on the platform; reconnect it if the problem persists.',
    });
  }
  throw error;
}

/** The channel of this platform account in the organization, if it is connected already (connecting it again updates it). */
export function connectedChannel(em: EntityManager, organizationId: string, provider: Provider, internalId: string): Promise<Integration | null> {
  return em.findOne(IntegrationSchema, { organizationId, providerIdentifier: provider.identifier, internalId, deletedAt: null });
}

/**
 * Creates the channel of a connected account, or updates it when the organization already has this account (or when
 * `refresh` names the channel being reconnected).
 */
export async function saveConnectedAccount(
  em: EntityManager,
  services: Services,
  organizationId: string,
  provider: Provider,
  account: ConnectedAccount,
  options: { refresh?: string; inBetweenSteps?: boolean } = {},
): Promise<Integration> {
  const existing = options.refresh ? await findIntegration(em, organizationId, options.refresh) : await connectedChannel(em, organizationId, provider, account.internalId);
  const now = services.now();
  const fields = {
    internalId: account.internalId,
    name: account.name,
    profile: account.profile,
    picture: account.picture ?? null,
    credentials: sealCredentials(services, account),
    tokenExpiresAt: account.expiresAt ?? null,
    refreshNeeded: false,
    inBetweenSteps: options.inBetweenSteps ?? false,
  };
  const integration = existing
    ? Object.assign(existing, fields, account.channelSettings ? { additionalSettings: { ...existing.additionalSettings, ...account.channelSettings } } : {})
    : em.create(IntegrationSchema, {
        id: newId(),
        organizationId,
        providerIdentifier: provider.identifier,
        ...fields,
        disabled: false,
        customerId: null,
        postingTimes: services.config.defaultPostingTimes,
        // The defaults are wall-clock times of the channel's people: a new channel follows its organization's zone.
        postingTimesZone: await organizationZone(em, organizationId),
        additionalSettings: account.channelSettings ?? {},
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
  await em.flush();
  const what = `${provider.name} channel "${integration.name}" (${integration.profile})`;
  await recordChange(em, organizationId, {
    action: existing ? 'channel.reconnected' : 'channel.connected',
    target: { kind: 'channel', id: integration.id },
    integrationId: integration.id,
    did: `${existing ? 'reconnected' : 'connected'} the ${what}`,
    changes: { platform: provider.identifier, name: integration.name, profile: integration.profile },
  });
  return integration;
}

export type ChannelStatus = 'active' | 'disabled' | 'needs_reconnection' | 'choose_account';

export function channelStatus(integration: Integration): ChannelStatus {
  if (integration.inBetweenSteps) return 'choose_account';
  if (integration.refreshNeeded) return 'needs_reconnection';
  return integration.disabled ? 'disabled' : 'active';
}

/** A posting time (minutes after midnight, UTC) as `HH:MM`. */
export const formatPostingTime = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
