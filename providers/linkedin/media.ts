// LinkedIn media: pictures through the Images API, video through the Videos API (multi-part upload, finalize, then the
// AVAILABLE check), PDF documents through the Documents API, and the image carousel built as a PDF (one page per picture).
// References:
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/images-api
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/videos-api
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/documents-api
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { CheckAgainLater } from '../types.js';
import { bearer, classify, rest, urnParam, type LinkedinContext } from './api.js';
import { permanent } from '../shared.js';

/** LinkedIn takes JPEG, PNG and GIF pictures below 36,152,320 pixels. */
const PICTURE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif']);
const MAX_PIXELS = 36_152_320;

export interface Bytes {
  bytes: Buffer;
  mimeType: string;
}

/** Re-encodes what LinkedIn (or a PDF page) cannot take: other formats become PNG, oversized pictures are scaled down. */
async function prepare(file: Bytes, types: Set<string>): Promise<Bytes> {
  const { default: sharp } = await import('sharp');
  try {
    const { width = 0, height = 0 } = await sharp(file.bytes).metadata();
    const pixels = width * height;
    if (types.has(file.mimeType) && pixels <= MAX_PIXELS) return file;
    const scale = pixels > MAX_PIXELS ? Math.sqrt(MAX_PIXELS / pixels) : 1;
    const bytes = await sharp(file.bytes)
      .resize({ width: Math.floor(width * scale), height: Math.floor(height * scale), fit: 'inside' })
      .png()
      .toBuffer();
    return { bytes, mimeType: 'image/png' };
  } catch (error) {
    throw permanent(`a picture (${file.mimeType}) could not be read (${(error as Error).message}): LinkedIn takes JPEG, PNG or GIF, convert it and try again.`, 415);
  }
}

const uploadInitSchema = z.object({
  value: z.object({ uploadUrl: z.url(), image: z.string().startsWith('urn:li:image:').optional(), document: z.string().startsWith('urn:li:document:').optional() }),
});

/** initializeUpload then one PUT of the bytes (images and documents). Answers the asset URN. */
async function singleUpload(context: LinkedinContext, kind: 'image' | 'document', owner: string, file: Bytes): Promise<string> {
  const { data } = await rest(context, {
    method: 'POST',
    path: `${kind}s?action=initializeUpload`,
    json: { initializeUploadRequest: { owner } },
    schema: uploadInitSchema,
  });
  const urn = data.value[kind];
  if (!urn) throw new PlatformHttpError({ status: 502, retryable: true, bodyExcerpt: '', message: `LinkedIn answered the ${kind} upload without its URN.` });
  await context.fetch({
    method: 'PUT',
    url: data.value.uploadUrl,
    headers: { ...bearer(context.auth.accessToken), 'content-type': file.mimeType },
    body: file.bytes,
    classify,
    timeoutMs: 300_000,
  });
  return urn;
}

export async function uploadImage(context: LinkedinContext, owner: string, file: Bytes): Promise<string> {
  return singleUpload(context, 'image', owner, await prepare(file, PICTURE_TYPES));
}

export function uploadDocument(context: LinkedinContext, owner: string, pdf: Buffer): Promise<string> {
  return singleUpload(context, 'document', owner, { bytes: pdf, mimeType: 'application/pdf' });
}

/** One PDF page per picture, each page the picture's own size: what LinkedIn shows as a swipeable carousel. */
export async function carouselPdf(pictures: Bytes[], title: string): Promise<Buffer> {
  const { PDFDocument } = await import('pdf-lib');
  const pdf = await PDFDocument.create();
  pdf.setTitle(title);
  for (const picture of pictures) {
    // A PDF embeds JPEG and PNG only (a GIF becomes PNG: its first frame).
    const { bytes, mimeType } = await prepare(picture, new Set(['image/jpeg', 'image/png']));
    // A copy: pdf-lib reads the whole underlying ArrayBuffer, which for a pooled Buffer holds other data before the file.
    const copy = new Uint8Array(bytes);
    const image = mimeType === 'image/jpeg' ? await pdf.embedJpg(copy) : await pdf.embedPng(copy);
    pdf.addPage([image.width, image.height]).drawImage(image, { x: 0, y: 0, width: image.width, height: image.height });
  }
  return Buffer.from(await pdf.save());
}

const videoInitSchema = z.object({
  value: z.object({
    video: z.string().startsWith('urn:li:video:'),
    uploadToken: z.string().default(''),
    uploadInstructions: z.array(z.object({ uploadUrl: z.url(), firstByte: z.number().int().nonnegative(), lastByte: z.number().int().nonnegative() })).min(1),
  }),
});

/** initializeUpload (fileSizeBytes), a PUT of each part LinkedIn asks for, then finalizeUpload with the parts' ETags in order. */
export async function uploadVideo(context: LinkedinContext, owner: string, file: Bytes): Promise<string> {
  const { data } = await rest(context, {
    method: 'POST',
    path: 'videos?action=initializeUpload',
    json: { initializeUploadRequest: { owner, fileSizeBytes: file.bytes.length, uploadCaptions: false, uploadThumbnail: false } },
    schema: videoInitSchema,
  });
  const { video, uploadToken, uploadInstructions } = data.value;
  const etags: string[] = [];
  for (const part of [...uploadInstructions].sort((a, b) => a.firstByte - b.firstByte)) {
    // The part URLs are signed: they take the bytes without the member's token.
    const uploaded = await context.fetch({
      method: 'PUT',
      url: part.uploadUrl,
      headers: { 'content-type': 'application/octet-stream' },
      body: file.bytes.subarray(part.firstByte, part.lastByte + 1),
      classify,
      timeoutMs: 300_000,
    });
    const etag = uploaded.headers.get('etag');
    if (!etag) throw new PlatformHttpError({ status: 502, retryable: true, bodyExcerpt: '', message: 'LinkedIn answered a video part without its ETag.' });
    etags.push(etag);
  }
  await rest(context, { method: 'POST', path: 'videos?action=finalizeUpload', json: { finalizeUploadRequest: { video, uploadToken, uploadedPartIds: etags } } });
  return video;
}

const videoSchema = z.object({ status: z.string(), processingFailureReason: z.string().optional() });

/** Answers when the video is AVAILABLE; re-schedules the item while LinkedIn processes it; fails when processing failed. */
export async function videoReady(context: LinkedinContext, urn: string): Promise<void> {
  const { data } = await rest(context, { path: `videos/${urnParam(urn)}`, schema: videoSchema });
  if (data.status === 'AVAILABLE') return;
  if (data.status === 'PROCESSING_FAILED') {
    throw permanent(`LinkedIn could not process the video (${data.processingFailureReason ?? 'no reason given'}): use an MP4 of 3 seconds to 30 minutes, at most 500 MB.`, 422);
  }
  throw new CheckAgainLater(15, 'LinkedIn is still processing the video', 2 * 3600);
}
