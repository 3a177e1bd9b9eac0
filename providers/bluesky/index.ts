// Bluesky (AT Protocol): an app-password session on the user's PDS, raw XRPC calls through context.fetch.
// References: https://docs.bsky.app/docs/api/com-atproto-repo-create-record, …-repo-upload-blob, …-repo-get-record,
// app-bsky-feed-get-posts, app-bsky-feed-get-author-feed, app-bsky-actor-get-profile; lexicons app.bsky.feed.post,
// app.bsky.embed.images, app.bsky.embed.video, com-atproto-repo-delete-record, app-bsky-feed-get-post-thread and
// app.bsky.feed.defs#threadViewPost (comments)
// (read 2026-11-26/27; the lexicons of @atproto/api 0.19.19 are what the tests check
// every request against); facets in ./facets.ts, the video flow in ./video.ts.
// Sessions are stored and refreshed with refreshSession; createSession runs again only when the refresh token is dead.
// Exactly once: each post's record key (a TID) and createdAt are chosen and recorded before createRecord, so a create whose
// answer was lost is looked up with getRecord instead of being made twice.
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { imageSize } from '../../src/lib/media-probe.js';
import type { JsonValue, PlatformComment, PublishItem, PublishedRef, Provider, ProviderContext } from '../types.js';
import { currentMetric, engagementByDay, itemName, pagesSince, permanent } from '../shared.js';
import { MAX_VIDEO_BYTES, videoEmbed } from './video.js';
import { appViewRead, call, checkedWrite, createSession, endpoints, serviceOf, sessionSchema, tokensOf, trimSlashes, xrpc } from './xrpc.js';
import { facetsOf } from './facets.js';

const MAX_IMAGES = 4;
/** app.bsky.feed.post: text is at most 300 graphemes and 3000 bytes of UTF-8. */
const MAX_TEXT_BYTES = 3000;
/** app.bsky.embed.images: an image blob is at most 1,000,000 bytes (the PDS refuses more: "blob too big"). */
const MAX_IMAGE_BYTES = 1_000_000;
const TOO_MANY_IMAGES = 'There can be maximum 4 pictures in a post.';
const ONE_VIDEO = 'A Bluesky post carries one video alone: no second video and no pictures with it. Move the other media to another item.';

const count = z.number().optional();
const profileSchema = z.object({ did: z.string(), handle: z.string(), displayName: z.string().optional(), avatar: z.string().optional(), followersCount: count, followsCount: count, postsCount: count });
// Kept loose: the blob object goes back to the PDS exactly as it came.
const uploadSchema = z.object({
  blob: z.looseObject({ $type: z.literal('blob'), ref: z.looseObject({ $link: z.string() }), mimeType: z.string(), size: z.number() }),
});
const createdSchema = z.object({ uri: z.string(), cid: z.string() });
const postViewSchema = z.object({ uri: z.string(), cid: z.string(), author: z.object({ did: z.string() }), embed: z.unknown().optional(), indexedAt: z.string(),
  likeCount: count, repostCount: count, replyCount: count, quoteCount: count });
const postsSchema = z.object({ posts: z.array(postViewSchema) });
const feedSchema = z.object({ feed: z.array(z.object({ post: postViewSchema })), cursor: z.string().optional() });
const imagesViewSchema = z.object({ images: z.array(z.object({ thumb: z.string() })).min(1) });

/** A record key for app.bsky.feed.post: a TID, 13 base32-sortable characters of microseconds since the epoch and a clock id. */
function newTid(): string {
  const alphabet = '234567abcdefghijklmnopqrstuvwxyz';
  let value = (BigInt(Date.now()) * 1000n + BigInt(randomInt(1000))) << 10n | BigInt(randomInt(1024));
  let tid = '';
  for (let index = 0; index < 13; index++) {
    tid = alphabet[Number(value & 31n)] + tid;
    value >>= 5n;
  }
  return tid;
}

/**
 * A picture over the blob limit is re-encoded as JPEG (quality, then size, stepped down) until it fits; one that fits is
 * sent as it is.
 */
