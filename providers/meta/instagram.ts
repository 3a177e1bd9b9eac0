// Instagram content publishing, shared by the business login (graph.facebook.com) and Instagram Login (graph.instagram.com):
// one container per picture or video created from our public media URL, a CAROUSEL container over them, each polled until
// FINISHED without holding a worker (CheckAgainLater), then media_publish. Every container and the publish are recorded steps,
// so a crash resumes at the status check and never creates a second container or a second post. References:
//   https://developers.facebook.com/docs/instagram-platform/content-publishing
//   https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media
//   https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container (status_code)
//   https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/content_publishing_limit
//   https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments
//   https://developers.facebook.com/docs/instagram-platform/api-reference/instagram-user/insights
//   https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights
//   https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media (timestamp) and
//   .../ig-comment (timestamp, from); stories take one image_url or video_url (media_type STORIES) (read 2026-11-27).
//   Meta's node and edge specs (github.com/facebook/facebook-business-sdk-codegen api_specs/specs: IGUser, IGMedia, IGComment,
//   ShadowIGMediaBuilder, and IGUserForIGOnlyAPI/IGMediaForIGOnlyAPI for Instagram Login; Graph v25.0, commit ad2b0b6 of
//   2026-04-15), which the fake checks every request against.
// Comments, replies, hiding and deleting them, and why a published post cannot be edited or deleted: see ./comments.ts.
// A recovery takes only media or comments made since the interrupted call began (providers/recovery.ts).
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import {
  CheckAgainLater,
  type AnalyticsMetric,
  type CommentThread,
  type MediaFile,
  type Provider,
  type ProviderContext,
  type PublishItem,
  type PublishedRef,
  type StepAttempt,
  type ValidationItem,
} from '../types.js';
import { currentMetric, firstProblem, textOnlyComments } from '../shared.js';
import { createdSince, createdSinceStart, onlyCandidate } from '../recovery.js';
import { extensionOf, graph, idSchema, insightMetrics, insightsRange, insightsSchema, mediaProblem, node } from './graph.js';
import { deleteNode, hideInstagramComment, instagramComments, replyTarget } from './comments.js';

/** Settings keys shared by both Instagram providers (the business login adds `audio`). */
export const instagramSettings = {
  post_type: z.enum(['post', 'story']).describe('post (a single video becomes a Reel) or story'),
  is_trial_reel: z.boolean().optional().describe('Share a single-video Reel with non-followers first; you graduate it to your followers in the app'),
  collaborators: z.array(z.object({ label: z.string() })).optional().describe('Up to 3 Instagram usernames invited as collaborators (not on stories)'),
};

interface InstagramSettings {
  post_type?: 'post' | 'story';
  is_trial_reel?: boolean;
  collaborators?: { label: string }[];
  audio?: { id: string; audio_volume?: number; video_volume?: number };
}

const NOT_JPEG = /\.(png|webp|gif|avif|bmp|tiff?|heic|heif)$/i;
const NOT_MP4_OR_MOV = /\.(webm|mkv|avi)$/i;

/** Media and settings rules of both Instagram providers, checked before anything is created. */
function instagramMediaRules(items: ValidationItem[], settings: Record<string, unknown>): string | undefined {
  const { post_type: postType, is_trial_reel: trialReel, collaborators = [], audio } = settings as InstagramSettings;
  const story = postType === 'story';
  return (
    firstProblem(
      items,
      ({ images, videos, total }, item) => {
        if (total === 0) return 'has no media; an Instagram post needs at least one picture or video.';
        const picture = item.media.find((media) => media.kind === 'image' && NOT_JPEG.test(extensionOf(media.url)));
        if (picture) return `has a ${extensionOf(picture.url).slice(1).toUpperCase()} picture, but Instagram publishes JPEG only: convert it to JPEG and upload it again.`;
        const video = item.media.find((media) => media.kind === 'video' && NOT_MP4_OR_MOV.test(extensionOf(media.url)));
        if (video) return `has a ${extensionOf(video.url).slice(1).toUpperCase()} video, but Instagram takes MP4 or MOV only: convert it.`;
        if (story && total !== 1) return 'is a story, which takes exactly one picture or one video.';
        if (total > 10) return `has ${total} attachments; an Instagram carousel takes at most 10.`;
        if (trialReel === true && (total !== 1 || images > 0 || story)) return 'is a trial reel, which takes a single video and post_type post.';
        if (audio && (total !== 1 || videos !== 1 || story)) return 'sets audio, which needs a single video and post_type post.';
        if (collaborators.length > 3) return `invites ${collaborators.length} collaborators; Instagram takes at most 3.`;
        if (collaborators.length > 0 && story) return 'is a story, which cannot have collaborators: remove them.';
        return undefined;
      },
      'first',
    ) ?? textOnlyComments(items, 'Instagram')
  );
}

