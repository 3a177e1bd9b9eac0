// YouTube: one video per post (resumable upload, ./upload.ts), later items as comments; the channel is chosen after Google OAuth.
// References: https://developers.google.com/youtube/v3/docs (videos.insert, channels.list, playlists.list, playlistItems.insert
// and .list, commentThreads.insert and .list), https://developers.google.com/youtube/v3/docs/errors,
// https://developers.google.com/youtube/analytics/reference/reports/query and .../analytics/metrics (YouTube Analytics API v2).
// Limits from the video resource (developers.google.com/youtube/v3/docs/videos, read 2026-11-27): snippet.title 100 characters,
// snippet.description 5000 bytes, neither with < or >; snippet.tags 500 characters. Uploads from unverified API projects are
// locked to private (videos.insert): the video's status is read after the upload and what YouTube set is reported.
// The request bodies are typed with Google's own client types (`@googleapis/youtube`, youtube_v3.Schema$*; a devDependency read
// only by tsc): a field YouTube does not have fails the type check.
// Comments, replies, moderation, edits and deletions (2026-11-27): ./comments.ts.
import type { youtube_v3 } from '@googleapis/youtube';
import { z } from 'zod';
import type { AnalyticsMetric, ConnectedAccount, Provider, ProviderContext, PublishItem, StepAttempt, ValidationItem } from '../types.js';
import { createdSince, onlyCandidate } from '../recovery.js';
import { bearerFetch, dailyMetric, firstProblem, googleAuthorizeUrl, googleEndpoints, googleScope, permanent, tagsSchema } from '../shared.js';
import { exchangeGoogleCode, googleUserInfo, refreshGoogleToken } from '../google.js';
import { classify, probe, startSession, uploadRest, type UploadSession } from './upload.js';
import { videoOutcome } from './status.js';
import { deleteOnYouTube, editOnYouTube, editProblem, moderate, removeComment, replyToComment, videoComments } from './comments.js';

/** YouTube counts a description in UTF-8 bytes (`lengthMethod: 'bytes'`: the create's length check and every counter say bytes). */
export const DESCRIPTION_BYTES = 5000;

const scopes = ['userinfo.profile', 'youtube.upload', 'youtube.force-ssl', 'yt-analytics.readonly'].map(googleScope);

const settings = z.object({
  title: z.string().min(2).max(100).describe('Video title'),
  type: z.enum(['public', 'private', 'unlisted']).describe('Privacy of the video'),
  selfDeclaredMadeForKids: z.enum(['yes', 'no']).optional().describe('Whether the video is made for kids'),
  tags: tagsSchema.optional().describe('Video tags (500 characters in total at most)'),
  playlist: z.string().min(1).optional().describe('Playlist id from getPlaylists: the video is added to it'),
});
type Settings = z.infer<typeof settings>;

const channelSchema = z.object({
  id: z.string(),
  snippet: z.object({ title: z.string(), customUrl: z.string().optional(), thumbnails: z.record(z.string(), z.object({ url: z.string() })).optional() }),
});
const listSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item).default([]), nextPageToken: z.string().optional() });
const playlistSchema = z.object({ id: z.string(), snippet: z.object({ title: z.string() }) });
const threadSchema = z.object({
  id: z.string(),
  snippet: z.object({
    topLevelComment: z.object({
      id: z.string(),
      snippet: z.object({ textOriginal: z.string().optional(), authorChannelId: z.object({ value: z.string() }).optional(), publishedAt: z.string().optional() }),
    }),
  }),
});
const reportSchema = z.object({
  columnHeaders: z.array(z.object({ name: z.string(), columnType: z.string() })),
  rows: z.array(z.array(z.union([z.string(), z.number()]))).nullish(),
});

const data = (context: { endpoints: Record<string, string> }, resource: string) => `${context.endpoints.api}/youtube/${context.endpoints.dataVersion}/${resource}`;
const watchUrl = (context: ProviderContext, id: string) => `${context.endpoints.web}/watch?v=${encodeURIComponent(id)}`;

