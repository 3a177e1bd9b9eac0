// The next free posting slot of a channel: its posting times, from today on, skipping minutes it already has a post at.
import type { EntityManager } from '@mikro-orm/postgresql';
import { PostSchema, type Integration } from '../../src/db/entities.js';

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
