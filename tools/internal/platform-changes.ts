// Changing what went out (issue 24): deleting a published post on its platform, explicitly (`deleteOnPlatform: true`), as
// recorded steps of the `platform_change` job (platform-change-run.ts), through the approval gate and the audit trail.
// An edit of a published post (published-edit.ts) is kept here too once asked. What a platform cannot delete stays there,
// and the answer says which items and why. The change lives on each item (`post.platform_change`) until it is made; the
// post's record shows it (`platformChange`, `items[].platformChange`).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { IntegrationSchema, PostSchema, type Integration, type PlatformChange, type Post, type PostApproval } from '../../src/db/entities.js';
import { conflict } from '../../src/errors.js';
import type { Provider } from '../../providers/types.js';
import type { Services, ToolContext } from '../types.js';
import { agentVia, approvalRequest, requesterLabel } from './approval.js';
import { cancelPublish } from './queue.js';
import { notify } from './notifications.js';
import { providerOf } from './integrations.js';
import { recordChange } from './audit.js';

export const CHANGE_TASK = 'platform_change';
export const changeJobKey = (rootPostId: string) => `platform-change:${rootPostId}`;

/** Adds or replaces the change job of a chain (one per root), committed with the caller's transaction. */
export async function scheduleChange(em: EntityManager, rootPostId: string, runAt: Date): Promise<void> {
  await em.getConnection().execute(
    `select graphile_worker.add_job(?, json_build_object('postId', ?::text), run_at := ?::timestamptz, max_attempts := 8, job_key := ?, job_key_mode := 'replace'),
       pg_notify('herald_job_scheduled', ?)`,
    [CHANGE_TASK, rootPostId, runAt.toISOString(), changeJobKey(rootPostId), String(runAt.getTime())],
    'all',
    em.getTransactionContext(),
  );
}

export async function cancelChange(em: EntityManager, rootPostId: string): Promise<void> {
  await em.getConnection().execute('select graphile_worker.remove_job(?)', [changeJobKey(rootPostId)], 'all', em.getTransactionContext());
}

/** A change still to make or to decide: a new one on the same chain waits for it (a job may be calling the platform). */
export const isOpen = (change: PlatformChange | null | undefined) => change?.state === 'pending';

/** Why the platform's API cannot change what went out, in the provider's words or a plain default. */
export function cannotChange(provider: Provider, action: 'edit' | 'delete'): string {
  return (
    provider.unchangeable?.[action] ??
    // Not every platform whose API could do it is wired yet: say what Herald does, not what the platform offers.
    (action === 'edit'
      ? `Herald cannot edit a published ${provider.name} post (not supported for this platform): edit it on ${provider.name}.`
      : `Herald cannot delete a published ${provider.name} post (not supported for this platform): delete it on ${provider.name}.`)
  );
}

/** One item in the answer of a deletion: where it is and, for one left on its platform, why. */
export interface ChangedItem {
  id: string;
  /** The post (root of the chain) it belongs to. */
  postId: string;
  position: number;
  channel: string;
  platform: string;
  releaseURL: string | null;
  reason?: string;
}

/** `deleteOnPlatform` of the delete tools: on REST from the query (`?deleteOnPlatform=true`) or the JSON body. */
export const deleteOnPlatformInput = z
  .boolean()
  .optional()
  .describe('true: also delete what went out, where the platform allows (the answer lists what stays)');

/** The REST request's `deleteOnPlatform`: "true"/"false" in the query become booleans; anything else is left for the schema to refuse. */
export function deleteOnPlatformOf(query: Record<string, unknown>, body: unknown): unknown {
  const raw = query.deleteOnPlatform ?? (body && typeof body === 'object' ? (body as Record<string, unknown>).deleteOnPlatform : undefined);
  return raw === 'true' ? true : raw === 'false' ? false : raw;
}

