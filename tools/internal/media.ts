// The media library: taking in a file (upload or URL) as a stream, listing, deleting, and loading stored bytes at publish time.
// A file is taken in by reading its first bytes (type detected from them, the cap chosen by type), then streaming the rest
// into a temporary file while counting; only a complete, accepted file reaches storage and gets a row.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaSchema, type Media } from '../../src/db/entities.js';
import { DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { ACCEPTED_TYPES, detectType, imageSize, isVideoType, probeMp4, SAMPLE_BYTES, VideoMetadataError, videoWarnings } from '../../src/lib/media-probe.js';
import { MediaFetchError, type LoadedMedia } from '../../src/lib/media-fetch.js';
import { isLocalHost } from '../../src/lib/ssrf.js';
import type { Services } from '../types.js';
import { paged } from '../shapes.js';
import { currentCredential, isChannelLimited, visibleChannelIds } from './visibility.js';

export interface IncomingMedia {
  stream: Readable;
  /** The client's file name (upload) or the URL's last path segment; only used to name the file. */
  filename?: string;
  /** Content-Length announced by the source, when it announced one: refused early when over every cap. */
  declaredLength?: number;
}

export interface MediaRecord {
  id: string;
  name: string;
  path: string;
  type: string;
  size: number;
  width?: number;
  height?: number;
  duration?: number;
  createdAt: string;
}

export interface IngestedMedia extends MediaRecord {
  warnings: string[];
}

const acceptedList = Object.keys(ACCEPTED_TYPES).join(', ');
const megabytes = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;

export function toMediaRecord(row: Media): MediaRecord {
  return {
    id: row.id,
    name: row.name,
    path: row.path,
    type: row.type,
    size: Number(row.size),
    ...(row.width != null ? { width: row.width } : {}),
    ...(row.height != null ? { height: row.height } : {}),
    ...(row.duration != null ? { duration: Number(row.duration) } : {}),
    createdAt: row.createdAt.toISOString(),
  };
}

function tooLarge(kind: 'image' | 'video' | 'file', limit: number): DomainError {
  return new DomainError('payload_too_large', `The ${kind} is larger than the ${megabytes(limit)} allowed for ${kind === 'file' ? 'uploads' : `${kind}s`}.`, {
    hint: kind === 'video' ? 'Compress or shorten the video (H.264, at most 1920x1080, 30 fps).' : 'Resize or compress the file and upload it again.',
    details: { limit },
  });
}

function unsupportedType(detected: string | undefined): DomainError {
  return invalidInput(`Unsupported file type: ${detected ? `the file is ${detected}` : 'the file is not a recognised image or video (text, SVG or HTML, for example)'}. Accepted: ${acceptedList}.`, {
    hint: 'The type is read from the file itself, not its name: convert the file to one of the accepted types.',
    details: { detected: detected ?? null, accepted: Object.keys(ACCEPTED_TYPES) },
  });
}

/** `<safe base of at most 100 characters>.<extension of the detected type>`. */
export function safeName(filename: string | undefined, extension: string): string {
  const base = path
    .basename(filename ?? '')
    .replace(/\.[^.]*$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 100);
  return `${base || 'upload'}.${extension}`;
}

function storageKey(now: Date, extension: string): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${now.getUTCFullYear()}/${pad(now.getUTCMonth() + 1)}/${pad(now.getUTCDate())}/${randomBytes(16).toString('hex')}.${extension}`;
}

/** A warning when a media URL is not reachable from the internet (loopback, private, or plain http), so URL-pulling platforms would fail. */
export function publicReachabilityWarning(mediaPath: string): string | undefined {
  let url: URL;
  try {
    url = new URL(mediaPath);
  } catch {
    return undefined;
  }
  if (isLocalHost(url.hostname)) {
    return `Media is served from ${url.origin}, which platforms cannot reach. Platforms that fetch media by URL (Instagram, Threads, Pinterest, TikTok) will fail; set PUBLIC_URL (or S3_PUBLIC_URL) to a public https address.`;
  }
  if (url.protocol !== 'https:') return `Media is served over plain http (${url.origin}); platforms that fetch media by URL need https.`;
  return undefined;
}

async function readImageSize(file: string, type: string): Promise<{ width: number; height: number } | undefined> {
  if (type !== 'image/png' && type !== 'image/jpeg' && type !== 'image/gif') return undefined;
  const handle = await fs.promises.open(file, 'r');
  try {
    const head = Buffer.alloc(256 * 1024);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const bytes = head.subarray(0, bytesRead);
    if (type === 'image/gif') return bytes.length >= 10 ? { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) } : undefined;
    return imageSize(bytes);
  } finally {
    await handle.close();
  }
}

/** Takes a file in: detects, caps, probes, stores, records. Nothing is left on disk or in storage when it fails. */
export async function ingestMedia(services: Services, em: EntityManager, organizationId: string, incoming: IncomingMedia): Promise<IngestedMedia> {
  const { config, storage } = services;
  const { maxImageBytes, maxVideoBytes } = config.uploads;
  if (incoming.declaredLength !== undefined && incoming.declaredLength > Math.max(maxImageBytes, maxVideoBytes)) {
    incoming.stream.destroy();
    throw tooLarge('file', Math.max(maxImageBytes, maxVideoBytes));
  }
  const directory = path.join(config.dataDir, 'tmp');
  await fs.promises.mkdir(directory, { recursive: true });
  const temporary = path.join(directory, `upload-${randomBytes(12).toString('hex')}`);
  let output: fs.WriteStream | undefined;
  try {
    let head: Buffer[] = [];
    let headSize = 0;
    let type: string | undefined;
    let limit = 0;
    let size = 0;

    const accept = async (sample: Buffer) => {
      const detected = await detectType(sample);
      if (!detected || !ACCEPTED_TYPES[detected]) throw unsupportedType(detected);
      type = detected;
      limit = isVideoType(detected) ? maxVideoBytes : maxImageBytes;
      if (incoming.declaredLength !== undefined && incoming.declaredLength > limit) throw tooLarge(isVideoType(detected) ? 'video' : 'image', limit);
      output = fs.createWriteStream(temporary, { mode: 0o600 });
    };
    const write = async (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) throw tooLarge(isVideoType(type!) ? 'video' : 'image', limit);
      if (!output!.write(chunk)) await once(output!, 'drain');
    };

    for await (const raw of incoming.stream) {
      const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array);
      if (!type) {
        head.push(chunk);
        headSize += chunk.length;
        if (headSize < SAMPLE_BYTES) continue;
        const sample = Buffer.concat(head);
        head = [];
        await accept(sample);
        await write(sample);
        continue;
      }
      await write(chunk);
    }
    if (!type) {
      const sample = Buffer.concat(head);
      if (sample.length === 0) throw invalidInput('The file is empty.', { hint: 'Send the file\'s bytes in the multipart field "file".' });
      await accept(sample);
      await write(sample);
    }
    output!.end();
    await once(output!, 'close');

    const mime = type!;
    const extension = ACCEPTED_TYPES[mime];
    let dimensions: { width: number; height: number } | undefined;
    let duration: number | undefined;
    const warnings: string[] = [];
    if (isVideoType(mime)) {
      try {
        const info = await probeMp4(temporary);
        dimensions = { width: info.width, height: info.height };
        duration = info.duration;
        warnings.push(...videoWarnings(info));
      } catch (error) {
        if (!(error instanceof VideoMetadataError)) throw error;
        throw invalidInput('Failed to load video metadata', {
          hint: `${error.message.replace(/^Failed to load video metadata: /, 'The MP4 could not be read: ')}. Re-encode it as MP4 with H.264 video and AAC audio.`,
        });
      }
    } else {
      dimensions = await readImageSize(temporary, mime).catch(() => undefined);
    }

    const now = services.now();
    const key = storageKey(now, extension);
    const mediaPath = await storage.save(temporary, key, mime);
    const row = em.create(MediaSchema, {
      id: newId(),
      organizationId,
      name: safeName(incoming.filename, extension),
      storageKey: key,
      path: mediaPath,
      type: mime,
      size,
      width: dimensions?.width ?? null,
      height: dimensions?.height ?? null,
      duration: duration ?? null,
      uploadedBy: currentCredential(),
      createdAt: now,
      deletedAt: null,
    });
    try {
      await em.flush();
    } catch (error) {
      await storage.remove(key).catch(() => undefined);
      throw error;
    }
    const reachability = publicReachabilityWarning(mediaPath);
    if (reachability) warnings.push(reachability);
    return { ...toMediaRecord(row), warnings };
  } catch (error) {
    incoming.stream.destroy();
    throw error;
  } finally {
    // A stream destroyed before its file finished opening still creates the file when the open completes: wait for its
    // close, or the removal below runs first and the staged file stays behind.
    if (output && !output.closed) {
      const closed = once(output, 'close');
      output.destroy();
      await closed;
    }
    await fs.promises.rm(temporary, { force: true });
  }
}

export interface MediaPage {
  media: MediaRecord[];
  total: number;
  page: number;
  pageSize: number;
  hasMore: boolean;
}

/**
 * What of the library a key limited to channels sees: the files it uploaded and the files used by posts of its channels,
 * not the rest of the organization's library ({} when the caller is not limited).
 */
async function visibleMediaFilter(em: EntityManager, organizationId: string): Promise<Record<string, unknown>> {
  const channels = visibleChannelIds();
  if (!channels) return {};
  const used = await em.getConnection().execute<{ id: string }[]>(
    `select distinct item->>'id' as id from post, jsonb_array_elements(post.media) item
      where post.organization_id = ? and post.deleted_at is null and item->>'id' is not null
        and post.integration_id in (select jsonb_array_elements_text(?::jsonb))`,
    [organizationId, JSON.stringify([...channels])],
  );
  return { $or: [{ uploadedBy: currentCredential() }, { id: { $in: used.map((row) => row.id) } }] };
}

export async function listMedia(em: EntityManager, organizationId: string, page: number, pageSize: number): Promise<MediaPage> {
  const [rows, total] = await em.findAndCount(
    MediaSchema,
    { organizationId, deletedAt: null, ...(await visibleMediaFilter(em, organizationId)) },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: pageSize, offset: page * pageSize },
  );
  return { media: rows.map(toMediaRecord), ...paged(total, page, pageSize) };
}

/** Removes a file from the library and from storage. Posts already scheduled with it fail at publish time with a clear message. */
export async function deleteMedia(services: Services, em: EntityManager, organizationId: string, id: string): Promise<void> {
  const row = await em.findOne(MediaSchema, { id, organizationId, deletedAt: null, ...(isChannelLimited() ? { uploadedBy: currentCredential() } : {}) });
  if (!row) throw notFound(`Media ${id} not found in this organization.`, { hint: 'List the media library with GET /media.' });
  row.deletedAt = services.now();
  await em.flush();
  await services.storage.remove(row.storageKey).catch((error: unknown) => {
    services.logger.warn({ err: error, mediaId: id }, 'could not remove a deleted media file from storage');
  });
}

/** The media ids and the paths (library files are named by either) to look a post's media items up by. */
export function libraryLookup(items: { id: string; path: string }[]): [ids: string[], paths: string[]] {
  return [[...new Set(items.map((item) => item.id))], [...new Set(items.map((item) => item.path).filter((value) => value !== ''))]];
}

/** The library rows a set of post media items name, by media id or by path (an agent may send our own URL). */
export async function findLibraryMedia(em: EntityManager, organizationId: string, items: { id: string; path: string }[]): Promise<Media[]> {
  if (items.length === 0) return [];
  const [ids, paths] = libraryLookup(items);
  return em.find(MediaSchema, { organizationId, deletedAt: null, $or: [{ id: { $in: ids } }, { path: { $in: paths } }] });
}

/** The bytes of a library file, read from storage (never over HTTP: PUBLIC_URL may not even be reachable from here). */
export async function loadLibraryMedia(services: Services, organizationId: string, mediaId: string): Promise<LoadedMedia> {
  const row = await services.orm.em.fork().findOne(MediaSchema, { id: mediaId, organizationId });
  if (!row || row.deletedAt) throw new MediaFetchError(`media ${mediaId} was deleted from the media library; upload it again and edit the post`);
  const limit = isVideoType(row.type) ? services.config.uploads.maxVideoBytes : services.config.uploads.maxImageBytes;
  let stream: Readable;
  try {
    stream = await services.storage.read(row.storageKey);
  } catch (error) {
    throw new MediaFetchError(`media ${mediaId} could not be read from storage (${(error as Error).message})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new MediaFetchError(`media ${mediaId} is larger than ${megabytes(limit)}`);
    }
    chunks.push(chunk as Buffer);
  }
  return { bytes: Buffer.concat(chunks), mimeType: row.type };
}
