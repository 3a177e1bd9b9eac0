// The `platform_change` job: makes the edits and deletions asked on what went out (platform-changes.ts, published-edit.ts),
// item by item, like publishing (publish.ts): each item's outcome is recorded before the next, each platform call a
// provider wraps in `context.step` is recorded in the item's change, retryable failures come back with back-off, and a
// permanent one stops the chain with the platform's words. A deletion goes last item first (replies before what they
// answer); once every item of the chain is gone from its platform, the chain is deleted in Herald too. An edit writes the
// new content to the item only once the platform took it.
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema, type Integration, type PlatformChange, type Post } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { convertContent } from '../../src/lib/content.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { MediaFetchError } from '../../src/lib/media-fetch.js';
import { CheckAgainLater, CouldNotConfirm, type ChainRefs, type JsonValue, type Provider, type ProviderContext, type PublishedRef, type StepAttempt } from '../../providers/types.js';
import type { Services } from '../types.js';
import { postKeys } from './duplicates.js';
import { providerOf, withChannel } from './integrations.js';
import { ingestMedia } from './media.js';
import { notify } from './notifications.js';
import { shortenContent } from './short-links.js';
import { announcePostChange } from './announce.js';
import { backoffSeconds, MAX_PUBLISH_ATTEMPTS, mediaFiles } from './publish.js';
import { recordChange } from './audit.js';

export type ChangeOutcome = { kind: 'done' } | { kind: 'waiting'; runAt: Date } | { kind: 'failed'; error: string } | { kind: 'skipped'; reason: string };

const refOf = (post: Post): PublishedRef => ({ id: post.releaseId!, url: post.releaseUrl ?? undefined, meta: post.releaseMeta ?? undefined });

interface Run {
  services: Services;
  em: EntityManager;
  provider: Provider;
  integration: Integration;
  chain: Post[];
}

/** Makes what is due of the chain's changes; answers when to run again, or that it is over. */
export async function runPlatformChanges(services: Services, rootPostId: string): Promise<ChangeOutcome> {
  const em = services.orm.em.fork();
  const chain = await em.find(PostSchema, { rootPostId, deletedAt: null }, { orderBy: { position: 'asc' } });
  if (chain.length === 0) return { kind: 'skipped', reason: 'post deleted' };
  const outcome = await runChain(services, em, chain);
  await announcePostChange(services, rootPostId);
  return outcome;
}

async function runChain(services: Services, em: EntityManager, chain: Post[]): Promise<ChangeOutcome> {
  const due = chain.filter((item) => item.platformChange?.state === 'pending');
  if (due.length === 0) return finish(services, em, chain);
  const now = services.now();
  const integration = await em.findOne(IntegrationSchema, { id: chain[0].integrationId, deletedAt: null });
  if (!integration) {
    for (const item of due) fail(item, 'The channel was deleted from Herald, so nothing could be changed on the platform: change it there by hand.');
    await em.flush();
    return { kind: 'failed', error: 'channel deleted' };
  }
  const run: Run = { services, em, provider: providerOf(integration), integration, chain };
  const action = due[0].platformChange!.action;
  // Replies go before what they answer: a deletion walks the chain backwards.
  const order = action === 'delete' ? [...due].reverse() : due;
  for (const item of order) {
    const change = item.platformChange!;
    if (change.nextAttemptAt && Date.parse(change.nextAttemptAt) > now.getTime() + 1000) return { kind: 'waiting', runAt: new Date(change.nextAttemptAt) };
    const outcome = await changeItem(run, item);
    if (outcome) return outcome;
  }
  return finish(services, em, chain, action);
}

function fail(item: Post, message: string): void {
  item.platformChange = { ...item.platformChange!, state: 'failed', error: message, nextAttemptAt: null };
}

