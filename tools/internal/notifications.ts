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
  | 'comment_created'
  /** A feed could not be read (tools/internal/feeds.ts): once per failure spell. */
  | 'feed_failed'
  /** Occurrences of a recurring post whose time passed while Herald was not running, skipped (tools/internal/recurrence-missed.ts). */
  | 'recurrence_missed'
  /** A comment or a request for changes left through a customer preview link (tools/internal/preview-links.ts). */
  | 'preview_feedback';
export type { NotificationSubject };

/** What a notification is about, as the audit trail names targets; the console links it to that thing's page. */
export const NOTIFICATION_TARGET_KINDS = ['post', 'channel', 'feed', 'recurring_post', 'preview_link'] as const;
export type NotificationTargetKind = (typeof NOTIFICATION_TARGET_KINDS)[number];
export interface NotificationTarget {
  kind: NotificationTargetKind;
  id: string;
}

/**
 * A notification's data besides its text: `at`, the instant the text names (the text writes it in UTC, as the API does;
 * the console shows it in the reader's zone), and `target`, what it is about (else its subject's post or channel).
 */
export interface NotificationDetails {
  at?: Date;
  target?: NotificationTarget;
}

function targetOf(subject: NotificationSubject | undefined): NotificationTarget | undefined {
  if (!subject) return undefined;
  if ('post' in subject) return { kind: 'post', id: subject.post.rootPostId };
  if ('comment' in subject) return { kind: 'post', id: subject.comment.postId };
  return { kind: 'channel', id: subject.integration.id };
}

function channelOf(subject: NotificationSubject | undefined): string | null {
  if (!subject) return null;
  if ('post' in subject) return subject.post.integrationId;
  return subject.integration.id;
}

/**
 * The one place notifications are made. Each also raises the matching webhook event (post.published, post.failed,
 * post.partial, channel.needs_reconnection, channel.token_expiring, comment.created), committed with it; `subject` (the post
 * item, with its chain, the channel, or the comment) gives the event its structured data, and the notification its target
 * unless `details` names one.
 */
export function notify(
  em: EntityManager,
  organizationId: string,
  type: NotificationType,
  content: string,
  link?: string,
  subject?: NotificationSubject,
  integrationId?: string,
  details: NotificationDetails = {},
): void {
  const createdAt = new Date();
  // The channel it is about (a key limited to channels sees only its channels' notifications): named, or the subject's.
  const channel = integrationId ?? channelOf(subject);
  const target = details.target ?? targetOf(subject);
  const at = details.at ?? (subject && 'expiresAt' in subject ? subject.expiresAt : undefined) ?? null;
  em.create(NotificationSchema, { id: newId(), organizationId, integrationId: channel, type, content, link: link ?? null, at, targetKind: target?.kind ?? null, targetId: target?.id ?? null, createdAt });
  raiseWebhookEvent(em, organizationId, type, { content, link, subject, createdAt });
}
