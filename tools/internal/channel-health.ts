// Channel health: one state per channel for integrationList, GET /integrations and the console (active, token_expiring with
// the date, needs_reconnection with the reason, disabled), the daily warning about tokens Herald cannot refresh, and the
// warning on a post whose channel will be expired (or is broken) at its date.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ChannelHealthSchema, type ChannelHealth } from '../../src/db/agent-entities.js';
import { IntegrationSchema, type Integration } from '../../src/db/entities.js';
import { findProvider } from '../../providers/index.js';
import { isoDay } from '../../providers/shared.js';
import type { Services } from '../types.js';
import { notify } from './notifications.js';
import { listedNotice } from './integrations.js';

export const channelHealthSchema = z.object({
  state: z.enum(['active', 'token_expiring', 'needs_reconnection', 'disabled']),
  reason: z.string().optional().describe('Why the channel needs reconnecting, or what to do before its token expires'),
  tokenExpiresAt: z.string().optional().describe('When the channel\'s token expires (token_expiring, or an expired token)'),
  since: z.string().optional().describe('When the channel was found to need reconnecting'),
  notice: z.string().optional().describe("What the platform did with the channel's latest post other than asked (e.g. YouTube keeps its uploads private), and what to do"),
});
export type ChannelHealthRecord = z.infer<typeof channelHealthSchema>;

const DAY_MS = 86_400_000;

interface SealedRefresh {
  refreshToken?: string;
}

/**
 * Whether Herald can renew the channel's token by itself: the provider refreshes, and either refreshes long-lived tokens from
 * the token itself (Threads, Instagram standalone), re-logs in with stored credentials (Bluesky), or holds a refresh token.
 * LinkedIn without a refresh token and Facebook user tokens cannot: their owners must reconnect before the expiry.
 */
export function canRefreshToken(services: Services, integration: Integration): boolean {
  const provider = findProvider(integration.providerIdentifier);
  if (!provider?.refresh) return false;
  if (provider.refreshDaysBeforeExpiry !== undefined || provider.auth.kind === 'credentials') return true;
  try {
    return Boolean(services.secrets.openJson<SealedRefresh>(integration.credentials).refreshToken);
  } catch {
    return false;
  }
}

/** The channel's platform as people call it (e.g. "Bluesky"); its identifier when no provider has it. */
export const platformName = (integration: Pick<Integration, 'providerIdentifier'>) => findProvider(integration.providerIdentifier)?.name ?? integration.providerIdentifier;

export function healthOf(services: Services, integration: Integration, row: ChannelHealth | undefined, now: Date): ChannelHealthRecord {
  if (integration.inBetweenSteps) {
    return { state: 'needs_reconnection', reason: 'The connection is not finished: choose the page or account to publish as (GET /integrations/{id}/accounts, or the console).' };
  }
  if (integration.refreshNeeded) {
    return {
      state: 'needs_reconnection',
      reason: row?.reconnectReason ?? 'Its token expired or was revoked: reconnect the channel.',
      ...(row?.reconnectSince ? { since: row.reconnectSince.toISOString() } : {}),
    };
  }
  if (integration.disabled) return { state: 'disabled' };
  const expiresAt = integration.tokenExpiresAt;
  if (expiresAt && !canRefreshToken(services, integration)) {
    const tokenExpiresAt = expiresAt.toISOString();
    if (expiresAt.getTime() <= now.getTime()) {
      return { state: 'needs_reconnection', reason: `Its token expired on ${isoDay(expiresAt)} and ${platformName(integration)} cannot refresh it: reconnect the channel.`, tokenExpiresAt };
    }
    if (expiresAt.getTime() - now.getTime() <= services.config.channelExpiryWarningDays * DAY_MS) {
      return { state: 'token_expiring', reason: `Reconnect the channel before ${isoDay(expiresAt)}: ${platformName(integration)} cannot refresh its token.`, tokenExpiresAt };
    }
  }
  return { state: 'active' };
}

/** The health of each channel, by id. */
export async function healthByChannel(services: Services, em: EntityManager, integrations: Integration[]): Promise<Map<string, ChannelHealthRecord>> {
  // Only a channel that needs reconnecting has a reason recorded: the others cost no query.
  const broken = integrations.filter((item) => item.refreshNeeded && !item.inBetweenSteps);
  const rows = broken.length ? await em.find(ChannelHealthSchema, { integrationId: { $in: broken.map((item) => item.id) } }) : [];
  const byId = new Map(rows.map((row) => [row.integrationId, row]));
  const now = services.now();
  const notices = await latestNotices(em, integrations);
  return new Map(
    integrations.map((integration) => {
      const health = healthOf(services, integration, byId.get(integration.id), now);
      const notice = notices.get(integration.id);
      return [integration.id, notice ? { ...health, notice } : health];
    }),
  );
}

