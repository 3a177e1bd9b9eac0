// Facebook Pages: a post of text, pictures or one video, with comments; the Page is chosen after Facebook Login and its own
// token publishes. Facebook downloads the media from our public URL (photos `url`, videos `file_url`). References:
//   https://developers.facebook.com/docs/pages-api/posts (feed, photos, several photos as unpublished photos + attached_media)
//   https://developers.facebook.com/docs/graph-api/reference/page/feed/ , /page/photos/ , /page/videos/
//   https://developers.facebook.com/docs/video-api/guides/publishing (file_url, status.video_status)
//   https://developers.facebook.com/docs/graph-api/reference/object/comments/ (message, attachment_url)
//   https://developers.facebook.com/docs/platforminsights/page (and its deprecated-metrics page: impressions → media views,
//   page_fans → page_follows since 15 November 2025)
//   https://developers.facebook.com/docs/graph-api/reference/page/published_posts/ , /video/ and /comment/ (created_time, from)
//   comments, replies, hiding, deleting, and editing or deleting a post: see ./meta/comments.ts
//   Meta's node and edge specs (github.com/facebook/facebook-business-sdk-codegen api_specs/specs: Page, PagePost, AdVideo,
//   Comment; Graph v25.0, commit ad2b0b6 of 2026-04-15), which the fake checks every request against
// (read 2026-11-27). An interrupted create is looked up among what the Page made since the attempt began
// (providers/recovery.ts): an older post or comment with the same text is never taken for it.
import { z } from 'zod';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import { CheckAgainLater, type Provider, type ProviderContext, type StepAttempt } from './types.js';
import { createdSince, onlyCandidate } from './recovery.js';
import { currentMetric, facebookDialogUrl, firstProblem, httpUrl, META_GRAPH_VERSION, picturesOrOneVideo } from './shared.js';
import { extensionOf, graph, idSchema, insightMetrics, insightsRange, insightsSchema, node } from './meta/graph.js';
import { chosenPage, exchangeFacebookCode, managedPages, pictureOf } from './meta/login.js';
import { deleteNode, facebookComments, hideFacebookComment, replyTarget } from './meta/comments.js';

// pages_read_user_content: people's comments (and who wrote them) on the Page's posts; pages_manage_engagement: the Page's
// comments and replies, hiding and deleting comments; pages_manage_posts: publishing, editing and deleting posts.
const scopes = ['pages_show_list', 'business_management', 'pages_manage_posts', 'pages_manage_engagement', 'pages_read_engagement', 'pages_read_user_content', 'read_insights'];

const PAGE_METRICS = { page_media_view: 'Views', page_total_media_view_unique: 'Reach', page_post_engagements: 'Engagements', page_follows: 'Followers' };
const POST_METRICS = { post_media_view: 'Views', post_total_media_view_unique: 'Reach', post_clicks: 'Clicks' };

const photoSchema = z.object({ id: z.string(), post_id: z.string().optional() });
const listSchema = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      message: z.string().optional(),
      description: z.string().optional(),
      permalink_url: z.string().optional(),
      full_picture: z.string().optional(),
      created_time: z.string().optional(),
      from: z.object({ id: z.string() }).optional(),
    }),
  ),
});
const videoStatusSchema = z.object({
  status: z.object({
    video_status: z.string(),
    processing_phase: z.object({ errors: z.array(z.object({ message: z.string() })).optional() }).optional(),
  }),
});
const summary = z.object({ summary: z.object({ total_count: z.number() }) }).optional();
const countsSchema = z.object({ reactions: summary, likes: summary, comments: summary, shares: z.object({ count: z.number() }).optional() });

const NOT_A_FACEBOOK_PICTURE = /\.(webp|avif|heic|heif)$/i;

const pageOf = (context: ProviderContext) => node(context.auth.internalId);

/** With media the `url` setting cannot be a link preview, so it ends the text, where Facebook makes it clickable. */
function textWithLink(text: string, link: string | undefined, withMedia: boolean): string {
  if (!link || !withMedia || text.includes(link)) return text;
  return text ? `${text}\n\n${link}` : link;
}

/** A create of unknown outcome: the Page's latest posts (or videos) with the same text, created since the attempt began. */
async function findRecent(context: ProviderContext, attempt: StepAttempt, edge: 'published_posts' | 'videos', text: string) {
  const field = edge === 'videos' ? 'description' : 'message';
  const { data } = await graph(context, `${pageOf(context)}/${edge}`, { query: { fields: `id,${field},created_time`, limit: 10 }, schema: listSchema });
  const found = onlyCandidate(data.filter((entry) => (entry[field] ?? '') === text && createdSince(attempt, entry.created_time)), 'Facebook', edge === 'videos' ? 'videos' : 'posts');
  return found && { id: found.id };
}

