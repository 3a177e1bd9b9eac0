// Publishing a chain exactly once (DESIGN.md §5): each item's platform id is recorded before moving on, an attempt is
// recorded before each platform call, and an attempt found open after a crash is never blindly repeated.
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema, type Integration, type Post } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { MediaFetchError } from '../../src/lib/media-fetch.js';
import type { MediaFile, Provider, PublishedRef } from '../../providers/types.js';
import type { Services } from '../types.js';
import { measure, mediaKind } from './create-posts.js';
import { providerOf, withChannel } from './integrations.js';
import { notify } from './notifications.js';
import { chainOf } from './posts.js';
import { loadLibraryMedia } from './media.js';

export type PublishOutcome =
  | { kind: 'skipped'; reason: string }
  | { kind: 'published' }
  | { kind: 'waiting'; runAt: Date }
  | { kind: 'failed'; error: string };

/** Thrown to ask the queue for another attempt later (graphile-worker's backoff). */
export class RetryLater extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryLater';
  }
}

export interface PublishAttempt {
  /** 1-based attempt number of the job, and the job's maximum. */
  attempt: number;
  maxAttempts: number;
}

function mediaFiles(services: Services, post: Post): MediaFile[] {
  return post.media.map((media) => ({
    url: media.path,
    kind: mediaKind(media),
    alt: media.alt,
    // Library files are read from storage; a client's own URL is fetched through the SSRF guard.
    load: () => (media.type ? loadLibraryMedia(services, post.organizationId, media.id) : services.fetchMedia(media.path)),
  }));
}

function refOf(post: Post): PublishedRef {
  return { id: post.releaseId!, url: post.releaseUrl ?? undefined, meta: post.releaseMeta ?? undefined };
}

/** Puts the item in ERROR and notifies; `where` names the channel, e.g. "Bluesky (Alice)". */
async function fail(services: Services, em: EntityManager, where: string, item: Post, message: string): Promise<PublishOutcome> {
  item.state = 'ERROR';
  item.error = message;
  item.attemptStartedAt = null;
  const what = item.position === 0 ? 'Your post' : `Item ${item.position + 1} of your post`;
  notify(em, item.organizationId, 'post_failed', `${what} on ${where} failed: ${message}`);
  await em.flush();
  services.logger.warn({ postId: item.id, integrationId: item.integrationId }, `publishing failed: ${message}`);
  return { kind: 'failed', error: message };
}

export async function publishChain(services: Services, rootPostId: string, attempt: PublishAttempt): Promise<PublishOutcome> {
  const em = services.orm.em.fork();
  const root = await em.findOne(PostSchema, { id: rootPostId, deletedAt: null });
  if (!root) return { kind: 'skipped', reason: 'post deleted' };
  const chain = await chainOf(em, root);
  const now = services.now();
  if (root.state === 'QUEUE' && root.publishDate.getTime() > now.getTime() + 1000) return { kind: 'waiting', runAt: root.publishDate };
  if (!chain.some((item) => item.state === 'QUEUE')) return { kind: 'skipped', reason: `nothing queued (root is ${root.state})` };

  const integration = await em.findOne(IntegrationSchema, { id: root.integrationId, deletedAt: null });
  const pending = chain.find((item) => item.state === 'QUEUE')!;
  if (!integration) return fail(services, em, 'a deleted channel', pending, 'The channel was deleted.');
  const provider = providerOf(integration);
  const where = `${provider.name} (${integration.name})`;
  if (integration.disabled) return fail(services, em, where, pending, 'Channel disabled.');
  if (integration.refreshNeeded) return fail(services, em, where, pending, 'The channel needs to be reconnected before it can publish.');

  let rootRef: PublishedRef | undefined;
  let parent: Post | undefined;
  for (const item of chain) {
    if (item.releaseId) {
      rootRef ??= refOf(item);
      parent = item;
      continue;
    }
    if (item.state !== 'QUEUE') return { kind: 'skipped', reason: `item ${item.position + 1} is ${item.state}` };
    if (parent?.publishedAt && item.delay > 0) {
      const due = new Date(parent.publishedAt.getTime() + item.delay * 60_000);
      if (due.getTime() > services.now().getTime()) return { kind: 'waiting', runAt: due };
    }
    if (item.attemptStartedAt && !provider.idempotentCreate) {
      return fail(
        services,
        em,
        `${provider.name} (${integration.name})`,
        item,
        `Could not confirm whether ${provider.name} published this item: an earlier attempt was interrupted. Check the account before publishing again, to avoid a duplicate.`,
      );
    }
    const outcome = await publishItem(services, em, provider, integration, item, rootRef, parent, attempt);
    if (outcome) return outcome;
    rootRef ??= refOf(item);
    parent = item;
  }
  return { kind: 'published' };
}

