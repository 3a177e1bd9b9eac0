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

export interface PostOptions {
  settings?: Record<string, unknown>;
  type?: 'schedule' | 'draft' | 'now';
  date?: Date;
  allowDuplicate?: boolean;
}

/** POST /posts for one channel, answered as it is (for tests of refusals at creation). */
export function submitPost(herald: Herald, integrationId: string, items: (ItemInput | string)[], options: PostOptions = {}) {
  return herald.rest('POST', '/posts', {
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
}

/** POST /posts for one channel; answers the root post id. */
export async function createPost(herald: Herald, integrationId: string, items: (ItemInput | string)[], options: PostOptions = {}): Promise<string> {
  const response = await submitPost(herald, integrationId, items, options);
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

/**
 * Polls `check`, every `intervalMs`, until it answers something other than undefined. A check that calls Herald's REST
 * API counts against its requests per minute (300 by default): poll it slowly enough for the whole wait to stay under.
 */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error('timed out waiting');
}

/** Waits until every item of a chain is PUBLISHED (an item in ERROR fails the wait at once); answers the chain. */
export function waitForPublished(herald: Herald, rootId: string, timeoutMs = 15_000): Promise<Post[]> {
  return waitFor(async () => {
    const chain = await chainOf(herald, rootId);
    if (chain.some((item) => item.state === 'ERROR')) throw new Error(`publishing failed: ${chain.map((item) => item.error).join('; ')}`);
    return chain.every((item) => item.state === 'PUBLISHED') ? chain : undefined;
  }, timeoutMs);
}

/**
 * Puts a published post back as a crash would leave it while its `step` was in flight: QUEUE, no platform id, the step
 * started and not finished. The next run must find what the platform made instead of making it twice. `steps` is the
 * name of the one open step, or the recorded steps of each item (from the item as it was); `wholeChain` reopens every
 * item of the chain, not only the root.
 */
export async function reopenAsInterrupted(
  herald: Herald,
  rootId: string,
  steps: string | ((item: Post) => Record<string, unknown>),
  options: { wholeChain?: boolean } = {},
): Promise<void> {
  const em = herald.services.orm.em.fork();
  const items = options.wholeChain ? await em.find(PostSchema, { rootPostId: rootId }) : [await em.findOneOrFail(PostSchema, { id: rootId })];
  for (const item of items) {
    const open = typeof steps === 'string' ? { [steps]: { state: 'started' } } : steps(item);
    Object.assign(item, { state: 'QUEUE', releaseId: null, releaseUrl: null, publishedAt: null, attemptStartedAt: new Date(), publishProgress: { steps: open } });
  }
  await em.flush();
}

/** Creates a post and publishes it until it settles, expecting it published: its root id. */
export async function publishedPost(herald: Herald, integrationId: string, items: (ItemInput | string)[], options: PostOptions = {}): Promise<string> {
  const id = await createPost(herald, integrationId, items, options);
  expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
  return id;
}
