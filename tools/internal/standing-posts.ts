// The posts Herald makes on its own for standing automation (a feed's new entry, a recurring post's occurrence): one
// channel, one item, created as the post of whoever set the automation up (its createdBy, under the approval gate it was
// set up under), recorded in the audit trail as Herald's with what it came from.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PostApproval, StoredMedia } from '../../src/db/entities.js';
import type { Services } from '../types.js';
import { sourceOf } from './audit.js';
import { createPosts, type PlanEntry, type PostPlan } from './create-posts.js';

/** A one-item entry on one channel. */
export function oneItemEntry(fields: { integrationId: string; type: 'schedule' | 'draft'; date: Date; groupKey: number; settings: Record<string, unknown>; content: string; media: StoredMedia[] }): PlanEntry {
  return {
    integrationId: fields.integrationId,
    type: fields.type,
    date: fields.date,
    shortLink: false,
    tags: [],
    groupKey: fields.groupKey,
    settings: fields.settings,
    items: [{ content: fields.content, media: fields.media, delay: 0 }],
  };
}

export interface StandingPost {
  organizationId: string;
  creationMethod: PostPlan['creationMethod'];
  /** The automation's author (`credentialRef`): the post is theirs. */
  createdBy: string;
  /** Set when the automation was set up under the approval gate: the post waits for approval (requested now). */
  approval?: PostApproval | null;
  entry: PlanEntry;
  /** Occurrences of a recurring post repeat their text on purpose (the duplicate guard's exemption). */
  allowDuplicate?: boolean;
  /** The audit trail's sentence for the created post. */
  summary: (postId: string) => string;
  /** What the audit event records besides whether the post waits for approval. */
  changes: Record<string, unknown>;
}

/** Creates the post; answers its id. A refusal (a DomainError) is thrown as a create throws it. */
export async function createStandingPost(services: Services, em: EntityManager, post: StandingPost): Promise<string> {
  const [created] = await createPosts(services, em, post.organizationId, {
    creationMethod: post.creationMethod,
    entries: [post.entry],
    approval: post.approval ? { ...post.approval, requestedAt: services.now().toISOString() } : undefined,
    createdBy: post.createdBy,
    allowDuplicate: post.allowDuplicate,
    audit: (made) => ({
      ...sourceOf(undefined, post.organizationId),
      action: 'post.created',
      target: { kind: 'post', id: made.postId },
      integrationId: made.integration,
      summary: post.summary(made.postId),
      changes: { ...post.changes, awaitingApproval: Boolean(made.approval) },
    }),
  });
  return created.postId;
}