/** A chain whose deletion is complete leaves Herald too; an edit that is complete gives every item the new settings. */
async function finish(services: Services, em: EntityManager, chain: Post[], made?: 'edit' | 'delete'): Promise<ChangeOutcome> {
  const deletions = chain.filter((item) => item.platformChange?.action === 'delete');
  const root = chain[0];
  if (deletions.length > 0 && deletions.every((item) => item.platformChange!.state === 'done')) {
    const now = services.now();
    for (const item of chain) item.deletedAt = now;
    await em.flush();
    // The chain is gone from the platform and from Herald: Herald did it (on whoever's request the trail shows before).
    await recordChange(em, root.organizationId, { action: 'post.deleted_on_platform', target: { kind: 'post', id: root.id }, integrationId: root.integrationId, did: `deleted post ${root.id} on the platform`, changes: { items: deletions.length } });
  } else if (made === 'edit') {
    await recordChange(em, root.organizationId, { action: 'post.edited_on_platform', target: { kind: 'post', id: root.id }, integrationId: root.integrationId, did: `edited post ${root.id} on the platform`, changes: { items: chain.filter((item) => item.platformChange?.action === 'edit').length } });
  }
  return { kind: 'done' };
}

/** `context.step` of one item's change: results recorded on the change before the next step. */
function stepsOf(run: Run, item: Post): ProviderContext['step'] {
  const save = async (change: (steps: NonNullable<PlatformChange['steps']>) => void) => {
    const steps = structuredClone(item.platformChange!.steps ?? {});
    change(steps);
    item.platformChange = { ...item.platformChange!, steps };
    await run.em.flush();
  };
  return async <T extends JsonValue>(name: string, call: () => Promise<T>, recover?: (attempt: StepAttempt) => Promise<T | undefined>): Promise<T> => {
    const recorded = item.platformChange!.steps?.[name];
    if (recorded?.state === 'done') return recorded.result as T;
    // An edit or deletion is safe to make again (providers/types.ts), so a step left open is made again unless the provider
    // can look its result up.
    if (recorded?.state === 'started' && recover) {
      const found = await recover({ startedAt: new Date(recorded.startedAt ?? item.platformChange!.requestedAt) });
      if (found !== undefined) {
        await save((steps) => (steps[name] = { state: 'done', result: found }));
        return found;
      }
    }
    await save((steps) => (steps[name] = { state: 'started', startedAt: run.services.now().toISOString() }));
    let result: T;
    try {
      result = await call();
    } catch (error) {
      if (!(error instanceof PlatformHttpError && error.outcomeUnknown)) await save((steps) => delete steps[name]);
      throw error;
    }
    await save((steps) => (steps[name] = { state: 'done', result }));
    return result;
  };
}

async function storeDerivedMedia(services: Services, organizationId: string, bytes: Buffer, filename: string): Promise<string> {
  const stored = await ingestMedia(services, services.orm.em.fork(), organizationId, { stream: Readable.from([bytes]), filename, declaredLength: bytes.length });
  return stored.path;
}

/** Makes one item's change; answers an outcome only when the chain must stop. */
async function changeItem(run: Run, item: Post): Promise<ChangeOutcome | undefined> {
  const { services, em, provider, integration, chain } = run;
  const change = item.platformChange!;
  const root = chain[0];
  const thread: ChainRefs | undefined = item.position === 0 ? undefined : { root: refOf(root), parent: refOf(chain[item.position - 1] ?? root) };
  const settings = change.action === 'edit' ? (change.settings ?? item.settings) : item.settings;
  try {
    const step = stepsOf(run, item);
    const ref = await withChannel(services, em, integration, settings, async (context) => {
      const withSteps: ProviderContext = { ...context, step, storeMedia: (bytes, filename) => storeDerivedMedia(services, item.organizationId, bytes, filename) };
      if (change.action === 'delete') {
        await provider.deletePublished!(withSteps, refOf(item), thread);
        return undefined;
      }
      const edited = { ...item, content: change.content ?? item.content } as Post;
      const text = convertContent(await shortenContent(services, em, edited), provider.editor);
      const previousText = convertContent(item.content, provider.editor);
      return provider.editPublished!(withSteps, refOf(item), { postId: item.id, text, media: mediaFiles(services, item), previousText }, thread);
    });
    if (ref) {
      item.content = change.content ?? item.content;
      item.settings = settings;
      item.releaseUrl = ref.url ?? item.releaseUrl;
      item.releaseMeta = ref.meta ? { ...item.releaseMeta, ...ref.meta } : item.releaseMeta;
      if (ref.warnings?.length) item.releaseWarnings = ref.warnings;
      if (item.position === 0) item.duplicateKey = postKeys(item.content, settings).duplicateKey;
      for (const other of chain) if (other.position > 0 && !other.platformChange?.content) other.settings = settings;
    }
    item.platformChange = { action: change.action, state: 'done', requestedAt: change.requestedAt, ...(change.approval ? { approval: change.approval } : {}), doneAt: services.now().toISOString() };
    await em.flush();
    return undefined;
  } catch (error) {
    return handleFailure(run, item, error);
  }
}

