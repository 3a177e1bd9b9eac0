import { z } from 'zod';
import { defineTool } from './types.js';
import { deleteMedia as removeMedia } from './internal/media.js';
import { idParam } from './shapes.js';

export const deleteMedia = defineTool({
  name: 'deleteMedia',
  title: 'Delete media',
  description: 'DELETE /media/{id}: removes the file from the media library and from storage. Posts already scheduled with it will fail to publish.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({ id: idParam }),
  output: z.object({ id: z.string() }),
  rest: { method: 'DELETE', path: '/media/:id' },
  handler: async (input, { em, caller, services }) => {
    await removeMedia(services, em, caller.organizationId, input.id);
    return { id: input.id };
  },
});
