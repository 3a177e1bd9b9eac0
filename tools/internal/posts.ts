// Post groups and chains: lookup, listing, deletion, the DRAFT <-> QUEUE state machine, release-id linking.
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema, type Post, type PostState, type PostTag } from '../../src/db/entities.js';
import { conflict, notFound, notSupported } from '../../src/errors.js';
import { providerOf } from './integrations.js';
import { cancelPublish, schedulePublish } from './queue.js';

export async function findPost(em: EntityManager, organizationId: string, id: string, status?: number): Promise<Post> {
  const post = await em.findOne(PostSchema, { id, organizationId, deletedAt: null });
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

export interface PostRecord extends Record<string, unknown> {
  id: string;
  content: string;
  date: string;
  publishDate: string;
  state: PostState;
  group: string;
  releaseId: string | null;
  releaseURL: string | null;
  error: string | null;
  creationMethod: string;
  settings: Record<string, unknown>;
  tags: PostTag[];
  image: { id: string; path: string }[];
  integration: { id: string; providerIdentifier: string; name: string; picture: string };
}

export async function listPosts(
  em: EntityManager,
  organizationId: string,
  range: { startDate: Date; endDate: Date; customer?: string },
): Promise<PostRecord[]> {
  const integrations = await em.find(IntegrationSchema, {
    organizationId,
    deletedAt: null,
    ...(range.customer ? { customerId: range.customer } : {}),
  });
  if (integrations.length === 0) return [];
  const byId = new Map(integrations.map((integration) => [integration.id, integration]));
  const posts = await em.find(
    PostSchema,
    {
      organizationId,
      deletedAt: null,
      position: 0,
      integrationId: { $in: [...byId.keys()] },
      publishDate: { $gte: range.startDate, $lte: range.endDate },
    },
    { orderBy: { publishDate: 'asc', id: 'asc' }, limit: 1000 },
  );
  return posts.map((post) => {
    const integration = byId.get(post.integrationId)!;
    return {
      id: post.id,
      content: post.content,
      date: post.publishDate.toISOString(),
      publishDate: post.publishDate.toISOString(),
      state: post.state,
      group: post.group,
      releaseId: post.releaseId ?? null,
      releaseURL: post.releaseUrl ?? null,
      error: post.error ?? null,
      creationMethod: post.creationMethod,
      settings: post.settings,
      tags: post.tags,
      image: post.media.map((media) => ({ id: media.id, path: media.path })),
      integration: { id: integration.id, providerIdentifier: integration.providerIdentifier, name: integration.name, picture: integration.picture ?? '' },
    };
  });
}

/** Soft-deletes every post of the group and cancels their jobs. Answers the number of posts deleted. */
export async function deleteGroup(em: EntityManager, organizationId: string, group: string, now: Date): Promise<number> {
  return em.transactional(async (transaction) => {
    const posts = await transaction.find(PostSchema, { organizationId, group, deletedAt: null });
    for (const post of posts) {
      post.deletedAt = now;
      if (post.position === 0) await cancelPublish(transaction, post.id);
    }
    await transaction.flush();
    return posts.length;
  });
}

/** DRAFT <-> QUEUE (and ERROR -> QUEUE to retry). The date is kept; a PUBLISHED post is never re-queued. */
export async function changeStatus(em: EntityManager, post: Post, status: 'draft' | 'schedule'): Promise<PostState> {
  const root = await rootOf(em, post);
  if (root.state === 'PUBLISHED') {
    throw conflict(`Post ${root.id} is already published; it cannot be ${status === 'draft' ? 'turned into a draft' : 'scheduled again'}.`, {
      hint: 'Create a new post to publish the content again.',
    });
  }
  const chain = await chainOf(em, root);
  const target: PostState = status === 'draft' ? 'DRAFT' : 'QUEUE';
  if (target === 'QUEUE') {
    const integration = await em.findOne(IntegrationSchema, { id: root.integrationId, organizationId: root.organizationId, deletedAt: null });
    if (!integration) throw notFound(`The channel of post ${root.id} was deleted.`);
    const provider = providerOf(integration);
    if (!provider.publish) throw notSupported(`Publishing to ${provider.name} (${provider.identifier}) is not supported yet by this Herald.`);
  }
  await em.transactional(async (transaction) => {
    for (const item of chain) {
      const row = transaction.merge(item);
      if (row.state === 'PUBLISHED') continue;
      row.state = target;
      if (target === 'QUEUE') {
        row.error = null;
        row.attemptStartedAt = null;
      }
    }
    await transaction.flush();
    if (target === 'QUEUE') await schedulePublish(transaction, root.id, root.publishDate);
    else await cancelPublish(transaction, root.id);
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
