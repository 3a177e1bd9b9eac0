// Post groups and chains: lookup, listing, deletion, the DRAFT <-> QUEUE state machine, release-id linking.
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema, type Integration, type Post, type PostApproval, type PostState, type PostTag } from '../../src/db/entities.js';
import { conflict, invalidInput, notFound, notSupported } from '../../src/errors.js';
import { integrationOfRow, providerOf } from './integrations.js';
import { sqlOf, statement } from '../../src/db/sql.js';
import { cancelPublish, schedulePublish } from './queue.js';
import { refuseDuplicateOf, type DuplicateGuardOptions } from './duplicates.js';
import { changeRecord, changeSummary } from './platform-changes.js';
import { canSeeChannel, channelFilter, visibleChannelIds } from './visibility.js';
import { recordChange } from './audit.js';

export async function findPost(em: EntityManager, organizationId: string, id: string, status?: number): Promise<Post> {
  const found = await em.findOne(PostSchema, { id, organizationId, deletedAt: null });
  // A post of a channel the caller may not see does not exist for it.
  const post = found && canSeeChannel(found.integrationId) ? found : null;
  if (!post) {
    throw notFound(`Post ${id} not found.`, {
      status,
      hint: 'Use a post id returned by post creation or listed by GET /posts; deleted posts are gone.',
    });
  }
  return post;
}

/** The chain a post belongs to (the entry it was created in), root first. Never looked up by group and channel. */
export async function chainOf(em: EntityManager, post: Post): Promise<Post[]> {
  return em.find(PostSchema, { organizationId: post.organizationId, rootPostId: post.rootPostId, deletedAt: null }, { orderBy: { position: 'asc' } });
}

export async function rootOf(em: EntityManager, post: Post): Promise<Post> {
  if (post.id === post.rootPostId) return post;
  return (await em.findOne(PostSchema, { id: post.rootPostId, organizationId: post.organizationId })) ?? post;
}

/** One item of a chain (the post itself, thread items, comments) as every listing shows it. */
export interface ItemRecord {
  id: string;
  position: number;
  state: PostState;
  releaseId: string | null;
  releaseURL: string | null;
  publishedAt: string | null;
  error: string | null;
  /** Retryable failures so far; the last one, and when the next attempt is due (still QUEUE). */
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  /** What the platform did other than asked (e.g. a video kept private), said when it published; empty otherwise. */
  warnings: string[];
  /** The edit or deletion on the platform last asked for this item (platform-changes.ts), without its recorded steps; null when none. */
  platformChange: Record<string, unknown> | null;
}

/**
 * Where a post's publishing stands, over its whole chain: `partial` when some items went out and a later one failed
 * (the others were not attempted), `retrying` when an item met a retryable failure and waits for its next attempt.
 */
export type PublishStatus = 'draft' | 'awaiting_approval' | 'scheduled' | 'retrying' | 'published' | 'partial' | 'failed';

export interface PostRecord extends Record<string, unknown> {
  id: string;
  content: string;
  date: string;
  publishDate: string;
  state: PostState;
  publishStatus: PublishStatus;
  group: string;
  releaseId: string | null;
  releaseURL: string | null;
  /** The post's error; for a chain that stopped half way, what went out and what did not. */
  error: string | null;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  creationMethod: string;
  settings: Record<string, unknown>;
  tags: PostTag[];
  image: { id: string; path: string }[];
  items: ItemRecord[];
  integration: { id: string; providerIdentifier: string; name: string; picture: string };
  /** The approval gate's record: who asked, and the owner's decision once made; null when the post never needed approval. */
  approval: PostApproval | null;
  /** The edit or deletion on the platform last asked for the post, summed up over its items (platform-changes.ts); null when none. */
  platformChange: ReturnType<typeof changeSummary>;
}

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

