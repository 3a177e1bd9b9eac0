// The Graph API half of the Meta fake (test/fakes/facebook.ts): Pages (feed, photos, videos, comments, insights), Instagram
// professional accounts (containers, media_publish, media, stories, comments, insights, content_publishing_limit, ig_audio)
// and the generic node read. Media given by URL is really downloaded from Herald's public media URL.
// Longer than 400 lines because it is one platform surface serving three providers; each route is small.
import type { FakeHandler, FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import type { FakePage, FakeToken, metaError as MetaError } from './facebook.js';

type Versioned = (handler: (request: RecordedRequest, token: FakeToken) => FakeReply | Promise<FakeReply>, open?: boolean) => FakeHandler;

interface Solo {
  appScopedId: string;
  userId: string;
  username: string;
  name: string;
  profile_picture_url: string;
  followers_count: number;
}

export interface FakeFacebookPost {
  id: string;
  pageId: string;
  message?: string;
  link?: string;
  photoIds: string[];
  createdTime: string;
  reactions: number;
  shares: number;
}
export interface FakePhoto { id: string; pageId: string; url: string; caption?: string; published: boolean; bytes: number; postId?: string; attached: boolean }
export interface FakeVideo { id: string; pageId: string; fileUrl: string; description?: string; pendingChecks: number; failed: boolean; bytes: number; createdTime: string; likes?: number }
/** `authorId`: the Page, or the Instagram account, that wrote it. */
export interface FakeComment { id: string; parentId: string; authorId: string; message?: string; attachmentUrl?: string; createdTime: string; authorName?: string; hidden?: boolean }
export interface FakeContainer {
  id: string;
  owner: string;
  mediaType: 'IMAGE' | 'VIDEO' | 'REELS' | 'STORIES' | 'CAROUSEL';
  imageUrl?: string;
  videoUrl?: string;
  caption?: string;
  isCarouselItem: boolean;
  children: string[];
  collaborators?: string[];
  trialParams?: unknown;
  audio?: unknown;
  pendingChecks: number;
  /** Subcode of a processing failure (the container ends in ERROR). */
  failure?: number;
  expired: boolean;
  published: boolean;
}
export interface FakeMedia {
  id: string;
  owner: string;
  containerId: string;
  caption?: string;
  mediaType: 'IMAGE' | 'VIDEO' | 'CAROUSEL_ALBUM';
  productType: 'FEED' | 'REELS' | 'STORY';
  permalink: string;
  timestamp: string;
}

const JPEG = (bytes: Buffer) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
const PICTURE = (bytes: Buffer) =>
  JPEG(bytes) || bytes.subarray(0, 4).toString('latin1') === '\x89PNG' || bytes.subarray(0, 4).toString('latin1') === 'GIF8' || bytes.subarray(0, 2).toString('latin1') === 'BM';
const MP4 = (bytes: Buffer) => bytes.subarray(4, 8).toString('latin1') === 'ftyp';
const DAY = 86_400_000;
/** Graph writes times as ISO 8601 with a "+0000" offset ("2026-11-27T10:00:00+0000"). */
export const graphTime = (iso: string) => iso.replace(/\.\d{3}Z$/, '+0000');

type Projection = { value: Record<string, unknown>; refusal?: undefined } | { refusal: FakeReply; value?: undefined };

/** The top-level names of a Graph `fields` parameter ("a,b{c,d},e.summary(true)" → a, b, e). */
export function topFields(fields: string | null): string[] {
  if (!fields) return [];
  const names: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of fields) {
    if (character === '{' || character === '(') depth++;
    if (character === '}' || character === ')') depth--;
    if (character === ',' && depth === 0) {
      names.push(current);
      current = '';
    } else current += character;
  }
  names.push(current);
  return names.map((name) => /^[a-z_]+/i.exec(name.trim())?.[0] ?? '').filter(Boolean);
}

function paramsOf(request: RecordedRequest): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, value] of request.query) if (key !== 'access_token') params[key] = value;
  for (const [key, value] of request.form ?? []) params[key] = value;
  if (request.json && typeof request.json === 'object') Object.assign(params, request.json);
  return params;
}
const text = (value: unknown) => (value === undefined || value === null ? undefined : typeof value === 'string' ? value : String(value));
const json = (value: unknown) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};
const flag = (value: unknown, fallback: boolean) => (value === undefined ? fallback : value === true || value === 'true' || value === '1');
const list = (value: unknown): string[] | undefined => {
  const parsed = json(value);
  if (Array.isArray(parsed)) return parsed.map(String);
  return typeof parsed === 'string' ? parsed.split(',').filter(Boolean) : undefined;
};

