// Small real media files for upload tests, made by the ffmpeg binary that the @ffmpeg-installer package ships inside npm
// (no download at install), plus a few built by hand where that ffmpeg cannot write the format (AVIF) or a broken file is wanted.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import { expect } from 'vitest';
import type { Herald } from './harness.js';
import { tinyPng } from './provider-context.js';

export interface Sample {
  bytes: Buffer;
  type: string;
  extension: string;
}

// Kept between runs (the files are deterministic); bump the suffix when a recipe changes.
const directory = path.join(os.tmpdir(), 'herald-test-samples-v2');

function ffmpeg(name: string, args: string[]): Buffer {
  const output = path.join(directory, name);
  if (!fs.existsSync(output)) {
    fs.mkdirSync(directory, { recursive: true });
    // Test files run in parallel: write under a private name, then rename (atomic), so nobody reads a half-written file.
    const partial = path.join(directory, `${process.pid}-${name}`);
    execFileSync(ffmpegInstaller.path, ['-hide_banner', '-loglevel', 'error', '-y', ...args, partial], { timeout: 60_000 });
    fs.renameSync(partial, output);
  }
  return fs.readFileSync(output);
}

const still = (name: string, extra: string[] = []) => ffmpeg(name, ['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=1', '-frames:v', '1', ...extra]);

/** The minimal AVIF a detector recognises: an ISO-BMFF `ftyp` box with the avif brand (ffmpeg 4.1 has no AVIF muxer). */
export function tinyAvif(): Buffer {
  const ftyp = Buffer.alloc(32);
  ftyp.writeUInt32BE(32, 0);
  ftyp.write('ftypavif', 4, 'ascii');
  ftyp.writeUInt32BE(0, 12);
  ftyp.write('avifmif1miaf', 16, 'ascii');
  return Buffer.concat([ftyp, Buffer.alloc(64)]);
}

/** One second of 320x240 H.264 baseline at 25 fps with AAC sound: within every recommended limit. */
export const goodMp4 = () =>
  ffmpeg('good.mp4', [
    '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', '1', '-c:v', 'libx264', '-profile:v', 'baseline', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart',
  ]);

/** Two seconds of 640x360 H.264 at about 1.5 Mbit/s with noise so it does not compress away (some 430 KiB): several chunks for chunked-upload fakes. */
export const mediumMp4 = () =>
  ffmpeg('medium.mp4', [
    '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', '2', '-vf', 'noise=alls=30:allf=t', '-c:v', 'libx264', '-profile:v', 'main', '-b:v', '1500k', '-maxrate', '1500k', '-bufsize', '1500k', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart',
  ]);

/** The movie header at the end of the file (no faststart), so the parser has to skip the media data to find it. */
export const moovAtEndMp4 = () =>
  ffmpeg('moov-at-end.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25', '-t', '2', '-c:v', 'libx264', '-profile:v', 'main', '-pix_fmt', 'yuv420p']);

/** H.264 high profile, 60 fps, 2000x1000: outside the recommended limits on three counts. */
export const outOfSpecMp4 = () =>
  ffmpeg('out-of-spec.mp4', [
    '-f', 'lavfi', '-i', 'testsrc=size=2000x1000:rate=60', '-t', '0.2', '-c:v', 'libx264', '-profile:v', 'high', '-preset', 'veryfast', '-pix_fmt', 'yuv420p',
  ]);

/** A QuickTime movie (video/quicktime), refused even when named .mp4. */
export const quickTimeMov = () =>
  ffmpeg('clip.mov', ['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10', '-t', '0.3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-f', 'mov']);

/** An MP4 signature (`ftyp isom`) followed by nothing a parser can read: detected as video/mp4, but no metadata. */
export function brokenMp4(): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypisom', 4, 'ascii');
  ftyp.writeUInt32BE(512, 12);
  ftyp.write('isommp41', 16, 'ascii');
  return Buffer.concat([ftyp, Buffer.alloc(5000, 0x41)]);
}

/** Every accepted type, as a small real file. */
export function acceptedSamples(): Sample[] {
  return [
    { type: 'image/jpeg', extension: 'jpg', bytes: still('still.jpg') },
    { type: 'image/png', extension: 'png', bytes: tinyPng() },
    { type: 'image/gif', extension: 'gif', bytes: still('still.gif') },
    { type: 'image/webp', extension: 'webp', bytes: still('still.webp') },
    { type: 'image/avif', extension: 'avif', bytes: tinyAvif() },
    { type: 'image/bmp', extension: 'bmp', bytes: still('still.bmp') },
    { type: 'image/tiff', extension: 'tiff', bytes: still('still.tiff') },
    { type: 'video/mp4', extension: 'mp4', bytes: goodMp4() },
  ];
}

export const pdfBytes = () =>
  Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
export const svgBytes = () => Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
export const htmlBytes = () => Buffer.from('<!doctype html><html><body><script>fetch("/api")</script></body></html>');

/** Multipart upload with the file in field `file` (the client's name and type are deliberately whatever the test says). */
export async function upload(restUrl: string, apiKey: string, bytes: Buffer, filename: string, clientType = 'application/octet-stream', field = 'file') {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)], { type: clientType }), filename);
  const response = await fetch(`${restUrl}/upload`, { method: 'POST', headers: { authorization: apiKey }, body: form });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** Uploads one file to Herald's media library, which must take it; answers its `{id, path}`. */
export async function uploaded(herald: Herald, bytes: Buffer, name: string, clientType?: string): Promise<{ id: string; path: string }> {
  const response = await upload(herald.restUrl, herald.apiKey, bytes, name, clientType);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { id: response.body.id as string, path: response.body.path as string };
}

/** Uploads each file to the media library, which must take them all, and answers their `{id, path}` by key. */
export async function uploadAll<K extends string>(herald: Herald, files: Record<K, readonly [Buffer, string]>): Promise<Record<K, { id: string; path: string }>> {
  const stored = {} as Record<K, { id: string; path: string }>;
  for (const [key, [bytes, name]] of Object.entries(files) as [K, readonly [Buffer, string]][]) stored[key] = await uploaded(herald, bytes, name);
  return stored;
}
