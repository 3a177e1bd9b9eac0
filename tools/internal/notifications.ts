import type { EntityManager } from '@mikro-orm/postgresql';
import { NotificationSchema } from '../../src/db/entities.js';
import { newId } from '../../src/lib/crypto.js';

export type NotificationType =
  | 'post_published'
  | 'post_failed'
  | 'post_partial'
  | 'channel_reconnect'
  | 'channel_token_expiring'
  | 'post_awaiting_approval'
  | 'post_approved'
  | 'post_rejected';

export function notify(em: EntityManager, organizationId: string, type: NotificationType, content: string, link?: string): void {
  em.create(NotificationSchema, { id: newId(), organizationId, type, content, link: link ?? null, createdAt: new Date() });
}
