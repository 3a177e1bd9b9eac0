// Publishing a chain exactly once (DESIGN.md §5): each item's platform id is recorded before moving on, an attempt (or each
// creating step of a provider with `recordsSteps`) is recorded before the platform call, and an attempt found open after a
// crash is never blindly repeated. Retries, platform processing waits and thread delays re-schedule the job instead of
// holding a worker; a chain that stops half way says which items went out, which failed and which were not attempted.
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Integration, Post } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { convertContent } from '../../src/lib/content.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { MediaFetchError } from '../../src/lib/media-fetch.js';
import { CheckAgainLater, CouldNotConfirm, type MediaFile, type Provider, type ProviderContext, type PublishedRef } from '../../providers/types.js';
import type { Services } from '../types.js';
import { mediaKind } from './create-posts.js';
import { providerOf, withChannel } from './integrations.js';
import { notify } from './notifications.js';
import { ingestMedia, loadLibraryMedia } from './media.js';
import { shortenContent } from './short-links.js';
import { announcePost } from './announce.js';
import { publishFailed, timedPublish } from '../../src/lib/metrics.js';
import { markAnswered } from './comments.js';
import { flushWithAudit, recordAttemptStarted, recordPublished } from './publish-outcome.js';
import { HERALD, type AuditEvent } from './audit.js';
import { takeSlot, type Busy } from './publish-slots.js';
import { attachChain, loadChain } from './publish-chain.js';
import { OutcomeUnknown, stepsOf } from './publish-steps.js';
import { skipMissedOccurrence } from './recurrence-missed.js';
import { PUBLISH_LEAD_MS, publishJobAt } from './queue.js';

export type PublishOutcome =
  | { kind: 'skipped'; reason: string }
  | { kind: 'published' }
  | { kind: 'waiting'; runAt: Date }
  | { kind: 'failed'; error: string };

/** Retryable failures of one item before it goes to ERROR. */
export const MAX_PUBLISH_ATTEMPTS = 8;

/** Seconds before the next attempt after `attempts` retryable failures: 30 s, 1, 2, 4, 8, 16, 32 min (capped at an hour). */
export function backoffSeconds(attempts: number): number {
  return Math.min(3600, 30 * 2 ** Math.max(0, attempts - 1));
}

/**
 * The item is not as the run read it any more (an edit, a delete, its channel disabled while the run waited for the post's
 * date): nothing was attempted, and the run reads the chain again.
 */
class ChangedMeanwhile extends Error {}

