// Posting to TikTok (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post, ...-upload-video,
// ...-photo-post, ...-get-video-status, and the media transfer guide): a video by chunked FILE_UPLOAD, photos by PULL_FROM_URL
// (re-encoded as JPEG first when they are not JPEG or WebP), then the publish status, checked by re-scheduled runs.
// Each platform call that creates something is a recorded step: `init` (the publish id and upload URL), `chunk:N`, `photo:N`.
import { z } from 'zod';
import { CheckAgainLater, type MediaFile, type ProviderContext, type PublishedRef, type PublishItem } from '../types.js';
import { call, creatorInfo, type CreatorInfo } from './api.js';
import { permanent } from '../shared.js';
import { movieOf } from '../../src/lib/media-probe.js';

export interface TikTokSettings {
  privacy_level: string;
  duet: boolean;
  stitch: boolean;
  comment: boolean;
  autoAddMusic: 'yes' | 'no';
  brand_content_toggle: boolean;
  brand_organic_toggle: boolean;
  video_made_with_ai?: boolean;
  content_posting_method: 'DIRECT_POST' | 'UPLOAD';
}

const MB = 1024 * 1024;
/** TikTok's chunk rules: 5 to 64 MB a chunk (the last may reach 128 MB), a file up to 64 MB may go whole, 1000 chunks at most. */
export const CHUNK_LIMITS = { min: 5 * MB, max: 64 * MB, whole: 64 * MB, count: 1000 };
/** Chunk size of files over 64 MB (within TikTok's limits), and how many chunks one run of the job sends. */
export const tiktokUpload = { chunkBytes: 10 * MB, chunksPerRun: 6 };

/** The `source_info` chunking of a file: `total_chunk_count` = floor(size / chunk_size), the last chunk takes the rest. */
export function chunkPlan(size: number, chunkBytes = tiktokUpload.chunkBytes): { chunkSize: number; count: number } {
  if (chunkBytes < CHUNK_LIMITS.min || chunkBytes > CHUNK_LIMITS.max) throw new Error(`TikTok chunks are 5 to 64 MB, not ${chunkBytes} bytes.`);
  if (size <= CHUNK_LIMITS.whole) return { chunkSize: size, count: 1 };
  const count = Math.floor(size / chunkBytes);
  if (count > CHUNK_LIMITS.count) throw permanent(`the video is too large for TikTok's 1000 chunks of ${chunkBytes} bytes`);
  return { chunkSize: chunkBytes, count };
}

/** The duration of an MP4 in seconds, from its movie header (undefined when it cannot be read). */
function videoSeconds(bytes: Buffer): number | undefined {
  const movie = movieOf(bytes);
  return movie && movie.timescale > 0 ? movie.duration / movie.timescale : undefined;
}

/** The privacy level sent: the chosen one once the deployment's app is audited, SELF_ONLY before (spec rule 2). */
const privacyOf = (context: ProviderContext, options: TikTokSettings) => (context.endpoints.appAudited === 'true' ? options.privacy_level : 'SELF_ONLY');

/** Refuses what the creator's account does not allow, naming the fix (TikTok would refuse it, or its UX rules forbid it). */
function checkCreator(creator: CreatorInfo, options: TikTokSettings, privacy: string, video: { seconds?: number } | undefined): void {
  if (!creator.privacy_level_options.includes(privacy)) {
    throw permanent(`this TikTok account allows the privacy levels ${creator.privacy_level_options.join(', ')}; ${privacy} is not one of them: change privacy_level`);
  }
  if (options.brand_content_toggle && privacy === 'SELF_ONLY') throw permanent('branded content (brand_content_toggle) cannot be private (SELF_ONLY) on TikTok: turn it off or choose another privacy level');
  if (options.comment && creator.comment_disabled) throw permanent('comments are turned off in this TikTok account\'s settings: set comment to false');
  if (!video) return;
  if (options.duet && creator.duet_disabled) throw permanent('duets are turned off in this TikTok account\'s settings: set duet to false');
  if (options.stitch && creator.stitch_disabled) throw permanent('stitches are turned off in this TikTok account\'s settings: set stitch to false');
  const max = creator.max_video_post_duration_sec;
  if (max !== undefined && video.seconds !== undefined && video.seconds > max) {
    throw permanent(`the video lasts ${Math.round(video.seconds)} s; this TikTok account takes videos of at most ${max} s: shorten it`);
  }
}