async function permalinkOf(context: ProviderContext, id: string): Promise<string | undefined> {
  try {
    const { permalink_url: link } = await graph(context, node(id), { query: { fields: 'permalink_url' }, schema: z.object({ permalink_url: z.string().optional() }) });
    // Videos answer a path ("/page/videos/1/"), posts a full URL.
    return link ? new URL(link, context.endpoints.web).toString() : undefined;
  } catch {
    return undefined; // the post is live: its link is cosmetic, never a reason to fail (and publish again)
  }
}

/** Facebook downloads and encodes the video after the call: re-check later until it is ready, stop on an error. */
async function awaitVideo(context: ProviderContext, id: string): Promise<void> {
  const { status } = await graph(context, node(id), { query: { fields: 'status' }, schema: videoStatusSchema });
  if (status.video_status === 'ready') return;
  if (status.video_status === 'error' || status.video_status === 'expired') {
    const reasons = status.processing_phase?.errors?.map((error) => error.message).join('; ');
    throw new PlatformHttpError({
      status: 400,
      retryable: false,
      bodyExcerpt: JSON.stringify(status),
      message: `the video could not be processed${reasons ? ` (${reasons})` : ''}: send an MP4 or MOV that plays, from a public https address Facebook can download`,
    });
  }
  throw new CheckAgainLater(15, 'Facebook is still processing the video', 2 * 3600);
}

