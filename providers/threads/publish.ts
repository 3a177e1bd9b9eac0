// Publishing on Threads: a media container (TEXT, IMAGE, VIDEO, or CAROUSEL of item containers) created from our public
// media URL, its status checked until FINISHED (re-scheduling the job meanwhile), then `threads_publish`. Each container
// and the publish are recorded steps; a publish of unknown outcome is looked up: the container (our own marker) says whether
// it was published, and the post it became is the one with our text made since the attempt began (never an older one).
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { CheckAgainLater, type MediaFile, type ProviderContext, type PublishItem, type PublishedRef } from '../types.js';
import { graph } from './api.js';
import { couldNotConfirm, earliestCreation } from '../recovery.js';

const idSchema = z.object({ id: z.string() });
const statusSchema = z.object({ id: z.string(), status: z.string(), error_message: z.string().optional() });
const postsSchema = z.object({ data: z.array(z.looseObject({ id: z.string(), text: z.string().optional(), timestamp: z.string().optional(), replied_to: z.object({ id: z.string() }).optional() })) });

/** Threads' container error codes, in words a user can act on. */
const CONTAINER_ERRORS: Record<string, string> = {
  FAILED_DOWNLOADING_VIDEO: "Threads could not download the video from Herald's public URL; check that PUBLIC_URL is reachable from the internet over https",
  FAILED_PROCESSING_AUDIO: 'Threads could not process the sound of the video; re-encode it with AAC audio',
  FAILED_PROCESSING_VIDEO: 'Threads could not process the video; re-encode it as H.264 MP4',
  INVALID_ASPEC_RATIO: 'the video aspect ratio is not accepted by Threads; use one between 0.01:1 and 10:1 (9:16 recommended)',
  INVALID_BIT_RATE: 'the video bit rate is not accepted by Threads; re-encode it at 25 Mbps or less',
  INVALID_DURATION: 'the video is too long or too short for Threads (up to 5 minutes)',
  INVALID_FRAME_RATE: 'the video frame rate is not accepted by Threads; use 23 to 60 fps',
  INVALID_AUDIO_CHANNELS: 'the video sound has too many channels for Threads; use mono or stereo',
  INVALID_AUDIO_CHANNEL_LAYOUT: 'the video sound channel layout is not accepted by Threads; use mono or stereo',
};

const createContainer = (context: ProviderContext, params: Record<string, string | undefined>) =>
  graph(context, { method: 'POST', path: `${encodeURIComponent(context.auth.internalId)}/threads`, params, schema: idSchema }).then(({ id }) => id);

const containerStatus = (context: ProviderContext, id: string) =>
  graph(context, { path: encodeURIComponent(id), params: { fields: 'status,error_message' }, schema: statusSchema });

/** The media parameters of a container: Threads downloads the file from our public URL itself. */
const mediaParams = (file: MediaFile) =>
  file.kind === 'video' ? { media_type: 'VIDEO', video_url: file.url, alt_text: file.alt } : { media_type: 'IMAGE', image_url: file.url, alt_text: file.alt };

function refused(status: z.infer<typeof statusSchema>): PlatformHttpError {
  const reason = status.status === 'EXPIRED'
    ? 'the Threads media container expired before it was published (containers live 24 hours)'
    : (CONTAINER_ERRORS[status.error_message ?? ''] ?? `Threads could not prepare the media (${status.error_message ?? 'UNKNOWN'})`);
  return new PlatformHttpError({ status: 422, retryable: false, bodyExcerpt: JSON.stringify(status), message: reason });
}

/** Throws CheckAgainLater while a container is still IN_PROGRESS; throws the container's refusal on ERROR or EXPIRED. */
async function whenFinished(context: ProviderContext, ids: string[], hasVideo: boolean): Promise<void> {
  let waiting = false;
  for (const id of ids) {
    const status = await containerStatus(context, id);
    if (status.status === 'ERROR' || status.status === 'EXPIRED') throw refused(status);
    if (status.status !== 'FINISHED' && status.status !== 'PUBLISHED') waiting = true;
  }
  // Meta recommends checking about once a minute; a picture is usually ready far sooner than a video.
  if (waiting) throw new CheckAgainLater(hasVideo ? 30 : 10, hasVideo ? 'Threads is still processing the video' : 'Threads is still preparing the media', 1800);
}

const unconfirmed = (why: string) => couldNotConfirm('Threads', why);

/** Our post among the account's latest posts or replies: same text, replying to the same post, made since the attempt began. */
async function findPublished(context: ProviderContext, text: string, replyTo: string | undefined, startedAt: Date): Promise<string | undefined> {
  const { data } = await graph(context, {
    path: `${encodeURIComponent(context.auth.internalId)}/${replyTo ? 'replies' : 'threads'}`,
    params: { fields: replyTo ? 'id,text,timestamp,replied_to' : 'id,text,timestamp', limit: 25 },
    schema: postsSchema,
  });
  const since = earliestCreation(startedAt);
  const found = data.filter((post) => {
    if ((post.text ?? '').trim() !== text.trim() || (replyTo && post.replied_to?.id !== replyTo)) return false;
    if (!post.timestamp) throw unconfirmed('Threads answered the lookup without timestamps, so a new post cannot be told from an older one');
    return Date.parse(post.timestamp) >= since;
  });
  if (found.length > 1) throw unconfirmed(`${found.length} posts with this text were made since the attempt`);
  return found[0]?.id;
}

/** After an interrupted publish: not published (so publish again), or published (find the post it became). */
async function recoverPublish(context: ProviderContext, container: string, text: string, replyTo: string | undefined, startedAt: Date): Promise<string | undefined> {
  const status = await containerStatus(context, container);
  if (status.status !== 'PUBLISHED') return undefined;
  const found = await findPublished(context, text, replyTo, startedAt);
  if (found) return found;
  throw unconfirmed('Threads says the container was published, but no post with its text made since the attempt is among the latest ones');
}

export async function publishThread(context: ProviderContext, item: PublishItem, replyTo?: string): Promise<PublishedRef> {
  const base = { text: item.text, ...(replyTo ? { reply_to_id: replyTo } : {}) };
  const hasVideo = item.media.some((file) => file.kind === 'video');
  // A container nobody published is invisible and expires by itself: one of unknown outcome is simply made again.
  const again = async () => undefined;
  let container: string;
  if (item.media.length > 1) {
    const children: string[] = [];
    for (const [index, file] of item.media.entries()) {
      children.push(await context.step(`container:${index}`, () => createContainer(context, { ...mediaParams(file), is_carousel_item: 'true' }), again));
    }
    // Checked inside the step: once the carousel container exists, its items are not looked at again.
    container = await context.step('container', async () => {
      await whenFinished(context, children, hasVideo);
      return createContainer(context, { ...base, media_type: 'CAROUSEL', children: children.join(',') });
    }, again);
  } else {
    const params = item.media.length === 1 ? { ...base, ...mediaParams(item.media[0]) } : { ...base, media_type: 'TEXT' };
    container = await context.step('container', () => createContainer(context, params), again);
  }
  const id = await context.step(
    'publish',
    async () => {
      await whenFinished(context, [container], hasVideo);
      const published = await graph(context, { method: 'POST', path: `${encodeURIComponent(context.auth.internalId)}/threads_publish`, params: { creation_id: container }, schema: idSchema });
      return published.id;
    },
    ({ startedAt }) => recoverPublish(context, container, item.text, replyTo, startedAt),
  );
  const { permalink } = await graph(context, { path: encodeURIComponent(id), params: { fields: 'id,permalink' }, schema: z.object({ permalink: z.string().optional() }) });
  return { id, url: permalink };
}
