// The webhook events raised by notify(): their names and their data, built when the notification is made (what happened
// then, not what the rows say when the event is delivered).
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookEventSchema } from '../../src/db/agent-entities.js';
import type { Integration, Post } from '../../src/db/entities.js';
import type { Comment } from '../../src/db/comment-entities.js';
import { newId } from '../../src/lib/crypto.js';

export const WEBHOOK_EVENTS = ['post.published', 'post.failed', 'post.partial', 'channel.needs_reconnection', 'channel.token_expiring', 'comment.created'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];
/** Sent by POST /webhooks/{id}/test to that endpoint only, whatever it listens to. */
export const TEST_EVENT = 'webhook.test';

const EVENT_OF: Record<string, WebhookEventType> = {
  post_published: 'post.published',
  post_failed: 'post.failed',
  post_partial: 'post.partial',
  channel_reconnect: 'channel.needs_reconnection',
  channel_token_expiring: 'channel.token_expiring',
  comment_created: 'comment.created',
};

/** What a notification is about: the post item it concerns (with its chain for partial publications), the channel, or a comment left on a post. */
export type NotificationSubject =
  | { post: Post; chain?: Post[] }
  | { integration: Integration; reason?: string; expiresAt?: Date }
  | { comment: Comment; integration: Integration };

const retryHint = (rootId: string) => `retry the post with PUT /posts/${rootId}/status and {"status":"schedule"}: it resumes where it stopped, and items already published are not sent again.`;

/** What to do after a failure, from its message. */
function failureHint(error: string | null, rootId: string): string {
  if (error && /reconnect/i.test(error)) return `Reconnect the channel (the console, or GET /social/{platform}?refresh={integrationId}), then ${retryHint(rootId)}`;
  if (error && /could not confirm/i.test(error)) return 'Check the account on the platform first: the post may have gone out. Retry only if it did not, or it will be published twice.';
  return `Fix what the error names (the content, the media or the settings), then ${retryHint(rootId)}`;
}

const itemRef = (item: Post) => ({ postId: item.id, position: item.position, releaseId: item.releaseId ?? null, releaseUrl: item.releaseUrl ?? null });

function postData(type: WebhookEventType, subject: { post: Post; chain?: Post[] }): Record<string, unknown> {
  const { post: item, chain = [] } = subject;
  const base = { postId: item.rootPostId, group: item.group, integrationId: item.integrationId, date: item.publishDate.toISOString() };
  if (type === 'post.published') {
    return { ...base, releaseId: item.releaseId, releaseUrl: item.releaseUrl, publishedAt: item.publishedAt?.toISOString() ?? null };
  }
  if (type === 'post.failed') {
    return { ...base, failedItem: { postId: item.id, position: item.position }, error: item.error ?? null, hint: failureHint(item.error ?? null, item.rootPostId) };
  }
  return {
    ...base,
    published: chain.filter((other) => other.state === 'PUBLISHED').map(itemRef),
    failed: { postId: item.id, position: item.position, error: item.error },
    notAttempted: chain.filter((other) => other.position > item.position && other.state !== 'PUBLISHED').map((other) => ({ postId: other.id, position: other.position })),
    hint: `Items already published stay published; ${retryHint(item.rootPostId)}`,
  };
}

function channelData(type: WebhookEventType, subject: { integration: Integration; reason?: string; expiresAt?: Date }): Record<string, unknown> {
  const { integration } = subject;
  const base = { integrationId: integration.id, reason: subject.reason ?? null };
  if (type === 'channel.token_expiring') {
    return { ...base, tokenExpiresAt: (subject.expiresAt ?? integration.tokenExpiresAt)?.toISOString() ?? null, hint: 'Reconnect the channel before the token expires (the console, or GET /social/{platform}?refresh={integrationId}).' };
  }
  return { ...base, hint: 'Reconnect the channel (the console, or GET /social/{platform}?refresh={integrationId}); posts due meanwhile fail and can be retried after.' };
}

/** comment.created: the comment as Herald stored it, and how to answer it. */
function commentData(subject: { comment: Comment; integration: Integration }): Record<string, unknown> {
  const { comment, integration } = subject;
  return {
    commentId: comment.id,
    integrationId: integration.id,
    platform: integration.providerIdentifier,
    postId: comment.postId,
    platformCommentId: comment.platformId,
    parentPlatformCommentId: comment.parentPlatformId ?? null,
    author: comment.author,
    text: comment.text,
    url: comment.url ?? null,
    createdAt: comment.createdAt.toISOString(),
    hint: `Answer it with replyToComment (MCP) or POST /comments/${comment.id}/reply (REST); list what is unanswered with GET /comments?unanswered=true.`,
  };
}

/** The webhook event of a notification (its type and data), or undefined when the notification raises none. */
export function webhookEventOf(
  notificationType: string,
  notification: { content: string; link?: string; subject?: NotificationSubject },
): { type: WebhookEventType; data: Record<string, unknown> } | undefined {
  const type = EVENT_OF[notificationType];
  if (!type) return undefined;
  const { subject } = notification;
  const specific =
    subject && 'post' in subject ? postData(type, subject) : subject && 'comment' in subject ? commentData(subject) : subject && 'integration' in subject ? channelData(type, subject) : {};
  return { type, data: { message: notification.content, ...(notification.link ? { link: notification.link } : {}), ...specific } };
}

/** Stages the webhook event of a notification in the same unit of work (a database trigger enqueues its fan-out on commit). */
export function raiseWebhookEvent(
  em: EntityManager,
  organizationId: string,
  notificationType: string,
  notification: { content: string; link?: string; subject?: NotificationSubject; createdAt: Date },
): void {
  const event = webhookEventOf(notificationType, notification);
  if (!event) return;
  em.create(WebhookEventSchema, { id: newId(), organizationId, type: event.type, data: event.data, createdAt: notification.createdAt });
}