async function channels(context: Pick<ProviderContext, 'fetch' | 'endpoints'>, accessToken: string) {
  const { data: list } = await bearerFetch(context, accessToken, classify, {
    url: data(context, 'channels'),
    query: { part: 'snippet', mine: true, maxResults: 50 },
    schema: listSchema(channelSchema),
  });
  return list.items;
}

function channelAccount(channel: z.infer<typeof channelSchema>, tokens: Pick<ConnectedAccount, 'accessToken' | 'refreshToken' | 'expiresAt'>): ConnectedAccount {
  const thumbnails = channel.snippet.thumbnails ?? {};
  return {
    ...tokens,
    internalId: channel.id,
    name: channel.snippet.title,
    profile: channel.snippet.customUrl ?? channel.id,
    picture: (thumbnails.high ?? thumbnails.medium ?? thumbnails.default)?.url,
  };
}

/** Tag length as YouTube counts it: a tag with a space is quoted, tags are comma-separated. */
const tagsLength = (tags: string[]) => tags.reduce((total, tag) => total + tag.length + (tag.includes(' ') ? 2 : 0), 0) + Math.max(0, tags.length - 1);

function validate(items: ValidationItem[], raw: Record<string, unknown>): string | undefined {
  const options = raw as Partial<Settings>;
  const media = firstProblem(items, ({ total, videos }) => (total !== 1 || videos !== 1 ? 'must have exactly one video and no other media.' : undefined), 'first');
  if (media) return media;
  const comments = firstProblem(items, ({ total }, item) => (total > 0 ? 'is a comment: YouTube comments take text only, remove the media.' : !item.text.trim() ? 'is an empty comment: write its text.' : undefined), 'rest');
  if (comments) return comments;
  if (/[<>]/.test(options.title ?? '')) return 'The title cannot contain < or >: YouTube refuses them.';
  // The text as YouTube receives it, already converted: converting it again would read a typed `&lt;b&gt;` (now `<b>`) as a tag.
  const description = items[0]?.text ?? '';
  if (/[<>]/.test(description)) return 'The description cannot contain < or >: YouTube refuses them; write them as words.';
  const tags = (options.tags ?? []).map((tag) => tag.value);
  if (tagsLength(tags) > 500) return `The tags take ${tagsLength(tags)} characters; YouTube allows 500 in total: remove some.`;
  return undefined;
}

async function publish(context: ProviderContext, item: PublishItem) {
  const options = context.settings as Settings;
  const file = item.media.find((media) => media.kind === 'video');
  if (!file) throw permanent('the post has no video');
  const { bytes, mimeType } = await file.load();
  const metadata = {
    snippet: { title: options.title, description: item.text, ...(options.tags?.length ? { tags: options.tags.map((tag) => tag.value) } : {}) },
    status: {
      privacyStatus: options.type,
      ...(options.selfDeclaredMadeForKids ? { selfDeclaredMadeForKids: options.selfDeclaredMadeForKids === 'yes' } : {}),
    },
  } satisfies youtube_v3.Schema$Video;
  let fresh = false;
  // An interrupted session call may have opened a session: harmless, no video exists until its last byte.
  const session = await context.step<UploadSession>(
    'session',
    async () => {
      fresh = true;
      return startSession(context, metadata, bytes.length, mimeType);
    },
    async () => undefined,
  );
  const video = await context.step(
    'video',
    async () => ({ id: (await uploadRest(context, session, bytes, mimeType, fresh)).id }),
    async () => {
      const progress = await probe(context, session, mimeType);
      return 'video' in progress ? { id: progress.video.id } : undefined;
    },
  );
  // What YouTube made of it: a rejected or failed upload stops here; a privacy other than asked is said on the post.
  const outcome = await videoOutcome(context, video.id, options.type);
  if (options.playlist) await addToPlaylist(context, options.playlist, video.id);
  return { id: video.id, url: watchUrl(context, video.id), ...outcome };
}

