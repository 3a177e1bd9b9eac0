import { z } from 'zod';
import { defineTool } from './types.js';
import { ingestMedia } from './internal/media.js';
import { idempotencyKeyField } from './internal/idempotency.js';
import { uploadedMediaSchema } from './shapes.js';

function filenameOf(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '') || undefined;
  } catch {
    return undefined;
  }
}

export const uploadFromUrlTool = defineTool({
  name: 'uploadFromUrlTool',
  title: 'Upload media from a URL',
  description:
    'Fetches an image (JPEG, PNG, GIF, WebP, AVIF, BMP, TIFF) or MP4 video from a public http(s) URL into the media library and answers {id, path, ...}. ' +
    'Use the returned path as an attachment in schedulePostTool (or id and path in posts[].value[].image[] on REST). ' +
    'Private, internal and loopback addresses are refused ("fetch failed: ..."), as are URLs that need a login or answer slowly.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: true,
  acceptsIdempotencyKey: true,
  input: z.object({ url: z.string().trim().min(1).max(4096).describe('Public http(s) URL of the image or video'), idempotencyKey: idempotencyKeyField }),
  output: uploadedMediaSchema,
  rest: { method: 'POST', path: '/upload-from-url' },
  handler: async (input, { em, caller, services }) => {
    const response = await services.urlGuard.fetch(input.url);
    return ingestMedia(services, em, caller.organizationId, {
      stream: response.body,
      filename: filenameOf(response.url),
      declaredLength: response.contentLength,
    });
  },
});