/**
 * The `channelNotice` a provider put in the meta of each channel's latest published post: a fact about the channel the platform
 * showed on that post (YouTube locking an unverified project's uploads to private), gone once a later post is published normally.
 */
async function latestNotices(em: EntityManager, integrations: Integration[]): Promise<Map<string, string>> {
  if (integrations.length === 0) return new Map();
  // Channels from listIntegrations came with their notice (read by the list query itself).
  const listed = integrations.map(listedNotice);
  if (listed.every((notice) => notice !== undefined)) return new Map(integrations.flatMap((integration, index) => (listed[index] ? [[integration.id, listed[index]!] as const] : [])));
  const rows: { integration_id: string; notice: string | null }[] = await em.getConnection().execute(
    `select distinct on (integration_id) integration_id, release_meta->>'channelNotice' as notice from post
     where integration_id in (${integrations.map(() => '?').join(',')}) and position = 0 and published_at is not null and deleted_at is null
     order by integration_id, published_at desc`,
    integrations.map((integration) => integration.id),
  );
  return new Map(rows.filter((row) => row.notice).map((row) => [row.integration_id, row.notice!]));
}

/** Adds `health` to the records of these channels (integrationList, GET /integrations). */
export async function withHealth<Record extends { id: string }>(services: Services, em: EntityManager, integrations: Integration[], records: Record[]): Promise<(Record & { health: ChannelHealthRecord })[]> {
  const health = await healthByChannel(services, em, integrations);
  return records.map((record) => ({ ...record, health: health.get(record.id) ?? { state: 'active' as const } }));
}

/** Warnings for a post that will be published at `publishDate` on this channel. */
export function channelHealthWarnings(services: Services, integration: Integration, publishDate: Date): string[] {
  if (integration.inBetweenSteps) return [`Channel "${integration.name}" is waiting for a page or account choice: finish connecting it before ${publishDate.toISOString()}, or the post will fail.`];
  if (integration.refreshNeeded) return [`Channel "${integration.name}" needs to be reconnected: reconnect it before ${publishDate.toISOString()}, or the post will fail.`];
  const expiresAt = integration.tokenExpiresAt;
  if (expiresAt && expiresAt.getTime() <= publishDate.getTime() && !canRefreshToken(services, integration)) {
    return [
      `The token of channel "${integration.name}" expires on ${expiresAt.toISOString()}, before this post's date, and ${platformName(integration)} cannot refresh it: reconnect the channel before then, or the post will fail.`,
    ];
  }
  return [];
}

/** Records why a channel needs reconnecting (shown in its health and sent with channel.needs_reconnection). */
export async function recordReconnectReason(em: EntityManager, integration: Integration, reason: string, now: Date): Promise<void> {
  await em.getConnection().execute(
    `insert into channel_health (integration_id, reconnect_reason, reconnect_since) values (?, ?, ?)
     on conflict (integration_id) do update set reconnect_reason = excluded.reconnect_reason, reconnect_since = excluded.reconnect_since`,
    [integration.id, reason, now],
  );
}

/**
 * The daily warning (with refresh_expiring_tokens): every channel whose token Herald cannot refresh and which expires within
 * CHANNEL_EXPIRY_WARNING_DAYS is warned about once per expiry date (notification + channel.token_expiring webhook).
 * Answers how many channels were warned.
 */
export async function warnExpiringTokens(services: Services, now: Date): Promise<number> {
  const em = services.orm.em.fork();
  const horizon = new Date(now.getTime() + services.config.channelExpiryWarningDays * DAY_MS);
  const channels = await em.find(IntegrationSchema, {
    deletedAt: null,
    refreshNeeded: false,
    inBetweenSteps: false,
    disabled: false,
    tokenExpiresAt: { $ne: null, $gt: now, $lte: horizon },
  });
  const rows = await em.find(ChannelHealthSchema, { integrationId: { $in: channels.map((channel) => channel.id) } });
  const warned = new Map(rows.map((row) => [row.integrationId, row.expiryWarnedFor?.getTime()]));
  let count = 0;
  for (const integration of channels) {
    const expiresAt = integration.tokenExpiresAt!;
    if (warned.get(integration.id) === expiresAt.getTime() || canRefreshToken(services, integration)) continue;
    await em.getConnection().execute(
      `insert into channel_health (integration_id, expiry_warned_for) values (?, ?)
       on conflict (integration_id) do update set expiry_warned_for = excluded.expiry_warned_for`,
      [integration.id, expiresAt],
    );
    notify(
      em,
      integration.organizationId,
      'channel_token_expiring',
      `The token of your ${platformName(integration)} channel "${integration.name}" expires on ${isoDay(expiresAt)} and cannot be refreshed: reconnect the channel before then, or its posts will fail.`,
      undefined,
      { integration, expiresAt },
    );
    await em.flush();
    count += 1;
  }
  return count;
}
