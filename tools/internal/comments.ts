// Comments someone left on the posts Herald published: stored once per channel as the poll finds them (comment-poll.ts),
// announced (a notification, the comment.created webhook event, and MCP subscribers of herald://comments through the
// comment table's trigger), listed, hidden and deleted. Replies are posts: comment-replies.ts.
//
// Every lookup goes through the channel lookups (`findIntegration`, `listIntegrations`), so a credential limited to some
// channels sees the comments of those channels only, and any other comment is "not found".
import type { EntityManager } from '@mikro-orm/postgresql';
import { CommentSchema, type Comment, type CommentState } from '../../src/db/comment-entities.js';
import { PostSchema, type Integration, type Post } from '../../src/db/entities.js';
import { DomainError, notFound, notSupported } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import type { PlatformComment, Provider, PublishedRef } from '../../providers/types.js';
import type { Services } from '../types.js';
import { findIntegration, listIntegrations, providerFailure, providerOf, withChannel } from './integrations.js';
import { findPost } from './posts.js';
import { notify } from './notifications.js';
import { recordChange } from './audit.js';

export interface CommentRecord {
  id: string;
  integrationId: string;
  platform: string;
  /** Herald's post (its root) the comment was left on, directly or under another comment. */
  postId: string;
  platformId: string;
  /** Herald's id of the comment it answers, when Herald holds that comment; null for a comment on the post. */
  parentId: string | null;
  parentPlatformId: string | null;
  author: Comment['author'];
  text: string;
  url: string | null;
  createdAt: string;
  fetchedAt: string;
  state: CommentState;
  /** Herald's reply, once one was made: its post id and where its publishing stands. */
  reply: { postId: string; state: string; url: string | null; error: string | null } | null;
}

const MAX_TEXT = 10_000;

/** The comment `id` of the organization, on a channel the caller may see; not_found otherwise. */
export async function findComment(em: EntityManager, organizationId: string, id: string): Promise<{ comment: Comment; integration: Integration }> {
  const missing = () => notFound(`Comment ${id} not found.`, { hint: 'Use a comment id listed by commentListTool (MCP) or GET /comments (REST).' });
  const comment = await em.findOne(CommentSchema, { id, organizationId });
  if (!comment) throw missing();
  try {
    return { comment, integration: await findIntegration(em, organizationId, comment.integrationId) };
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') throw missing();
    throw error;
  }
}

/** The records of `comments`: their reply posts and the Herald ids of their parents, in two queries. */
export async function commentRecords(em: EntityManager, comments: Comment[], integrations: Map<string, Integration>): Promise<CommentRecord[]> {
  const replyIds = comments.map((comment) => comment.replyPostId).filter((id): id is string => id !== null);
  const replies = replyIds.length > 0 ? await em.find(PostSchema, { id: { $in: replyIds } }, { disableIdentityMap: true }) : [];
  const replyOf = new Map(replies.map((post) => [post.id, post]));
  const parentKeys = comments.filter((comment) => comment.parentPlatformId !== null);
  const parents = parentKeys.length > 0
    ? await em.find(CommentSchema, { $or: parentKeys.map((comment) => ({ integrationId: comment.integrationId, platformId: comment.parentPlatformId! })) }, { fields: ['id', 'integrationId', 'platformId'], disableIdentityMap: true })
    : [];
  const parentOf = new Map(parents.map((parent) => [`${parent.integrationId}\n${parent.platformId}`, parent.id]));
  return comments.map((comment) => {
    const reply = comment.replyPostId ? replyOf.get(comment.replyPostId) : undefined;
    return {
      id: comment.id,
      integrationId: comment.integrationId,
      platform: integrations.get(comment.integrationId)?.providerIdentifier ?? '',
      postId: comment.postId,
      platformId: comment.platformId,
      parentId: comment.parentPlatformId ? (parentOf.get(`${comment.integrationId}\n${comment.parentPlatformId}`) ?? null) : null,
      parentPlatformId: comment.parentPlatformId ?? null,
      author: comment.author,
      text: comment.text,
      url: comment.url ?? null,
      createdAt: comment.createdAt.toISOString(),
      fetchedAt: comment.fetchedAt.toISOString(),
      state: comment.state,
      reply: reply && !reply.deletedAt ? { postId: reply.id, state: reply.state, url: reply.releaseUrl ?? null, error: reply.error ?? null } : null,
    };
  });
}

