import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { listMedia } from './internal/media.js';
import { mediaRecordSchema, pageInput, pageOutput } from './shapes.js';

export const mediaList = defineTool({
  name: 'mediaListTool',
  title: 'List media',
  description:
    "The media library, newest first; each item is an attachment.",
  annotations: readOnly,
  mcp: true,
  input: z.object(pageInput),
  output: z.object({ media: z.array(mediaRecordSchema), ...pageOutput }),
  rest: { method: 'GET', path: '/media', toInput: ({ query }) => ({ page: query.page, pageSize: query.pageSize }) },
  handler: (input, { em, caller }) => listMedia(em, caller.organizationId, input.page, input.pageSize),
});
