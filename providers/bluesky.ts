// Bluesky (AT Protocol): an app-password session on the user's PDS, raw XRPC calls through context.fetch.
// Sessions are stored and refreshed with refreshSession; createSession runs again only when the refresh token is dead.
import { z } from 'zod';
import { PlatformHttpError, type PlatformFetch, type PlatformHttpErrorInit, type PlatformRequest } from '../src/lib/platform-http.js';
import { imageSize } from '../src/lib/media-probe.js';
import type { ChannelAuth, PublishItem, PublishedRef, Provider, ProviderContext } from './types.js';
import { currentMetric, jwtExpiry } from './shared.js';

const endpoints = { service: 'https://bsky.social', web: 'https://bsky.app' };
const MAX_IMAGES = 4;
/** app.bsky.feed.post: text is at most 300 graphemes and 3000 bytes of UTF-8. */
const MAX_TEXT_BYTES = 3000;
/** app.bsky.embed.images: an image blob is at most 1,000,000 bytes (the PDS refuses more: "blob too big"). */
const MAX_IMAGE_BYTES = 1_000_000;
const TOO_MANY_IMAGES = 'There can be maximum 4 pictures in a post.';
const ONE_VIDEO = 'You can only upload one video per post.';
const VIDEO_NOT_SUPPORTED = 'Video is not supported yet on Bluesky in Herald: post text and up to 4 images instead.';

const sessionSchema = z.object({ accessJwt: z.string(), refreshJwt: z.string(), did: z.string(), handle: z.string() });
const count = z.number().optional();
const profileSchema = z.object({ did: z.string(), handle: z.string(), displayName: z.string().optional(), avatar: z.string().optional(), followersCount: count, followsCount: count, postsCount: count });
// Kept loose: the blob object goes back to the PDS exactly as it came.
const uploadSchema = z.object({
  blob: z.looseObject({ $type: z.literal('blob'), ref: z.looseObject({ $link: z.string() }), mimeType: z.string(), size: z.number() }),
});
const createdSchema = z.object({ uri: z.string(), cid: z.string() });
const postViewSchema = z.object({ uri: z.string(), cid: z.string(), author: z.object({ did: z.string() }), embed: z.unknown().optional(),
  likeCount: count, repostCount: count, replyCount: count, quoteCount: count });
const postsSchema = z.object({ posts: z.array(postViewSchema) });
const feedSchema = z.object({ feed: z.array(z.object({ post: postViewSchema })) });
const imagesViewSchema = z.object({ images: z.array(z.object({ thumb: z.string() })).min(1) });

type Session = z.infer<typeof sessionSchema>;
type XrpcRequest<T> = Omit<PlatformRequest<T>, 'url' | 'schema' | 'classify'> & { token?: string };

/** Bluesky answers an expired or revoked token with 400 ExpiredToken/InvalidToken: call it 401 so the core refreshes. */
function classify(status: number, body: string): Partial<PlatformHttpErrorInit> | undefined {
  if (status !== 400) return undefined;
  try {
    const { error } = JSON.parse(body) as { error?: unknown };
    if (error === 'ExpiredToken' || error === 'InvalidToken') return { status: 401, retryable: false };
  } catch {
    /* not JSON: keep the default classification */
  }
  return undefined;
}

const trimSlashes = (url: string) => url.replace(/\/+$/, '');
const serviceOf = (context: ProviderContext) => trimSlashes(context.auth.data.service || context.endpoints.service || endpoints.service);

async function xrpc<T>(fetch: PlatformFetch, service: string, nsid: string, schema: z.ZodType<T>, request: XrpcRequest<T> = {}): Promise<T> {
  const { token, headers, ...rest } = request;
  const response = await fetch({
    ...rest,
    url: `${service}/xrpc/${nsid}`,
    schema,
    classify,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
  });
  return response.data;
}

const call = <T>(context: ProviderContext, nsid: string, schema: z.ZodType<T>, request: XrpcRequest<T> = {}) =>
  xrpc(context.fetch, serviceOf(context), nsid, schema, { token: context.auth.accessToken, ...request });

const createSession = (fetch: PlatformFetch, service: string, identifier: string, password: string) =>
  xrpc(fetch, service, 'com.atproto.server.createSession', sessionSchema, { method: 'POST', json: { identifier, password } });

const tokensOf = (session: Session): Partial<ChannelAuth> => ({ accessToken: session.accessJwt, refreshToken: session.refreshJwt, expiresAt: jwtExpiry(session.accessJwt) });

// Rich-text facets: indexes are UTF-8 byte offsets into the text.
type Facet = { index: { byteStart: number; byteEnd: number }; features: Record<string, string>[] };
const byteOffset = (text: string, index: number) => Buffer.byteLength(text.slice(0, index), 'utf8');
const facetAt = (text: string, start: number, length: number, feature: Record<string, string>): Facet => ({
  index: { byteStart: byteOffset(text, start), byteEnd: byteOffset(text, start + length) },
  features: [feature],
});

