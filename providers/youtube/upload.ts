// YouTube's resumable upload (https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol): the metadata
// opens a session (its URI, in `Location`, is recorded as a step), then the bytes go in chunks of a multiple of 256 KiB with
// `Content-Range`; `308 Resume Incomplete` + `Range` says how much the session holds, and the last chunk answers the video.
// No video exists before the last byte, so an interrupted run asks the session what it holds (`Content-Range: bytes */size`)
// and continues from there: never a second upload.
//
// Each run of the job sends at most `bytesPerRun` (then re-schedules itself with CheckAgainLater), so a worker is never held
// for the length of a large upload; a video up to that size goes in one run.
import { z } from 'zod';
import { PlatformHttpError, type PlatformResponse } from '../../src/lib/platform-http.js';
import { CheckAgainLater, type ProviderContext } from '../types.js';
import { classifyGoogle } from '../google.js';
import { bearerFetch } from '../shared.js';

/** Google's chunk quantum: every chunk but the last is a multiple of it. */
export const UPLOAD_QUANTUM = 256 * 1024;

/** Chunk size and per-run budget. Mutable so tests can upload a small video in several chunks and runs. */
export const youtubeUpload = { chunkBytes: 32 * UPLOAD_QUANTUM, bytesPerRun: 256 * UPLOAD_QUANTUM };

/** How long a large upload may go on, run after run, before the item fails. */
const UPLOAD_MAX_WAIT_SECONDS = 6 * 3600;

/** YouTube's reasons that deserve a sentence of their own. */
export const classify = classifyGoogle({
  quotaExceeded:
    "the Google project of this Herald has used up its daily YouTube API quota (quotaExceeded); it resets at midnight Pacific time: retry the post then, or ask Google for more quota",
  uploadLimitExceeded: 'this YouTube channel has reached the number of videos it may upload for now (uploadLimitExceeded): retry the post later',
  youtubeSignupRequired: 'this Google account has no YouTube channel yet (youtubeSignupRequired): create one on YouTube, then reconnect',
});

export const videoSchema = z.object({ id: z.string() });
export type Video = z.infer<typeof videoSchema>;

/** Recorded as a step, so a type (JSON), not an interface. */
export type UploadSession = { uri: string; size: number };

const api = (context: ProviderContext) => `${context.endpoints.api}/upload/youtube/${context.endpoints.dataVersion}`;

/** Opens the session with the video's metadata; the session URI comes back in `Location`. */
export async function startSession(context: ProviderContext, metadata: object, size: number, mimeType: string): Promise<UploadSession> {
  const response = await bearerFetch(context, context.auth.accessToken, classify, {
    method: 'POST',
    url: `${api(context)}/videos`,
    query: { uploadType: 'resumable', part: 'snippet,status' },
    headers: { 'x-upload-content-length': String(size), 'x-upload-content-type': mimeType },
    json: metadata,
  });
  const uri = response.headers.get('location');
  if (!uri) throw new PlatformHttpError({ status: response.status, retryable: true, bodyExcerpt: '', message: 'YouTube opened no upload session (no Location header)' });
  return { uri, size };
}

/** The session's answer: the finished video, or how many bytes it holds (`Range: bytes=0-N`, absent when none). */
function progressOf(response: PlatformResponse<unknown>): { video: Video } | { held: number } {
  if (response.status === 200 || response.status === 201) return { video: videoSchema.parse(response.data) };
  const range = /bytes=0-(\d+)/.exec(response.headers.get('range') ?? '');
  return { held: range ? Number(range[1]) + 1 : 0 };
}

const put = (context: ProviderContext, session: UploadSession, contentRange: string, body: Buffer | string, mimeType: string) =>
  bearerFetch(
    context,
    context.auth.accessToken,
    (status, text) => (status === 404 || status === 410 ? { retryable: false, message: 'the YouTube upload session expired before the video was complete; nothing was published' } : classify(status, text)),
    {
      method: 'PUT',
      url: session.uri,
      headers: { 'content-type': mimeType, 'content-range': contentRange },
      body,
      okStatuses: [308],
      timeoutMs: 300_000,
    },
  );

/** Asks the session what it holds (an empty PUT with `Content-Range: bytes *\/size`). */
export async function probe(context: ProviderContext, session: UploadSession, mimeType: string) {
  return progressOf(await put(context, session, `bytes */${session.size}`, '', mimeType));
}

/**
 * Sends the bytes the session does not hold yet, within this run's budget: answers the video once the last byte is in,
 * or throws CheckAgainLater for the next run to continue (from what the session then says it holds).
 */
export async function uploadRest(context: ProviderContext, session: UploadSession, bytes: Buffer, mimeType: string, fresh: boolean): Promise<Video> {
  const { chunkBytes, bytesPerRun } = youtubeUpload;
  if (chunkBytes <= 0 || chunkBytes % UPLOAD_QUANTUM !== 0) throw new Error(`YouTube chunks must be a multiple of ${UPLOAD_QUANTUM} bytes, not ${chunkBytes}.`);
  let progress = fresh ? { held: 0 } : await probe(context, session, mimeType);
  let sent = 0;
  while (!('video' in progress)) {
    if (sent >= bytesPerRun) {
      throw new CheckAgainLater(1, `YouTube: the upload goes on (${Math.round((progress.held / session.size) * 100)}% sent)`, UPLOAD_MAX_WAIT_SECONDS);
    }
    const start = progress.held;
    const end = Math.min(start + chunkBytes, session.size);
    progress = progressOf(await put(context, session, `bytes ${start}-${end - 1}/${session.size}`, bytes.subarray(start, end), mimeType));
    sent += end - start;
  }
  return progress.video;
}
