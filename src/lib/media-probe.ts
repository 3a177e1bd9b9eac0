// What an uploaded file is: its type detected from the bytes (never the name or the client's content type), and for MP4
// the duration, dimensions and codecs read by mp4box (pure JS, reads only the boxes it needs).
import fs from 'node:fs';
import type { Movie } from 'mp4box';
import { onFirstUse } from './on-first-use.js';

/** The accepted upload types (spec, Limits) and the extension a stored file gets. */
export const ACCEPTED_TYPES: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'video/mp4': 'mp4',
};

/** How many leading bytes type detection reads (file-type's own recommendation). */
export const SAMPLE_BYTES = 4100;

export const isVideoType = (type: string) => type.startsWith('video/');

/** The detected MIME type of a file's first bytes, or undefined when it is no known binary format (text, SVG, HTML...). */
export async function detectType(head: Uint8Array): Promise<string | undefined> {
  return (await (await import('file-type')).fileTypeFromBuffer(head))?.mime;
}

export interface VideoInfo {
  /** Seconds. */
  duration: number;
  width: number;
  height: number;
  videoCodec: string;
  audioCodec?: string;
  framesPerSecond?: number;
}

export class VideoMetadataError extends Error {
  constructor(reason: string) {
    super(`Failed to load video metadata: ${reason}`);
  }
}

// Loaded by the first video probed, with its logging cut to errors.
const mp4box = onFirstUse('mp4box', (loaded: typeof import('mp4box')) => {
  loaded.Log.setLogLevel(loaded.Log.error);
  return loaded;
});

const CHUNK = 1024 * 1024;

/** An mp4box parser that keeps the movie header once it is read, or the reason it could not be read. */
function movieParser() {
  const parser = mp4box().createFile();
  const state: { movie?: Movie; failure?: string } = {};
  parser.onReady = (info) => {
    state.movie = info;
  };
  parser.onError = (_module, message) => {
    state.failure = message;
  };
  return { parser, state };
}

/** The movie header of an MP4 held in memory (undefined when it cannot be read). */
export function movieOf(bytes: Buffer): Movie | undefined {
  const { parser, state } = movieParser();
  parser.appendBuffer(mp4box().MP4BoxBuffer.fromArrayBuffer(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), 0), true);
  parser.flush();
  return state.movie;
}

/** Reads an MP4 file's metadata; only the boxes mp4box asks for are read (it skips `mdat`). */
export async function probeMp4(file: string): Promise<VideoInfo> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const { parser, state } = movieParser();
    let position = 0;
    while (!state.movie && !state.failure && position < size) {
      const buffer = Buffer.alloc(Math.min(CHUNK, size - position));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      const chunk = mp4box().MP4BoxBuffer.fromArrayBuffer(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + bytesRead), position);
      const next = parser.appendBuffer(chunk, position + bytesRead >= size);
      position = typeof next === 'number' && next > position ? next : position + bytesRead;
    }
    parser.flush();
    const { movie, failure } = state;
    if (failure) throw new VideoMetadataError(failure);
    if (!movie) throw new VideoMetadataError('no movie header (moov) found');
    return videoInfo(movie);
  } catch (error) {
    if (error instanceof VideoMetadataError) throw error;
    throw new VideoMetadataError((error as Error).message);
  } finally {
    await handle.close();
  }
}

function videoInfo(movie: Movie): VideoInfo {
  const video = movie.videoTracks[0] ?? movie.tracks.find((track) => track.video);
  if (!video?.video) throw new VideoMetadataError('the file has no video track');
  const width = video.video.width || video.track_width;
  const height = video.video.height || video.track_height;
  if (!width || !height) throw new VideoMetadataError('the video track has no dimensions');
  const seconds = movie.timescale > 0 && movie.duration > 0 ? movie.duration / movie.timescale : video.timescale > 0 ? video.duration / video.timescale : 0;
  if (!Number.isFinite(seconds) || seconds <= 0) throw new VideoMetadataError('the video has no duration');
  const trackSeconds = video.timescale > 0 ? video.duration / video.timescale : 0;
  const audio = movie.audioTracks[0];
  return {
    duration: Math.round(seconds * 1000) / 1000,
    width,
    height,
    videoCodec: video.codec,
    audioCodec: audio?.codec,
    framesPerSecond: trackSeconds > 0 && video.nb_samples > 0 ? Math.round((video.nb_samples / trackSeconds) * 100) / 100 : undefined,
  };
}

