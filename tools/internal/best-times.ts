// Best posting times of a channel from the organization's own published posts and their engagement (issue 24).
//
// Engagement of a post: the sum of the interactions its platform counts (ENGAGEMENT_METRICS: likes/favourites/reactions/
// upvotes, reposts/boosts/recasts/shares/quotes, replies/comments/responses, saves/bookmarks) at its latest snapshot taken
// at least a day after publication (a post read at +1 h has not had its chance yet). Views, impressions, reach and clicks
// are not interactions and not every platform gives them; Reddit's score double-counts upvotes. Posts are compared only
// within one channel, so each platform's scale does not matter.
//
// Buckets: weekday × hour of publication in the channel's time zone (time-zone.ts). A slot is suggested only with at
// least MIN_SLOT_POSTS posts in it and MIN_POSTS posts with metrics overall; otherwise the answer says so and falls back
// to the channel's posting times. Nothing is invented: with no data it says there is none.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Integration } from '../../src/db/entities.js';
import { postingTimesIn } from './find-slot.js';
import { wallClockOf, weekdayOf } from '../../src/lib/time-zone.js';
import { channelZone, organizationZone } from './time-zones.js';

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
const hourLabel = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

export const ENGAGEMENT_METRICS = [
  'likes', 'favourites', 'reactions', 'upvotes',
  'reposts', 'boosts', 'recasts', 'shares', 'quotes', 'retweets',
  'replies', 'comments', 'responses',
  'saves', 'bookmarks',
];
export const MIN_POSTS = 10;
export const MIN_SLOT_POSTS = 3;
/** Posts published in this many days before now are looked at. */
export const LOOKBACK_DAYS = 180;
const SETTLED_MS = 24 * 3_600_000;
const DAY_MS = 86_400_000;

export const ENGAGEMENT_EXPLAINED =
  'Engagement of a post = the interactions its platform counts (likes, reposts, replies, comments, quotes, shares, reactions, saves) at its latest reading at least a day after publication; views, reach and clicks are not counted.';

export interface BestTimeSlot {
  weekday: (typeof WEEKDAYS)[number];
  /** The hour in the channel's time zone, `HH:00`. */
  hour: string;
  posts: number;
  medianEngagement: number;
}