const initSchema = z.object({ publish_id: z.string(), upload_url: z.string().optional() });
type VideoInit = { publishId: string; uploadUrl: string; size: number; chunkSize: number; count: number };

async function startVideo(context: ProviderContext, item: PublishItem, load: () => Promise<{ bytes: Buffer; mimeType: string }>, options: TikTokSettings): Promise<VideoInit> {
  const { bytes } = await load();
  const direct = options.content_posting_method === 'DIRECT_POST';
  const privacy = privacyOf(context, options);
  if (direct) checkCreator(await creatorInfo(context), options, privacy, { seconds: videoSeconds(bytes) });
  const { chunkSize, count } = chunkPlan(bytes.length);
  const source_info = { source: 'FILE_UPLOAD', video_size: bytes.length, chunk_size: chunkSize, total_chunk_count: count };
  // The inbox upload takes the file alone: the owner writes the caption in the TikTok app.
  const json = direct
    ? {
        post_info: {
          title: item.text,
          privacy_level: privacy,
          disable_duet: !options.duet,
          disable_stitch: !options.stitch,
          disable_comment: !options.comment,
          brand_content_toggle: options.brand_content_toggle,
          brand_organic_toggle: options.brand_organic_toggle,
          is_aigc: options.video_made_with_ai === true,
        },
        source_info,
      }
    : { source_info };
  const { data } = await call(context, direct ? 'post/publish/video/init/' : 'post/publish/inbox/video/init/', initSchema, { json });
  if (!data.upload_url) throw permanent('TikTok gave no upload URL for the video');
  return { publishId: data.publish_id, uploadUrl: data.upload_url, size: bytes.length, chunkSize, count };
}

const statusSchema = z.object({
  status: z.string(),
  fail_reason: z.string().optional(),
  uploaded_bytes: z.number().optional(),
  publicaly_available_post_id: z.array(z.union([z.number(), z.string()])).optional(),
});

export const fetchStatus = (context: ProviderContext, publishId: string) => call(context, 'post/publish/status/fetch/', statusSchema, { json: { publish_id: publishId } });

/** Sends the chunks not recorded yet, a few per run; a chunk cut by a crash is known sent when TikTok counts its bytes. */
async function uploadChunks(context: ProviderContext, init: VideoInit, load: () => Promise<{ bytes: Buffer; mimeType: string }>): Promise<void> {
  let sent = 0;
  for (let index = 0; index < init.count; index++) {
    const start = index * init.chunkSize;
    const end = index === init.count - 1 ? init.size : start + init.chunkSize;
    await context.step(
      `chunk:${index}`,
      async () => {
        if (sent >= tiktokUpload.chunksPerRun) throw new CheckAgainLater(1, `TikTok: the upload goes on (chunk ${index + 1} of ${init.count})`, 3600);
        const { bytes, mimeType } = await load();
        await context.fetch({
          method: 'PUT',
          url: init.uploadUrl,
          headers: { 'content-type': mimeType, 'content-range': `bytes ${start}-${end - 1}/${init.size}` },
          body: bytes.subarray(start, end),
          timeoutMs: 300_000,
        });
        sent += 1;
        return true;
      },
      async () => ((await fetchStatus(context, init.publishId)).data.uploaded_bytes ?? 0) >= end || undefined,
    );
  }
}

/** The photo's public URL in a format TikTok takes: JPEG and WebP as they are, anything else re-encoded as JPEG and stored. */
async function photoUrl(context: ProviderContext, file: MediaFile, index: number): Promise<string> {
  const { bytes, mimeType } = await file.load();
  if (mimeType === 'image/jpeg' || mimeType === 'image/webp') return file.url;
  if (!context.storeMedia) throw new Error('Converted photos can only be stored while publishing.');
  const { default: sharp } = await import('sharp');
  const jpeg = await sharp(bytes).flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
  return context.storeMedia(jpeg, `tiktok-photo-${index + 1}.jpg`);
}

