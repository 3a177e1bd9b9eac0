// The next free posting slot of a channel: its daily posting times (wall-clock times of their zone, so 09:00 stays 09:00
// across daylight-saving changes), from today on, skipping minutes it already has a post at.
import type { EntityManager } from '@mikro-orm/postgresql';
import { PostSchema, type Integration } from '../../src/db/entities.js';
import { addDays, instantOf, timeKey, wallClockOf, weekdayOf, type WallClock } from '../../src/lib/time-zone.js';
import { WEEKDAYS, type BestTimes } from './best-times.js';
import { channelZone, organizationZone } from './time-zones.js';

/** The minutes (since the epoch) at which the channel has a post between `from` and `until`. */
async function minutesTaken(em: EntityManager, integration: Pick<Integration, 'id' | 'organizationId'>, from: Date, until: Date): Promise<Set<number>> {
  const taken = await em.find(
    PostSchema,
    { organizationId: integration.organizationId, integrationId: integration.id, deletedAt: null, position: 0, publishDate: { $gte: from, $lt: until } },
    { fields: ['publishDate'] },
  );
  return new Set(taken.map((post) => Math.floor(post.publishDate.getTime() / 60_000)));
}

type WithPostingTimes = Pick<Integration, 'postingTimes' | 'postingTimesZone' | 'timeZone'>;

/** A channel's daily posting times (minutes, sorted) and their zone: its own, else the defaults on its people's clock. */
export function postingTimesOf(integration: WithPostingTimes, defaultTimes: number[], organizationDefault: string): { times: number[]; zone: string } {
  const own = integration.postingTimes.length > 0;
  return {
    times: [...new Set(own ? integration.postingTimes : defaultTimes)].sort((a, b) => a - b),
    zone: own ? integration.postingTimesZone : channelZone(integration, organizationDefault),
  };
}

/** The posting times as they read today on the clock of `zone` (`HH:MM`, in the order of the day). */
export function postingTimesIn(integration: WithPostingTimes, defaultTimes: number[], organizationDefault: string, zone: string, now: Date): string[] {
  const own = postingTimesOf(integration, defaultTimes, organizationDefault);
  const today: WallClock = { ...wallClockOf(now, own.zone), second: 0 };
  const read = own.times.map((minutes) => timeKey(wallClockOf(instantOf({ ...today, hour: Math.floor(minutes / 60), minute: minutes % 60 }, own.zone), zone)));
  return [...new Set(read)].sort();
}

/** Bounded search: a channel with posts in every slot for a year is told so instead of looping forever. */
const SEARCH_DAYS = 366;

/**
 * The first posting time after `now` (and at or after `after`, when given) with no post of the channel at that minute.
 * Channels without posting times use the configured defaults, wall-clock times of the channel's zone (its own, else the
 * organization's), as a new channel is given them.
 */
export async function findFreeSlot(
  em: EntityManager,
  integration: Pick<Integration, 'id' | 'organizationId' | 'postingTimes' | 'postingTimesZone' | 'timeZone'>,
  now: Date,
  defaultTimes: number[],
  after?: Date,
): Promise<Date | undefined> {
  const { times, zone } = postingTimesOf(integration, defaultTimes, await organizationZone(em, integration.organizationId));
  const from = after && after > now ? after : now;
  const firstDay: WallClock = { ...wallClockOf(from, zone), hour: 0, minute: 0, second: 0 };
  // A day past the last local day searched: far enough for any offset.
  const horizon = new Date(from.getTime() + (SEARCH_DAYS + 1) * 86_400_000);
  const takenMinutes = await minutesTaken(em, integration, from, horizon);
  for (let offset = 0; offset < SEARCH_DAYS; offset++) {
    const day = addDays(firstDay, offset);
    for (const minutes of times) {
      const candidate = instantOf({ ...day, hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0 }, zone);
      if (candidate <= now || (after && candidate < after)) continue;
      if (!takenMinutes.has(candidate.getTime() / 60_000)) return candidate;
    }
  }
  return undefined;
}

/**
 * The next free time at one of the channel's best slots (best-times.ts: weekday × hour in its time zone, best first by
 * median engagement, the soonest of them), or undefined when there is not enough data (the caller falls back to the
 * posting times and says so).
 */
export async function findEngagementSlot(em: EntityManager, integration: Integration, now: Date, best: BestTimes): Promise<Date | undefined> {
  if (!best.enoughData) return undefined;
  const horizon = new Date(now.getTime() + 8 * 7 * 86_400_000);
  const takenMinutes = await minutesTaken(em, integration, now, horizon);
  const wanted = best.suggestions.map((slot) => ({ weekday: WEEKDAYS.indexOf(slot.weekday), hour: Number(slot.hour.slice(0, 2)) }));
  const today: WallClock = { ...wallClockOf(now, best.timeZone), hour: 0, minute: 0, second: 0 };
  for (let offset = 0; offset < 8 * 7; offset++) {
    const day = addDays(today, offset);
    const candidates = wanted
      .filter((slot) => slot.weekday === weekdayOf(day))
      .map((slot) => instantOf({ ...day, hour: slot.hour, minute: 0, second: 0 }, best.timeZone))
      .filter((candidate) => candidate.getTime() > now.getTime() && !takenMinutes.has(Math.floor(candidate.getTime() / 60_000)))
      .sort((a, b) => a.getTime() - b.getTime());
    if (candidates.length > 0) return candidates[0];
  }
  return undefined;
}
