import { z } from 'zod';
import { NotificationSchema } from '../src/db/entities.js';
import { channelFilter } from './internal/visibility.js';
import { NOTIFICATION_TARGET_KINDS, type NotificationTargetKind } from './internal/notifications.js';
import { defineTool, readOnly } from './types.js';

const PAGE_SIZE = 100;

export const notificationList = defineTool({
  name: 'notificationListTool',
  title: 'List notifications',
  description:
    "Notifications, newest first: posts published or failed (with the error), channels to reconnect. 100 a page from 0.",
  annotations: readOnly,
  mcp: true,
  input: z.object({ page: z.coerce.number().int().min(0).default(0) }),
  output: z.object({
    notifications: z.array(
      z.object({
        id: z.string(),
        type: z.string(),
        content: z.string(),
        link: z.string().nullable(),
        createdAt: z.string(),
        at: z.string().nullable().describe('The instant content names (UTC), when one'),
        target: z
          .object({ kind: z.enum(NOTIFICATION_TARGET_KINDS), id: z.string() })
          .nullable()
          .describe('What it is about: a post, channel, feed, recurring post or preview link id'),
      }),
    ),
    total: z.number(),
    page: z.number(),
    limit: z.number(),
    hasMore: z.boolean(),
  }),
  rest: { method: 'GET', path: '/notifications', toInput: ({ query }) => ({ page: query.page }) },
  handler: async (input, { em, caller }) => {
    const [rows, total] = await em.findAndCount(
      NotificationSchema,
      // A key limited to channels sees only notifications about its channels.
      { organizationId: caller.organizationId, ...channelFilter() },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: PAGE_SIZE, offset: input.page * PAGE_SIZE },
    );
    return {
      notifications: rows.map((row) => ({
        id: row.id,
        type: row.type,
        content: row.content,
        link: row.link ?? null,
        createdAt: row.createdAt.toISOString(),
        at: row.at?.toISOString() ?? null,
        target: row.targetKind && row.targetId ? { kind: row.targetKind as NotificationTargetKind, id: row.targetId } : null,
      })),
      total,
      page: input.page,
      limit: PAGE_SIZE,
      hasMore: (input.page + 1) * PAGE_SIZE < total,
    };
  },
});
