import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listMedia } from './internal/media.js';
import { mediaRecordSchema, pageInput, pageOutput } from './shapes.js';

export const mediaList = defineTool({
  name: 'mediaListTool',
  title: 'List media',
  description:
    'The organization\'s media library, newest first: {media: [{id, name, path, type, size, width?, height?, duration?, createdAt}], total, page, pageSize, hasMore}. ' +
    'Pages start at 0. Use a file\'s path as an attachment in schedulePostTool.',
  annotations: readOnly,
  mcp: true,
  input: z.object(pageInput),
  output: z.object({ media: z.array(mediaRecordSchema), ...pageOutput }),
  rest: { method: 'GET', path: '/media', toInput: ({ query }) => ({ page: query.page, pageSize: query.pageSize }) },
  handler: (input, { em, caller }) => listMedia(em, caller.organizationId, input.page, input.pageSize),
});
