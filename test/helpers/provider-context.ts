// Builds the context a provider gets at publish time, pointed at a fake platform.
import zlib from 'node:zlib';
import { createPlatformFetch } from '../../src/lib/platform-http.js';
import type { ChannelAuth, JsonValue, MediaFile, ProviderContext } from '../../providers/types.js';

/**
 * A provider context pointed at a fake. `steps` (when given) records step results like the publishing job does, so a test
 * can run `publish` twice with the same map to check that recorded steps are not repeated.
 */
export function providerContext(options: {
  endpoints?: Record<string, string>;
  auth?: Partial<ChannelAuth>;
  settings?: Record<string, unknown>;
  channel?: Record<string, unknown>;
  steps?: Map<string, unknown>;
  client?: ProviderContext['client'];
}): ProviderContext {
  const steps = options.steps ?? new Map<string, unknown>();
  return {
    fetch: createPlatformFetch({ timeoutMs: 5000, userAgent: 'Herald-test/1.0' }),
    dial: async () => undefined, // the SSRF guard is tested through Herald (test/ssrf*.test.ts)
    endpoints: options.endpoints ?? {},
    auth: { accessToken: 'test-access-token', internalId: 'account-1', data: {}, ...options.auth },
    channel: options.channel ?? {},
    settings: options.settings ?? {},
    client: options.client,
    step: async <T extends JsonValue>(name: string, run: () => Promise<T>) => {
      if (steps.has(name)) return steps.get(name) as T;
      const result = await run();
      steps.set(name, result);
      return result;
    },
  };
}

/** A real, decodable 1x1 PNG built by hand (signature, IHDR, IDAT, IEND with correct CRCs). */
export function tinyPng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buffer: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buffer) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, checksum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const pixels = zlib.deflateSync(Buffer.from([0, 255, 0, 0]));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

export function mediaFile(bytes: Buffer, options: { url?: string; kind?: 'image' | 'video'; mimeType?: string; alt?: string } = {}): MediaFile {
  return {
    url: options.url ?? 'https://media.example/picture.png',
    kind: options.kind ?? 'image',
    alt: options.alt,
    load: async () => ({ bytes, mimeType: options.mimeType ?? 'image/png' }),
  };
}
