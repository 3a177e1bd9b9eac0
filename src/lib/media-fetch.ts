// Loads the bytes of a client's media URL at publish time, through the SSRF guard, size-capped while streaming.
// The type is read from the bytes when they are a known format (a server's content-type can be wrong), else from the header.
import type { UrlGuard } from './ssrf.js';

export interface LoadedMedia {
  bytes: Buffer;
  mimeType: string;
}

export type MediaFetcher = (url: string) => Promise<LoadedMedia>;

/** Media of a post could not be loaded; publishing that item fails with this message (no retry). */
export class MediaFetchError extends Error {}

export function createMediaFetcher(guard: UrlGuard, options: { maxBytes: number }): MediaFetcher {
  return async (url) => {
    try {
      const response = await guard.fetch(url);
      if (response.contentLength !== undefined && response.contentLength > options.maxBytes) {
        response.body.destroy();
        throw new Error(`it is larger than ${options.maxBytes} bytes`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > options.maxBytes) throw new Error(`it is larger than ${options.maxBytes} bytes`);
        chunks.push(chunk as Buffer);
      }
      const bytes = Buffer.concat(chunks);
      const detected = (await (await import('file-type')).fileTypeFromBuffer(bytes.subarray(0, 4100)))?.mime;
      return { bytes, mimeType: detected ?? response.contentType ?? 'application/octet-stream' };
    } catch (error) {
      throw new MediaFetchError(`media ${url} could not be loaded: ${(error as Error).message}`);
    }
  };
}
