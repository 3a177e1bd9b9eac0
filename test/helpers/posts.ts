// Creating posts over REST and driving their publishing in tests: through the real worker, or run by run with the clock
// moved to each re-scheduled time (retries, processing waits) so a test needs no real waiting.
import { expect } from 'vitest';
import { PostSchema, type Post } from '../../src/db/entities.js';
import { publishChain, type PublishOutcome } from '../../tools/internal/publish.js';
import type { Herald } from './harness.js';

export interface ItemInput {
  content: string;
  /** Media of the item: `{id, path}` from an upload, or a client's URL as both. */
  image?: { id: string; path: string }[];
}

/** POST /posts for one channel; answers the root post id. */
export async function createPost(
  herald: Herald,
  integrationId: string,
  items: (ItemInput | string)[],
  options: { settings?: Record<string, unknown>; type?: 'schedule' | 'draft' | 'now'; date?: Date; allowDuplicate?: boolean } = {},
): Promise<string> {
  const response = await herald.rest('POST', '/posts', {
    type: options.type ?? 'schedule',
    date: (options.date ?? new Date()).toISOString(),
    shortLink: false,
    tags: [],
    ...(options.allowDuplicate ? { allowDuplicate: true } : {}),
    posts: [
      {
        integration: { id: integrationId },
        value: items.map((item) => (typeof item === 'string' ? { content: item, image: [] } : { content: item.content, image: item.image ?? [] })),
        settings: options.settings ?? {},
      },
    ],
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body[0].postId as string;
}

/** The chain of a root post, root first, read fresh from Postgres. */
export async function chainOf(herald: Herald, rootId: string): Promise<Post[]> {
  return herald.services.orm.em.fork().find(PostSchema, { rootPostId: rootId }, { orderBy: { position: 'asc' } });
}

/**
 * Runs the publishing of a post until it settles (published, failed or skipped), moving Herald's clock to each time the
 * job would run again. Answers the last outcome and every outcome on the way.
 */
export async function publishUntilSettled(herald: Herald, rootId: string, options: { maxRuns?: number } = {}): Promise<{ outcome: PublishOutcome; runs: PublishOutcome[] }> {
  const runs: PublishOutcome[] = [];
  try {
    for (let run = 0; run < (options.maxRuns ?? 30); run++) {
      const outcome = await publishChain(herald.services, rootId);
      runs.push(outcome);
      if (outcome.kind !== 'waiting') return { outcome, runs };
      herald.setNow(new Date(Math.max(outcome.runAt.getTime(), Date.now()) + 1000));
    }
  } finally {
    herald.setNow(undefined);
  }
  throw new Error(`post ${rootId} did not settle: ${JSON.stringify(runs.slice(-3))}`);
}

/** Polls `check` until it answers something other than undefined. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('timed out waiting');
}

/**
 * Puts a published post back as a crash would leave it while its `step` was in flight: QUEUE, no platform id, the step
 * started and not finished. The next run must find what the platform made instead of making it twice.
 */
export async function reopenAsInterrupted(herald: Herald, rootId: string, step: string): Promise<void> {
  const em = herald.services.orm.em.fork();
  const root = await em.findOneOrFail(PostSchema, { id: rootId });
  Object.assign(root, { state: 'QUEUE', releaseId: null, releaseUrl: null, publishedAt: null, attemptStartedAt: new Date(), publishProgress: { steps: { [step]: { state: 'started' } } } });
  await em.flush();
}
