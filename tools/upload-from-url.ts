import { Transform, pipeline, type Readable } from 'node:stream';
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
    "Fetches an image or MP4 from a public http(s) URL into the media library; answers {id, path, warnings, …} for attachments. Private, login-only and slow hosts are refused.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: true,
  acceptsIdempotencyKey: true,
  input: z.object({ url: z.string().trim().min(1).max(4096).describe('Public http(s) URL of the image or video'), idempotencyKey: idempotencyKeyField }),
  output: uploadedMediaSchema,
  rest: { method: 'POST', path: '/upload-from-url' },
  handler: async (input, { em, caller, services, progress, log }) => {
    const response = await services.urlGuard.fetch(input.url);
    const counted = progress ? countBytes(response.body, response.contentLength, progress) : undefined;
    const media = await ingestMedia(services, em, caller.organizationId, {
      stream: counted?.stream ?? response.body,
      filename: filenameOf(response.url),
      declaredLength: response.contentLength,
    });
    await counted?.done();
    log?.('info', `Stored ${media.name} (${media.type}, ${media.size} bytes) as media ${media.id}.`, { id: media.id });
    return media;
  },
});

/** The body passed through a byte counter that reports progress at most every 100 ms (and once at the end, before answering). */
function countBytes(body: Readable, total: number | undefined, progress: (value: number, total?: number, message?: string) => Promise<void>) {
  let received = 0;
  let reported = -1;
  let lastAt = 0;
  let pending: Promise<void> = Promise.resolve();
  const report = (force: boolean) => {
    const now = Date.now();
    if (received === reported || (!force && now - lastAt < 100)) return;
    reported = received;
    lastAt = now;
    const value = total ? Math.min(received, total) : received;
    pending = pending.then(() => progress(value, total, `Received ${value} of ${total ?? 'an unknown number of'} bytes`).catch(() => undefined));
  };
  // Counting in the transform keeps the stream paused until the media ingestion reads it.
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      report(false);
      callback(null, chunk);
    },
  });
  pipeline(body, counter, () => undefined);
  return {
    stream: counter as Readable,
    async done() {
      report(true);
      await pending;
    },
  };
}