async function fitImage(image: { bytes: Buffer; mimeType: string }): Promise<{ bytes: Buffer; mimeType: string }> {
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

/** The post's uri and cid; a ref stored without its cid is read from the PDS (getRecord needs no AppView). */
async function strongRef(context: ProviderContext, ref: PublishedRef): Promise<StrongRef> {
  if (ref.meta?.cid) return { uri: ref.id, cid: ref.meta.cid };
  const [, , repo, collection, rkey] = ref.id.split('/'); // at://did/collection/rkey
  try {
    const found = await call(context, 'com.atproto.repo.getRecord', createdSchema.extend({ cid: z.string() }), { query: { repo, collection, rkey } });
    return { uri: found.uri, cid: found.cid };
  } catch (error) {
    if (error instanceof PlatformHttpError && error.status === 400 && /RecordNotFound/.test(error.bodyExcerpt)) throw permanent(`The Bluesky post ${ref.id} to reply to no longer exists.`);
    throw error;
  }
}

async function imagesEmbed(context: ProviderContext, item: PublishItem) {
  const images = [];
  for (const media of item.media) {
    const { bytes, mimeType } = await fitImage(await media.load());
    const { blob } = await checkedWrite(context, () => call(context, 'com.atproto.repo.uploadBlob', uploadSchema, { method: 'POST', body: bytes, headers: { 'content-type': mimeType } }));
    const aspectRatio = imageSize(bytes);
    images.push({ alt: media.alt ?? '', image: blob, ...(aspectRatio ? { aspectRatio } : {}) });
  }
  return { $type: 'app.bsky.embed.images', images };
}

async function createPost(context: ProviderContext, item: PublishItem, reply?: { root: StrongRef; parent: StrongRef }): Promise<PublishedRef> {
  const video = item.media.find((media) => media.kind === 'video');
  if (video && item.media.length > 1) throw permanent(ONE_VIDEO);
  if (item.media.length > MAX_IMAGES) throw permanent(TOO_MANY_IMAGES);
  const embed = video ? await videoEmbed(context, video) : item.media.length > 0 ? await imagesEmbed(context, item) : undefined;
  const { rkey, createdAt } = (await context.step('record', async () => ({ rkey: newTid(), createdAt: new Date().toISOString() }))) as { rkey: string; createdAt: string };
  const facets = await facetsOf(context, item.text);
  const record = {
    $type: 'app.bsky.feed.post',
    text: item.text,
    createdAt,
    ...(facets ? { facets } : {}),
    ...(embed ? { embed } : {}),
    ...(reply ? { reply } : {}),
  };
  const repo = context.auth.internalId;
  const created = await context.step(
    'post',
    async () => (await checkedWrite(context, () => call(context, 'com.atproto.repo.createRecord', createdSchema, { method: 'POST', json: { repo, collection: 'app.bsky.feed.post', rkey, record } }))) as JsonValue,
    // A create whose answer was lost: the record key is ours, so the PDS says whether the post exists.
    async () => {
      try {
        const found = await call(context, 'com.atproto.repo.getRecord', createdSchema.extend({ cid: z.string() }), { query: { repo, collection: 'app.bsky.feed.post', rkey } });
        return { uri: found.uri, cid: found.cid };
      } catch (error) {
        if (error instanceof PlatformHttpError && error.status === 400 && /RecordNotFound|not found/i.test(error.bodyExcerpt)) return undefined;
        throw error;
      }
    },
  );
  const { uri, cid } = created as { uri: string; cid: string };
  return refOf(context, uri, cid);
}

/**
 * Deletes a post record of this account (com.atproto.repo.deleteRecord, by its own record key). The PDS answers a delete of
 * a record that is already gone as done, so a repeat after a lost answer is harmless and never touches another record.
 */
async function deletePost(context: ProviderContext, ref: PublishedRef): Promise<void> {
  const [repo, collection, rkey] = ref.id.replace(/^at:\/\//, '').split('/');
  if (collection !== 'app.bsky.feed.post' || !rkey) throw permanent(`${ref.id} is not the address of a Bluesky post (at://did/app.bsky.feed.post/rkey).`);
  if (repo !== context.auth.internalId) throw permanent(`The post ${ref.id} belongs to another account than this channel's (${context.auth.internalId}): Herald deletes only the channel's own posts.`);
  await context.step('delete', async () => {
    await checkedWrite(context, () => call(context, 'com.atproto.repo.deleteRecord', z.looseObject({}), { method: 'POST', json: { repo, collection, rkey } }));
    return true;
  });
}

/** A reply in a thread view; `replies` holds threadViewPost, notFoundPost or blockedPost ($type tells which). */
type ThreadNode = { $type?: string; post?: z.infer<typeof threadPostSchema>; replies?: ThreadNode[] };
const threadPostSchema = z.object({
  uri: z.string(),
  cid: z.string(),
  author: z.object({ did: z.string(), handle: z.string(), displayName: z.string().optional(), avatar: z.string().optional() }),
  record: z.looseObject({ text: z.string().optional(), createdAt: z.string().optional(), reply: z.object({ parent: z.object({ uri: z.string() }) }).optional() }),
  indexedAt: z.string(),
});
const threadNodeSchema: z.ZodType<ThreadNode> = z.lazy(() => z.looseObject({ $type: z.string().optional(), post: threadPostSchema.optional(), replies: z.array(threadNodeSchema).optional() }));
/** How deep a thread is read: the AppView answers up to 1000 levels; replies deeper than this are read on a later poll of the branch's post. */
const THREAD_DEPTH = 50;

/** Every reply under the post, at any depth the AppView answers (getPostThread, no parents), flattened. */
async function repliesOf(context: ProviderContext, uri: string): Promise<PlatformComment[]> {
  const { thread } = await appViewRead(context, 'app.bsky.feed.getPostThread', z.object({ thread: threadNodeSchema }), { query: { uri, depth: THREAD_DEPTH, parentHeight: 0 } });
  if (thread.$type && thread.$type !== 'app.bsky.feed.defs#threadViewPost') throw permanent(`Bluesky no longer shows the post ${uri} (${thread.$type.split('#')[1]}).`);
  const found: PlatformComment[] = [];
  const walk = (node: ThreadNode) => {
    for (const reply of node.replies ?? []) {
      // notFoundPost (deleted) and blockedPost carry no text to read.
      if (reply.$type !== 'app.bsky.feed.defs#threadViewPost' || !reply.post) continue;
      const { post } = reply;
      const ref = refOf(context, post.uri, post.cid);
      found.push({
        id: post.uri,
        parentId: post.record.reply?.parent.uri,
        author: { id: post.author.did, name: post.author.displayName?.trim() || post.author.handle, handle: post.author.handle, url: `${trimSlashes(context.endpoints.web || endpoints.web)}/profile/${post.author.handle}`, picture: post.author.avatar },
        text: post.record.text ?? '',
        createdAt: post.record.createdAt ?? post.indexedAt,
        url: ref.url,
        meta: { cid: post.cid },
        byAccount: post.author.did === context.auth.internalId,
      });
      walk(reply);
    }
  };
  walk(thread);
  return found;
}

/** The account's own posts of the last `days` days (reposts of others left out), up to three pages of 100. */
async function postsOfPeriod(context: ProviderContext, days: number) {
  const did = context.auth.internalId;
  const posts = await pagesSince(3, new Date(Date.now() - days * 86_400_000), async (cursor) => {
    const feed = await appViewRead(context, 'app.bsky.feed.getAuthorFeed', feedSchema, { query: { actor: did, limit: 100, filter: 'posts_with_replies', ...(cursor ? { cursor } : {}) } });
    return { items: feed.feed.map(({ post }) => post), next: feed.cursor };
  }, (post) => post.indexedAt);
  return posts.filter((post) => post.author.did === did);
}

const bluesky: Provider = {
  identifier: 'bluesky',
  name: 'Bluesky',
  editor: 'plain',
  lengthMethod: 'graphemes',
  maxLength: () => 300,
  rules:
    'Bluesky posts are plain text of at most 300 graphemes and 3000 bytes. A post carries up to 4 pictures, or 1 video, or no media, never pictures and a video together. ' +
    'Pictures over 1 MB are re-encoded as JPEG to fit. A video is an MP4 of up to 100 MB and 3 minutes, processed by Bluesky\'s video service before the post goes out ' +
    '(the account needs a verified email, and Bluesky limits videos per day). Links (bare domains too, e.g. bsky.app), @handle mentions and #hashtags become clickable by themselves, as in Bluesky\'s app; a handle that does not exist stays plain text. Extra items form a thread, each replying to the previous one.',
  settings: null,
  chain: 'thread',
  tools: [],
  recordsSteps: true,
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
        return `${itemName(index)} is ${bytes} bytes long; Bluesky takes at most ${MAX_TEXT_BYTES} bytes of text (an emoji takes 4 or more): shorten it.`;
      }
      const videos = item.media.filter((media) => media.kind === 'video').length;
      const images = item.media.length - videos;
      if (images > MAX_IMAGES) return TOO_MANY_IMAGES;
      if (videos > 1 || (videos === 1 && images > 0)) return ONE_VIDEO;
      const big = item.media.find((media) => media.kind === 'video' && media.size !== undefined && media.size > MAX_VIDEO_BYTES);
      if (big) return `${itemName(index)} has a video of ${Math.round(big.size! / 1_000_000)} MB; Bluesky takes videos up to 100 MB: shorten or compress it.`;
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
      ...tokensOf(session),
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

  // A thread item, or a reply to someone's comment: the reply ref names the thread's root (the account's post) and the post it
  // answers (app.bsky.feed.post#replyRef), whose cid the comment's `meta` carries.
  async comment(context, item, thread) {
    return createPost(context, item, { root: await strongRef(context, thread.root), parent: await strongRef(context, thread.parent) });
  },

  deletePublished: (context, ref) => deletePost(context, ref),
  unchangeable: {
    edit: 'a Bluesky post is a signed record that Bluesky\'s apps do not let anyone edit (no edit in the API either): delete it and post again.',
  },
  comments: (context, post) => repliesOf(context, post.id),

  async postAnalytics(context, post) {
    const { posts } = await appViewRead(context, 'app.bsky.feed.getPosts', postsSchema, { query: { uris: post.id } });
    const view = posts[0];
    if (!view) return [];
    return [currentMetric('Likes', view.likeCount), currentMetric('Reposts', view.repostCount), currentMetric('Replies', view.replyCount), currentMetric('Quotes', view.quoteCount)];
  },

  async analytics(context, days) {
    const profile = await appViewRead(context, 'app.bsky.actor.getProfile', profileSchema, { query: { actor: context.auth.internalId } });
    const posts = (await postsOfPeriod(context, days)).map((post) => ({
      publishedAt: post.indexedAt,
      counts: { Likes: post.likeCount, Reposts: post.repostCount, Replies: post.replyCount, Quotes: post.quoteCount },
    }));
    return [
      currentMetric('Followers', profile.followersCount),
      currentMetric('Following', profile.followsCount),
      currentMetric('Posts', profile.postsCount),
      ...engagementByDay(days, posts, ['Likes', 'Reposts', 'Replies', 'Quotes'], 'Posts published'),
    ];
  },

  async recent(context) {
    const did = context.auth.internalId;
    const { feed } = await appViewRead(context, 'app.bsky.feed.getAuthorFeed', feedSchema, { query: { actor: did, limit: 20 } });
    return feed
      .filter(({ post }) => post.author.did === did) // reposts of others' posts are not this account's content
      .map(({ post }) => {
        const images = imagesViewSchema.safeParse(post.embed);
        return { id: post.uri, url: images.success ? images.data.images[0].thumb : refOf(context, post.uri, post.cid).url! };
      });
  },
};

export default bluesky;