/** An item's media as a provider gets them (also for an edit on the platform, platform-change-run.ts). */
export function mediaFiles(services: Services, post: Post): MediaFile[] {
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

const couldNotConfirm = (provider: Provider, why: string) =>
  `Could not confirm whether ${provider.name} published this item: ${why}. Check the account before publishing again, to avoid a duplicate.`;

interface Run {
  services: Services;
  em: EntityManager;
  provider: Provider;
  /** e.g. "Bluesky (Alice)". */
  where: string;
  chain: Post[];
  /** Set when the outcome's statement already told the subscribed MCP sessions (publish-outcome.ts); read by runChain. */
  told?: { announced: boolean };
}

/**
 * Puts `item` in ERROR with `message`, and every later item of the chain in ERROR as not attempted, then notifies once:
 * a failure of the whole post, or a partial publication naming what went out.
 */
async function failFrom(run: Run, item: Post, message: string): Promise<PublishOutcome> {
  const { services, em, where, chain } = run;
  attachChain(em, chain);
  publishFailed(run.provider.identifier);
  item.state = 'ERROR';
  item.error = message;
  item.attemptStartedAt = null;
  item.nextAttemptAt = null;
  const later = chain.filter((other) => other.position > item.position && other.state === 'QUEUE');
  for (const other of later) {
    other.state = 'ERROR';
    other.error = `Not attempted: item ${item.position + 1} failed before it. Retry the post to resume at item ${item.position + 1}.`;
    other.nextAttemptAt = null;
  }
  const sent = chain.filter((other) => other.state === 'PUBLISHED');
  if (sent.length > 0) {
    const links = sent.map((other) => `item ${other.position + 1}${other.releaseUrl ? ` (${other.releaseUrl})` : ''}`).join(', ');
    const notSent = later.length > 0 ? `; ${later.length === 1 ? `item ${later[0].position + 1} was` : `items ${later[0].position + 1}–${later.at(-1)!.position + 1} were`} not sent` : '';
    notify(
      em,
      item.organizationId,
      'post_partial',
      `Your post on ${where} was published only in part: ${links} went out; item ${item.position + 1} failed: ${message}${notSent}. Retry the post to resume at item ${item.position + 1}.`,
      chain[0].releaseUrl ?? undefined,
      { post: item, chain },
    );
  } else {
    const what = item.position === 0 ? 'Your post' : `Item ${item.position + 1} of your post`;
    notify(em, item.organizationId, 'post_failed', `${what} on ${where} failed: ${message}`, undefined, { post: item });
  }
  // The audit trail's record is committed with the outcome (one transaction; a failure is not the hot path).
  await flushWithAudit(em, {
    organizationId: item.organizationId,
    actor: HERALD,
    via: 'worker',
    action: 'post.failed',
    target: { kind: 'post', id: item.rootPostId },
    integrationId: item.integrationId,
    summary: `Herald could not publish ${item.position === 0 ? `post ${item.rootPostId}` : `item ${item.position + 1} of post ${item.rootPostId}`} on ${where}${sent.length > 0 ? ' (published in part)' : ''}.`,
    changes: { item: item.position, error: message, published: sent.map((other) => other.position) },
  });
  services.logger.warn({ postId: item.id, integrationId: item.integrationId, partial: sent.length > 0 }, `publishing failed: ${message}`);
  return { kind: 'failed', error: message };
}

/** Publishes what is due of a chain; a chain that went out or failed is announced to MCP resource subscribers (announce.ts). */
export async function publishChain(services: Services, rootPostId: string, options: { ranOn?: (chain: Post[]) => void } = {}): Promise<PublishOutcome> {
  const { outcome, root, announced } = await runChain(services, rootPostId, options.ranOn);
  // The root as runChain left it: its state is set in memory and flushed before a published or failed outcome.
  if (root && !announced && (outcome.kind === 'published' || outcome.kind === 'failed')) await announcePost(services, root);
  return outcome;
}

/** Runs what is due of the chain; answers the outcome and the chain's root (undefined when the post is gone). */
async function runChain(services: Services, rootPostId: string, ranOn?: (chain: Post[]) => void): Promise<{ outcome: PublishOutcome; root?: Post; announced?: boolean }> {
  for (let read = 1; ; read++) {
    const em = services.orm.em.fork();
    const { chain, integration } = await loadChain(em, rootPostId);
    ranOn?.(chain);
    const root = chain[0];
    if (!root || root.id !== rootPostId) return { outcome: { kind: 'skipped', reason: 'post deleted' } };
    const told = { announced: false };
    try {
      return { outcome: await runLoadedChain(services, em, chain, integration, told), root, announced: told.announced };
    } catch (error) {
      if (!(error instanceof ChangedMeanwhile)) throw error;
      // Read again at once; a post that keeps changing under its run is looked at again a little later.
      if (read >= 3) return { outcome: { kind: 'waiting', runAt: new Date(services.now().getTime() + 5000) } };
    }
  }
}

/** runChain once the chain is loaded: `chain[0]` is the root. */
async function runLoadedChain(services: Services, em: EntityManager, chain: Post[], integration: Integration | undefined, told: { announced: boolean }): Promise<PublishOutcome> {
  const root = chain[0];
  const now = services.now();
  // A run started by its job (PUBLISH_LEAD_MS ahead) or up to a second early (the clocks of the database and this process)
  // goes on; one started earlier (a sweep, a replaced job) runs again at its job's time.
  if (root.state === 'QUEUE' && root.publishDate.getTime() > now.getTime() + PUBLISH_LEAD_MS + 1000) return { kind: 'waiting', runAt: publishJobAt(root.publishDate) };
  const pending = chain.find((item) => item.state === 'QUEUE');
  if (!pending) return { kind: 'skipped', reason: `nothing queued (root is ${root.state})` };
  // An item waiting for a retry or the platform's processing runs at its time, not before (a sweep or a replaced job).
  if (pending.nextAttemptAt && pending.nextAttemptAt.getTime() > now.getTime() + 1000) return { kind: 'waiting', runAt: pending.nextAttemptAt };
  // An occurrence of a recurring post whose time passed while Herald was down is skipped, never published as a backlog.
  if (pending === root && (await skipMissedOccurrence(services, em, chain))) return { kind: 'skipped', reason: 'a missed occurrence of a recurring post' };

  if (!integration) {
    return failFrom({ services, em, provider: { name: 'the platform' } as Provider, where: 'a deleted channel', chain }, pending, 'The channel was deleted.');
  }
  const provider = providerOf(integration);
  const run: Run = { services, em, provider, where: `${provider.name} (${integration.name})`, chain, told };
  if (integration.disabled) return failFrom(run, pending, 'Channel disabled: enable it in the console, then retry the post.');
  if (integration.refreshNeeded) return failFrom(run, pending, 'The channel needs to be reconnected before it can publish: reconnect it, then retry the post.');

  // Read and checked ahead of the post's date: nothing goes before it (the attempt checks the item was not changed meanwhile).
  if (pending === root) await untilDue(services, root.publishDate);
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
    if (item.attemptStartedAt && !provider.idempotentCreate && !provider.recordsSteps) {
      return failFrom(run, item, couldNotConfirm(provider, 'an earlier attempt was interrupted'));
    }
    const outcome = await timedPublish(provider.identifier, item, () => publishItem(run, integration, item, rootRef, parent));
    if (outcome) return outcome;
    rootRef ??= refOf(item);
    parent = item;
  }
  return { kind: 'published' };
}