const H264_PROFILES: Record<number, string> = { 66: 'baseline', 77: 'main', 88: 'extended', 100: 'high', 110: 'high 10', 122: 'high 4:2:2', 244: 'high 4:4:4' };

/** The spec's recommended video (H.264 baseline or main, AAC, at most 30 fps, at most 1920x1080): departures as warnings. */
export function videoWarnings(info: VideoInfo): string[] {
  const warnings: string[] = [];
  const [format, detail] = info.videoCodec.split('.');
  if (format !== 'avc1' && format !== 'avc3') {
    warnings.push(`The video codec is ${info.videoCodec}, not H.264: many platforms refuse it or re-encode it. Re-encode to H.264 (baseline or main profile).`);
  } else if (detail && /^[0-9a-f]{2}/i.test(detail)) {
    const profile = Number.parseInt(detail.slice(0, 2), 16);
    if (profile !== 66 && profile !== 77) {
      warnings.push(`The H.264 profile is ${H264_PROFILES[profile] ?? profile}; baseline or main is recommended for the widest platform support.`);
    }
  }
  if (info.audioCodec && !info.audioCodec.startsWith('mp4a.40')) {
    warnings.push(`The audio codec is ${info.audioCodec}, not AAC: some platforms drop the sound or refuse the video.`);
  }
  if (info.framesPerSecond !== undefined && info.framesPerSecond > 30.5) {
    warnings.push(`The video runs at ${info.framesPerSecond} fps; at most 30 fps is recommended.`);
  }
  if (Math.max(info.width, info.height) > 1920 || Math.min(info.width, info.height) > 1080) {
    warnings.push(`The video is ${info.width}x${info.height}; at most 1920x1080 (1080x1920 portrait) is recommended.`);
  }
  return warnings;
}

/** Width and height from a PNG or JPEG header (JPEG EXIF orientations 5–8 swap them); undefined when unsure. */
export function imageSize(bytes: Buffer): { width: number; height: number } | undefined {
  try {
    if (bytes.readUInt32BE(0) === 0x89504e47 && bytes.toString('ascii', 12, 16) === 'IHDR') {
      const size = { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
      return size.width > 0 && size.height > 0 ? size : undefined;
    }
    if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
    let orientation = 1;
    for (let offset = 2; offset + 4 <= bytes.length && bytes[offset] === 0xff; ) {
      const marker = bytes[offset + 1];
      const length = bytes.readUInt16BE(offset + 2);
      if (marker === 0xe1 && bytes.toString('ascii', offset + 4, offset + 10) === 'Exif\0\0') orientation = exifOrientation(bytes.subarray(offset + 10, offset + 2 + length));
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        const height = bytes.readUInt16BE(offset + 5);
        const width = bytes.readUInt16BE(offset + 7);
        if (width === 0 || height === 0) return undefined;
        return orientation >= 5 ? { width: height, height: width } : { width, height };
      }
      offset += 2 + length;
    }
  } catch {
    /* truncated or odd file: no aspect ratio */
  }
  return undefined;
}

function exifOrientation(tiff: Buffer): number {
  const little = tiff.toString('ascii', 0, 2) === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const ifd = little ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4);
  for (let entry = 0; entry < u16(ifd); entry++) if (u16(ifd + 2 + entry * 12) === 0x0112) return u16(ifd + 2 + entry * 12 + 8);
  return 1;
}
