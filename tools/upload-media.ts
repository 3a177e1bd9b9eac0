import { z } from 'zod';
import { defineTool } from './types.js';
import { ingestMedia, type IncomingMedia } from './internal/media.js';
import { uploadedMediaSchema } from './shapes.js';

const isIncomingMedia = (value: unknown): value is IncomingMedia =>
  typeof value === 'object' && value !== null && typeof (value as IncomingMedia).stream?.pipe === 'function';

export const uploadMedia = defineTool({
  name: 'uploadMedia',
  title: 'Upload media',
  description:
    'POST /upload (multipart/form-data, the file in field "file"): stores an image (JPEG, PNG, GIF, WebP, AVIF, BMP, TIFF) or an MP4 video in the media library. ' +
    'The type is read from the file itself. Answers {id, path, ...}: put both in posts[].value[].image[].',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  mcp: false,
  acceptsIdempotencyKey: true,
  input: z.object({ file: z.custom<IncomingMedia>(isIncomingMedia, 'send the file in the multipart form field "file"') }),
  output: uploadedMediaSchema,
  rest: { method: 'POST', path: '/upload', multipartFile: 'file' },
  handler: (input, { em, caller, services }) => ingestMedia(services, em, caller.organizationId, input.file),
});