export function createGraphModel(options: {
  url: string;
  pages: FakePage[];
  solo: Solo;
  user: { id: string; name: string; picture: string };
  pageToken: (pageId: string) => string;
  versioned: Versioned;
  metaError: typeof MetaError;
}) {
  const { url, pages, solo, user, pageToken, versioned, metaError } = options;
  let sequence = 1000;
  const next = () => String(++sequence);
  const posts: FakeFacebookPost[] = [];
  const photos: FakePhoto[] = [];
  const videos: FakeVideo[] = [];
  const comments: FakeComment[] = [];
  const containers: FakeContainer[] = [];
  const media: FakeMedia[] = [];
  const fetches: { url: string; status: number; bytes: number }[] = [];
  const audio = [
    { audio_id: 'aud-1', audio_type: 'music', title: 'Morning Bread', display_artist: 'The Ovens', duration_in_ms: 30000, cover_artwork_thumbnail_url: `${url}/pictures/aud-1.jpg`, download_url: `${url}/audio/aud-1.m4a` },
    { audio_id: 'aud-2', audio_type: 'original_sound', title: 'Original audio', ig_username: 'baker.joe', duration_in_ms: 12000, profile_picture_url: `${url}/pictures/joe.jpg` },
  ];
  /** Base values of the insights the fake answers (daily series add the day's index). */
  const insights: Record<string, number | Record<string, number>> = {
    page_media_view: 500, page_total_media_view_unique: 300, page_post_engagements: 40, page_follows: 1000,
    post_media_view: 250, post_total_media_view_unique: 180, post_clicks: 12, post_reactions_by_type_total: { like: 5, love: 2 },
    reach: 200, follower_count: 3, views: 900, profile_views: 50, accounts_engaged: 30, total_interactions: 70,
    likes: 21, comments: 4, saved: 6, shares: 2, replies: 1,
  };
  const state = { processingChecks: 0, quotaTotal: 100, listingLag: 0 };

  const instagramAccounts = () => [...pages.flatMap((page) => (page.instagram ? [page.instagram] : [])), { id: solo.userId, username: solo.username, name: solo.name, profile_picture_url: solo.profile_picture_url, followers_count: solo.followers_count }];
  /** The Instagram accounts a token may act for: its own (Instagram Login), its Page's, or its user's Pages'. */
  const instagramOf = (token: FakeToken): string[] => {
    if (token.kind === 'ig' || token.kind === 'ig-short') return [token.subject];
    if (token.kind === 'page') return pages.filter((page) => page.id === token.subject && page.instagram).map((page) => page.instagram!.id);
    return pages.flatMap((page) => (page.instagram ? [page.instagram.id] : []));
  };
  const viaFacebook = (token: FakeToken) => token.kind !== 'ig' && token.kind !== 'ig-short';
  const notFound = (id: string) =>
    metaError(100, `Unsupported request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`, { subcode: 33 });
  const needsPageToken = () => metaError(200, '(#200) Publishing to a Page requires that Page\'s access token with pages_manage_posts');
  const segment = (request: RecordedRequest, index: number) => decodeURIComponent(request.path.split('/')[index] ?? '');
  /** A POST on a Page edge: only that Page's token may publish there. */
  const pageEdge = (handler: (request: RecordedRequest, pageId: string, params: Record<string, unknown>) => FakeReply | Promise<FakeReply>) =>
    versioned((request, token) => {
      const pageId = segment(request, 2);
      return token.kind === 'page' && token.subject === pageId ? handler(request, pageId, paramsOf(request)) : needsPageToken();
    });
  const newPost = (pageId: string, fields: Pick<FakeFacebookPost, 'message' | 'link' | 'photoIds'>): FakeFacebookPost => {
    const post = { id: `${pageId}_${next()}`, pageId, ...fields, createdTime: new Date().toISOString(), reactions: 0, shares: 0 };
    posts.push(post);
    return post;
  };

  /** Answers the fields asked for (Graph answers nothing else); a field the node does not have is refused. */
  function project(object: Record<string, unknown>, request: RecordedRequest, defaults: string[]): Projection {
    const wanted = topFields(request.query.get('fields'));
    const unknown = wanted.find((name) => !(name in object));
    if (unknown) return { refusal: metaError(100, `(#100) Tried accessing nonexisting field (${unknown}) on node type`) };
    const keys = wanted.length > 0 ? wanted : defaults;
    return { value: Object.fromEntries(keys.filter((key) => object[key] !== undefined).map((key) => [key, object[key]])) };
  }
  const answer = (projection: Projection): FakeReply => projection.refusal ?? { json: projection.value };

  async function pull(mediaUrl: string): Promise<Buffer | undefined> {
    try {
      const response = await fetch(mediaUrl, { signal: AbortSignal.timeout(5000) });
      const bytes = Buffer.from(await response.arrayBuffer());
      fetches.push({ url: mediaUrl, status: response.status, bytes: bytes.length });
      return response.ok ? bytes : undefined;
    } catch {
      fetches.push({ url: mediaUrl, status: 0, bytes: 0 });
      return undefined;
    }
  }

  const pageUsername = (pageId: string) => pages.find((page) => page.id === pageId)?.username ?? pageId;
  const summary = (count: number) => ({ data: [], summary: { total_count: count, can_comment: true } });
  const commentsOn = (id: string) => comments.filter((comment) => comment.parentId === id);
  const postObject = (post: FakeFacebookPost) => ({
    id: post.id,
    message: post.message,
    created_time: graphTime(post.createdTime),
    permalink_url: `https://www.facebook.com/${pageUsername(post.pageId)}/posts/${post.id.split('_')[1]}`,
    full_picture: post.photoIds[0] ? photos.find((photo) => photo.id === post.photoIds[0])?.url : undefined,
    reactions: summary(post.reactions),
    comments: summary(commentsOn(post.id).length),
    shares: { count: post.shares },
  });
  const videoObject = (video: FakeVideo) => {
    const processing = video.pendingChecks > 0;
    return {
      id: video.id,
      description: video.description,
      created_time: graphTime(video.createdTime),
      permalink_url: `/${pageUsername(video.pageId)}/videos/${video.id}/`,
      status: {
        video_status: processing ? 'processing' : video.failed ? 'error' : 'ready',
        processing_phase: { status: processing ? 'in_progress' : video.failed ? 'error' : 'complete', ...(video.failed ? { errors: [{ code: 1363040, message: 'The video could not be downloaded or is not a video file' }] } : {}) },
      },
      // A Video has a likes edge, not reactions (AdVideo in Meta's specs; the Video API reference).
      likes: summary(video.likes ?? 0),
      comments: summary(commentsOn(video.id).length),
    };
  };
  const statusOf = (item: FakeContainer) => {
    if (item.pendingChecks > 0) return { status_code: 'IN_PROGRESS', status: 'In Progress: Media is still being processed.' };
    if (item.expired) return { status_code: 'EXPIRED', status: 'Expired: the container was not published within 24 hours.' };
    if (item.failure) return { status_code: 'ERROR', status: `Error: Media upload has failed with error code ${item.failure}` };
    return item.published ? { status_code: 'PUBLISHED', status: 'Published: Media has been published.' } : { status_code: 'FINISHED', status: 'Finished: Media has been uploaded and it is ready to be published.' };
  };
  const mediaObject = (item: FakeMedia) => ({
    id: item.id,
    caption: item.caption,
    media_type: item.mediaType,
    media_product_type: item.productType,
    permalink: item.permalink,
    timestamp: graphTime(item.timestamp),
    media_url: `${url}/cdn/${item.id}.jpg`,
    thumbnail_url: item.mediaType === 'VIDEO' ? `${url}/cdn/${item.id}-thumb.jpg` : undefined,
    like_count: 0,
    comments_count: commentsOn(item.id).length,
  });

  /** A daily series from `since` to `until`: one value a day, stamped with the end of its day like Graph. */
  function dailyValues(name: string, since: number, until: number) {
    const base = insights[name] as number;
    const values = [];
    for (let day = 0, time = since * 1000; time < until * 1000; day++, time += DAY) {
      values.push({ value: base + day, end_time: `${new Date(time + DAY).toISOString().slice(0, 10)}T08:00:00+0000` });
    }
    return values;
  }

  const PAGE_METRICS = ['page_media_view', 'page_total_media_view_unique', 'page_post_engagements', 'page_follows'];
  const POST_METRICS = ['post_media_view', 'post_total_media_view_unique', 'post_clicks', 'post_reactions_by_type_total'];
  const ACCOUNT_SERIES = ['reach', 'follower_count'];
  const ACCOUNT_TOTALS = ['views', 'profile_views', 'accounts_engaged', 'total_interactions', 'likes', 'comments', 'shares', 'saves', 'replies', 'reach'];
  const MEDIA_METRICS = ['views', 'reach', 'likes', 'comments', 'saved', 'shares', 'total_interactions'];
  const STORY_METRICS = ['views', 'reach', 'replies', 'shares', 'total_interactions', 'navigation'];
  const invalidMetric = (name: string) => metaError(100, `(#100) The value must be a valid insights metric: ${name} is not one (or was deprecated)`);

  function insightsOf(request: RecordedRequest, token: FakeToken, id: string): FakeReply {
    const metrics = (request.query.get('metric') ?? '').split(',').filter(Boolean);
    if (metrics.length === 0) return metaError(100, 'No metric was specified to be fetched. Please specify one or more metrics to be fetched and try again.', { subcode: 1504028 });
    const since = Number(request.query.get('since') ?? 0);
    const until = Number(request.query.get('until') ?? 0);
    const page = pages.find((candidate) => candidate.id === id);
    if (page) {
      if (token.kind !== 'page' || token.subject !== id) return metaError(190, 'This method must be called with a Page Access Token');
      const bad = metrics.find((name) => !PAGE_METRICS.includes(name));
      if (bad) return invalidMetric(bad);
      if (request.query.get('period') !== 'day' || !since || !until) return metaError(100, '(#100) period=day with since and until is required for daily metrics');
      if (until - since > 93 * 86_400) return metaError(100, '(#100) There cannot be more than 93 days (8035200 s) between since and until');
      return { json: { data: metrics.map((name) => ({ name, period: 'day', values: dailyValues(name, since, until), title: name, id: `${id}/insights/${name}/day` })) } };
    }
    const post = posts.find((candidate) => candidate.id === id);
    if (post) {
      if (token.kind !== 'page' || token.subject !== post.pageId) return notFound(id);
      const bad = metrics.find((name) => !POST_METRICS.includes(name));
      if (bad) return invalidMetric(bad);
      return { json: { data: metrics.map((name) => ({ name, period: 'lifetime', values: [{ value: insights[name] }], id: `${id}/insights/${name}/lifetime` })) } };
    }
    if (instagramAccounts().some((account) => account.id === id)) {
      if (!instagramOf(token).includes(id)) return notFound(id);
      const totals = request.query.get('metric_type') === 'total_value';
      const bad = metrics.find((name) => !(totals ? ACCOUNT_TOTALS : ACCOUNT_SERIES).includes(name));
      if (bad) return metaError(100, totals ? `(#100) metric[0] must be one of the following values: ${ACCOUNT_TOTALS.join(', ')}` : `(#100) The following metrics (${bad}) should be specified with parameter metric_type=total_value`);
      if (!since || !until || until - since > 30 * 86_400) return metaError(100, '(#100) There cannot be more than 30 days (2592000 s) between since and until');
      return {
        json: {
          data: metrics.map((name) => (totals ? { name, period: 'day', title: name, total_value: { value: insights[name] }, id: `${id}/insights/${name}/day` } : { name, period: 'day', title: name, values: dailyValues(name, since, until), id: `${id}/insights/${name}/day` })),
        },
      };
    }
    const item = media.find((candidate) => candidate.id === id);
    if (item) {
      if (!instagramOf(token).includes(item.owner)) return notFound(id);
      const allowed = item.productType === 'STORY' ? STORY_METRICS : MEDIA_METRICS;
      const bad = metrics.find((name) => !allowed.includes(name));
      if (bad) return metaError(100, `(#100) The Media Insights API does not support the ${bad} metric for this media product type.`);
      return { json: { data: metrics.map((name) => ({ name, period: 'lifetime', values: [{ value: insights[name] }], title: name, id: `${id}/insights/${name}/lifetime` })) } };
    }
    return notFound(id);
  }

  async function createContainer(request: RecordedRequest, token: FakeToken): Promise<FakeReply> {
    const owner = segment(request, 2);
    if (!instagramOf(token).includes(owner)) return notFound(owner);
    const params = paramsOf(request);
    const mediaType = (text(params.media_type) ?? 'IMAGE') as FakeContainer['mediaType'];
    const isCarouselItem = flag(params.is_carousel_item, false);
    const caption = text(params.caption);
    const collaborators = list(params.collaborators);
    const trialParams = json(params.trial_params);
    const audioConfiguration = json(params.audio_configuration) as { audio_id?: string } | undefined;
    if (!['IMAGE', 'VIDEO', 'REELS', 'STORIES', 'CAROUSEL'].includes(mediaType)) return metaError(100, `(#100) media_type ${mediaType} is not supported`, { subcode: 2207023 });
    if (mediaType === 'VIDEO' && !isCarouselItem) return metaError(100, 'The VIDEO media type is not supported for single videos: use REELS', { subcode: 2207023 });
    if (caption !== undefined && (isCarouselItem || mediaType === 'STORIES')) return metaError(100, `(#100) param caption is not allowed for ${isCarouselItem ? 'carousel items' : 'stories'}`);
    if (collaborators && (isCarouselItem || mediaType === 'STORIES')) return metaError(100, '(#100) param collaborators is not allowed for this media type');
    if (collaborators && collaborators.length > 3) return metaError(100, '(#100) A media can have at most 3 collaborators');
    if (collaborators?.some((name) => name.startsWith('@'))) return metaError(100, 'A collaborator could not be tagged', { subcode: 2207018 });
    if (trialParams !== undefined && (mediaType !== 'REELS' || !['MANUAL', 'SS_PERFORMANCE'].includes((trialParams as { graduation_strategy?: string }).graduation_strategy ?? ''))) {
      return metaError(100, '(#100) trial_params needs media_type REELS and a graduation_strategy of MANUAL or SS_PERFORMANCE');
    }
    if (audioConfiguration !== undefined) {
      if (mediaType !== 'REELS' || !viaFacebook(token)) return metaError(100, '(#100) param audio_configuration is only supported for Reels with Facebook Login');
      if (!audio.some((entry) => entry.audio_id === audioConfiguration.audio_id)) return metaError(100, '(#100) audio_configuration.audio_id is not a valid audio asset');
    }
    const item: FakeContainer = {
      id: next(), owner, mediaType, caption, isCarouselItem, children: [], collaborators, trialParams, audio: audioConfiguration,
      pendingChecks: state.processingChecks, expired: false, published: false,
    };
    if (mediaType === 'CAROUSEL') {
      const children = list(params.children) ?? [];
      if (children.length < 2 || children.length > 10) return metaError(100, 'Carousels need 2 to 10 items', { subcode: 2207028 });
      for (const child of children) {
        const found = containers.find((candidate) => candidate.id === child && candidate.owner === owner && candidate.isCarouselItem);
        if (!found) return metaError(100, `(#100) Child ${child} is not a carousel item container of this account`);
        if (statusOf(found).status_code !== 'FINISHED') return metaError(9007, 'Media ID is not available: the carousel items must be FINISHED', { subcode: 2207027 });
      }
      item.children = children;
    } else {
      item.imageUrl = text(params.image_url);
      item.videoUrl = text(params.video_url);
      const video = mediaType === 'VIDEO' || mediaType === 'REELS' || (mediaType === 'STORIES' && item.videoUrl !== undefined);
      const source = video ? item.videoUrl : item.imageUrl;
      if (!source) return metaError(100, `(#100) The parameter ${video ? 'video_url' : 'image_url'} is required`);
      const bytes = await pull(source);
      if (video) item.failure = !bytes ? 2207052 : MP4(bytes) ? undefined : 2207026;
      else if (!bytes) return metaError(9004, `The media could not be fetched from this uri: ${source}`, { subcode: 2207052 });
      else if (!JPEG(bytes)) return metaError(36001, 'The image format is not supported.', { subcode: 2207005 });
    }
    containers.push(item);
    return { json: { id: item.id } };
  }

  function publishContainer(request: RecordedRequest, token: FakeToken): FakeReply {
    const owner = segment(request, 2);
    if (!instagramOf(token).includes(owner)) return notFound(owner);
    const creationId = text(paramsOf(request).creation_id);
    const item = containers.find((candidate) => candidate.id === creationId && candidate.owner === owner);
    if (!item || item.isCarouselItem) return metaError(100, `(#100) creation_id ${creationId} is not a publishable container of this account`, { subcode: 2207006 });
    if (item.published) return metaError(100, 'The media has already been published', { subcode: 2207006 });
    if (item.pendingChecks > 0 || item.failure || item.expired) return metaError(9007, 'The media is not ready for publishing, please wait for a moment', { subcode: 2207027 });
    const dayAgo = new Date(Date.now() - DAY).toISOString();
    if (media.filter((entry) => entry.owner === owner && entry.timestamp > dayAgo).length >= state.quotaTotal) return metaError(9, 'Application request limit reached', { subcode: 2207042 });
    item.published = true;
    const id = `1790${next()}`;
    const video = item.mediaType === 'REELS' || (item.mediaType === 'STORIES' && item.videoUrl !== undefined);
    media.push({
      id,
      owner,
      containerId: item.id,
      caption: item.caption,
      mediaType: item.mediaType === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : video ? 'VIDEO' : 'IMAGE',
      productType: item.mediaType === 'STORIES' ? 'STORY' : item.mediaType === 'REELS' ? 'REELS' : 'FEED',
      permalink: `https://www.instagram.com/p/${Buffer.from(id).toString('base64url').slice(0, 11)}/`,
      timestamp: new Date().toISOString(),
    });
    return { json: { id } };
  }

  const isInstagramComment = (comment: FakeComment): boolean =>
    media.some((item) => item.id === comment.parentId) || comments.some((parent) => parent.id === comment.parentId && media.some((item) => item.id === parent.parentId));
  /** The node type (in Meta's specs) of what an id names, as the token sees it: Instagram Login has its own user and media. */
  function typeOf(id: string, token: FakeToken): string | undefined {
    const instagramLogin = !viaFacebook(token);
    if (id === 'me') return instagramLogin ? 'IGUserForIGOnlyAPI' : token.kind === 'page' ? 'Page' : 'User';
    if (pages.some((page) => page.id === id)) return 'Page';
    if (containers.some((item) => item.id === id)) return 'ShadowIGMediaBuilder';
    if (media.some((item) => item.id === id)) return instagramLogin ? 'IGMediaForIGOnlyAPI' : 'IGMedia';
    if (instagramAccounts().some((account) => account.id === id)) return instagramLogin ? 'IGUserForIGOnlyAPI' : 'IGUser';
    if (posts.some((post) => post.id === id)) return 'PagePost';
    if (videos.some((video) => video.id === id)) return 'AdVideo';
    if (photos.some((photo) => photo.id === id)) return 'Photo';
    const comment = comments.find((entry) => entry.id === id);
    // Instagram Login's specs have no comment node: its comments are the IG Comment node of the Facebook login.
    if (comment) return isInstagramComment(comment) ? 'IGComment' : 'Comment';
    return undefined;
  }

  function register(server: FakeServer): void {
    server.on(
      'GET',
      '/*/me',
      versioned((request, token) => {
        if (token.kind === 'ig' || token.kind === 'ig-short') {
          return answer(project({ id: solo.appScopedId, user_id: solo.userId, username: solo.username, name: solo.name, profile_picture_url: solo.profile_picture_url, account_type: 'BUSINESS', followers_count: solo.followers_count }, request, ['id']));
        }
        if (!token.kind.startsWith('user')) return metaError(100, '(#100) /me needs a user token');
        return answer(project({ id: user.id, name: user.name, picture: { data: { url: user.picture, is_silhouette: false } } }, request, ['id', 'name']));
      }),
    );

    server.on(
      'GET',
      '/*/me/accounts',
      versioned((request, token) => {
        if (!token.kind.startsWith('user')) return metaError(100, '(#100) Tried accessing nonexisting field (accounts) on node type (Page)');
        const limit = Number(request.query.get('limit') ?? 25);
        const after = Number(request.query.get('after') ?? 0);
        const slice = pages.slice(after, after + limit);
        const data = [];
        for (const page of slice) {
          const instagram = page.instagram && { ...page.instagram };
          const projected = project({ id: page.id, name: page.name, username: page.username, access_token: pageToken(page.id), category: 'Bakery', tasks: page.tasks, picture: { data: { url: page.picture } }, instagram_business_account: instagram }, request, ['id', 'name', 'access_token']);
          if (projected.refusal) return projected.refusal;
          data.push(projected.value);
        }
        const more = after + limit < pages.length;
        const nextUrl = new URL(`${url}${request.path}`);
        for (const [key, value] of request.query) nextUrl.searchParams.set(key, value);
        nextUrl.searchParams.set('after', String(after + limit));
        return { json: { data, paging: { cursors: { before: String(after), after: String(after + limit) }, ...(more ? { next: nextUrl.toString() } : {}) } } };
      }),
    );

    server.on(
      'GET',
      '/*/ig_audio',
      versioned((request, token) => {
        const type = request.query.get('audio_type');
        if (type !== 'music' && type !== 'original_sound') return metaError(100, '(#100) audio_type must be one of music, original_sound');
        if (!viaFacebook(token)) return metaError(100, '(#100) The Audio API is not supported on Instagram API with Instagram Login');
        if (!instagramOf(token).includes(request.query.get('user_id') ?? '')) return metaError(100, '(#100) user_id must be the Instagram account of the token');
        const words = (request.query.get('search_query') ?? '').toLowerCase();
        return { json: { audio: audio.filter((entry) => entry.audio_type === type && (!words || `${entry.title} ${entry.display_artist ?? entry.ig_username}`.toLowerCase().includes(words))) } };
      }),
    );

    server.on(
      'POST',
      '/*/*/feed',
      pageEdge((_request, pageId, params) => {
        const attached = (json(params.attached_media) as { media_fbid?: string }[] | undefined) ?? [];
        const message = text(params.message);
        const link = text(params.link);
        if (!message && !link && attached.length === 0) return metaError(100, '(#100) Missing message or attachment');
        for (const [index, entry] of attached.entries()) {
          const photo = photos.find((candidate) => candidate.id === text(json(entry)?.media_fbid ?? entry));
          if (!photo || photo.pageId !== pageId || photo.published || photo.attached) return metaError(100, `(#100) param attached_media[${index}] must be an unpublished photo of this Page`);
        }
        const photoIds = attached.map((entry) => text(entry.media_fbid)!);
        for (const photo of photos.filter((candidate) => photoIds.includes(candidate.id))) photo.attached = true;
        return { json: { id: newPost(pageId, { message, link, photoIds }).id } };
      }),
    );

    server.on(
      'POST',
      '/*/*/photos',
      pageEdge(async (_request, pageId, params) => {
        const source = text(params.url);
        if (!source) return metaError(324, '(#324) Requires upload file');
        const bytes = await pull(source);
        if (!bytes || !PICTURE(bytes)) return metaError(324, '(#324) Missing or invalid image file', { subcode: 2069019 });
        const photo: FakePhoto = { id: next(), pageId, url: source, caption: text(params.caption), published: flag(params.published, true), bytes: bytes.length, attached: false };
        photos.push(photo);
        if (!photo.published) return { json: { id: photo.id } };
        const post = newPost(pageId, { message: photo.caption, photoIds: [photo.id] });
        photo.postId = post.id;
        return { json: { id: photo.id, post_id: post.id } };
      }),
    );

    server.on(
      'POST',
      '/*/*/videos',
      pageEdge(async (_request, pageId, params) => {
        const fileUrl = text(params.file_url);
        if (!fileUrl) return metaError(100, '(#100) A video needs file_url or source');
        const bytes = await pull(fileUrl);
        const video: FakeVideo = { id: next(), pageId, fileUrl, description: text(params.description), pendingChecks: state.processingChecks, failed: !bytes || !MP4(bytes), bytes: bytes?.length ?? 0, createdTime: new Date().toISOString() };
        videos.push(video);
        return { json: { id: video.id } };
      }),
    );

    server.on(
      'POST',
      '/*/*/comments',
      versioned(async (request, token) => {
        const id = segment(request, 2);
        const params = paramsOf(request);
        const message = text(params.message);
        const item = media.find((candidate) => candidate.id === id);
        if (item) {
          if (!instagramOf(token).includes(item.owner)) return notFound(id);
          if (!message) return metaError(100, '(#100) The parameter message is required');
          const comment: FakeComment = { id: `1780${next()}`, parentId: id, authorId: item.owner, message, createdTime: new Date().toISOString() };
          comments.push(comment);
          return { json: { id: comment.id } };
        }
        const target = comments.find((comment) => comment.id === id);
        // A reply to a comment: Facebook nests two levels, so a reply (a comment whose parent is a comment) takes none.
        if (target && comments.some((comment) => comment.id === target.parentId)) return metaError(100, '(#100) Can not comment on a reply: answer its top-level comment');
        const on = target?.parentId ?? id;
        const owner = posts.find((post) => post.id === on)?.pageId ?? videos.find((video) => video.id === on)?.pageId;
        if (!owner || token.kind !== 'page' || token.subject !== owner) return notFound(id);
        const attachmentUrl = text(params.attachment_url);
        if (!message && !attachmentUrl) return metaError(100, '(#100) Missing message or attachment');
        if (attachmentUrl) {
          const bytes = await pull(attachmentUrl);
          if (!bytes || !PICTURE(bytes)) return metaError(100, '(#100) The attachment_url could not be downloaded as a picture');
        }
        const comment: FakeComment = { id: `${id.split('_').at(-1)}_${next()}`, parentId: id, authorId: owner, message, attachmentUrl, createdTime: new Date().toISOString() };
        comments.push(comment);
        return { json: { id: comment.id } };
      }),
    );

    server.on('POST', '/*/*/media', versioned(createContainer));
    server.on('POST', '/*/*/media_publish', versioned(publishContainer));

    const listing = (items: Record<string, unknown>[], request: RecordedRequest, defaults: string[]): FakeReply => {
      const limit = Number(request.query.get('limit') ?? 25);
      const data = [];
      for (const item of items.slice(0, limit)) {
        const projected = project(item, request, defaults);
        if (projected.refusal) return projected.refusal;
        data.push(projected.value);
      }
      return { json: { data } };
    };

    for (const edge of ['published_posts', 'posts']) {
      server.on(
        'GET',
        `/*/*/${edge}`,
        versioned((request, token) => {
          const pageId = segment(request, 2);
          if (token.kind !== 'page' || token.subject !== pageId) return notFound(pageId);
          return listing(posts.filter((post) => post.pageId === pageId).reverse().map(postObject), request, ['id', 'message', 'created_time']);
        }),
      );
    }

    server.on(
      'GET',
      '/*/*/videos',
      versioned((request, token) => {
        const pageId = segment(request, 2);
        if (token.kind !== 'page' || token.subject !== pageId) return notFound(pageId);
        return listing(videos.filter((video) => video.pageId === pageId).reverse().map(videoObject), request, ['id', 'description']);
      }),
    );

    server.on(
      'GET',
      '/*/*/comments',
      versioned((request) => {
        const id = segment(request, 2);
        const instagram = media.some((item) => item.id === id);
        const authorOf = (comment: FakeComment) => instagramAccounts().find((account) => account.id === comment.authorId) ?? pages.find((page) => page.id === comment.authorId);
        const ordered = request.query.get('order') === 'reverse_chronological' ? commentsOn(id).reverse() : commentsOn(id);
        const items = ordered.map((comment) =>
          instagram
            ? { id: comment.id, text: comment.message, timestamp: graphTime(comment.createdTime), from: { id: comment.authorId, username: (authorOf(comment) as { username?: string })?.username } }
            : { id: comment.id, message: comment.message, created_time: graphTime(comment.createdTime), from: { id: comment.authorId, name: authorOf(comment)?.name } },
        );
        return listing(items, request, instagram ? ['id', 'text', 'timestamp'] : ['id', 'message', 'created_time']);
      }),
    );

    server.on('GET', '/*/*/insights', versioned((request, token) => insightsOf(request, token, segment(request, 2))));

    for (const [edge, story] of [['media', false], ['stories', true]] as const) {
      server.on(
        'GET',
        `/*/*/${edge}`,
        versioned((request, token) => {
          const owner = segment(request, 2);
          if (!instagramOf(token).includes(owner)) return notFound(owner);
          let items = media.filter((item) => item.owner === owner && (item.productType === 'STORY') === story).reverse();
          // Instagram's media edges are eventually consistent: a post just published may be missing for a read or two.
          if (state.listingLag > 0) {
            state.listingLag -= 1;
            items = items.filter((item) => Date.parse(item.timestamp) < Date.now() - 60_000);
          }
          return listing(items.map(mediaObject), request, ['id']);
        }),
      );
    }

    server.on(
      'GET',
      '/*/*/content_publishing_limit',
      versioned((request, token) => {
        const owner = segment(request, 2);
        if (!instagramOf(token).includes(owner)) return notFound(owner);
        const dayAgo = new Date(Date.now() - DAY).toISOString();
        const usage = media.filter((item) => item.owner === owner && item.timestamp > dayAgo).length;
        const config = topFields(request.query.get('fields')).includes('config') ? { config: { quota_total: state.quotaTotal, quota_duration: 86400 } } : {};
        return { json: { data: [{ quota_usage: usage, ...config }] } };
      }),
    );

    server.on(
      'GET',
      '/*/*',
      versioned((request, token) => {
        const id = segment(request, 2);
        const container = containers.find((item) => item.id === id);
        if (container) {
          if (!instagramOf(token).includes(container.owner)) return notFound(id);
          const projected = answer(project({ id, ...statusOf(container) }, request, ['id']));
          if (container.pendingChecks > 0 && topFields(request.query.get('fields')).includes('status_code')) container.pendingChecks -= 1;
          return projected;
        }
        const item = media.find((candidate) => candidate.id === id);
        if (item) return instagramOf(token).includes(item.owner) ? answer(project(mediaObject(item), request, ['id'])) : notFound(id);
        const account = instagramAccounts().find((candidate) => candidate.id === id);
        if (account) {
          if (!instagramOf(token).includes(id)) return notFound(id);
          return answer(project({ ...account, media_count: media.filter((entry) => entry.owner === id).length }, request, ['id']));
        }
        const post = posts.find((candidate) => candidate.id === id);
        if (post) return token.kind === 'page' && token.subject === post.pageId ? answer(project(postObject(post), request, ['id', 'message', 'created_time'])) : notFound(id);
        const video = videos.find((candidate) => candidate.id === id);
        if (video) {
          if (token.kind !== 'page' || token.subject !== video.pageId) return notFound(id);
          const projected = answer(project(videoObject(video), request, ['id']));
          if (video.pendingChecks > 0 && topFields(request.query.get('fields')).includes('status')) video.pendingChecks -= 1;
          return projected;
        }
        const comment = comments.find((candidate) => candidate.id === id);
        if (comment) return answer(project({ id, message: comment.message, created_time: graphTime(comment.createdTime), permalink_url: `https://www.facebook.com/${comment.parentId}?comment_id=${id}` }, request, ['id']));
        return notFound(id);
      }),
    );
  }

  return {
    register,
    typeOf,
    /** What the comment and change routes (test/fakes/meta-comments.ts) share with the rest of the model. */
    internals: { posts, videos, comments, media, instagramOf, notFound, segment, paramsOf, next, commentsOn },
    state: {
      posts,
      photos,
      videos,
      comments,
      containers,
      media,
      fetches,
      audio,
      insights,
      /** Containers and videos created afterwards answer IN_PROGRESS (processing) on their first `n` status reads. */
      setProcessingChecks(n: number) {
        state.processingChecks = n;
      },
      /** The next `reads` listings of an account's media or stories leave out what was published in the last minute. */
      setListingLag(reads: number) {
        state.listingLag = reads;
      },
      /** API-published posts allowed in 24 hours (content_publishing_limit and media_publish). */
      setQuota(total: number) {
        state.quotaTotal = total;
      },
    },
  };
}

export type GraphModel = ReturnType<typeof createGraphModel>;