async function addToPlaylist(context: ProviderContext, playlistId: string, videoId: string) {
  await context.step(
    'playlist',
    async () => {
      const { data: added } = await bearerFetch(context, context.auth.accessToken, classify, {
        method: 'POST',
        url: data(context, 'playlistItems'),
        query: { part: 'snippet' },
        json: { snippet: { playlistId, resourceId: { kind: 'youtube#video', videoId } } } satisfies youtube_v3.Schema$PlaylistItem,
        schema: z.object({ id: z.string() }),
      });
      return added.id;
    },
    async () => {
      const { data: found } = await bearerFetch(context, context.auth.accessToken, classify, {
        url: data(context, 'playlistItems'),
        query: { part: 'id', playlistId, videoId },
        schema: listSchema(z.object({ id: z.string() })),
      });
      return found.items[0]?.id;
    },
  );
}

async function comment(context: ProviderContext, item: PublishItem, videoId: string) {
  const refOf = (thread: z.infer<typeof threadSchema>) => ({ id: thread.id, url: `${watchUrl(context, videoId)}&lc=${thread.snippet.topLevelComment.id}` });
  return context.step(
    'comment',
    async () => {
      const { data: thread } = await bearerFetch(context, context.auth.accessToken, classify, {
        method: 'POST',
        url: data(context, 'commentThreads'),
        query: { part: 'snippet' },
        json: { snippet: { videoId, topLevelComment: { snippet: { textOriginal: item.text } } } } satisfies youtube_v3.Schema$CommentThread,
        schema: threadSchema,
      });
      return refOf(thread);
    },
    // An interrupted insert is looked up among the video's newest comments by this channel with the same text, written since
    // the attempt began (an older comment with the same words is another comment).
    async (attempt: StepAttempt) => {
      const { data: list } = await bearerFetch(context, context.auth.accessToken, classify, {
        url: data(context, 'commentThreads'),
        query: { part: 'snippet', videoId, order: 'time', maxResults: 50, textFormat: 'plainText' },
        schema: listSchema(threadSchema),
      });
      const same = list.items.filter(({ snippet: { topLevelComment: top } }) =>
        top.snippet.textOriginal === item.text && top.snippet.authorChannelId?.value === context.auth.internalId && createdSince(attempt, top.snippet.publishedAt),
      );
      const found = onlyCandidate(same, 'YouTube', 'comments');
      return found ? refOf(found) : undefined;
    },
  );
}

const LABELS: Record<string, string> = {
  views: 'Views',
  estimatedMinutesWatched: 'Minutes watched',
  averageViewDuration: 'Average view duration (seconds)',
  likes: 'Likes',
  comments: 'Comments',
  shares: 'Shares',
  subscribersGained: 'Subscribers gained',
  subscribersLost: 'Subscribers lost',
};

/** A daily report of the YouTube Analytics API, one metric per label. */
async function report(context: ProviderContext, days: number, metrics: string[], filters?: string): Promise<AnalyticsMetric[]> {
  const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
  const { data: table } = await bearerFetch(context, context.auth.accessToken, classify, {
    url: `${context.endpoints.analytics}/${context.endpoints.analyticsVersion}/reports`,
    query: { ids: 'channel==MINE', startDate: day(days), endDate: day(0), metrics: metrics.join(','), dimensions: 'day', sort: 'day', filters },
    schema: reportSchema,
  });
  const rows = table.rows ?? [];
  const dayColumn = table.columnHeaders.findIndex((header) => header.name === 'day');
  return table.columnHeaders.flatMap((header, column) => {
    if (header.columnType !== 'METRIC') return [];
    return [dailyMetric(LABELS[header.name] ?? header.name, rows.map((row) => ({ date: String(row[dayColumn]), value: Number(row[column]) || 0 })))];
  });
}