const facebook: Provider = {
  identifier: 'facebook',
  name: 'Facebook Page',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { dialog: 'https://www.facebook.com', graph: 'https://graph.facebook.com', web: 'https://www.facebook.com', graphVersion: META_GRAPH_VERSION },
  maxLength: () => 63206,
  rules:
    'A post is text, text with pictures (JPEG, PNG, GIF, BMP or TIFF), or text with one video (not both); Facebook downloads the media from its public URL. ' +
    'The url setting is the post\'s link: a link preview on a text post, added at the end of the text when the post has media. ' +
    'Later items are comments on the post and take at most one picture each.',
  settings: z.object({
    url: httpUrl().optional().describe('Link attached to the post'),
  }),
  chain: 'comments',
  mediaByUrl: true,
  recordsSteps: true,
  validate: (items) =>
    picturesOrOneVideo(items, 'Facebook', { which: 'first' }) ??
    firstProblem(items, ({ images, videos }) => (videos > 0 || images > 1 ? 'is a comment, which takes at most one picture and no video.' : undefined), 'rest') ??
    firstProblem(items, (_count, item) => {
      const picture = item.media.find((media) => media.kind === 'image' && NOT_A_FACEBOOK_PICTURE.test(extensionOf(media.url)));
      return picture ? 'has a picture Facebook does not take (WebP, AVIF, HEIC): convert it to JPEG or PNG.' : undefined;
    }),
  tools: [],
  authorizeUrl: (options) => facebookDialogUrl(options, scopes),
  exchangeCode: (context, options) => exchangeFacebookCode(context, options, scopes),

  async accounts(context) {
    return (await managedPages(context)).map((page) => ({ id: page.id, name: page.name, picture: pictureOf(page.picture) }));
  },

  async selectAccount(context, id) {
    const page = await chosenPage(context, (candidate) => candidate.id === id, `The Page ${id}`);
    return { internalId: page.id, name: page.name, profile: page.username ?? page.id, picture: pictureOf(page.picture), accessToken: page.access_token };
  },

  async publish(context, item) {
    const page = pageOf(context);
    const link = typeof context.settings.url === 'string' ? context.settings.url : undefined;
    const video = item.media.find((media) => media.kind === 'video');
    const pictures = item.media.filter((media) => media.kind === 'image');
    let created: { id: string };
    if (video) {
      const description = textWithLink(item.text, link, true);
      created = await context.step(
        'video',
        () => graph(context, `${page}/videos`, { json: { file_url: video.url, description, published: true }, schema: idSchema }),
        (attempt) => findRecent(context, attempt, 'videos', description),
      );
      await awaitVideo(context, created.id);
    } else if (pictures.length === 1) {
      const caption = textWithLink(item.text, link, true);
      created = await context.step(
        'photo',
        async () => {
          const photo = await graph(context, `${page}/photos`, { json: { url: pictures[0].url, caption, published: true }, schema: photoSchema });
          return { id: photo.post_id ?? photo.id };
        },
        (attempt) => findRecent(context, attempt, 'published_posts', caption),
      );
    } else {
      const message = textWithLink(item.text, link, pictures.length > 0);
      const attached: { media_fbid: string }[] = [];
      for (const [index, picture] of pictures.entries()) {
        // An unpublished photo is invisible until a post attaches it: one left by an interrupted call harms nothing.
        const photo = await context.step(
          `photo:${index}`,
          () => graph(context, `${page}/photos`, { json: { url: picture.url, published: false }, schema: idSchema }),
          async () => undefined,
        );
        attached.push({ media_fbid: photo.id });
      }
      created = await context.step(
        'post',
        () =>
          graph(context, `${page}/feed`, {
            json: { message, ...(attached.length > 0 ? { attached_media: attached } : { link }), published: true },
            schema: idSchema,
          }),
        (attempt) => findRecent(context, attempt, 'published_posts', message),
      );
    }
    return { id: created.id, url: await permalinkOf(context, created.id), meta: { kind: video ? 'video' : 'post' } };
  },

  // A comment on the post (a later item of the chain), or a reply to someone's comment: a comment on that comment.
  async comment(context, item, { root, parent, toComment }) {
    const { target, warnings } = toComment ? replyTarget(parent, root, 'Facebook') : { target: root.id, warnings: undefined };
    const created = await context.step(
      'comment',
      () => graph(context, `${node(target)}/comments`, { json: { message: item.text || undefined, attachment_url: item.media[0]?.url }, schema: idSchema }),
      // The Page's comment with the same text, written since the attempt began.
      async (attempt) => {
        const { data } = await graph(context, `${node(target)}/comments`, { query: { fields: 'id,message,created_time,from', limit: 50, order: 'reverse_chronological' }, schema: listSchema });
        const mine = data.filter((comment) => (comment.message ?? '') === item.text && comment.from?.id === context.auth.internalId && createdSince(attempt, comment.created_time));
        const found = onlyCandidate(mine, 'Facebook', 'comments');
        return found && { id: found.id };
      },
    );
    return { id: created.id, url: (await permalinkOf(context, created.id)) ?? root.url, ...(warnings ? { warnings } : {}) };
  },

  comments: (context, post, since) => facebookComments(context, post, since),
  hideComment: (context, comment, hidden) => hideFacebookComment(context, comment, hidden),
  deleteComment: (context, comment) => deleteNode(context, comment.id),

  // A post's message (a video's description, a comment's message) is edited in place; setting it again is harmless.
  async editPublished(context, ref, item, thread) {
    const link = typeof context.settings.url === 'string' ? context.settings.url : undefined;
    const video = !thread && ref.meta?.kind === 'video';
    const text = thread ? item.text : textWithLink(item.text, link, item.media.length > 0);
    await context.step('edit', async () => (await graph(context, node(ref.id), { json: video ? { description: text } : { message: text }, schema: z.looseObject({ success: z.boolean() }) })).success);
    return { id: ref.id, url: ref.url, meta: ref.meta };
  },
  deletePublished: (context, ref) => context.step('delete', async () => (await deleteNode(context, ref.id), true)).then(() => undefined),
  // Facebook keeps a published post's link preview (and its media) as they were: only the text can change.
  editProblem: (before, after) => ((before.url ?? undefined) !== (after.url ?? undefined) ? 'Facebook cannot change the link of a published post: only its text can be edited. Delete it and publish again to change the link.' : undefined),

  async analytics(context, days) {
    const response = await graph(context, `${pageOf(context)}/insights`, {
      query: { metric: Object.keys(PAGE_METRICS).join(','), period: 'day', ...insightsRange(days) },
      schema: insightsSchema,
    });
    return insightMetrics(response, PAGE_METRICS);
  },

  async postAnalytics(context, post) {
    // A Video has no reactions edge and no shares field (Meta's AdVideo spec, the Video API reference): its likes are read.
    if (post.meta?.kind === 'video') {
      const counts = await graph(context, node(post.id), { query: { fields: 'likes.summary(true).limit(0),comments.summary(true).limit(0)' }, schema: countsSchema });
      return [currentMetric('Likes', counts.likes?.summary.total_count), currentMetric('Comments', counts.comments?.summary.total_count)];
    }
    const counts = await graph(context, node(post.id), { query: { fields: 'reactions.summary(true).limit(0),comments.summary(true).limit(0),shares' }, schema: countsSchema });
    const engagement = [currentMetric('Reactions', counts.reactions?.summary.total_count), currentMetric('Comments', counts.comments?.summary.total_count)];
    const insights = await graph(context, `${node(post.id)}/insights`, { query: { metric: Object.keys(POST_METRICS).join(',') }, schema: insightsSchema });
    return [...insightMetrics(insights, POST_METRICS), ...engagement, currentMetric('Shares', counts.shares?.count)];
  },

  async recent(context) {
    const { data } = await graph(context, `${pageOf(context)}/published_posts`, { query: { fields: 'id,permalink_url,full_picture', limit: 20 }, schema: listSchema });
    return data.map((post) => ({ id: post.id, url: post.full_picture ?? post.permalink_url ?? '' }));
  },
};

export default facebook;