const instagramRules =
  'A post needs at least one picture or video: 2 to 10 make a carousel, a single video with post_type post is published as a Reel ' +
  '(is_trial_reel shares it with non-followers first). A story takes exactly one picture or video and shows no text. Pictures must be JPEG ' +
  '(PNG, WebP and GIF are refused before publishing: convert them), videos MP4 or MOV (H.264/HEVC, AAC, 3 s to 15 min); ' +
  'Instagram downloads them from the public media URL. Up to 3 collaborators (usernames). Later items are comments on the post and take text only.';

const statusSchema = z.object({ status_code: z.string(), status: z.string().optional() });
const mediaListSchema = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      caption: z.string().optional(),
      permalink: z.string().optional(),
      media_url: z.string().optional(),
      thumbnail_url: z.string().optional(),
      timestamp: z.string().optional(),
    }),
  ),
});
const limitSchema = z.object({ data: z.array(z.object({ quota_usage: z.number(), config: z.object({ quota_total: z.number() }).optional() })) });
const ownCommentSchema = z.object({ id: z.string(), text: z.string().optional(), timestamp: z.string().optional(), from: z.object({ id: z.string() }).optional() });
const commentsSchema = z.object({ data: z.array(ownCommentSchema) });
const repliesSchema = z.object({ data: z.array(z.object({ id: z.string(), replies: z.object({ data: z.array(ownCommentSchema) }).optional() })) });

const userOf = (context: ProviderContext) => node(context.auth.internalId);

/** Instagram allows a limited number of API posts a day: refuse early, as a retry, rather than fail after the containers. */
async function checkPublishingLimit(context: ProviderContext): Promise<void> {
  const { data } = await graph(context, `${userOf(context)}/content_publishing_limit`, { query: { fields: 'quota_usage,config' }, schema: limitSchema });
  const usage = data[0];
  if (usage?.config && usage.quota_usage >= usage.config.quota_total) {
    throw new PlatformHttpError({
      status: 429,
      retryable: true,
      retryAfterSeconds: 3600,
      bodyExcerpt: JSON.stringify(data),
      message: `the account used ${usage.quota_usage} of the ${usage.config.quota_total} API posts Instagram allows in 24 hours; Herald tries again in an hour`,
    });
  }
}

/**
 * One container, recorded as step `name`. A container is invisible until published, so one left behind by an interrupted call
 * harms nothing: the call is simply made again.
 */
function container(context: ProviderContext, name: string, body: Record<string, unknown>, first: boolean) {
  return context.step(
    name,
    async () => {
      if (first) await checkPublishingLimit(context);
      return graph(context, `${userOf(context)}/media`, { json: body, schema: idSchema });
    },
    async () => undefined,
  );
}

function containerFailure(state: z.output<typeof statusSchema>): PlatformHttpError {
  const subcode = Number(/\b(2207\d{3})\b/.exec(state.status ?? '')?.[1]) || undefined;
  const why =
    state.status_code === 'EXPIRED'
      ? 'the media container expired before it was published (containers live 24 hours): create the post again'
      : (mediaProblem(subcode) ?? 'Instagram could not process the media');
  return new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: JSON.stringify(state), message: `${why}${state.status ? ` (container status: ${state.status})` : ''}` });
}

/** Checks the containers once: failed ones stop the item, unfinished ones re-schedule it. */
async function awaitContainers(context: ProviderContext, ids: string[], video: boolean): Promise<void> {
  const states = [];
  for (const id of ids) states.push(await graph(context, node(id), { query: { fields: 'status_code,status' }, schema: statusSchema }));
  const failed = states.find((state) => state.status_code === 'ERROR' || state.status_code === 'EXPIRED');
  if (failed) throw containerFailure(failed);
  if (states.some((state) => state.status_code === 'IN_PROGRESS')) {
    throw new CheckAgainLater(video ? 20 : 5, `Instagram is still processing the ${video ? 'video' : 'media'}`, video ? 2 * 3600 : 3600);
  }
}

/**
 * media_publish had an unknown outcome: the container (ours alone) says whether it went out; if PUBLISHED, the post is the
 * recent media with the same caption created since the attempt began (less the clock skew), since a container does not name
 * its media. A story has no caption to tell it by: it is the story made since the attempt's start itself, as one inside the
 * skew allowance may be an older story (issue 31); until Instagram lists it, the item waits, then stops with "could not
 * confirm".
 */