/** Publishes one item; answers an outcome only when the chain must stop. */
async function publishItem(
  services: Services,
  em: EntityManager,
  provider: Provider,
  integration: Integration,
  item: Post,
  rootRef: PublishedRef | undefined,
  parent: Post | undefined,
  attempt: PublishAttempt,
): Promise<PublishOutcome | undefined> {
  item.attemptStartedAt = services.now();
  await em.flush();
  const publishItemInput = { postId: item.id, text: measure(provider, item.content).text, media: mediaFiles(services, item) };
  try {
    const ref = await withChannel(services, em, integration, item.settings, (context) =>
      item.position === 0 || !rootRef || !parent
        ? provider.publish!(context, publishItemInput)
        : provider.comment!(context, publishItemInput, { root: rootRef, parent: refOf(parent) }),
    );
    item.releaseId = ref.id;
    item.releaseUrl = ref.url ?? null;
    item.releaseMeta = ref.meta ?? null;
    item.state = 'PUBLISHED';
    item.publishedAt = services.now();
    item.attemptStartedAt = null;
    item.error = null;
    if (item.position === 0) {
      notify(em, item.organizationId, 'post_published', `Your post has been published on ${provider.name} (${integration.name})${ref.url ? ` at ${ref.url}` : ''}.`, ref.url);
    }
    await em.flush();
    return undefined;
  } catch (error) {
    return handleFailure(services, em, provider, integration, item, attempt, error);
  }
}

async function handleFailure(
  services: Services,
  em: EntityManager,
  provider: Provider,
  integration: Integration,
  item: Post,
  attempt: PublishAttempt,
  error: unknown,
): Promise<PublishOutcome> {
  const lastAttempt = attempt.attempt >= attempt.maxAttempts;
  if (error instanceof DomainError && error.code === 'reauth_required') {
    return fail(services, em, `${provider.name} (${integration.name})`, item, error.message);
  }
  if (error instanceof MediaFetchError) return fail(services, em, `${provider.name} (${integration.name})`, item, error.message);
  if (error instanceof PlatformHttpError) {
    if (error.outcomeUnknown && !provider.idempotentCreate) {
      return fail(
        services,
        em,
        `${provider.name} (${integration.name})`,
        item,
        `Could not confirm whether ${provider.name} published this item (${error.message}). Check the account before publishing again, to avoid a duplicate.`,
      );
    }
    if (error.retryable && !lastAttempt) {
      // The platform answered (or the create is idempotent): repeating the call is safe.
      if (!error.outcomeUnknown) item.attemptStartedAt = null;
      await em.flush();
      throw new RetryLater(`${provider.name} is temporarily unavailable: ${error.message}`);
    }
    return fail(services, em, `${provider.name} (${integration.name})`, item, `${provider.name} refused the post: ${error.bodyExcerpt || error.message}`);
  }
  // A failure of our own before the platform was reached: safe to retry.
  item.attemptStartedAt = null;
  await em.flush();
  if (lastAttempt) return fail(services, em, `${provider.name} (${integration.name})`, item, `Publishing failed: ${(error as Error).message}`);
  throw error;
}
