// Reading new comments on the posts Herald published, by polling: no platform Herald supports offers comment webhooks that
// a self-hosted deployment can receive without an app review (Meta's and YouTube's need a public, verified callback), so
// the poll is the one way, and it works behind any firewall.
//
// One poll_comments job (src/jobs) wakes every COMMENT_POLL_SECONDS, reads the posts that are due and goes back to sleep.
// A post is read often while it is young and rarely after: every COMMENT_POLL_SECONDS (default 2 minutes) in its first
// hour, then ×5 until 6 hours, ×15 until a day, ×30 until 3 days, ×90 after, and not at all after COMMENT_POLL_DAYS (14).
// A failed read backs off (doubling, at most 6 hours); a platform's rate limit (429, with its Retry-After) pauses every post
// of that channel until it resets; a platform or tier that does not allow reading comments (not_supported) is asked
// again a day later. At most POSTS_PER_RUN posts a run, and PER_CHANNEL of one channel, so one busy account does not
// starve the others or spend its rate limit at once.
import { CommentPollSchema } from '../../src/db/comment-entities.js';
import { IntegrationSchema, PostSchema, type Post } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { providers } from '../../providers/index.js';
import type { Services } from '../types.js';
import { providerOf, withChannel } from './integrations.js';
import { postRefOf, storeComments } from './comments.js';

export const POLL_TASK = 'poll_comments';
export const POLL_JOB_KEY = 'poll_comments';
const POSTS_PER_RUN = 50;
const PER_CHANNEL = 10;
const HOUR = 3_600_000;
const MAX_BACKOFF_MS = 6 * HOUR;
const NOT_SUPPORTED_PAUSE_MS = 24 * HOUR;

/** Milliseconds between two reads of a post of this age. */
export function pollInterval(ageMs: number, shortestSeconds: number): number {
  const shortest = shortestSeconds * 1000;
  if (ageMs < HOUR) return shortest;
  if (ageMs < 6 * HOUR) return shortest * 5;
  if (ageMs < 24 * HOUR) return shortest * 15;
  if (ageMs < 72 * HOUR) return shortest * 30;
  return shortest * 90;
}

interface DueRow {
  id: string;
  integration_id: string;
  published_at: Date;
  since: Date | null;
  failures: number | null;
}

/** Identifiers of the platforms whose providers read comments. */
const readablePlatforms = () => providers.filter((provider) => provider.comments).map((provider) => provider.identifier);

/**
 * Reads the comments of every post that is due, stores the new ones, and answers when the job should run again: soon when
 * more posts were due than one run takes, else after COMMENT_POLL_SECONDS.
 */
export async function pollDueComments(services: Services): Promise<Date> {
  const { pollDays, pollSeconds } = services.config.comments;
  const now = services.now();
  const next = new Date(now.getTime() + pollSeconds * 1000);
  const platforms = readablePlatforms();
  if (pollDays <= 0 || platforms.length === 0) return new Date(now.getTime() + 3600_000);
  const em = services.orm.em.fork();
  const due = await em.getConnection().execute<DueRow[]>(
    `select p.id, p.integration_id, p.published_at, cp.since, cp.failures
       from post p
       join integration i on i.id = p.integration_id
       left join comment_poll cp on cp.post_id = p.id
      where p.position = 0 and p.state = 'PUBLISHED' and p.deleted_at is null and p.reply_to is null
        and p.release_id is not null and p.release_id <> 'missing' and p.published_at >= ?
        and i.deleted_at is null and not i.disabled and not i.refresh_needed and not i.in_between_steps
        and i.provider_identifier in (?)
        and coalesce(cp.next_poll_at, p.published_at + make_interval(secs => ?)) <= ?
      order by coalesce(cp.next_poll_at, p.published_at)
      limit ?`,
    [new Date(now.getTime() - pollDays * 24 * HOUR), platforms, pollSeconds, now, POSTS_PER_RUN + 1],
  );
  const perChannel = new Map<string, number>();
  const paused = new Set<string>();
  for (const row of due.slice(0, POSTS_PER_RUN)) {
    const count = perChannel.get(row.integration_id) ?? 0;
    if (count >= PER_CHANNEL || paused.has(row.integration_id)) continue;
    perChannel.set(row.integration_id, count + 1);
    const outcome = await pollPost(services, row);
    if (outcome === 'rate_limited') paused.add(row.integration_id);
  }
  return due.length > POSTS_PER_RUN ? new Date(now.getTime() + 1000) : next;
}

/** Reads one post's comments and records how it went; answers 'rate_limited' when its channel must wait. */
async function pollPost(services: Services, row: DueRow): Promise<'ok' | 'failed' | 'rate_limited'> {
  const em = services.orm.em.fork();
  const root = await em.findOne(PostSchema, { id: row.id });
  const integration = await em.findOne(IntegrationSchema, { id: row.integration_id });
  if (!root || !integration) return 'failed';
  const provider = providerOf(integration);
  const now = services.now();
  const interval = pollInterval(now.getTime() - new Date(row.published_at).getTime(), services.config.comments.pollSeconds);
  try {
    const found = await withChannel(services, em, integration, {}, (context) => provider.comments!(context, postRefOf(root), row.since ?? undefined));
    await storeComments(services, root, integration, found);
    const newest = found.reduce<number>((latest, comment) => Math.max(latest, Date.parse(comment.createdAt) || 0), row.since?.getTime() ?? 0);
    await record(services, root, { nextPollAt: new Date(now.getTime() + interval), since: newest > 0 ? new Date(newest) : null, failures: 0, lastError: null });
    return 'ok';
  } catch (error) {
    const failures = (row.failures ?? 0) + 1;
    const message = error instanceof Error ? error.message : String(error);
    services.logger.warn({ postId: root.id, integrationId: integration.id, failures, err: message }, 'reading comments failed');
    if (error instanceof DomainError && error.code === 'not_supported') {
      await record(services, root, { nextPollAt: new Date(now.getTime() + NOT_SUPPORTED_PAUSE_MS), failures, lastError: message });
      return 'failed';
    }
    if (error instanceof PlatformHttpError && error.status === 429) {
      const wait = Math.max((error.retryAfterSeconds ?? 0) * 1000, interval);
      await record(services, root, { nextPollAt: new Date(now.getTime() + wait), failures, lastError: message });
      // Every post of the channel waits for the platform's reset, not only this one.
      await em.nativeUpdate(CommentPollSchema, { integrationId: integration.id, nextPollAt: { $lt: new Date(now.getTime() + wait) } }, { nextPollAt: new Date(now.getTime() + wait) });
      return 'rate_limited';
    }
    const backoff = Math.min(MAX_BACKOFF_MS, Math.max(interval, services.config.comments.pollSeconds * 1000 * 2 ** failures));
    await record(services, root, { nextPollAt: new Date(now.getTime() + backoff), failures, lastError: message });
    return 'failed';
  }
}

async function record(services: Services, root: Post, change: { nextPollAt: Date; since?: Date | null; failures: number; lastError: string | null }): Promise<void> {
  await services.orm.em.fork().getConnection().execute(
    `insert into comment_poll (post_id, organization_id, integration_id, next_poll_at, since, failures, last_error, last_polled_at)
     values (?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (post_id) do update set next_poll_at = excluded.next_poll_at, since = coalesce(excluded.since, comment_poll.since),
       failures = excluded.failures, last_error = excluded.last_error, last_polled_at = excluded.last_polled_at`,
    [root.id, root.organizationId, root.integrationId, change.nextPollAt, change.since ?? null, change.failures, change.lastError, services.now()],
  );
}
