// Analytics answers: the platform's live numbers over Herald's history (metrics-history.ts), for a channel and for a post.
// The one implementation behind channelAnalyticsTool, analyticsOverviewTool, postAnalyticsTool, the CSV export and the
// console's charts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Integration, Post } from '../../src/db/entities.js';
import { asDomainError } from '../../src/errors.js';
import { isoDay } from '../../providers/shared.js';
import type { AnalyticsMetric } from '../../providers/types.js';
import type { Services, ToolContext } from '../types.js';
import { channelStatus, providerFailure, providerOf, reauthRequired, withChannel } from './integrations.js';
import { channelAnswer, periodStart, postAnswer, storedChannelDays, storedPostSnapshots } from './metrics-history.js';

export interface ChannelAnalytics {
  metrics: AnalyticsMetric[];
  /** Why the answer is only history, or empty: the platform has no analytics, the channel needs reconnecting, it failed. */
  note?: string;
}

/**
 * A channel's metrics over the last `days` days: live from the platform merged over the stored history. When the platform
 * cannot be asked (no analytics API, channel not active, a failure) the history alone answers and `note` says why; with
 * `strict`, a platform failure without any history is thrown (channelAnalyticsTool keeps its error answers).
 */
export async function channelAnalytics(
  services: Services,
  em: EntityManager,
  integration: Integration,
  days: number,
  options: { strict?: boolean; log?: ToolContext['log'] } = {},
): Promise<ChannelAnalytics> {
  const today = isoDay(services.now());
  const stored = await storedChannelDays(em, integration.organizationId, [integration.id], periodStart(today, days), today);
  const provider = providerOf(integration);
  const state = channelStatus(integration);
  const historyOnly = (note: string) => ({ metrics: channelAnswer(undefined, stored, today, days), note });
  if (!provider.analytics) return historyOnly(`${provider.name} offers no analytics API: Herald cannot read or record metrics for this channel.`);
  // A disabled channel still has its token: only one that needs reconnecting cannot be asked.
  if (state === 'needs_reconnection') {
    if (options.strict && stored.length === 0) throw reauthRequired(integration);
    return historyOnly(`The channel needs reconnecting: ${stored.length > 0 ? 'showing the recorded history' : 'nothing was recorded before it was disconnected'}.`);
  }
  try {
    const live = await withChannel(services, em, integration, {}, (context) => provider.analytics!(context, days));
    return { metrics: channelAnswer(live, stored, today, days) };
  } catch (error) {
    const failure = asDomainError(providerFailure(provider, error));
    if (options.strict && (stored.length === 0 || failure.code === 'reauth_required')) throw failure;
    options.log?.('warning', `${integration.name}: ${failure.message} Answering from the recorded history.`, { integration: integration.id });
    return historyOnly(`${failure.message}${stored.length > 0 ? ' Showing the recorded history.' : ''}`);
  }
}

/** A published post's metrics: its snapshots since publication (one point a day) with the live value as today's. */
export async function postAnalytics(services: Services, em: EntityManager, post: Post, integration: Integration, days: number, log?: ToolContext['log']): Promise<AnalyticsMetric[]> {
  const provider = providerOf(integration);
  if (!provider.postAnalytics) return [];
  const today = isoDay(services.now());
  const snapshots = await storedPostSnapshots(em, post.organizationId, [post.id], new Date(Date.parse(`${periodStart(today, days)}T00:00:00Z`)));
  const ref = { id: post.releaseId!, url: post.releaseUrl ?? undefined, meta: post.releaseMeta ?? undefined };
  try {
    const live = await withChannel(services, em, integration, {}, (context) => provider.postAnalytics!(context, ref, days));
    return postAnswer(live, snapshots, today, days);
  } catch (error) {
    const failure = asDomainError(providerFailure(provider, error));
    if (snapshots.length === 0 || failure.code === 'reauth_required') throw failure;
    log?.('warning', `${failure.message} Answering from the recorded snapshots.`, { post: post.id });
    return postAnswer(undefined, snapshots, today, days);
  }
}