const changedItemSchema = z.object({ id: z.string(), postId: z.string(), position: z.number(), channel: z.string(), platform: z.string(), releaseURL: z.string().nullable(), reason: z.string().optional() });
export const onPlatformOutput = z
  .object({ pending: z.array(changedItemSchema), awaitingApproval: z.array(changedItemSchema), stayed: z.array(changedItemSchema), message: z.string() })
  .optional()
  .describe('With deleteOnPlatform: the published items being deleted on their platform, waiting for approval, or staying there (with the reason)');

export interface OnPlatformAnswer {
  /** Being deleted on the platform by the job; the post shows how it goes (platformChange). */
  pending: ChangedItem[];
  /** Waiting for an owner's approval (an agent under the approval gate). */
  awaitingApproval: ChangedItem[];
  /** Left on the platform, with the reason. */
  stayed: ChangedItem[];
  message: string;
}

const itemOf = (item: Post, integration: Integration | undefined, reason?: string): ChangedItem => ({
  id: item.id,
  postId: item.rootPostId,
  position: item.position,
  channel: integration?.name ?? item.integrationId,
  platform: integration?.providerIdentifier ?? 'unknown',
  releaseURL: item.releaseUrl ?? null,
  ...(reason ? { reason } : {}),
});

function chainsOf(posts: Post[]): Post[][] {
  const chains = new Map<string, Post[]>();
  for (const post of posts) chains.set(post.rootPostId, [...(chains.get(post.rootPostId) ?? []), post]);
  return [...chains.values()].map((chain) => chain.sort((a, b) => a.position - b.position));
}

/** Why a published item cannot be deleted on its platform; undefined when it can. */
function stayReason(item: Post, integration: Integration | undefined, provider: Provider | undefined): string | undefined {
  if (!integration || !provider) return 'Its channel was deleted from Herald, so Herald can no longer act on the account: delete it on the platform by hand.';
  if (item.releaseId === 'missing') return `Herald does not know its id on ${provider.name} (releaseId is "missing"): delete it there by hand.`;
  if (!provider.deletePublished) return cannotChange(provider, 'delete');
  return undefined;
}

function answerMessage(answer: Omit<OnPlatformAnswer, 'message'>): string {
  const parts: string[] = [];
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  if (answer.pending.length) parts.push(`${count(answer.pending.length, 'published item')} will be deleted on the platform; the post stays listed with platformChange until that is done, then it is gone from Herald too.`);
  if (answer.awaitingApproval.length) parts.push(`${count(answer.awaitingApproval.length, 'published item')} will be deleted on the platform once an owner approves (the approval gate); until then the post stays.`);
  if (answer.stayed.length) parts.push(`${count(answer.stayed.length, 'published item')} stay on the platform: ${answer.stayed.map((item) => `${item.channel} item ${item.position + 1}: ${item.reason}`).join(' ')}`);
  if (parts.length === 0) parts.push('Nothing of this group had gone out: it was deleted in Herald only.');
  return parts.join(' ');
}

/**
 * Deletes a group in Herald and what of it went out on the platforms. A chain with nothing to delete on its platform is
 * deleted in Herald at once (as DELETE without deleteOnPlatform); a chain with published items keeps them until the job
 * deleted them on the platform (or until an owner decides, under the approval gate), then goes too. Refused (409) while an
 * item is being published or an earlier change of the chain is being made.
 */
