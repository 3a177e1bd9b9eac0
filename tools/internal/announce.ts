// Tells MCP resource subscribers (herald://posts/{id}) that a post changed: published, failed, approved, rejected, edited.
import { PostSchema, type Post } from '../../src/db/entities.js';
import type { Services } from '../types.js';

/** Announces `post` as it is in memory (its state already flushed): its root's id and its state. */
export async function announcePost(services: Services, post: Pick<Post, 'id' | 'organizationId' | 'rootPostId' | 'state'>): Promise<void> {
  if (!services.events) return;
  try {
    await services.events.publish({ kind: 'post', organizationId: post.organizationId, postId: post.rootPostId, state: post.state });
  } catch (error) {
    services.logger.warn({ err: (error as Error).message, postId: post.id }, 'could not announce a post change');
  }
}

export async function announcePostChange(services: Services, postId: string): Promise<void> {
  if (!services.events) return;
  try {
    const post = await services.orm.em.fork().findOne(PostSchema, { id: postId }, { fields: ['id', 'organizationId', 'rootPostId', 'state'] });
    if (!post) return;
    await announcePost(services, post);
  } catch (error) {
    services.logger.warn({ err: (error as Error).message, postId }, 'could not announce a post change');
  }
}
