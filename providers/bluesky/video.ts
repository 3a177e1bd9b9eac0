// Bluesky video through the video service (the "recommended method" of https://docs.bsky.app/docs/tutorials/video):
// getUploadLimits (service token for the video service's DID), uploadVideo (service token for the user's PDS, lxm
// com.atproto.repo.uploadBlob: the service stores the processed video on the PDS), then getJobStatus until the job gives the
// blob. Lexicons: app.bsky.video.{getUploadLimits,uploadVideo,getJobStatus,defs}, app.bsky.embed.video.
// The upload is a recorded step; while the service encodes, the job is checked again later (CheckAgainLater), never slept on.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { probeMp4 } from '../../src/lib/media-probe.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { CheckAgainLater, type JsonValue, type MediaFile, type ProviderContext } from '../types.js';
import { didWeb, endpoints, pdsOf, serviceAuth, trimSlashes, xrpc } from './xrpc.js';
import { permanent } from '../shared.js';

/** What the video service takes (Bluesky's app: 100 MB, 3 minutes). */
export const MAX_VIDEO_BYTES = 100_000_000;
const MAX_VIDEO_SECONDS = 180;

const blobSchema = z.looseObject({ $type: z.literal('blob'), ref: z.looseObject({ $link: z.string() }), mimeType: z.string(), size: z.number() });
const jobStatusSchema = z.object({
  jobId: z.string(),
  state: z.string(),
  progress: z.number().optional(),
  blob: blobSchema.optional(),
  error: z.string().optional(),
  message: z.string().optional(),
});
/** The lexicon wraps the job in {jobStatus}; the service has also been seen to answer the job itself: both are taken. */
const jobAnswerSchema = z.union([z.object({ jobStatus: jobStatusSchema }), jobStatusSchema]).transform((answer) => ('jobStatus' in answer ? answer.jobStatus : answer));
const limitsSchema = z.object({ canUpload: z.boolean(), remainingDailyVideos: z.number().optional(), remainingDailyBytes: z.number().optional(), message: z.string().optional(), error: z.string().optional() });

type Blob = z.infer<typeof blobSchema>;
type VideoEmbed = { $type: 'app.bsky.embed.video'; video: Blob; alt?: string; aspectRatio?: { width: number; height: number } };

const videoService = (context: ProviderContext) => trimSlashes(context.endpoints.video || endpoints.video);

/**
 * A call to the video service. Its 401 is about the short-lived service token the PDS signed for it (audience, method,
 * expiry), never about the channel's login: it must not make the core refresh the session and then flag the channel for
 * reconnection (which also stopped later text posts). It becomes a refusal that says so; an expired service token is
 * retried (a new one is asked for), anything else fails this post alone.
 */
async function videoCall<T>(context: ProviderContext, nsid: string, schema: z.ZodType<T>, request: Parameters<typeof xrpc<T>>[4] = {}): Promise<T> {
  try {
    return await xrpc(context.fetch, videoService(context), nsid, schema, request);
  } catch (error) {
    if (!(error instanceof PlatformHttpError) || error.status !== 401) throw error;
    throw new PlatformHttpError({
      status: 403,
      retryable: /JwtExpired/i.test(error.bodyExcerpt),
      bodyExcerpt: error.bodyExcerpt,
      message: `Bluesky's video service refused the token your PDS signed for it (${error.bodyExcerpt.slice(0, 200)}); the channel's login is not affected`,
    });
  }
}

/** Width, height and duration of the MP4, read from its header (undefined when it cannot be read: the service will say). */
async function measure(bytes: Buffer) {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'herald-bluesky-'));
  try {
    const file = path.join(directory, 'video.mp4');
    await fs.writeFile(file, bytes);
    return await probeMp4(file);
  } catch {
    return undefined;
  } finally {
    await fs.rm(directory, { recursive: true, force: true });
  }
}

async function upload(context: ProviderContext, file: MediaFile) {
  const service = videoService(context);
  const limitsToken = await serviceAuth(context, didWeb(service), 'app.bsky.video.getUploadLimits');
  const limits = await videoCall(context, 'app.bsky.video.getUploadLimits', limitsSchema, { token: limitsToken });
  if (!limits.canUpload) throw permanent(`the account may not upload a video now: ${limits.message ?? limits.error ?? 'its daily video limit is reached'}`);
  const { bytes } = await file.load();
  if (bytes.length > MAX_VIDEO_BYTES) throw permanent(`the video is ${bytes.length} bytes; Bluesky takes videos up to ${MAX_VIDEO_BYTES} bytes`);
  if (limits.remainingDailyBytes !== undefined && bytes.length > limits.remainingDailyBytes) throw permanent(`the video is larger than what the account may still upload today (${limits.remainingDailyBytes} bytes)`);
  const info = await measure(bytes);
  if (info && info.duration > MAX_VIDEO_SECONDS) throw permanent(`the video lasts ${Math.round(info.duration)} seconds; Bluesky takes videos up to 3 minutes`);
  // The service stores the processed video on the user's PDS with this token: its audience is the PDS, 30 minutes as advised.
  const uploadToken = await serviceAuth(context, didWeb(await pdsOf(context)), 'com.atproto.repo.uploadBlob', 30 * 60);
  const name = path.basename(new URL(file.url).pathname) || 'video.mp4';
  const job = await videoCall(context, 'app.bsky.video.uploadVideo', jobAnswerSchema, {
    method: 'POST',
    query: { did: context.auth.internalId, name },
    headers: { 'content-type': 'video/mp4' },
    body: bytes,
    token: uploadToken,
    okStatuses: [409], // already_exists: these bytes were uploaded before, and the answer names their job
    timeoutMs: 300_000,
  });
  return { jobId: job.jobId, ...(info ? { aspectRatio: { width: info.width, height: info.height } } : {}) };
}

/**
 * The embed of the item's video, once the service has processed it. The upload is recorded, so a later run only asks how
 * the job is doing; a job still encoding re-schedules the item.
 */
export async function videoEmbed(context: ProviderContext, file: MediaFile): Promise<VideoEmbed> {
  // An upload cut off half way is sent again: the service recognises the same bytes and answers their job (already_exists).
  const uploaded = (await context.step('video:upload', async () => (await upload(context, file)) as JsonValue, async () => undefined)) as unknown as Awaited<ReturnType<typeof upload>>;
  const job = await videoCall(context, 'app.bsky.video.getJobStatus', jobAnswerSchema, { query: { jobId: uploaded.jobId } });
  // A job for bytes processed before answers already_exists with the earlier blob: a blob means done, whatever the state says.
  if (job.blob) return { $type: 'app.bsky.embed.video', video: job.blob, ...(file.alt ? { alt: file.alt } : {}), ...(uploaded.aspectRatio ? { aspectRatio: uploaded.aspectRatio } : {}) };
  if (job.state === 'JOB_STATE_FAILED') throw permanent(`Bluesky could not process the video: ${job.message ?? job.error ?? 'no reason given'}`);
  const progress = job.progress === undefined ? '' : `, ${job.progress}%`;
  throw new CheckAgainLater(5, `Bluesky is still processing the video (${job.state.replace('JOB_STATE_', '').toLowerCase()}${progress})`, 1800);
}
