import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listMedia } from './internal/media.js';
import { mediaRecordSchema } from './shapes.js';

export const mediaList = defineTool({
  name: 'mediaListTool',
  title: 'List media',
  description:
    'The organization\'s media library, newest first: {media: [{id, name, path, type, size, width?, height?, duration?, createdAt}], total, page, pageSize, hasMore}. ' +
    'Pages start at 0. Use a file\'s path as an attachment in schedulePostTool.',
  annotations: readOnly,
  mcp: true,
  input: z.object({
    page: z.coerce.number().int().min(0).default(0),
    pageSize: z.coerce.number().int().min(1).max(100).default(20),
  }),
  output: z.object({ media: z.array(mediaRecordSchema), total: z.number(), page: z.number(), pageSize: z.number(), hasMore: z.boolean() }),
  rest: { method: 'GET', path: '/media', toInput: ({ query }) => ({ page: query.page, pageSize: query.pageSize }) },
  handler: (input, { em, caller }) => listMedia(em, caller.organizationId, input.page, input.pageSize),
});