function itemRecord(item: Post): ItemRecord {
  return {
    id: item.id,
    position: item.position,
    state: item.state,
    releaseId: item.releaseId ?? null,
    releaseURL: item.releaseUrl ?? null,
    publishedAt: iso(item.publishedAt),
    error: item.error ?? null,
    attempts: item.attempts,
    lastError: item.lastError ?? null,
    nextAttemptAt: iso(item.nextAttemptAt),
    warnings: item.releaseWarnings ?? [],
    platformChange: changeRecord(item.platformChange),
  };
}

/** The status of a chain and, when it stopped half way, the sentence that says so. */
export function chainStatus(chain: Post[]): { status: PublishStatus; summary?: string; current: Post } {
  const failed = chain.find((item) => item.state === 'ERROR');
  const sent = chain.filter((item) => item.state === 'PUBLISHED');
  const waiting = chain.find((item) => item.state === 'QUEUE');
  if (failed && sent.length > 0) {
    const notAttempted = chain.filter((item) => item.position > failed.position && item.state === 'ERROR').length;
    const summary =
      `Published in part: ${sent.length} of ${chain.length} items went out; item ${failed.position + 1} failed: ${failed.error ?? 'unknown error'}` +
      (notAttempted > 0 ? `; ${notAttempted} later item${notAttempted === 1 ? ' was' : 's were'} not attempted` : '') +
      '. Retry the post (PUT /posts/{id}/status {"status":"schedule"}) to resume at the first item that did not go out.';
    return { status: 'partial', summary, current: failed };
  }
  if (failed) return { status: 'failed', current: failed };
  const awaiting = chain.find((item) => item.state === 'AWAITING_APPROVAL');
  if (awaiting) return { status: 'awaiting_approval', current: awaiting };
  if (waiting) return { status: waiting.state === 'QUEUE' && waiting.attempts > 0 ? 'retrying' : 'scheduled', current: waiting };
  if (chain.every((item) => item.state === 'DRAFT')) return { status: 'draft', current: chain[0] };
  return { status: 'published', current: chain[0] };
}

/** An opaque position in the listing (date, then id), for the next page. */
const encodeCursor = (post: Post) => Buffer.from(`${post.publishDate.toISOString()}|${post.id}`).toString('base64url');

