import type { EntityManager } from '@mikro-orm/postgresql';
import { NotificationSchema } from '../../src/db/entities.js';
import { newId } from '../../src/lib/crypto.js';
import { raiseWebhookEvent, type NotificationSubject } from './webhook-events.js';

export type NotificationType =
  | 'post_published'
  | 'post_failed'
  | 'post_partial'
  | 'channel_reconnect'
  | 'channel_token_expiring'
  | 'post_awaiting_approval'
  | 'post_approved'
  | 'post_rejected'
  /** An edit or deletion on the platform of a published post failed (platform-change-run.ts). */
  | 'post_change_failed'
  | 'comment_created';
export type { NotificationSubject };

/**
 * The one place notifications are made. Each also raises the matching webhook event (post.published, post.failed,
 * post.partial, channel.needs_reconnection, channel.token_expiring, comment.created), committed with it; `subject` (the post
 * item, with its chain, the channel, or the comment) gives the event its structured data.
 */
export function notify(em: EntityManager, organizationId: string, type: NotificationType, content: string, link?: string, subject?: NotificationSubject): void {
  const createdAt = new Date();
  em.create(NotificationSchema, { id: newId(), organizationId, type, content, link: link ?? null, integrationId: integrationOf(subject), createdAt });
  raiseWebhookEvent(em, organizationId, type, { content, link, subject, createdAt });
}

/** The channel a notification is about, from its subject (a channel-limited key sees only its channels' notifications). */
export function integrationOf(subject: NotificationSubject | undefined): string | null {
  if (!subject) return null;
  if ('post' in subject) return subject.post.integrationId;
  return subject.integration.id;
}