export interface BestTimes {
  integration: { id: string; name: string; platform: string };
  timeZone: string;
  /** Published posts in the period, and how many of them have metrics Herald could read. */
  publishedPosts: number;
  postsWithMetrics: number;
  enoughData: boolean;
  /** The best slots (at most 3), best first; empty when there is not enough data. */
  suggestions: BestTimeSlot[];
  /** Every slot with posts, busiest first: the evidence. */
  slots: BestTimeSlot[];
  /** When there is not enough data: the channel's posting times (UTC), what find-slot uses instead. */
  /** The posting times find-slot falls back to, as `HH:MM` on the clock of `timeZone`. */
  fallback: { postingTimes: string[] } | null;
  explanation: string;
  method: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Each published post of the channel in the period with its engagement (undefined when it has no settled snapshot). */
async function postsWithEngagement(em: EntityManager, integration: Integration, now: Date): Promise<{ publishedAt: Date; engagement?: number }[]> {
  const rows = await em.getConnection().execute<{ id: string; published_at: string | Date; engagement: number | null; read: boolean }[]>(
    `select p.id, p.published_at,
            (select sum(latest.value) from (
               select distinct on (s.metric) s.value from post_metric_snapshot s
                where s.post_id = p.id and s.organization_id = p.organization_id and s.metric in (${ENGAGEMENT_METRICS.map(() => '?').join(', ')})
                  and s.kind = 'total' and s.taken_at >= p.published_at + interval '${SETTLED_MS / 1000} seconds'
                order by s.metric, s.taken_at desc) latest) as engagement,
            exists (select 1 from post_metric_snapshot s where s.post_id = p.id and s.taken_at >= p.published_at + interval '${SETTLED_MS / 1000} seconds') as read
       from post p
      where p.organization_id = ? and p.integration_id = ? and p.position = 0 and p.state = 'PUBLISHED' and p.deleted_at is null
        and p.published_at is not null and p.published_at >= ?::timestamptz and p.published_at <= ?::timestamptz`,
    [...ENGAGEMENT_METRICS, integration.organizationId, integration.id, new Date(now.getTime() - LOOKBACK_DAYS * DAY_MS).toISOString(), now.toISOString()],
  );
  return rows.map((row) => ({ publishedAt: new Date(row.published_at), engagement: row.read ? Number(row.engagement ?? 0) : undefined }));
}

export async function bestTimes(em: EntityManager, integration: Integration, now: Date, defaultPostingTimes: number[]): Promise<BestTimes> {
  const organizationDefault = await organizationZone(em, integration.organizationId);
  const timeZone = channelZone(integration, organizationDefault);
  const posts = await postsWithEngagement(em, integration, now);
  const measured = posts.filter((post) => post.engagement !== undefined);
  const buckets = new Map<string, { weekday: number; hour: number; values: number[] }>();
  for (const post of measured) {
    const wall = wallClockOf(post.publishedAt, timeZone);
    const clock = { weekday: weekdayOf(wall), hour: wall.hour };
    const key = `${clock.weekday}/${clock.hour}`;
    const bucket = buckets.get(key) ?? { weekday: clock.weekday, hour: clock.hour, values: [] };
    bucket.values.push(post.engagement!);
    buckets.set(key, bucket);
  }
  const slots = [...buckets.values()]
    .map((bucket) => ({ weekday: WEEKDAYS[bucket.weekday], hour: hourLabel(bucket.hour), posts: bucket.values.length, medianEngagement: median(bucket.values), order: bucket.weekday * 24 + bucket.hour }))
    .sort((a, b) => b.posts - a.posts || b.medianEngagement - a.medianEngagement || a.order - b.order);
  const eligible = slots.filter((slot) => slot.posts >= MIN_SLOT_POSTS).sort((a, b) => b.medianEngagement - a.medianEngagement || b.posts - a.posts || a.order - b.order);
  const enoughData = measured.length >= MIN_POSTS && eligible.length > 0;
  const strip = ({ order: _order, ...slot }: (typeof slots)[number]) => slot;
  const fallbackTimes = postingTimesIn(integration, defaultPostingTimes, organizationDefault, timeZone, now);
  let explanation: string;
  if (enoughData) {
    const best = eligible[0];
    explanation = `From ${measured.length} posts with metrics: ${best.weekday} ${best.hour} (${timeZone}) has the highest median engagement, ${best.medianEngagement} over ${best.posts} posts.`;
  } else if (measured.length === 0) {
    explanation = `No data: ${posts.length === 0 ? 'no post was published on this channel in the last ' + LOOKBACK_DAYS + ' days' : `none of the ${posts.length} published posts has metrics yet (they are read a day or more after publication, and only where the platform offers post analytics)`}. Falling back to the channel's posting times (${fallbackTimes.join(', ')}, ${timeZone}).`;
  } else {
    explanation = `Not enough data: ${measured.length} posts with metrics (at least ${MIN_POSTS} are needed, and ${MIN_SLOT_POSTS} in one weekday-hour slot). Falling back to the channel's posting times (${fallbackTimes.join(', ')}, ${timeZone}).`;
  }
  return {
    integration: { id: integration.id, name: integration.name, platform: integration.providerIdentifier },
    timeZone,
    publishedPosts: posts.length,
    postsWithMetrics: measured.length,
    enoughData,
    suggestions: enoughData ? eligible.slice(0, 3).map(strip) : [],
    slots: slots.map(strip),
    fallback: enoughData ? null : { postingTimes: fallbackTimes },
    explanation,
    method: `${ENGAGEMENT_EXPLAINED} Posts of the last ${LOOKBACK_DAYS} days, grouped by weekday and hour of publication in ${timeZone}; a slot needs ${MIN_SLOT_POSTS} posts, the channel ${MIN_POSTS}.`,
  };
}