async function recoverPublish(context: ProviderContext, attempt: StepAttempt, creationId: string, story: boolean, caption: string | undefined) {
  const state = await graph(context, node(creationId), { query: { fields: 'status_code' }, schema: statusSchema });
  if (state.status_code !== 'PUBLISHED') return undefined;
  const { data } = await graph(context, `${userOf(context)}/${story ? 'stories' : 'media'}`, { query: { fields: 'id,caption,timestamp', limit: 10 }, schema: mediaListSchema });
  const since = data.filter((media) => (story ? createdSinceStart(attempt, media.timestamp) : createdSince(attempt, media.timestamp) && (media.caption ?? '') === (caption ?? '')));
  const found = onlyCandidate(since, 'Instagram', story ? 'stories' : 'posts');
  // Instagram lists a new post a little later: look again for a while, then stop with "could not confirm".
  if (!found) {
    throw new CheckAgainLater(
      30,
      'Could not confirm the post: Instagram published the container, but the post is not among the account\'s recent media; check the account before publishing again',
      900,
    );
  }
  return { id: found.id };
}

async function permalinkOf(context: ProviderContext, id: string): Promise<string | undefined> {
  try {
    return (await graph(context, node(id), { query: { fields: 'permalink' }, schema: z.object({ permalink: z.string().optional() }) })).permalink;
  } catch {
    return undefined; // the post is live: its link is cosmetic, never a reason to fail (and publish again)
  }
}

const usernames = (settings: InstagramSettings) => settings.collaborators?.map((entry) => entry.label.trim().replace(/^@+/, '')).filter(Boolean);

function singleBody(media: MediaFile, settings: InstagramSettings, caption: string | undefined, withAudio: boolean): Record<string, unknown> {
  if (settings.post_type === 'story') return { media_type: 'STORIES', [media.kind === 'video' ? 'video_url' : 'image_url']: media.url };
  const collaborators = usernames(settings)?.length ? usernames(settings) : undefined;
  if (media.kind === 'image') return { image_url: media.url, caption, collaborators };
  const { audio } = settings;
  return {
    media_type: 'REELS',
    video_url: media.url,
    caption,
    collaborators,
    trial_params: settings.is_trial_reel ? { graduation_strategy: 'MANUAL' } : undefined,
    audio_configuration: withAudio && audio ? { audio_id: audio.id, audio_volume: audio.audio_volume, video_volume: audio.video_volume } : undefined,
  };
}

async function publishToInstagram(context: ProviderContext, item: PublishItem, options: { audio: boolean }): Promise<PublishedRef> {
  const settings = context.settings as InstagramSettings;
  const story = settings.post_type === 'story';
  const caption = story || !item.text ? undefined : item.text;
  const video = item.media.some((media) => media.kind === 'video');
  let creationId: string;
  let kind: string;
  if (item.media.length === 1) {
    ({ id: creationId } = await container(context, 'container', singleBody(item.media[0], settings, caption, options.audio), true));
    await awaitContainers(context, [creationId], video);
    kind = story ? 'story' : video ? 'reel' : 'post';
  } else {
    const children: string[] = [];
    for (const [index, media] of item.media.entries()) {
      const body = media.kind === 'video' ? { media_type: 'VIDEO', video_url: media.url, is_carousel_item: true } : { image_url: media.url, is_carousel_item: true };
      children.push((await container(context, `container:${index}`, body, index === 0)).id);
    }
    await awaitContainers(context, children, video);
    ({ id: creationId } = await container(context, 'carousel', { media_type: 'CAROUSEL', children, caption, collaborators: usernames(settings)?.length ? usernames(settings) : undefined }, false));
    await awaitContainers(context, [creationId], false);
    kind = 'carousel';
  }
  const published = await context.step(
    'publish',
    () => graph(context, `${userOf(context)}/media_publish`, { json: { creation_id: creationId }, schema: idSchema }),
    (attempt) => recoverPublish(context, attempt, creationId, story, caption),
  );
  return { id: published.id, url: await permalinkOf(context, published.id), meta: { kind } };
}

/**
 * A top-level comment on the published media (a later item of the chain), or a reply to someone's comment (POST
 * /{comment-id}/replies; Instagram takes replies on top-level comments only). Instagram comments take text only.
 */
