// The next free posting slot of a channel: its posting times, from today on, skipping minutes it already has a post at.
import type { EntityManager } from '@mikro-orm/postgresql';
import { PostSchema, type Integration } from '../../src/db/entities.js';
import type { BestTimes } from './best-times.js';
import { WEEKDAYS, zonedDatePlus, zonedInstant } from './time-zone.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Bounded search: a channel with posts in every slot for a year is told so instead of looping forever. */
const SEARCH_DAYS = 366;

export async function findFreeSlot(em: EntityManager, integration: Integration, now: Date, defaultTimes: number[]): Promise<Date | undefined> {
  const times = [...new Set(integration.postingTimes.length > 0 ? integration.postingTimes : defaultTimes)].sort((a, b) => a - b);
  const startOfToday = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const horizon = new Date(startOfToday + SEARCH_DAYS * DAY_MS);
  const taken = await em.find(
    PostSchema,
    { organizationId: integration.organizationId, integrationId: integration.id, deletedAt: null, position: 0, publishDate: { $gte: now, $lt: horizon } },
    { fields: ['publishDate'] },
  );
  const takenMinutes = new Set(taken.map((post) => Math.floor(post.publishDate.getTime() / 60_000)));
  for (let day = 0; day < SEARCH_DAYS; day++) {
    for (const minutes of times) {
      const candidate = startOfToday + day * DAY_MS + minutes * 60_000;
      if (candidate <= now.getTime()) continue;
      if (!takenMinutes.has(candidate / 60_000)) return new Date(candidate);
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
  const horizon = new Date(now.getTime() + 8 * 7 * DAY_MS);
  const taken = await em.find(
    PostSchema,
    { organizationId: integration.organizationId, integrationId: integration.id, deletedAt: null, position: 0, publishDate: { $gte: now, $lt: horizon } },
    { fields: ['publishDate'] },
  );
  const takenMinutes = new Set(taken.map((post) => Math.floor(post.publishDate.getTime() / 60_000)));
  const wanted = best.suggestions.map((slot) => ({ weekday: WEEKDAYS.indexOf(slot.weekday), hour: Number(slot.hour.slice(0, 2)) }));
  for (let day = 0; day < 8 * 7; day++) {
    const date = zonedDatePlus(now, day, best.timeZone);
    const candidates = wanted
      .filter((slot) => slot.weekday === date.weekday)
      .map((slot) => zonedInstant(date.year, date.month, date.day, slot.hour, 0, best.timeZone))
      .filter((candidate) => candidate.getTime() > now.getTime() && !takenMinutes.has(Math.floor(candidate.getTime() / 60_000)))
      .sort((a, b) => a.getTime() - b.getTime());
    if (candidates.length > 0) return candidates[0];
  }
  return undefined;
}
