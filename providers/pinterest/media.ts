// Pinterest media: pictures go by URL when Pinterest can fetch them (a public https address), else as base64 in the pin;
// a video is registered (POST /media), sent to the S3 form Pinterest hands back, and awaited (GET /media/{id}) by
// re-scheduled checks. A video pin needs a cover: the picture that follows the video, or a frame taken with ffmpeg.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import { z } from 'zod';
import { isLocalHost } from '../../src/lib/ssrf.js';
import { CheckAgainLater, type MediaFile, type ProviderContext } from '../types.js';
import { channelCall } from './api.js';
import { blobOf, permanent } from '../shared.js';

const run = promisify(execFile);

function isPublicHttps(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && !isLocalHost(parsed.hostname);
  } catch {
    return false;
  }
}

/** Whether Pinterest can fetch a media URL itself. Mutable so tests can exercise both ways against a fake on 127.0.0.1. */
export const pinterestMedia = { pullByUrl: isPublicHttps };

type Base64Image = { content_type: 'image/jpeg' | 'image/png'; data: string };

/** Pinterest's base64 sources take JPEG or PNG: other pictures are re-encoded as JPEG (an animation keeps its first frame). */
async function base64Image(file: MediaFile): Promise<Base64Image> {
  const { bytes, mimeType } = await file.load();
  if (mimeType === 'image/jpeg' || mimeType === 'image/png') return { content_type: mimeType, data: bytes.toString('base64') };
  const { default: sharp } = await import('sharp');
  return { content_type: 'image/jpeg', data: (await sharp(bytes).jpeg({ quality: 90 }).toBuffer()).toString('base64') };
}

export async function imagesSource(files: MediaFile[]): Promise<Record<string, unknown>> {
  const byUrl = files.every((file) => pinterestMedia.pullByUrl(file.url));
  if (files.length === 1) {
    return byUrl ? { source_type: 'image_url', url: files[0].url } : { source_type: 'image_base64', ...(await base64Image(files[0])) };
  }
  if (byUrl) return { source_type: 'multiple_image_urls', items: files.map((file) => ({ url: file.url })) };
  const items: Base64Image[] = [];
  for (const file of files) items.push(await base64Image(file));
  return { source_type: 'multiple_image_base64', items };
}

/** A frame of the video as JPEG: one second in (past a fade-in), or the first frame of a shorter clip. */
export async function videoThumbnail(video: MediaFile): Promise<Buffer> {
  const { bytes } = await video.load();
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'herald-cover-'));
  try {
    const input = path.join(directory, 'video');
    const output = path.join(directory, 'cover.jpg');
    await fs.writeFile(input, bytes);
    for (const seek of ['1', '0']) {
      await run(ffmpegInstaller.path, ['-hide_banner', '-loglevel', 'error', '-y', '-ss', seek, '-i', input, '-frames:v', '1', '-q:v', '3', output], {
        timeout: 120_000,
      });
      const frame = await fs.readFile(output).catch(() => undefined);
      if (frame && frame.length > 0) return frame;
    }
    throw new Error('ffmpeg produced no frame for the video cover');
  } finally {
    await fs.rm(directory, { recursive: true, force: true });
  }
}

export async function videoSource(mediaId: string, video: MediaFile, cover: MediaFile | undefined): Promise<Record<string, unknown>> {
  const source = { source_type: 'video_id', media_id: mediaId };
  if (cover && pinterestMedia.pullByUrl(cover.url)) return { ...source, cover_image_url: cover.url };
  const image = cover ? await base64Image(cover) : { content_type: 'image/jpeg', data: (await videoThumbnail(video)).toString('base64') };
  return { ...source, cover_image_content_type: image.content_type, cover_image_data: image.data };
}

const registeredSchema = z.object({ media_id: z.string(), upload_url: z.string(), upload_parameters: z.record(z.string(), z.string()) });
const statusSchema = z.object({ media_id: z.string(), status: z.enum(['registered', 'processing', 'succeeded', 'failed']).optional() });

const mediaStatus = async (context: ProviderContext, mediaId: string) =>
  (await channelCall(context, { path: `/media/${encodeURIComponent(mediaId)}`, schema: statusSchema })).status;

/** S3 answers errors in XML: its <Message> says what was wrong with the form (an expired policy, a wrong key...). */
function s3Classify(status: number, body: string) {
  const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
  return { message: `the video upload to Pinterest's storage failed: ${message ?? `HTTP ${status}`}` };
}

/** Registers and uploads the video once (recorded steps), then answers its media id once Pinterest has processed it. */
export async function uploadedVideo(context: ProviderContext, video: MediaFile): Promise<string> {
  const registered = await context.step(
    'media:register',
    async () => {
      const data = await channelCall(context, { method: 'POST', path: '/media', json: { media_type: 'video' }, schema: registeredSchema });
      return { mediaId: data.media_id, uploadUrl: data.upload_url, parameters: data.upload_parameters };
    },
    // A registration of unknown outcome left at most an unused upload slot: register again.
    async () => undefined,
  );
  await context.step(
    'media:upload',
    async () => {
      const { bytes, mimeType } = await video.load();
      const form = new FormData();
      for (const [key, value] of Object.entries(registered.parameters)) form.append(key, value);
      form.append('file', blobOf(bytes, mimeType), 'video.mp4');
      // The form carries its own signed policy: S3 refuses a second auth mechanism, so no bearer token here.
      await context.fetch({ method: 'POST', url: registered.uploadUrl, multipart: form, classify: s3Classify, timeoutMs: 30 * 60_000 });
      return true;
    },
    async () => ((await mediaStatus(context, registered.mediaId)) === 'registered' ? undefined : true),
  );
  const status = await mediaStatus(context, registered.mediaId);
  if (status === 'failed') {
    throw permanent('Pinterest could not process the video: send an MP4 or MOV of 4 seconds to 15 minutes (H.264, AAC).', 422);
  }
  if (status !== 'succeeded') throw new CheckAgainLater(15, 'Pinterest is still processing the video', 3600);
  return registered.mediaId;
}