/** Waits until `date` by the service's clock (at most the job's lead and a second: the check above). */
async function untilDue(services: Services, date: Date): Promise<void> {
  const wait = Math.min(date.getTime() - services.now().getTime(), PUBLISH_LEAD_MS + 1000);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** A file a provider derived from a post's media (e.g. PNG re-encoded as JPEG), taken into the library like an upload. */
async function storeDerivedMedia(services: Services, organizationId: string, bytes: Buffer, filename: string): Promise<string> {
  const stored = await ingestMedia(services, services.orm.em.fork(), organizationId, { stream: Readable.from([bytes]), filename, declaredLength: bytes.length });
  return stored.path;
}

/**
 * How long a post may wait in this process for a slot of its platform's limits before it is re-scheduled and told when it
 * goes instead (waitForSlot): within its minute.
 */
const SLOT_WAIT_MS = 30_000;

/** Publishes one item; answers an outcome only when the chain must stop. */
async function publishItem(
  run: Run,
  integration: Integration,
  item: Post,
  rootRef: PublishedRef | undefined,
  parent: Post | undefined,
): Promise<PublishOutcome | undefined> {
  const { provider } = run;
  // A slot of the platform's own limits (publish-slots.ts), taken before the attempt is recorded: a post that waits for it
  // has not been attempted.
  const slot = await takeSlot(provider, integration.internalId, SLOT_WAIT_MS);
  if ('busy' in slot) return waitForSlot(run, item, slot.busy);
  try {
    return await publishInSlot(run, integration, item, rootRef, parent, slot.release);
  } finally {
    slot.release();
  }
}

/**
 * A post whose platform slot is further off than SLOT_WAIT_MS: re-scheduled for when it should be free, saying why (its
 * `lastError` and `nextAttemptAt` on REST, MCP and the console), rather than silently late.
 */
function waitForSlot(run: Run, item: Post, busy: Busy): Promise<PublishOutcome> {
  const runAt = new Date(run.services.now().getTime() + busy.waitMs);
  const where = busy.scope === 'account' ? 'on one account' : 'across its accounts';
  const message = `${run.provider.name} takes at most ${busy.limit} publishing call${busy.limit === 1 ? '' : 's'} at a time ${where} and ${busy.ahead} are ahead of this post: it goes at about ${runAt.toISOString()}.`;
  run.services.logger.info({ postId: item.id, integrationId: item.integrationId, runAt }, 'publishing waits for the platform\'s limit');
  return retryAt(run, item, runAt, message);
}

async function publishInSlot(
  run: Run,
  integration: Integration,
  item: Post,
  rootRef: PublishedRef | undefined,
  parent: Post | undefined,
  release: () => void,
): Promise<PublishOutcome | undefined> {
  const { services, em, provider } = run;
  // Committed before the platform is called: an attempt found open after a crash is never blindly repeated.
  if (!(await recordAttemptStarted(em, item, services.now()))) throw new ChangedMeanwhile();
  const step = stepsOf(run.services, run.em, run.chain, item);
  try {
    const publishItemInput = { postId: item.id, text: convertContent(await shortenContent(services, em, item), provider.editor), media: mediaFiles(services, item) };
    const ref = await withChannel(services, em, integration, item.settings, (context) => {
      const withSteps: ProviderContext = { ...context, step, storeMedia: (bytes, filename) => storeDerivedMedia(services, item.organizationId, bytes, filename) };
      // A reply to a comment (comment-replies.ts) is a chain whose root answers that comment instead of starting a post.
      if (item.replyTo) return provider.comment!(withSteps, publishItemInput, { root: item.replyTo.root, parent: item.replyTo.parent, toComment: true });
      return item.position === 0 || !rootRef || !parent
        ? provider.publish!(withSteps, publishItemInput)
        : provider.comment!(withSteps, publishItemInput, { root: rootRef, parent: refOf(parent) });
    });
    // The platform answered: its slot is free for the next post while this outcome is written.
    release();
    // A reply's outcome is written by the ORM's flush (not the hot path).
    if (item.replyTo) attachChain(em, run.chain);
    item.releaseId = ref.id;
    item.releaseUrl = ref.url ?? null;
    item.releaseMeta = ref.meta ?? null;
    item.releaseWarnings = ref.warnings?.length ? ref.warnings : null;
    item.state = 'PUBLISHED';
    item.publishedAt = services.now();
    item.attemptStartedAt = null;
    item.nextAttemptAt = null;
    item.error = null;
    item.lastError = null;
    const content = `${item.replyTo ? 'Your reply to a comment' : 'Your post'} has been published on ${run.where}${ref.url ? ` at ${ref.url}` : ''}.`;
    if (item.replyTo) {
      // A reply: the comment it answers is answered, in the same commit as the reply's platform id (not the hot path).
      if (item.position === 0) notify(em, item.organizationId, 'post_published', content, ref.url, { post: item });
      await markAnswered(em, item.replyTo.commentId);
      if (item.position === 0) await flushWithAudit(em, publishedAudit(run, item));
      else await em.flush();
      return undefined;
    }
    const last = item === run.chain.at(-1);
    await recordPublished(em, item, {
      notification: item.position === 0 ? { type: 'post_published', content, link: ref.url } : undefined,
      audit: item.position === 0 ? publishedAudit(run, item) : undefined,
      announce: last,
    });
    if (last && run.told) run.told.announced = true;
    // Anything else the provider's context changed (none on the usual path: then this sends nothing).
    await em.flush();
    return undefined;
  } catch (error) {
    return handleFailure(run, item, error);
  }
}

/** The audit trail's record of a published post: by Herald, from the worker. */
function publishedAudit(run: Run, item: Post): AuditEvent {
  return {
    organizationId: item.organizationId,
    actor: HERALD,
    via: 'worker',
    action: 'post.published',
    target: { kind: 'post', id: item.rootPostId },
    integrationId: item.integrationId,
    summary: `Herald published post ${item.rootPostId} on ${run.where}${item.releaseUrl ? ` at ${item.releaseUrl}` : ''}.`,
    changes: { releaseId: item.releaseId, releaseUrl: item.releaseUrl },
  };
}

/** The job runs again at `runAt`; the item stays QUEUE with what happened recorded for REST, MCP and the console. */
async function retryAt(run: Run, item: Post, runAt: Date, lastError: string | null): Promise<PublishOutcome> {
  attachChain(run.em, run.chain);
  item.nextAttemptAt = runAt;
  if (lastError !== null) item.lastError = lastError;
  await run.em.flush();
  return { kind: 'waiting', runAt };
}

async function handleFailure(run: Run, item: Post, error: unknown): Promise<PublishOutcome> {
  const { services, provider } = run;
  // Every path below changes the item through the ORM.
  attachChain(run.em, run.chain);
  const now = services.now();
  if (error instanceof CheckAgainLater) {
    item.attemptStartedAt = null;
    const since = item.publishProgress?.waitingSince ? new Date(item.publishProgress.waitingSince) : now;
    if (now.getTime() - since.getTime() > error.maxWaitSeconds * 1000) {
      return failFrom(run, item, `${error.message} (still not ready after ${Math.round(error.maxWaitSeconds / 60)} minutes)`);
    }
    item.publishProgress = { ...(item.publishProgress ?? { steps: {} }), waitingSince: since.toISOString() };
    const seconds = Math.max(1, Math.min(error.seconds, services.config.publishRecheckMaxSeconds));
    return retryAt(run, item, new Date(now.getTime() + seconds * 1000), null);
  }
  if (error instanceof OutcomeUnknown) return failFrom(run, item, couldNotConfirm(provider, error.message));
  if (error instanceof CouldNotConfirm) return failFrom(run, item, error.message);
  if (error instanceof DomainError && error.code === 'reauth_required') return failFrom(run, item, error.message);
  // Our own refusals (a host the SSRF guard blocks, media that cannot be used) do not change on a retry.
  if (error instanceof DomainError && (error.code === 'invalid_input' || error.code === 'not_supported')) return failFrom(run, item, error.message);
  if (error instanceof MediaFetchError) return failFrom(run, item, error.message);
  if (error instanceof PlatformHttpError) {
    const message = error.isNetworkError ? `Could not reach ${provider.name}: ${error.message.replace(/^could not reach the platform: /i, '')}` : `${provider.name}: ${error.message}`;
    // A create that may have reached the platform is repeated only when the provider can tell (idempotency key or steps).
    if (error.outcomeUnknown && !provider.idempotentCreate && !provider.recordsSteps) {
      return failFrom(run, item, couldNotConfirm(provider, message));
    }
    if (!error.retryable) return failFrom(run, item, `${provider.name} refused the post: ${error.message}`);
    if (!error.outcomeUnknown) item.attemptStartedAt = null;
    item.attempts += 1;
    if (item.attempts >= MAX_PUBLISH_ATTEMPTS) return failFrom(run, item, `${message} (gave up after ${item.attempts} attempts)`);
    const wait = Math.max(error.retryAfterSeconds ?? 0, backoffSeconds(item.attempts));
    services.logger.info({ postId: item.id, attempts: item.attempts, wait }, `publishing will be retried: ${message}`);
    return retryAt(run, item, new Date(now.getTime() + wait * 1000), message);
  }
  // A failure of our own before the platform was reached: retried like a network failure.
  item.attemptStartedAt = null;
  item.attempts += 1;
  const message = `Publishing failed: ${(error as Error).message}`;
  services.logger.warn({ postId: item.id, err: error }, 'publishing failed on our side');
  if (item.attempts >= MAX_PUBLISH_ATTEMPTS) return failFrom(run, item, message);
  return retryAt(run, item, new Date(now.getTime() + backoffSeconds(item.attempts) * 1000), message);
}