const youtube: Provider = {
  identifier: 'youtube',
  name: 'YouTube',
  editor: 'plain',
  lengthMethod: 'bytes',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { ...googleEndpoints, analytics: 'https://youtubeanalytics.googleapis.com', web: 'https://www.youtube.com', dataVersion: 'v3', analyticsVersion: 'v2' },
  maxLength: () => DESCRIPTION_BYTES,
  rules:
    'A post is exactly one video (uploaded to YouTube in resumable chunks); the content is its description, without < or >. ' +
    'Settings: title (2 to 100 characters, required), type = privacy (public, private or unlisted, required), selfDeclaredMadeForKids (yes/no), ' +
    'tags (500 characters in total), playlist (an id from getPlaylists: the video is added to it). Later items are posted as comments on the video, text only.',
  settings,
  chain: 'comments',
  recordsSteps: true,
  validate,
  tools: [
    {
      methodName: 'getPlaylists',
      description: 'Lists the playlists of the connected YouTube channel as [{id, name}]; put an id in the playlist setting.',
      dataSchema: [],
      run: async (context) => {
        const found: { id: string; name: string }[] = [];
        let pageToken: string | undefined;
        do {
          const { data: page } = await bearerFetch(context, context.auth.accessToken, classify, {
            url: data(context, 'playlists'),
            query: { part: 'snippet', mine: true, maxResults: 50, pageToken },
            schema: listSchema(playlistSchema),
          });
          found.push(...page.items.map((playlist) => ({ id: playlist.id, name: playlist.snippet.title })));
          pageToken = page.nextPageToken;
        } while (pageToken && found.length < 500);
        return found;
      },
    },
  ],
  authorizeUrl: (options) => googleAuthorizeUrl(options, scopes),

  async exchangeCode(context, options) {
    const tokens = await exchangeGoogleCode(context, options, scopes.filter((scope) => !scope.endsWith('userinfo.profile')));
    const found = await channels(context, tokens.accessToken);
    if (found.length === 0) {
      throw permanent('this Google account has no YouTube channel: create one on YouTube, then connect again', 403);
    }
    if (found.length === 1) return channelAccount(found[0], tokens);
    // Several channels: the Google account waits as the channel until one is chosen (GET/POST /integrations/{id}/accounts).
    const user = await googleUserInfo(context, tokens.accessToken);
    return { ...tokens, internalId: `google:${user.sub}`, name: user.name ?? 'YouTube', profile: user.email ?? user.sub, picture: user.picture, inBetweenSteps: true };
  },

  async accounts(context) {
    return (await channels(context, context.auth.accessToken)).map((channel) => {
      const account = channelAccount(channel, context.auth);
      return { id: account.internalId, name: account.name, picture: account.picture };
    });
  },

  async selectAccount(context, id) {
    const channel = (await channels(context, context.auth.accessToken)).find((candidate) => candidate.id === id);
    if (!channel) throw permanent(`channel ${id} is not one of this Google account's YouTube channels`, 404);
    return channelAccount(channel, { accessToken: context.auth.accessToken, refreshToken: context.auth.refreshToken, expiresAt: context.auth.expiresAt });
  },

  refresh: refreshGoogleToken,
  publish,
  // A later item of the chain is a new comment thread on the video; an answer to someone's comment is a reply in its thread.
  comment: (context, item, { root, parent, toComment }) => (toComment ? replyToComment(context, item.text, parent, root.id) : comment(context, item, root.id)),
  comments: videoComments,
  // heldForReview takes the comment off the video until it is published again (setModerationStatus, by the video's owner).
  hideComment: (context, target, hidden) => moderate(context, target, hidden ? 'heldForReview' : 'published'),
  deleteComment: (context, target) => removeComment(context, target),
  editPublished: editOnYouTube,
  deletePublished: deleteOnYouTube,
  editProblem,
  analytics: (context, days) => report(context, days, ['views', 'estimatedMinutesWatched', 'likes', 'comments', 'subscribersGained', 'subscribersLost']),
  postAnalytics: (context, post, days) => report(context, days, ['views', 'estimatedMinutesWatched', 'averageViewDuration', 'likes', 'comments', 'shares'], `video==${post.id}`),
};

export default youtube;