export interface CommentFilter {
  /** A channel id. */
  channel?: string;
  /** A post id (any item of its chain). */
  post?: string;
  /** Only comments nobody answered yet (state new). */
  unanswered?: boolean;
  state?: CommentState;
  page: number;
  pageSize: number;
}

/** Comments of the channels the caller may see, newest first; deleted ones only when asked for by state. */
export async function listComments(em: EntityManager, organizationId: string, filter: CommentFilter) {
  const integrations = new Map((await listIntegrations(em, organizationId)).map((integration) => [integration.id, integration]));
  if (filter.channel && !integrations.has(filter.channel)) await findIntegration(em, organizationId, filter.channel); // the not_found answer
  const postId = filter.post ? (await findPost(em, organizationId, filter.post)).rootPostId : undefined;
  const state = filter.unanswered ? 'new' : filter.state;
  const [rows, total] = await em.findAndCount(
    CommentSchema,
    {
      organizationId,
      integrationId: { $in: filter.channel ? [filter.channel] : [...integrations.keys()] },
      ...(postId ? { postId } : {}),
      state: state ?? { $ne: 'deleted' },
    },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: filter.pageSize, offset: filter.page * filter.pageSize, disableIdentityMap: true },
  );
  return { comments: await commentRecords(em, rows, integrations), total };
}

/** A comment is answered once a reply went out; a hidden or deleted one keeps its state. */
export async function markAnswered(em: EntityManager, commentId: string): Promise<void> {
  const comment = await em.findOne(CommentSchema, { id: commentId });
  if (comment?.state === 'new') comment.state = 'answered';
}

/** The platform's ref of a stored comment, as `hideComment`, `deleteComment` and a reply take it. */
export const platformRefOf = (comment: Comment): PublishedRef => ({ id: comment.platformId, url: comment.url ?? undefined, meta: comment.meta ?? undefined });

/** The platform's ref of Herald's published post. */
export const postRefOf = (post: Post): PublishedRef => ({ id: post.releaseId!, url: post.releaseUrl ?? undefined, meta: post.releaseMeta ?? undefined });

const quote = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 140 ? `${flat.slice(0, 139)}…` : flat;
};

/**
 * Stores what the platform answered for one post: each comment not held yet becomes a row (state new), with a notification
 * and a comment.created webhook event committed with it. The account's own comments are not stored (Herald's thread items
 * and replies, or the person answering on the platform): the comment one answers is marked answered. Answers the new rows.
 */
export async function storeComments(services: Services, root: Post, integration: Integration, found: PlatformComment[]): Promise<Comment[]> {
  const provider = providerOf(integration);
  const now = services.now();
  return services.orm.em.fork().transactional(async (em) => {
    const created: Comment[] = [];
    const answeredOnPlatform = found.filter((comment) => comment.byAccount && comment.parentId && comment.parentId !== root.releaseId).map((comment) => comment.parentId!);
    for (const comment of found) {
      if (comment.byAccount) continue;
      const createdAt = new Date(comment.createdAt);
      const row = {
        id: newId(),
        organizationId: integration.organizationId,
        integrationId: integration.id,
        postId: root.id,
        platformId: comment.id,
        parentPlatformId: comment.parentId && comment.parentId !== root.releaseId ? comment.parentId : null,
        author: comment.author,
        text: comment.text.slice(0, MAX_TEXT),
        url: comment.url ?? null,
        meta: comment.meta ?? null,
        state: (comment.hidden ? 'hidden' : answeredOnPlatform.includes(comment.id) ? 'answered' : 'new') as CommentState,
        replyPostId: null,
        createdAt: Number.isNaN(createdAt.getTime()) ? now : createdAt,
        fetchedAt: now,
      };
      // Kept once: a comment seen before (by this poll or a concurrent one) is left as it is.
      const inserted = await em.getConnection().execute<{ id: string }[]>(
        `insert into comment (id, organization_id, integration_id, post_id, platform_id, parent_platform_id, author, text, url, meta, state, reply_post_id, created_at, fetched_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb, ?, null, ?, ?, ?) on conflict (integration_id, platform_id) do nothing returning id`,
        [row.id, row.organizationId, row.integrationId, row.postId, row.platformId, row.parentPlatformId, JSON.stringify(row.author), row.text, row.url, row.meta ? JSON.stringify(row.meta) : null, row.state, row.createdAt, now, now],
        'all',
        em.getTransactionContext(),
      );
      if (inserted.length === 0) continue;
      const stored = em.merge(CommentSchema, { ...row, updatedAt: now });
      created.push(stored);
      const who = comment.author.handle ? `@${comment.author.handle.replace(/^@/, '')}` : comment.author.name;
      notify(em, integration.organizationId, 'comment_created', `New ${row.parentPlatformId ? 'reply' : 'comment'} by ${who} on your post on ${provider.name} (${integration.name}): "${quote(row.text)}"`, row.url ?? undefined, { comment: stored, integration });
    }
    if (answeredOnPlatform.length > 0) {
      await em.nativeUpdate(CommentSchema, { integrationId: integration.id, platformId: { $in: answeredOnPlatform }, state: 'new' }, { state: 'answered', updatedAt: now });
    }
    await em.flush();
    return created;
  });
}

