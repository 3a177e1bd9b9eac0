// Loads media bytes for platforms that take uploads. Size-capped and time-limited.
export interface LoadedMedia {
  bytes: Buffer;
  mimeType: string;
}

export type MediaFetcher = (url: string) => Promise<LoadedMedia>;

export class MediaFetchError extends Error {}

export function createMediaFetcher(options: { timeoutMs: number; maxBytes: number; userAgent: string }): MediaFetcher {
  return async (url) => {
    let response: Response;
    try {
      response = await fetch(url, { headers: { 'user-agent': options.userAgent }, signal: AbortSignal.timeout(options.timeoutMs), redirect: 'follow' });
    } catch (error) {
      throw new MediaFetchError(`fetch failed for media ${url}: ${(error as Error).message}`);
    }
    if (!response.ok || !response.body) throw new MediaFetchError(`fetch failed for media ${url}: the server answered ${response.status}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > options.maxBytes) throw new MediaFetchError(`media ${url} is larger than ${options.maxBytes} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return { bytes: Buffer.concat(chunks), mimeType: (response.headers.get('content-type') ?? 'application/octet-stream').split(';')[0].trim() };
  };
}
