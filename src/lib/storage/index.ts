// One storage interface, two implementations: local disk (served at /uploads) and S3-compatible buckets.
import type { Readable } from 'node:stream';
import type { Config } from '../../config.js';
import { createLocalStorage } from './local.js';

export interface Storage {
  kind: 'local' | 's3';
  /** Moves a finished file into storage under `key`; the file is gone afterwards. Answers the public URL. */
  save(file: string, key: string, contentType: string): Promise<string>;
  /** The stored bytes, streamed. */
  read(key: string): Promise<Readable>;
  /** Removes the object; a missing object is not an error. */
  remove(key: string): Promise<void>;
  /** The absolute public URL of a key. */
  urlOf(key: string): string;
}

export async function createStorage(config: Config): Promise<Storage> {
  if (config.storage.kind === 'local') return createLocalStorage(config);
  // Loaded only when used: the AWS SDK is large.
  const { createS3Storage } = await import('./s3.js');
  return createS3Storage(config.storage);
}