export async function deleteGroupOnPlatform(
  context: Pick<ToolContext, 'caller' | 'via' | 'services'>,
  em: EntityManager,
  group: string,
): Promise<{ deleted: number; onPlatform: OnPlatformAnswer }> {
  const { caller, services } = context;
  const organizationId = caller.organizationId;
  const now = services.now();
  const posts = await em.find(PostSchema, { organizationId, group, deletedAt: null });
  const channels = posts.length ? await em.find(IntegrationSchema, { id: { $in: [...new Set(posts.map((post) => post.integrationId))] }, organizationId, deletedAt: null }) : [];
  const channelOf = new Map(channels.map((channel) => [channel.id, channel]));
  const chains = chainsOf(posts);
  for (const chain of chains) {
    if (chain.some((item) => item.attemptStartedAt)) {
      throw conflict(`Post ${chain[0].rootPostId} is being published right now; nothing was deleted.`, { hint: 'Wait a minute, then delete it again: what went out will be deleted too.' });
    }
    if (chain.some((item) => isOpen(item.platformChange))) {
      throw conflict(`A change of post ${chain[0].rootPostId} is being made on the platform right now; nothing was deleted.`, {
        hint: 'Wait until its platformChange is done or failed (GET /posts, or the resource herald://posts/{id}), then delete again; or delete without deleteOnPlatform to forget it in Herald only.',
      });
    }
  }
  const approval = agentVia(context) ? await approvalRequest(em, context) : undefined;
  const answer: Omit<OnPlatformAnswer, 'message'> = { pending: [], awaitingApproval: [], stayed: [] };
  let deleted = 0;
  await em.transactional(async (transaction) => {
    for (const chain of chains) {
      const integration = channelOf.get(chain[0].integrationId);
      const provider = integration ? providerOf(integration) : undefined;
      const toDelete: Post[] = [];
      for (const item of chain) {
        if (item.state !== 'PUBLISHED' || !item.releaseId) continue;
        if (item.platformChange?.action === 'delete' && item.platformChange.state === 'done') continue;
        const reason = stayReason(item, integration, provider);
        if (reason) answer.stayed.push(itemOf(item, integration, reason));
        else toDelete.push(item);
      }
      await cancelPublish(transaction, chain[0].rootPostId);
      // What never went out (or is already gone from the platform) is deleted in Herald now, as a plain DELETE does.
      const kept = new Set(toDelete.length ? chain.filter((item) => item.state === 'PUBLISHED' && item.releaseId).map((item) => item.id) : []);
      for (const item of chain) {
        if (kept.has(item.id)) continue;
        transaction.merge(item).deletedAt = now;
        deleted += 1;
      }
      if (toDelete.length === 0) continue;
      const change: PlatformChange = { action: 'delete', state: approval ? 'awaiting_approval' : 'pending', requestedAt: now.toISOString(), ...(approval ? { approval } : {}) };
      for (const item of toDelete) {
        transaction.merge(item).platformChange = structuredClone(change);
        (approval ? answer.awaitingApproval : answer.pending).push(itemOf(item, integration));
      }
      await recordChange(transaction, organizationId, {
        action: 'post.delete_on_platform_asked',
        target: { kind: 'post', id: chain[0].rootPostId },
        integrationId: chain[0].integrationId,
        did: `asked to delete ${toDelete.length} published item${toDelete.length === 1 ? '' : 's'} of post ${chain[0].rootPostId} on the platform${approval ? ' (waiting for approval)' : ''}`,
        changes: { items: toDelete.map((item) => item.position + 1), awaitingApproval: Boolean(approval) },
      });
      if (!approval) await scheduleChange(transaction, chain[0].rootPostId, now);
    }
    if (approval && answer.awaitingApproval.length) {
      notify(
        transaction,
        organizationId,
        'post_awaiting_approval',
        `${capitalized(requesterLabel(approval))} asks to delete ${answer.awaitingApproval.length} published item${answer.awaitingApproval.length === 1 ? '' : 's'} on the platform (group ${group}). Approve or reject it in the console under Approvals.`,
        undefined,
        undefined,
        // A group's posts may be on several channels: tagged with one only when it is.
        new Set(chains.map((chain) => chain[0].integrationId)).size === 1 ? chains[0][0].integrationId : undefined,
        chains.length === 1 ? { target: { kind: 'post', id: chains[0][0].rootPostId } } : {},
      );
    }
    await transaction.flush();
  });
  return { deleted, onPlatform: { ...answer, message: answerMessage(answer) } };
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The post's change as its record shows it: the items' changes summed up; null when none was asked. */
export function changeSummary(chain: Post[]): { action: 'edit' | 'delete'; state: PlatformChange['state']; message: string } | null {
  const changes = chain.map((item) => item.platformChange).filter((change): change is PlatformChange => Boolean(change));
  if (changes.length === 0) return null;
  const latest = changes.reduce((a, b) => (a.requestedAt >= b.requestedAt ? a : b));
  const current = changes.filter((change) => change.requestedAt === latest.requestedAt && change.action === latest.action);
  const order: PlatformChange['state'][] = ['failed', 'awaiting_approval', 'pending', 'rejected', 'done'];
  const state = order.find((candidate) => current.some((change) => change.state === candidate)) ?? latest.state;
  const verb = latest.action === 'edit' ? 'edit' : 'deletion';
  const failed = current.find((change) => change.state === 'failed');
  const rejected = current.find((change) => change.state === 'rejected');
  const message = {
    failed: `The ${verb} on the platform failed: ${failed?.error ?? 'unknown error'}`,
    awaiting_approval: `The ${verb} on the platform waits for an owner's approval.`,
    pending: `The ${verb} on the platform is under way${current.some((change) => change.lastError) ? ` (retrying: ${current.find((change) => change.lastError)?.lastError})` : ''}.`,
    rejected: `An owner rejected the ${verb}: ${rejected?.approval?.reason ?? 'no reason given'}.`,
    done: latest.action === 'edit' ? 'The edit was made on the platform.' : 'Deleted on the platform.',
  }[state];
  return { action: latest.action, state, message };
}

/** One item's change as listings show it (its recorded steps left out). */
export function changeRecord(change: PlatformChange | null | undefined): Record<string, unknown> | null {
  if (!change) return null;
  const { steps: _steps, settings: _settings, ...shown } = change;
  return shown;
}

/** The items of a chain whose change waits for an owner's decision; empty when none does. */
async function awaitingChange(em: EntityManager, organizationId: string, post: Post): Promise<Post[]> {
  const chain = await em.find(PostSchema, { organizationId, rootPostId: post.rootPostId, deletedAt: null }, { orderBy: { position: 'asc' } });
  return chain.filter((item) => item.platformChange?.state === 'awaiting_approval');
}

export interface ChangeDecision {
  id: string;
  state: 'PUBLISHED';
  publishAt: null;
  approval: PostApproval;
  platformChange: 'edit' | 'delete';
}

/**
 * An owner's decision on a change an agent asked for a published post (approval.ts hands it over when the post waits for
 * one): approved, the job makes it now; rejected, nothing changes on the platform and the reason stays on the items.
 * Undefined when the post has no change waiting.
 */
export async function decideChange(
  services: Services,
  em: EntityManager,
  organizationId: string,
  post: Post,
  decision: { approve: true } | { approve: false; reason: string },
  decidedBy: { id: string; name: string },
): Promise<ChangeDecision | undefined> {
  const waiting = await awaitingChange(em, organizationId, post);
  if (waiting.length === 0) return undefined;
  const now = services.now();
  const first = waiting[0].platformChange!;
  const approval: PostApproval = {
    ...first.approval!,
    decision: decision.approve ? 'approved' : 'rejected',
    decidedAt: now.toISOString(),
    decidedBy: decidedBy.id,
    decidedByName: decidedBy.name,
    ...(decision.approve ? {} : { reason: decision.reason }),
  };
  const verb = first.action === 'edit' ? 'edit' : 'deletion';
  await em.transactional(async (transaction) => {
    for (const item of waiting) {
      transaction.merge(item).platformChange = { ...item.platformChange!, state: decision.approve ? 'pending' : 'rejected', approval };
    }
    notify(
      transaction,
      organizationId,
      decision.approve ? 'post_approved' : 'post_rejected',
      decision.approve
        ? `${decidedBy.name} approved the ${verb} on the platform of post ${post.rootPostId}: it is being made now.`
        : `${decidedBy.name} rejected the ${verb} on the platform of post ${post.rootPostId}: ${decision.reason}. Nothing changed on the platform.`,
      undefined,
      undefined,
      post.integrationId,
      { target: { kind: 'post', id: post.rootPostId } },
    );
    await transaction.flush();
    // The trail records the decision (approval.ts, for posts and changes alike).
    if (decision.approve) await scheduleChange(transaction, post.rootPostId, now);
  });
  return { id: post.rootPostId, state: 'PUBLISHED', publishAt: null, approval, platformChange: first.action };
}

export type { PostApproval };