async function failChain(run: Run, item: Post, message: string): Promise<ChangeOutcome> {
  const { services, em, provider, integration, chain } = run;
  const action = item.platformChange!.action;
  fail(item, message);
  for (const other of chain) {
    if (other !== item && other.platformChange?.state === 'pending') fail(other, `Not attempted: item ${item.position + 1} failed first. Ask again to resume.`);
  }
  notify(
    em,
    item.organizationId,
    'post_change_failed',
    `${action === 'edit' ? 'Editing' : 'Deleting'} your post on ${provider.name} (${integration.name}) failed at item ${item.position + 1}: ${message}` +
      (action === 'edit' ? ' The post keeps its earlier text in Herald.' : ' The post stays listed in Herald; delete it again to retry, or without deleteOnPlatform to forget it.'),
    item.releaseUrl ?? undefined,
    undefined,
    item.integrationId,
    { target: { kind: 'post', id: item.rootPostId } },
  );
  await em.flush();
  await recordChange(em, item.organizationId, { action: 'post.change_failed', target: { kind: 'post', id: item.rootPostId }, integrationId: item.integrationId, did: `could not ${action} post ${item.rootPostId} on the platform: ${message}`, changes: { platformChange: action, item: item.position + 1, error: message } });
  services.logger.warn({ postId: item.id, integrationId: item.integrationId, action }, `platform change failed: ${message}`);
  return { kind: 'failed', error: message };
}

async function retryAt(run: Run, item: Post, runAt: Date, lastError: string | null): Promise<ChangeOutcome> {
  item.platformChange = { ...item.platformChange!, nextAttemptAt: runAt.toISOString(), ...(lastError !== null ? { lastError } : {}) };
  await run.em.flush();
  return { kind: 'waiting', runAt };
}

async function handleFailure(run: Run, item: Post, error: unknown): Promise<ChangeOutcome> {
  const { services, provider } = run;
  const now = services.now();
  const change = item.platformChange!;
  if (error instanceof CheckAgainLater) return retryAt(run, item, new Date(now.getTime() + Math.max(1, Math.min(error.seconds, services.config.publishRecheckMaxSeconds)) * 1000), null);
  if (error instanceof CouldNotConfirm) return failChain(run, item, error.message);
  if (error instanceof DomainError) return failChain(run, item, error.message);
  if (error instanceof MediaFetchError) return failChain(run, item, error.message);
  const attempts = (change.attempts ?? 0) + 1;
  item.platformChange = { ...change, attempts };
  if (error instanceof PlatformHttpError) {
    const message = error.isNetworkError ? `Could not reach ${provider.name}: ${error.message.replace(/^could not reach the platform: /i, '')}` : `${provider.name}: ${error.message}`;
    if (!error.retryable) return failChain(run, item, `${provider.name} refused the ${change.action === 'edit' ? 'edit' : 'deletion'}: ${error.message}`);
    if (attempts >= MAX_PUBLISH_ATTEMPTS) return failChain(run, item, `${message} (gave up after ${attempts} attempts)`);
    const wait = Math.max(error.retryAfterSeconds ?? 0, backoffSeconds(attempts));
    return retryAt(run, item, new Date(now.getTime() + wait * 1000), message);
  }
  services.logger.warn({ postId: item.id, err: error }, 'platform change failed on our side');
  const message = `The change failed: ${(error as Error).message}`;
  if (attempts >= MAX_PUBLISH_ATTEMPTS) return failChain(run, item, message);
  return retryAt(run, item, new Date(now.getTime() + backoffSeconds(attempts) * 1000), message);
}