function requireCapability(provider: Provider, capability: 'hideComment' | 'deleteComment'): void {
  if (provider[capability]) return;
  const what = capability === 'hideComment' ? 'hiding comments' : 'deleting comments';
  throw notSupported(`${provider.name} does not let Herald do ${what} through its API (not_supported).`, {
    hint: capability === 'hideComment' && provider.deleteComment ? 'Delete the comment instead, or moderate it on the platform.' : `Moderate it on ${provider.name} itself.`,
  });
}

async function rootOfComment(em: EntityManager, comment: Comment): Promise<Post> {
  const root = await em.findOne(PostSchema, { id: comment.postId });
  if (!root?.releaseId) throw notFound(`The post comment ${comment.id} was left on is no longer known to Herald.`);
  return root;
}

/** Hides (or shows again) a comment on the platform, where it allows; answers the comment as it now is. */
export async function hideComment(services: Services, em: EntityManager, organizationId: string, id: string, hidden: boolean): Promise<Comment> {
  const { comment, integration } = await findComment(em, organizationId, id);
  const provider = providerOf(integration);
  requireCapability(provider, 'hideComment');
  if (comment.state === 'deleted') throw new DomainError('conflict', `Comment ${id} was deleted; it cannot be ${hidden ? 'hidden' : 'shown again'}.`);
  const root = await rootOfComment(em, comment);
  try {
    await withChannel(services, em, integration, {}, (context) => provider.hideComment!(context, platformRefOf(comment), hidden, postRefOf(root)));
  } catch (error) {
    throw providerFailure(provider, error);
  }
  if (hidden) comment.state = 'hidden';
  else if (comment.state === 'hidden') comment.state = await wasAnswered(em, comment) ? 'answered' : 'new';
  await em.flush();
  await recordChange(em, organizationId, {
    action: hidden ? 'comment.hidden' : 'comment.shown',
    target: { kind: 'comment', id: comment.id },
    integrationId: integration.id,
    did: `${hidden ? 'hid' : 'showed again'} a comment on post ${comment.postId} on ${provider.name} (${integration.name})`,
    changes: { hidden, postId: comment.postId },
  });
  return comment;
}

async function wasAnswered(em: EntityManager, comment: Comment): Promise<boolean> {
  if (!comment.replyPostId) return false;
  const reply = await em.findOne(PostSchema, { id: comment.replyPostId, deletedAt: null });
  return reply?.state === 'PUBLISHED';
}

/** Deletes a comment on the platform, where it allows; it stays listed with state deleted. */
export async function deleteComment(services: Services, em: EntityManager, organizationId: string, id: string): Promise<Comment> {
  const { comment, integration } = await findComment(em, organizationId, id);
  const provider = providerOf(integration);
  requireCapability(provider, 'deleteComment');
  if (comment.state === 'deleted') return comment;
  const root = await rootOfComment(em, comment);
  try {
    await withChannel(services, em, integration, {}, (context) => provider.deleteComment!(context, platformRefOf(comment), postRefOf(root)));
  } catch (error) {
    throw providerFailure(provider, error);
  }
  comment.state = 'deleted';
  await em.flush();
  await recordChange(em, organizationId, {
    action: 'comment.deleted',
    target: { kind: 'comment', id: comment.id },
    integrationId: integration.id,
    did: `deleted a comment on post ${comment.postId} on ${provider.name} (${integration.name})`,
    changes: { postId: comment.postId },
  });
  return comment;
}

/** One comment's record, for the tools' answers. */
export async function commentRecord(em: EntityManager, comment: Comment, integration: Integration): Promise<CommentRecord> {
  return (await commentRecords(em, [comment], new Map([[integration.id, integration]])))[0];
}