export function facetsOf(text: string): Facet[] {
  const facets: Facet[] = [];
  for (const match of text.matchAll(/https?:\/\/[^\s<>"]+/g)) {
    let uri = match[0].replace(/[.,;:!?'"]+$/, '');
    while (uri.endsWith(')') && uri.split(')').length > uri.split('(').length) uri = uri.slice(0, -1).replace(/[.,;:!?'"]+$/, '');
    if (/^https?:\/\/[^/]/.test(uri)) facets.push(facetAt(text, match.index, uri.length, { $type: 'app.bsky.richtext.facet#link', uri }));
  }
  for (const match of text.matchAll(/(^|\s)[#＃]([^\s#＃]+)/gu)) {
    const tag = match[2].replace(/\p{P}+$/u, '');
    if (tag.length === 0 || tag.length > 64 || /^\d+$/.test(tag)) continue;
    facets.push(facetAt(text, match.index + match[1].length, tag.length + 1, { $type: 'app.bsky.richtext.facet#tag', tag }));
  }
  return facets.sort((a, b) => a.index.byteStart - b.index.byteStart);
}

/**
 * A picture over the blob limit is re-encoded as JPEG (quality, then size, stepped down) until it fits; one that fits is
 * sent as it is.
 */
export async function fitImage(image: { bytes: Buffer; mimeType: string }): Promise<{ bytes: Buffer; mimeType: string }> {
  if (image.bytes.length <= MAX_IMAGE_BYTES) return image;
  const { default: sharp } = await import('sharp');
  const { width = 2000 } = await sharp(image.bytes).metadata();
  for (const scale of [1, 0.75, 0.5, 0.35, 0.25]) {
    for (const quality of [85, 70, 55]) {
      const bytes = await sharp(image.bytes)
        .rotate()
        .resize({ width: Math.max(1, Math.round(Math.min(width, 2000) * scale)), withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality, mozjpeg: true })
        .toBuffer();
      if (bytes.length <= MAX_IMAGE_BYTES) return { bytes, mimeType: 'image/jpeg' };
    }
  }
  throw new Error(`A picture of ${image.bytes.length} bytes could not be made smaller than Bluesky's ${MAX_IMAGE_BYTES} bytes.`);
}

function refOf(context: ProviderContext, uri: string, cid: string): PublishedRef {
  const [, , did, , rkey] = uri.split('/'); // at://did/collection/rkey
  const web = trimSlashes(context.endpoints.web || endpoints.web);
  return { id: uri, url: `${web}/profile/${did}/post/${rkey}`, meta: { cid } };
}

type StrongRef = { uri: string; cid: string };

async function strongRef(context: ProviderContext, ref: PublishedRef): Promise<StrongRef> {
  if (ref.meta?.cid) return { uri: ref.id, cid: ref.meta.cid };
  const { posts } = await call(context, 'app.bsky.feed.getPosts', postsSchema, { query: { uris: ref.id } });
  if (!posts[0]) throw new Error(`The Bluesky post ${ref.id} to reply to no longer exists.`);
  return { uri: posts[0].uri, cid: posts[0].cid };
}

async function createPost(context: ProviderContext, item: PublishItem, reply?: { root: StrongRef; parent: StrongRef }): Promise<PublishedRef> {
  if (item.media.some((media) => media.kind === 'video')) throw new Error(VIDEO_NOT_SUPPORTED);
  if (item.media.length > MAX_IMAGES) throw new Error(TOO_MANY_IMAGES);
  const images = [];
  for (const media of item.media) {
    const { bytes, mimeType } = await fitImage(await media.load());
    const { blob } = await call(context, 'com.atproto.repo.uploadBlob', uploadSchema, { method: 'POST', body: bytes, headers: { 'content-type': mimeType } });
    const aspectRatio = imageSize(bytes);
    images.push({ alt: media.alt ?? '', image: blob, ...(aspectRatio ? { aspectRatio } : {}) });
  }
  const facets = facetsOf(item.text);
  const record = {
    $type: 'app.bsky.feed.post',
    text: item.text,
    createdAt: new Date().toISOString(),
    ...(facets.length > 0 ? { facets } : {}),
    ...(images.length > 0 ? { embed: { $type: 'app.bsky.embed.images', images } } : {}),
    ...(reply ? { reply } : {}),
  };
  const created = await call(context, 'com.atproto.repo.createRecord', createdSchema, {
    method: 'POST',
    json: { repo: context.auth.internalId, collection: 'app.bsky.feed.post', record },
  });
  return refOf(context, created.uri, created.cid);
}


const bluesky: Provider = {
  identifier: 'bluesky',
  name: 'Bluesky',
  editor: 'plain',
  lengthMethod: 'graphemes',
  maxLength: () => 300,
  rules:
    'Bluesky posts are plain text of at most 300 graphemes and 3000 bytes. Pictures over 1 MB are re-encoded as JPEG to fit. A post carries up to 4 images, or 1 video, or no media, never images and a video together; ' +
    'video is not supported yet in Herald. Links and #hashtags become clickable by themselves. Extra items form a thread, each replying to the previous one.',
  settings: null,
  chain: 'thread',
  tools: [],
  endpoints,
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'service', label: 'Service (PDS) URL', type: 'url', required: false, endpoint: 'service', description: 'Leave empty unless your account lives on another PDS (a self-hosted one, say).' },
      { key: 'identifier', label: 'Handle or email', type: 'text', required: true, description: 'e.g. alice.bsky.social' },
      { key: 'appPassword', label: 'App password', type: 'password', required: true, description: 'Create one in Bluesky: Settings → Privacy and security → App passwords.' },
    ],
  },

  validate(items) {
    for (const [index, item] of items.entries()) {
      const bytes = Buffer.byteLength(item.text, 'utf8');
      if (bytes > MAX_TEXT_BYTES) {
        return `${index === 0 ? 'The post' : `Item ${index + 1}`} is ${bytes} bytes long; Bluesky takes at most ${MAX_TEXT_BYTES} bytes of text (an emoji takes 4 or more): shorten it.`;
      }
      const videos = item.media.filter((media) => media.kind === 'video').length;
      const images = item.media.length - videos;
      if (images > MAX_IMAGES) return TOO_MANY_IMAGES;
      if (videos > 1 || (videos === 1 && images > 0)) return ONE_VIDEO;
      if (videos === 1) return VIDEO_NOT_SUPPORTED;
    }
    return undefined;
  },

  async connect(context, fields) {
    const service = trimSlashes(fields.service?.trim() || context.endpoints.service || endpoints.service);
    const identifier = (fields.identifier ?? '').trim().replace(/^@/, '');
    const appPassword = fields.appPassword ?? '';
    const session = await createSession(context.fetch, service, identifier, appPassword);
    // The profile (display name, avatar) comes from an AppView; a self-hosted PDS may have none: the session's handle will do.
    const profile = await xrpc(context.fetch, service, 'app.bsky.actor.getProfile', profileSchema, { query: { actor: session.did }, token: session.accessJwt }).catch(() => undefined);
    return {
      internalId: session.did,
      name: profile?.displayName?.trim() || session.handle,
      profile: session.handle,
      picture: profile?.avatar,
      accessToken: session.accessJwt,
      refreshToken: session.refreshJwt,
      expiresAt: jwtExpiry(session.accessJwt),
      // The service is kept only when typed: otherwise the deployment's endpoint (SOCIAL_ENDPOINTS) applies, now and later.
      data: { ...(fields.service?.trim() ? { service } : {}), identifier, appPassword },
    };
  },

  async refresh(context) {
    const service = serviceOf(context);
    const { identifier, appPassword } = context.auth.data;
    if (context.auth.refreshToken) {
      try {
        return tokensOf(await xrpc(context.fetch, service, 'com.atproto.server.refreshSession', sessionSchema, { method: 'POST', token: context.auth.refreshToken }));
      } catch (error) {
        // A dead refresh token (400/401 ExpiredToken, InvalidToken) falls back to a new login with the stored app password.
        const dead = error instanceof PlatformHttpError && (error.status === 400 || error.status === 401);
        if (!dead || !identifier || !appPassword) throw error;
      }
    }
    return tokensOf(await createSession(context.fetch, service, identifier ?? '', appPassword ?? ''));
  },

  publish: (context, item) => createPost(context, item),

  async comment(context, item, thread) {
    return createPost(context, item, { root: await strongRef(context, thread.root), parent: await strongRef(context, thread.parent) });
  },

  async postAnalytics(context, post) {
    const { posts } = await call(context, 'app.bsky.feed.getPosts', postsSchema, { query: { uris: post.id } });
    const view = posts[0];
    if (!view) return [];
    return [currentMetric('Likes', view.likeCount), currentMetric('Reposts', view.repostCount), currentMetric('Replies', view.replyCount), currentMetric('Quotes', view.quoteCount)];
  },

  async analytics(context) {
    const profile = await call(context, 'app.bsky.actor.getProfile', profileSchema, { query: { actor: context.auth.internalId } });
    return [currentMetric('Followers', profile.followersCount), currentMetric('Following', profile.followsCount), currentMetric('Posts', profile.postsCount)];
  },

  async recent(context) {
    const did = context.auth.internalId;
    const { feed } = await call(context, 'app.bsky.feed.getAuthorFeed', feedSchema, { query: { actor: did, limit: 20 } });
    return feed
      .filter(({ post }) => post.author.did === did) // reposts of others' posts are not this account's content
      .map(({ post }) => {
        const images = imagesViewSchema.safeParse(post.embed);
        return { id: post.uri, url: images.success ? images.data.images[0].thumb : refOf(context, post.uri, post.cid).url! };
      });
  },
};

export default bluesky;
