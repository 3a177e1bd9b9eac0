// A reply to a comment is a post: a chain of one item whose root answers the comment (`post.reply_to`), published by the same
// publish_post job as every post (tools/internal/publish.ts), so what makes posts go out exactly once applies to replies:
// the attempt and the provider's steps are recorded before the platform is called, an interrupted one is recovered or
// stopped with "could not confirm", retries back off, and a reply an agent makes under the approval gate waits for an owner.
//
// The duplicate guard of replies is per comment: a comment is answered once. A second reply while the first is queued,
// waiting for approval or published is refused with 409 naming it, unless `allowDuplicate: true` says it is meant. The
// channel-wide text guard (duplicates.ts) does not apply to replies: "Thank you!" to two people is not a repeated post.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CommentSchema } from '../../src/db/comment-entities.js';
import { PostSchema, type PostApproval, type PostState } from '../../src/db/entities.js';
import { conflict, invalidInput, notSupported } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { checkContentRules, isBlankContent, sanitizeContent } from '../../src/lib/content.js';
import type { Services } from '../types.js';
import { measure, NOT_YET_PUBLISHED } from './create-posts.js';
import { providerOf } from './integrations.js';
import { schedulePublish } from './queue.js';
import { findComment, platformRefOf, postRefOf } from './comments.js';
import { recordChange } from './audit.js';

export interface ReplyRequest {
  /** HTML or plain text, as a post's content. */
  content: string;
  /** When to publish (UTC); now when absent. */
  date?: Date;
  allowDuplicate?: boolean;
  creationMethod: 'API' | 'MCP';
  /** Set when an agent answers under the approval gate (approval.ts `approvalRequest`). */
  approval?: PostApproval;
}

export interface CreatedReply {
  postId: string;
  commentId: string;
  state: PostState;
  /** The reply waits for an owner's approval before it can be published. */
  approval?: { status: 'pending'; message: string };
}

/** A reply in one of these states counts: a second one is refused (the console's inbox offers no form then). */
export const ACTIVE_REPLY: readonly PostState[] = ['QUEUE', 'AWAITING_APPROVAL', 'PUBLISHED'];

export async function replyToComment(services: Services, em: EntityManager, organizationId: string, commentId: string, request: ReplyRequest): Promise<CreatedReply> {
  const { comment, integration } = await findComment(em, organizationId, commentId);
  const provider = providerOf(integration);
  if (!provider.comment) throw notSupported(`${provider.name} does not let Herald publish comments or replies (not_supported).`, { hint: `Answer it on ${provider.name} itself.` });
  if (integration.disabled) throw invalidInput(`Channel "${integration.name}" is disabled.`, { hint: 'Enable it in the console, then reply again.' });
  if (comment.state === 'deleted') throw conflict(`Comment ${comment.id} was deleted; there is nothing to reply to.`);
  const root = await em.findOne(PostSchema, { id: comment.postId });
  if (!root?.releaseId) throw conflict(`The post comment ${comment.id} was left on is no longer known to Herald.`);
  if (comment.replyPostId && !request.allowDuplicate) {
    const earlier = await em.findOne(PostSchema, { id: comment.replyPostId, deletedAt: null });
    if (earlier && ACTIVE_REPLY.includes(earlier.state)) {
      throw conflict(`Comment ${comment.id} already has a reply (post ${earlier.id}, ${earlier.state.toLowerCase().replace('_', ' ')}).`, {
        hint: 'A comment is answered once. Edit or delete that reply, or send allowDuplicate: true if a second reply is meant.',
        details: { replyPostId: earlier.id, state: earlier.state },
      });
    }
  }

  const content = sanitizeContent(request.content, provider);
  const rule = checkContentRules(content, provider);
  if (rule) throw invalidInput(`content: ${rule}`);
  if (isBlankContent(content)) throw invalidInput('content: the reply is empty.', { hint: 'Write the text of the reply.' });
  const maxLength = provider.maxLength({ channel: integration.additionalSettings });
  const { length } = measure(provider, content);
  if (length > maxLength) throw invalidInput(`content: the maximum characters is ${maxLength}, we got ${length}.`, { hint: 'Shorten the reply.' });

  const now = services.now();
  const publishDate = request.date && request.date.getTime() > now.getTime() ? request.date : now;
  const state: PostState = request.approval ? 'AWAITING_APPROVAL' : 'QUEUE';
  const id = newId();
  await em.transactional(async (transaction) => {
    transaction.create(PostSchema, {
      id,
      organizationId,
      integrationId: integration.id,
      group: newId(),
      parentPostId: null,
      rootPostId: id,
      position: 0,
      content,
      settings: { __type: integration.providerIdentifier },
      media: [],
      tags: [],
      shortLink: false,
      delay: 0,
      state,
      publishDate,
      ...NOT_YET_PUBLISHED,
      creationMethod: request.creationMethod,
      approval: request.approval ?? null,
      replyTo: { commentId: comment.id, root: postRefOf(root), parent: platformRefOf(comment) },
      // Never equal to a post's key (duplicates.ts), so the channel-wide guard never compares a post with a reply.
      duplicateKey: `reply:${createHash('sha256').update(comment.id).digest('base64url')}`,
      // The guard of replies is the per-comment one above: approval and retries do not apply the channel-wide text guard.
      allowDuplicate: true,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    });
    await transaction.flush();
    await transaction.nativeUpdate(CommentSchema, { id: comment.id }, { replyPostId: id, updatedAt: now });
    if (state === 'QUEUE') await schedulePublish(transaction, id, publishDate);
    await recordChange(transaction, organizationId, {
      action: 'comment.replied',
      target: { kind: 'comment', id: comment.id },
      integrationId: integration.id,
      did: `replied to a comment on post ${comment.postId} with post ${id}${state === 'AWAITING_APPROVAL' ? ' (waiting for approval)' : ''}`,
      changes: { replyPostId: id, postId: comment.postId, awaitingApproval: state === 'AWAITING_APPROVAL' },
    });
  });
  return {
    postId: id,
    commentId: comment.id,
    state,
    ...(state === 'AWAITING_APPROVAL'
      ? { approval: { status: 'pending' as const, message: `This reply waits for an owner's approval in the Herald console before it is published. Read herald://posts/${id} (or subscribe to it) to learn the decision.` } }
      : {}),
  };
}