async function commentOnInstagram(context: ProviderContext, item: PublishItem, thread: CommentThread): Promise<PublishedRef> {
  const { target, warnings } = thread.toComment ? replyTarget(thread.parent, thread.root, 'Instagram') : { target: thread.root.id, warnings: undefined };
  const edge = thread.toComment ? 'replies' : 'comments';
  const created = await context.step(
    'comment',
    () => graph(context, `${node(target)}/${edge}`, { json: { message: item.text }, schema: idSchema }),
    // The account's own comment with the same text, written since the attempt began (a reply: among the comment's replies).
    async (attempt) => {
      const data = thread.toComment
        ? ((await graph(context, `${node(thread.root.id)}/comments`, { query: { fields: 'id,replies{id,text,timestamp,from}', limit: 50 }, schema: repliesSchema })).data.find((comment) => comment.id === target)?.replies?.data ?? [])
        : (await graph(context, `${node(target)}/comments`, { query: { fields: 'id,text,timestamp,from', limit: 50 }, schema: commentsSchema })).data;
      const mine = data.filter((comment) => comment.text === item.text && comment.from?.id === context.auth.internalId && createdSince(attempt, comment.timestamp));
      const found = onlyCandidate(mine, 'Instagram', 'comments');
      return found && { id: found.id };
    },
  );
  return { id: created.id, url: thread.root.url, ...(warnings ? { warnings } : {}) };
}

const ACCOUNT_SERIES = { reach: 'Reach', follower_count: 'New followers' };
const ACCOUNT_TOTALS = { views: 'Views', profile_views: 'Profile views', accounts_engaged: 'Accounts engaged', total_interactions: 'Interactions' };
const MEDIA_METRICS = { views: 'Views', reach: 'Reach', likes: 'Likes', comments: 'Comments', saved: 'Saves', shares: 'Shares' };
const STORY_METRICS = { views: 'Views', reach: 'Reach', replies: 'Replies', shares: 'Shares' };

/** Followers now, daily reach and new followers, and the period's views, profile views, accounts engaged and interactions. */
async function instagramAnalytics(context: ProviderContext, days: number): Promise<AnalyticsMetric[]> {
  const user = userOf(context);
  const profile = await graph(context, user, { query: { fields: 'followers_count' }, schema: z.object({ followers_count: z.number().optional() }) });
  // Account insights span at most 30 days.
  const range = insightsRange(days, 30);
  const series = await graph(context, `${user}/insights`, { query: { metric: Object.keys(ACCOUNT_SERIES).join(','), period: 'day', ...range }, schema: insightsSchema });
  const totals = await graph(context, `${user}/insights`, {
    query: { metric: Object.keys(ACCOUNT_TOTALS).join(','), period: 'day', metric_type: 'total_value', ...range },
    schema: insightsSchema,
  });
  return [currentMetric('Followers', profile.followers_count), ...insightMetrics(series, ACCOUNT_SERIES), ...insightMetrics(totals, ACCOUNT_TOTALS)];
}

async function instagramPostAnalytics(context: ProviderContext, post: PublishedRef): Promise<AnalyticsMetric[]> {
  const labels = post.meta?.kind === 'story' ? STORY_METRICS : MEDIA_METRICS;
  try {
    const response = await graph(context, `${node(post.id)}/insights`, { query: { metric: Object.keys(labels).join(',') }, schema: insightsSchema });
    return insightMetrics(response, labels);
  } catch (error) {
    // "(#10) Not enough viewers for the media to show insights", an expired story: no insights is an empty answer, not an error.
    if (error instanceof PlatformHttpError && !error.retryable && error.status !== 401 && error.status < 500) return [];
    throw error;
  }
}

async function instagramRecent(context: ProviderContext): Promise<{ id: string; url: string }[]> {
  const { data } = await graph(context, `${userOf(context)}/media`, { query: { fields: 'id,permalink,media_url,thumbnail_url', limit: 20 }, schema: mediaListSchema });
  return data.map((media) => ({ id: media.id, url: media.thumbnail_url ?? media.media_url ?? media.permalink ?? '' }));
}

/** What both Instagram providers share: limits, rules, container publishing, comments, insights and recent media. */
export function instagramProvider(options: { audio: boolean }) {
  return {
    editor: 'plain',
    lengthMethod: 'characters',
    maxLength: () => 2200,
    rules: instagramRules,
    chain: 'comments',
    mediaByUrl: true,
    recordsSteps: true,
    validate: instagramMediaRules,
    publish: (context, item) => publishToInstagram(context, item, options),
    comment: (context, item, thread) => commentOnInstagram(context, item, thread),
    comments: (context, post) => instagramComments(context, post),
    hideComment: (context, comment, hidden) => hideInstagramComment(context, comment, hidden),
    deleteComment: (context, comment) => deleteNode(context, comment.id),
    unchangeable: {
      edit: 'The Instagram API cannot change a published post\'s caption or media (it can only turn its comments on or off): edit it in the Instagram app.',
      delete: 'The Instagram API cannot delete a published post: delete it in the Instagram app.',
    },
    analytics: instagramAnalytics,
    postAnalytics: instagramPostAnalytics,
    recent: instagramRecent,
  } satisfies Partial<Provider>;
}