function decodeCursor(cursor: string): { date: Date; id: string } {
  const [date, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const parsed = new Date(date ?? '');
  if (!id || Number.isNaN(parsed.getTime())) throw invalidInput('cursor is not one this API gave.', { hint: 'Pass the nextCursor of the previous page unchanged.' });
  return { date: parsed, id };
}

/** A root post and its chain as every listing (REST, MCP, resources, console) shows it. */
export function toPostRecord(post: Post, chain: Post[], integration: Integration): PostRecord {
  const { status, summary, current } = chainStatus(chain);
  return {
    id: post.id,
    content: post.content,
    date: post.publishDate.toISOString(),
    publishDate: post.publishDate.toISOString(),
    state: post.state,
    publishStatus: status,
    group: post.group,
    releaseId: post.releaseId ?? null,
    releaseURL: post.releaseUrl ?? null,
    error: summary ?? post.error ?? (current.state === 'ERROR' ? current.error : null) ?? null,
    attempts: current.attempts,
    lastError: current.state === 'QUEUE' ? (current.lastError ?? null) : null,
    nextAttemptAt: current.state === 'QUEUE' ? iso(current.nextAttemptAt) : null,
    creationMethod: post.creationMethod,
    settings: post.settings,
    tags: post.tags,
    image: post.media.map((media) => ({ id: media.id, path: media.path })),
    items: chain.map(itemRecord),
    integration: { id: integration.id, providerIdentifier: integration.providerIdentifier, name: integration.name, picture: integration.picture ?? '' },
    approval: post.approval ?? null,
    platformChange: changeSummary(chain),
  };
}

export const MAX_PAGE = 1000;

/**
 * A page of root posts in the range with their chains and channels, in one query (issue 26: a REST request in 2 round
 * trips, the credential check and this): the caller's visible channels (of one customer when given), the page's roots, and
 * the later items of their chains.
 */
const LIST_POSTS = statement(
  'posts_in_range',
  `with channel as (
     select i.* from integration i where i.organization_id = $1 and i.deleted_at is null and ($2::text is null or i.customer_id = $2)
       and ($3::text[] is null or i.id = any($3::text[]))),
   root as (
     select p.* from post p where p.organization_id = $1 and p.deleted_at is null and p.position = 0
       and p.integration_id in (select id from channel) and p.publish_date >= $4 and p.publish_date <= $5
       and ($6::timestamptz is null or p.publish_date > $6 or (p.publish_date = $6 and p.id > $7))
     order by p.publish_date, p.id limit $8)
   select r.*, (select to_jsonb(c) from channel c where c.id = r.integration_id) as herald_channel from root r
   union all
   select p.*, null from post p where p.root_post_id in (select id from root) and p.position > 0 and p.deleted_at is null`,
);

export async function listPosts(
  em: EntityManager,
  organizationId: string,
  range: { startDate: Date; endDate: Date; customer?: string; cursor?: string; limit?: number },
): Promise<{ posts: PostRecord[]; nextCursor: string | null }> {
  const limit = Math.min(range.limit ?? MAX_PAGE, MAX_PAGE);
  const after = range.cursor ? decodeCursor(range.cursor) : undefined;
  const visible = visibleChannelIds();
  const rows = await sqlOf(em).rows<Record<string, any> & { herald_channel: Record<string, any> | null }>(LIST_POSTS, [
    organizationId,
    range.customer || null,
    visible ? [...visible] : null,
    range.startDate,
    range.endDate,
    after?.date ?? null,
    after?.id ?? '',
    limit + 1,
  ]);
  // Read only: mapped by an entity manager of their own, never flushed (nothing for the flush after the tool to check).
  const reader = em.fork();
  const channels = new Map<string, Integration>();
  const roots: Post[] = [];
  const later: Post[] = [];
  for (const { herald_channel: channel, ...row } of rows) {
    const post = reader.map(PostSchema, row);
    if (post.position === 0) roots.push(post);
    else later.push(post);
    if (channel && !channels.has(channel.id)) channels.set(channel.id, integrationOfRow(channel));
  }
  roots.sort((a, b) => a.publishDate.getTime() - b.publishDate.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  later.sort((a, b) => a.position - b.position);
  const more = roots.length > limit;
  const page = more ? roots.slice(0, limit) : roots;
  const chains = new Map(page.map((post) => [post.id, [post]]));
  for (const item of later) chains.get(item.rootPostId)?.push(item);
  const posts = page.map((post) => toPostRecord(post, chains.get(post.id)!, channels.get(post.integrationId)!));
  return { posts, nextCursor: more ? encodeCursor(page.at(-1)!) : null };
}

/** Soft-deletes every post of the group and cancels their jobs. Answers the number of posts deleted. */
export async function deleteGroup(em: EntityManager, organizationId: string, group: string, now: Date): Promise<number> {
  return em.transactional(async (transaction) => {
    const posts = await transaction.find(PostSchema, { organizationId, group, deletedAt: null, ...channelFilter() });
    for (const post of posts) {
      post.deletedAt = now;
      if (post.position === 0) await cancelPublish(transaction, post.id);
    }
    await transaction.flush();
    for (const post of posts.filter((item) => item.position === 0)) {
      await recordChange(transaction, organizationId, {
        action: 'post.deleted',
        target: { kind: 'post', id: post.id },
        integrationId: post.integrationId,
        did: `deleted post ${post.id} (${post.state.toLowerCase().replace('_', ' ')}) from Herald`,
        changes: { state: post.state, group, deleteOnPlatform: false },
      });
    }
    return posts.length;
  });
}

/**
 * DRAFT <-> QUEUE, and ERROR -> QUEUE to retry. The date is kept. A fully published post is never re-queued; a chain that
 * stopped half way is retried from the first item that did not go out (the items already out are never sent again).
 * `awaitApproval` (an agent under the approval gate asked to schedule) parks the chain in AWAITING_APPROVAL instead of QUEUE.
 * `root`: the chain's root (`rootOf` the post asked for).
 */
export async function changeStatus(
  em: EntityManager,
  root: Post,
  status: 'draft' | 'schedule',
  options: { awaitApproval?: PostApproval; duplicateGuard: DuplicateGuardOptions },
): Promise<PostState> {
  const chain = await chainOf(em, root);
  const sent = chain.filter((item) => item.state === 'PUBLISHED').length;
  if (sent === chain.length || (status === 'draft' && sent > 0)) {
    throw conflict(
      `Post ${root.id} is already published${sent < chain.length ? ' in part' : ''}; it cannot be ${status === 'draft' ? 'turned into a draft' : 'scheduled again'}.`,
      { hint: sent < chain.length ? 'Schedule it to publish the items that did not go out.' : 'Create a new post to publish the content again.' },
    );
  }
  const target: PostState = status === 'draft' ? 'DRAFT' : options.awaitApproval ? 'AWAITING_APPROVAL' : 'QUEUE';
  if (target !== 'DRAFT') {
    const integration = await em.findOne(IntegrationSchema, { id: root.integrationId, organizationId: root.organizationId, deletedAt: null });
    if (!integration) throw notFound(`The channel of post ${root.id} was deleted.`);
    const provider = providerOf(integration);
    if (!provider.publish) throw notSupported(`Publishing to ${provider.name} (${provider.identifier}) is not supported yet by this Herald.`);
    // A draft scheduled (or a failed post retried) becomes due: the duplicate guard applies as at creation.
    if (root.state === 'DRAFT' || root.state === 'ERROR') await refuseDuplicateOf(em, root, integration, options.duplicateGuard);
    if (options.duplicateGuard.allowDuplicate) root.allowDuplicate = true;
  }
  const stateBefore = root.state;
  await em.transactional(async (transaction) => {
    for (const item of chain) {
      const row = transaction.merge(item);
      if (row.state === 'PUBLISHED') continue;
      row.state = target;
      if (target !== 'DRAFT') {
        // A fresh start for what did not go out. Steps that finished stay recorded (an upload, a post the platform holds are
        // not made twice); a step of unknown outcome is forgotten: the person checked the account and asked to try again.
        const steps = Object.fromEntries(Object.entries(row.publishProgress?.steps ?? {}).filter(([, step]) => step.state === 'done'));
        Object.assign(row, { error: null, attemptStartedAt: null, attempts: 0, lastError: null, nextAttemptAt: null, publishProgress: Object.keys(steps).length > 0 ? { steps } : null });
      }
      if (row.id === root.id && options.awaitApproval) row.approval = options.awaitApproval;
    }
    await transaction.flush();
    if (target === 'QUEUE') await schedulePublish(transaction, root.id, root.publishDate);
    else await cancelPublish(transaction, root.id);
    await recordChange(transaction, root.organizationId, {
      action: 'post.status_changed',
      target: { kind: 'post', id: root.id },
      integrationId: root.integrationId,
      did: `${target === 'DRAFT' ? 'turned post ' + root.id + ' into a draft' : `scheduled post ${root.id}${target === 'AWAITING_APPROVAL' ? ' (waiting for approval)' : ''}`}`,
      changes: { state: { from: stateBefore, to: target } },
    });
  });
  return target;
}

export async function setReleaseId(em: EntityManager, post: Post, releaseId: string): Promise<Post> {
  if (post.releaseId !== 'missing') {
    throw conflict(`Post ${post.id} is not waiting for a release id (its releaseId is ${post.releaseId === null ? 'not set' : `"${post.releaseId}"`}).`, {
      hint: 'Only posts whose releaseId is "missing" can be linked; GET /posts/{id}/missing lists the candidates.',
    });
  }
  post.releaseId = releaseId;
  await em.flush();
  return post;
}
