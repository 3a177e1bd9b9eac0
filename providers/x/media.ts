// X media through the v2 upload endpoints (the v1.1 upload.twitter.com endpoints were retired on 2025-06-09):
// pictures in one request (`POST /2/media/upload`, category tweet_image); GIFs and videos chunked
// (`/2/media/upload/initialize`, `/{id}/append`, `/{id}/finalize`), then `GET /2/media/upload?command=STATUS` while X
// processes them. Every upload call is a recorded step; X's processing is awaited by re-scheduling, never by sleeping.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { CheckAgainLater, type MediaFile, type ProviderContext } from '../types.js';
import { xCall } from './api.js';
import { blobOf } from '../shared.js';

/** Bytes per APPEND segment: X takes up to 5 MB a segment. Mutable so tests can force several segments. */
export const xUpload = { segmentBytes: 4 * 1024 * 1024 };

const ONE_SHOT_LIMIT = 5 * 1024 * 1024;
/** The picture types the one-shot upload takes as they are; anything else (AVIF) is re-encoded to JPEG first. */
const ONE_SHOT_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/bmp', 'image/tiff']);

const processingSchema = z.looseObject({
  state: z.string(),
  check_after_secs: z.number().optional(),
  error: z.looseObject({ message: z.string().optional(), name: z.string().optional() }).optional(),
});
const mediaSchema = z.object({ data: z.looseObject({ id: z.string(), processing_info: processingSchema.optional() }) });
type Processing = z.infer<typeof processingSchema>;

/** A picture X's one-shot upload accepts: AVIF and pictures over 5 MB become a JPEG no larger than 4096 px. */
async function uploadablePicture(bytes: Buffer, mimeType: string): Promise<{ bytes: Buffer; mimeType: string }> {
  if (ONE_SHOT_TYPES.has(mimeType) && bytes.length <= ONE_SHOT_LIMIT) return { bytes, mimeType };
  const { default: sharp } = await import('sharp');
  const jpeg = await sharp(bytes).rotate().resize({ width: 4096, height: 4096, fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
  return { bytes: jpeg, mimeType: 'image/jpeg' };
}

async function uploadPicture(context: ProviderContext, bytes: Buffer, mimeType: string): Promise<string> {
  const picture = await uploadablePicture(bytes, mimeType);
  const form = new FormData();
  form.append('media', blobOf(picture.bytes, picture.mimeType), 'media');
  form.append('media_category', 'tweet_image');
  const { data } = await xCall(context, { method: 'POST', path: '2/media/upload', multipart: form, schema: mediaSchema, timeoutMs: 120_000 });
  return data.id;
}

const statusOf = (context: ProviderContext, id: string) =>
  xCall(context, { path: '2/media/upload', query: { command: 'STATUS', media_id: id }, schema: mediaSchema }).then(({ data }) => data.processing_info);

/** The state a finalize left the media in: no processing_info means it is ready. */
const stateOf = (processing: Processing | undefined) => ({ state: processing?.state ?? 'succeeded', checkAfter: processing?.check_after_secs ?? 5 });

async function uploadChunked(context: ProviderContext, index: number, bytes: Buffer, mimeType: string, category: string) {
  const id = await context.step(
    `media:${index}:initialize`,
    async () => (await xCall(context, { method: 'POST', path: '2/media/upload/initialize', json: { media_type: mimeType, total_bytes: bytes.length, media_category: category }, schema: mediaSchema })).data.id,
    async () => undefined, // an unfinished upload session is invisible: a new one is fine
  );
  const segments = Math.max(1, Math.ceil(bytes.length / xUpload.segmentBytes));
  for (let segment = 0; segment < segments; segment++) {
    await context.step(
      `media:${index}:append:${segment}`,
      async () => {
        const form = new FormData();
        form.append('media', blobOf(bytes.subarray(segment * xUpload.segmentBytes, (segment + 1) * xUpload.segmentBytes), 'application/octet-stream'), 'media');
        form.append('segment_index', String(segment));
        await xCall(context, { method: 'POST', path: `2/media/upload/${id}/append`, multipart: form, timeoutMs: 120_000 });
        return true;
      },
      async () => undefined, // sending a segment index again replaces it
    );
  }
  const finalized = await context.step(
    `media:${index}:finalize`,
    async () => stateOf((await xCall(context, { method: 'POST', path: `2/media/upload/${id}/finalize`, schema: mediaSchema })).data.processing_info),
    // A finalize that reached X shows in STATUS; one that did not is refused there, so it is sent again.
    async () => statusOf(context, id).then(stateOf, () => undefined),
  );
  return { id, state: finalized.state, checkAfter: finalized.checkAfter };
}

function processingFailed(processing: Processing | undefined): PlatformHttpError {
  const reason = processing?.error?.message ?? processing?.error?.name ?? 'no reason given';
  return new PlatformHttpError({ status: 422, retryable: false, bodyExcerpt: JSON.stringify(processing ?? {}), message: `X could not process the video (${reason}); check it is an H.264/AAC MP4 within X's limits` });
}

/**
 * Uploads the item's media (or answers the ids recorded by an earlier run) and answers their ids once X has processed
 * every one; while X is still processing a video, throws CheckAgainLater so the job runs again later.
 */
export async function uploadMedia(context: ProviderContext, media: MediaFile[]): Promise<string[]> {
  const uploads: { id: string; state: string; checkAfter: number }[] = [];
  for (const [index, file] of media.entries()) {
    const { bytes, mimeType } = await file.load();
    const upload =
      file.kind === 'video' || mimeType === 'image/gif'
        ? await uploadChunked(context, index, bytes, mimeType, file.kind === 'video' ? 'tweet_video' : 'tweet_gif')
        : { id: await context.step(`media:${index}`, () => uploadPicture(context, bytes, mimeType), async () => undefined), state: 'succeeded', checkAfter: 0 };
    if (file.alt) {
      const alt = file.alt.slice(0, 1000);
      await context.step(`media:${index}:alt`, async () => {
        await xCall(context, { method: 'POST', path: '2/media/metadata', json: { id: upload.id, metadata: { alt_text: { text: alt } } } });
        return true;
      }, async () => undefined);
    }
    uploads.push(upload);
  }
  for (const upload of uploads) {
    if (upload.state === 'succeeded') continue;
    const processing = await statusOf(context, upload.id);
    const { state, checkAfter } = stateOf(processing);
    if (state === 'failed') throw processingFailed(processing);
    if (state !== 'succeeded') throw new CheckAgainLater(Math.max(1, checkAfter), 'X is still processing the video', 3600);
  }
  return uploads.map((upload) => upload.id);
}