async function startPhotos(context: ProviderContext, item: PublishItem, options: TikTokSettings): Promise<{ publishId: string }> {
  const urls: string[] = [];
  for (const [index, file] of item.media.entries()) urls.push(await context.step(`photo:${index}`, () => photoUrl(context, file, index)));
  const direct = options.content_posting_method === 'DIRECT_POST';
  const privacy = privacyOf(context, options);
  // No recover: TikTok may have posted the photos of an interrupted init, and nothing finds a post without its publish id.
  return context.step('init', async () => {
    if (direct) checkCreator(await creatorInfo(context), options, privacy, undefined);
    const post_info = direct
      ? {
          description: item.text,
          privacy_level: privacy,
          disable_comment: !options.comment,
          auto_add_music: options.autoAddMusic === 'yes',
          brand_content_toggle: options.brand_content_toggle,
          brand_organic_toggle: options.brand_organic_toggle,
        }
      : { description: item.text };
    const { data } = await call(context, 'post/publish/content/init/', initSchema, {
      json: {
        post_info,
        source_info: { source: 'PULL_FROM_URL', photo_cover_index: 0, photo_images: urls },
        post_mode: direct ? 'DIRECT_POST' : 'MEDIA_UPLOAD',
        media_type: 'PHOTO',
      },
    });
    return { publishId: data.publish_id };
  });
}

const FAIL_REASONS: Record<string, string> = {
  file_format_check_failed: 'TikTok could not read the file (file_format_check_failed): send an MP4 (H.264) video or JPEG pictures',
  duration_check_failed: 'the video is too long or too short for TikTok (duration_check_failed)',
  frame_rate_check_failed: 'TikTok refused the video frame rate (frame_rate_check_failed): use 23 to 60 fps',
  picture_size_check_failed: 'TikTok refused the picture size (picture_size_check_failed): at most 1080p',
  photo_pull_failed: 'TikTok could not download the pictures (photo_pull_failed): PUBLIC_URL must be public https on a domain verified for the TikTok app',
  spam_risk_too_many_posts: "the account reached TikTok's daily post limit (spam_risk_too_many_posts): retry tomorrow",
};

/** The post once TikTok is done with it: its public id, or `missing` when TikTok gives none (inbox drafts, private posts). */
async function outcome(context: ProviderContext, publishId: string): Promise<PublishedRef> {
  const { data, text } = await fetchStatus(context, publishId);
  const profile = `${context.endpoints.web}/@${encodeURIComponent(context.auth.data.username ?? context.auth.internalId)}`;
  switch (data.status) {
    case 'PUBLISH_COMPLETE': {
      // The ids are int64: read them from the text, a JSON number would round them.
      const id = /"publicaly_available_post_id"\s*:\s*\[\s*"?(\d+)/.exec(text)?.[1];
      return id ? { id, url: `${profile}/video/${id}` } : { id: 'missing', url: profile };
    }
    case 'SEND_TO_USER_INBOX':
      return { id: 'missing', url: profile };
    case 'FAILED':
      throw permanent(FAIL_REASONS[data.fail_reason ?? ''] ?? `TikTok could not publish the post (${data.fail_reason ?? 'no reason given'})`);
    default:
      throw new CheckAgainLater(10, 'TikTok is still processing the post', 3 * 3600);
  }
}

export async function publish(context: ProviderContext, item: PublishItem): Promise<PublishedRef> {
  const options = context.settings as unknown as TikTokSettings;
  const video = item.media.find((file) => file.kind === 'video');
  if (!video) return outcome(context, (await startPhotos(context, item, options)).publishId);
  let loaded: Promise<{ bytes: Buffer; mimeType: string }> | undefined;
  const load = () => (loaded ??= video.load());
  // Nothing is published before the last chunk is in, so an interrupted init is simply made again.
  const init = await context.step('init', () => startVideo(context, item, load, options), async () => undefined);
  await uploadChunks(context, init, load);
  return outcome(context, init.publishId);
}
