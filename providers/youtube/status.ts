// What YouTube made of an upload (videos.list part=status; developers.google.com/youtube/v3/docs/videos#status, read
// 2026-11-27): `uploadStatus` (uploaded, processed, failed with `failureReason`, rejected with `rejectionReason`, deleted) and
// the `privacyStatus` YouTube actually set. Google locks uploads from unverified API projects (created after 28 July 2020) to
// private whatever was asked (videos.insert), so the watch URL alone would claim a public video that nobody can see.
import { z } from 'zod';
import type { ProviderContext, PublishedRef } from '../types.js';
import { bearerFetch, permanent } from '../shared.js';
import { classify } from './upload.js';

const statusSchema = z.object({
  items: z
    .array(
      z.object({
        id: z.string(),
        status: z
          .object({
            uploadStatus: z.string().optional(),
            privacyStatus: z.string().optional(),
            failureReason: z.string().optional(),
            rejectionReason: z.string().optional(),
          })
          .optional(),
      }),
    )
    .default([]),
});

/** Said on the post, and in the channel's health while its latest video is so (`meta.channelNotice`). */
export const PRIVATE_LOCK =
  'YouTube kept the video private: uploads from unverified API projects are locked to private — have the Google Cloud project of this Herald ' +
  'audited for the YouTube API Services (developers.google.com/youtube/v3/docs/videos/insert), then change the video\'s visibility in YouTube Studio.';

/**
 * Reads the video's status after its upload: a failed or rejected upload stops the item with YouTube's reason; otherwise the
 * privacy YouTube set goes in `meta`, with a warning when it is not the one asked.
 */
export async function videoOutcome(context: ProviderContext, videoId: string, asked: string): Promise<Pick<PublishedRef, 'meta' | 'warnings'>> {
  const { data } = await bearerFetch(context, context.auth.accessToken, classify, {
    url: `${context.endpoints.api}/youtube/${context.endpoints.dataVersion}/videos`,
    query: { part: 'status', id: videoId },
    schema: statusSchema,
  });
  const status = data.items[0]?.status;
  if (!status) return {}; // not listed yet: nothing to report, the upload itself succeeded
  if (status.uploadStatus === 'rejected') throw permanent(`YouTube rejected the video (${status.rejectionReason ?? 'no reason given'}): it is not shown; see YouTube Studio.`, 422);
  if (status.uploadStatus === 'failed') throw permanent(`YouTube could not process the video (${status.failureReason ?? 'no reason given'}): send a video file that plays.`, 422);
  const privacy = status.privacyStatus ?? asked;
  const meta: Record<string, string> = { privacyStatus: privacy, ...(status.uploadStatus ? { uploadStatus: status.uploadStatus } : {}) };
  if (privacy === asked) return { meta };
  const warning = privacy === 'private' ? PRIVATE_LOCK : `YouTube set the video ${privacy} instead of ${asked}: change its visibility in YouTube Studio.`;
  return { meta: { ...meta, channelNotice: warning }, warnings: [warning] };
}
