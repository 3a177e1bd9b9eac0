// Farcaster through Neynar's API v2: casts with picture embeds, in the chosen channels; later items reply to the previous cast.
// References: https://docs.neynar.com/reference/publish-cast (POST /v2/farcaster/cast, `idem`), …/lookup-signer (GET
// /v2/farcaster/signer), …/fetch-bulk-users, …/lookup-cast-by-hash-or-url, …/fetch-casts-for-user, …/search-channels, and
// Neynar's OpenAPI (github.com/neynarxyz/OAS src/api/spec.yaml), read 2026-11-26; the cast body and the answers read are
// checked against @neynar/nodejs-sdk 3.177.0's types (test/types/neynar-contract.ts).
// Comments and changes (read 2026-11-27, OAS src/api/spec.yaml at 4b9ecc6 of 2026-05-15): …/lookup-cast-conversation (GET
// /v2/farcaster/cast/conversation, identifier + type=hash, reply_depth 0–5, limit 1–50, cursor; `direct_replies` recursive up
// to reply_depth), …/delete-cast (DELETE /v2/farcaster/cast {signer_uuid, target_hash}: 404 when the cast is not found). A
// reply to a comment is a cast whose `parent` is that comment's hash (publish-cast). Farcaster has no edit of a cast (a cast is a
// signed protocol message; the protocol has CastAdd and CastRemove only) and no way for an author to hide or remove someone
// else's reply (a CastRemove only removes the signer's own casts): no editPublished, hideComment or deleteComment. Text limits are Farcaster's (snapchain
// validate_cast_add_body): 320 bytes for a cast, 1024 for a long cast, 10,000 for Pro accounts only; 2 embeds (4 with Pro).
//
// Credentials: the deployment's Neynar app is the platform's app setting (WARPCAST_CLIENT_ID = Neynar client id for the
// sign-in, WARPCAST_CLIENT_SECRET = the Neynar API key, sent as x-api-key on every call). A user's channel is a Neynar signer
// bound to that key: the signer_uuid (and fid) that Neynar's sign-in hands back, checked at connect.
import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import type { PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import type { ConnectContext, PlatformComment, PublishedRef, Provider, ProviderContext, PublishItem } from './types.js';
import { currentMetric, engagementByDay, firstProblem, noVideo, pagesSince, permanent } from './shared.js';

const endpoints = { api: 'https://api.neynar.com', web: 'https://farcaster.xyz' };
/** A long cast (any account): more than this is a Pro-only 10,000-byte cast, which Herald does not offer. */
const MAX_TEXT_BYTES = 1024;
const MAX_EMBEDS = 2;
const MAX_CHANNELS = 5;

const errorSchema = z.object({ message: z.string(), code: z.string().optional(), property: z.string().optional() });
const signerSchema = z.object({ signer_uuid: z.string(), status: z.enum(['generated', 'pending_approval', 'approved', 'revoked']), fid: z.number().int().optional(), permissions: z.array(z.string()).optional() });
const userSchema = z.object({
  fid: z.number().int(),
  username: z.string(),
  display_name: z.string().nullish(),
  pfp_url: z.string().nullish(),
  follower_count: z.number().int(),
  following_count: z.number().int(),
});
const castSchema = z.object({
  hash: z.string(),
  timestamp: z.string(),
  embeds: z.array(z.looseObject({ url: z.string().optional() })).default([]),
  reactions: z.object({ likes_count: z.number().int(), recasts_count: z.number().int() }),
  replies: z.object({ count: z.number().int() }),
});
const postedSchema = z.object({ success: z.boolean(), cast: z.object({ hash: z.string(), author: z.object({ fid: z.number().int() }), text: z.string() }) });
/** A cast of a conversation: `direct_replies` nest (Neynar types the deeper levels as plain objects), parsed level by level. */
const threadCastSchema = z.object({
  hash: z.string(),
  parent_hash: z.string().nullable(),
  text: z.string(),
  timestamp: z.string(),
  author: z.object({ fid: z.number().int(), username: z.string(), display_name: z.string().nullish(), pfp_url: z.string().nullish() }),
  replies: z.object({ count: z.number().int() }),
  direct_replies: z.array(z.unknown()).default([]),
});
const conversationSchema = z.object({ conversation: z.object({ cast: threadCastSchema }), next: z.object({ cursor: z.string().nullish() }).optional() });
const operationSchema = z.object({ success: z.boolean().optional(), message: z.string().optional() });
const channelSchema = z.object({ id: z.string(), name: z.string().optional(), description: z.string().optional(), image_url: z.string().optional(), follower_count: z.number().optional(), url: z.string() });

/**
 * The body of POST /v2/farcaster/cast/ as Herald sends it, and what Herald reads of Neynar's answers: both checked against
 * the types of Neynar's SDK (@neynar/nodejs-sdk, generated from its OpenAPI) by the type check, in test/types/neynar-contract.ts.
 */
export interface CastBody {
  signer_uuid: string;
  text: string;
  embeds?: { url: string }[];
  parent?: string;
  parent_author_fid?: number;
  channel_id?: string;
  idem: string;
}
/** The body of DELETE /v2/farcaster/cast/ (DeleteCastReqBody). */
export interface DeleteCastBody {
  signer_uuid: string;
  target_hash: string;
}
export type NeynarReads = {
  signer: z.infer<typeof signerSchema>;
  user: z.infer<typeof userSchema>;
  cast: z.infer<typeof castSchema>;
  posted: z.infer<typeof postedSchema>;
  channel: z.infer<typeof channelSchema>;
  conversation: z.infer<typeof conversationSchema>;
  deleted: z.infer<typeof operationSchema>;
  error: z.infer<typeof errorSchema>;
};

/** Neynar's error body `{message, code, property}`; a refused signer means reconnecting, a refused API key is the operator's to fix. */
function classify(status: number, body: string): Partial<PlatformHttpErrorInit> | undefined {
  let error: z.infer<typeof errorSchema> | undefined;
  try {
    error = errorSchema.parse(JSON.parse(body));
  } catch {
    return undefined;
  }
  const message = `${error.message}${error.property ? ` (${error.property})` : ''}`;
  if ((status === 401 || status === 403) && /signer/i.test(error.message)) return { status: 401, retryable: false, message };
  if (status === 401) return { status: 403, retryable: false, message: `${message}: the Neynar API key (WARPCAST_CLIENT_SECRET) of this Herald was refused` };
  return { message };
}

type Caller = Pick<ProviderContext, 'fetch' | 'endpoints' | 'client'>;

function apiKey(context: Caller): string {
  const key = context.client?.clientSecret;
  if (!key) {
    throw permanent('Farcaster is not configured on this Herald: the operator sets WARPCAST_CLIENT_ID and WARPCAST_CLIENT_SECRET (the Neynar app\'s client id and API key).');
  }
  return key;
}

async function neynar<T>(context: Caller, path: string, schema: z.ZodType<T>, request: { query?: Record<string, string | number | boolean>; json?: unknown; method?: 'DELETE' } = {}): Promise<T> {
  const base = (context.endpoints.api || endpoints.api).replace(/\/+$/, '');
  const { data } = await context.fetch({ method: request.method ?? (request.json ? 'POST' : 'GET'), url: `${base}/v2/farcaster/${path}`, headers: { 'x-api-key': apiKey(context) }, query: request.query, json: request.json, schema, classify });
  return data;
}

const lookupUser = async (context: Caller, fid: string) => (await neynar(context, 'user/bulk/', z.object({ users: z.array(userSchema) }), { query: { fids: fid } })).users[0];
const castUrl = (context: Caller, hash: string) => `${(context.endpoints.web || endpoints.web).replace(/\/+$/, '')}/~/conversations/${hash}`;

/** The casts one item made: one per channel (or one on the profile), kept in the ref so replies and analytics find them all. */
type Cast = { channel: string; hash: string };
const castsOf = (ref: PublishedRef): Cast[] => (ref.meta?.casts ? (JSON.parse(ref.meta.casts) as Cast[]) : [{ channel: '', hash: ref.id }]);

function refOf(context: Caller, casts: Cast[]): PublishedRef {
  return { id: casts[0].hash, url: castUrl(context, casts[0].hash), meta: { casts: JSON.stringify(casts) } };
}

const settingsSchema = z.object({
  subreddit: z
    .array(z.object({ value: z.object({ id: z.string().min(1).describe('Channel id from the subreddits tool, e.g. "farcaster"') }) }))
    .max(MAX_CHANNELS)
    .optional()
    .describe(`Farcaster channels to cast in (one cast each, at most ${MAX_CHANNELS}); none casts on the profile only`),
});

/**
 * One cast per target, each recorded as a step; Neynar's `idem` (our post id, with the channel when there are several) makes
 * a cast whose answer was lost safe to send again: Neynar answers the cast it already made.
 */
async function cast(context: ProviderContext, item: PublishItem, targets: { channel: string; parent?: string }[], step: string): Promise<PublishedRef> {
  const casts: Cast[] = [];
  for (const target of targets) {
    const name = target.channel || 'profile';
    const hash = await context.step(
      `${step}:${name}`,
      async () => {
        const body: CastBody = {
          signer_uuid: context.auth.accessToken,
          text: item.text,
          ...(item.media.length > 0 ? { embeds: item.media.map((file) => ({ url: file.url })) } : {}),
          ...(target.parent ? { parent: target.parent, parent_author_fid: Number(context.auth.internalId) } : target.channel ? { channel_id: target.channel } : {}),
          idem: targets.length > 1 ? `${item.postId}:${name}` : item.postId,
        };
        const posted = await neynar(context, 'cast/', postedSchema, { json: body });
        return posted.cast.hash;
      },
      async () => undefined, // an interrupted cast is sent again with the same idem: Neynar does not cast it twice
    );
    casts.push({ channel: target.channel, hash });
  }
  return refOf(context, casts);
}

/** Recent casts of the account, newest first: one page of 20, or up to `pages` pages of 150 reaching back to `since`. */
function recentCasts(context: ProviderContext, options: { pages: number; since?: Date; replies: boolean }) {
  const feedSchema = z.object({ casts: z.array(castSchema), next: z.object({ cursor: z.string().nullish() }).optional() });
  return pagesSince(options.pages, options.since ?? new Date(0), async (cursor) => {
    const query = { fid: context.auth.internalId, limit: options.pages > 1 ? 150 : 20, include_replies: options.replies, ...(cursor ? { cursor } : {}) };
    const feed = await neynar(context, 'feed/user/casts/', feedSchema, { query });
    return { items: feed.casts, next: feed.next?.cursor ?? undefined };
  }, (item) => item.timestamp);
}

/** The deepest level one conversation read answers (Neynar's maximum `reply_depth`), and its page size (maximum `limit`). */
const REPLY_DEPTH = 5;
const CONVERSATION_PAGE = 50;

/**
 * Every reply under the post's casts (one per channel), at any depth, oldest first. One conversation read answers replies up
 * to REPLY_DEPTH levels, its top level paged by cursor; a reply whose `replies.count` is more than the replies that came with
 * it (deeper than that, or cut by the page) has its own conversation read, once. Replies to one of the post's own casts are
 * comments on the post (no parent); the account's own casts (Herald's thread items, answers) are marked `byAccount`.
 */
async function repliesOf(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const own = new Set(castsOf(post).map((entry) => entry.hash));
  const found = new Map<string, PlatformComment>();
  const read = new Set<string>();
  const pending = [...own];
  const web = (context.endpoints.web || endpoints.web).replace(/\/+$/, '');
  const visit = (node: z.infer<typeof threadCastSchema>) => {
    const children = node.direct_replies.map((child) => threadCastSchema.parse(child));
    for (const child of children) {
      if (!own.has(child.hash) && !found.has(child.hash)) {
        found.set(child.hash, {
          id: child.hash,
          parentId: child.parent_hash && !own.has(child.parent_hash) ? child.parent_hash : undefined,
          author: { id: String(child.author.fid), name: child.author.display_name?.trim() || child.author.username, handle: child.author.username, url: `${web}/${child.author.username}`, picture: child.author.pfp_url ?? undefined },
          text: child.text,
          createdAt: child.timestamp,
          url: castUrl(context, child.hash),
          byAccount: String(child.author.fid) === context.auth.internalId,
        });
      }
      visit(child);
    }
    if (node.replies.count > children.length && !read.has(node.hash)) pending.push(node.hash);
  };
  while (pending.length > 0) {
    const hash = pending.shift()!;
    if (read.has(hash)) continue;
    read.add(hash);
    let cursor: string | undefined;
    do {
      const query = { identifier: hash, type: 'hash', reply_depth: REPLY_DEPTH, limit: CONVERSATION_PAGE, ...(cursor ? { cursor } : {}) };
      const page = await neynar(context, 'cast/conversation/', conversationSchema, { query });
      visit(page.conversation.cast);
      cursor = page.next?.cursor ?? undefined;
    } while (cursor);
  }
  return [...found.values()].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

/**
 * Deletes each cast an item made (one per channel), each a recorded step. A cast already gone (Neynar's 404 "not found")
 * counts as deleted, so a repeat after a lost answer deletes nothing else; only the item's own hashes are ever sent.
 */
async function deleteCasts(context: ProviderContext, ref: PublishedRef): Promise<void> {
  for (const entry of castsOf(ref)) {
    await context.step(`delete:${entry.channel || 'profile'}`, async () => {
      const body: DeleteCastBody = { signer_uuid: context.auth.accessToken, target_hash: entry.hash };
      try {
        await neynar(context, 'cast/', operationSchema, { method: 'DELETE', json: body });
      } catch (error) {
        // Neynar answers 404 for an unknown signer too: that one is a refusal, not a cast already gone.
        if (!(error instanceof PlatformHttpError && error.status === 404 && !/signer/i.test(error.message))) throw error;
      }
      return true;
    });
  }
}

const warpcast: Provider = {
  identifier: 'warpcast',
  name: 'Farcaster',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'signerUuid', label: 'Neynar signer', type: 'password', required: true, description: 'The signer_uuid that Sign In With Neynar gives back (a signer of this Herald\'s Neynar app).' },
      { key: 'fid', label: 'Farcaster ID (fid)', type: 'text', required: false, description: 'The fid that came with the signer; checked against it when given.' },
    ],
  },
  endpoints,
  maxLength: () => MAX_TEXT_BYTES,
  rules:
    `A cast of plain text of at most ${MAX_TEXT_BYTES} bytes (UTF-8: an emoji takes 4; casts over 320 bytes are long casts) with up to ${MAX_EMBEDS} pictures, ` +
    'embedded by their public URL (media must be reachable over public https); no video. ' +
    `Choose up to ${MAX_CHANNELS} channels with the subreddits tool (settings.subreddit): one cast is made in each; none casts on the profile. ` +
    'Later items reply to the previous cast (in each channel).',
  settings: settingsSchema,
  chain: 'thread',
  mediaByUrl: true,
  idempotentCreate: true,
  recordsSteps: true,
  validate: (items, settings) =>
    noVideo(items, 'Farcaster') ??
    firstProblem(items, ({ images }, item) => {
      const bytes = Buffer.byteLength(item.text, 'utf8');
      if (bytes > MAX_TEXT_BYTES) return `is ${bytes} bytes long; a Farcaster cast takes at most ${MAX_TEXT_BYTES} bytes (an emoji takes 4): shorten it.`;
      return images > MAX_EMBEDS ? `has ${images} pictures; a cast takes at most ${MAX_EMBEDS}.` : undefined;
    }) ??
    (() => {
      const ids = ((settings.subreddit ?? []) as { value: { id: string } }[]).map((entry) => entry.value.id);
      const twice = ids.find((id, index) => ids.indexOf(id) !== index);
      return twice ? `The channel "${twice}" is chosen twice in settings.subreddit: keep it once.` : undefined;
    })(),
  tools: [
    {
      methodName: 'subreddits',
      description: 'Searches Farcaster channels by id or name; use a result\'s id in settings.subreddit as [{value: {id}}].',
      dataSchema: [{ key: 'word', type: 'string', description: 'Part of the channel id or name, e.g. "art"' }],
      async run(context, data) {
        const word = (data.word ?? '').trim();
        if (!word) throw invalidInput('Give a word to search channels for.', { hint: 'e.g. {"word": "photography"}' });
        const { channels } = await neynar(context, 'channel/search/', z.object({ channels: z.array(channelSchema) }), { query: { q: word, limit: 10 } });
        return channels.map((channel) => ({ id: channel.id, name: channel.name ?? channel.id, description: channel.description ?? '', followers: channel.follower_count ?? 0, image: channel.image_url ?? '', url: channel.url }));
      },
    },
  ],

  async connect(context: ConnectContext, fields) {
    if (!context.client?.clientSecret) {
      throw invalidInput('Farcaster is not configured on this Herald.', { hint: 'The operator sets WARPCAST_CLIENT_ID and WARPCAST_CLIENT_SECRET (the Neynar app\'s client id and API key).' });
    }
    const signerUuid = (fields.signerUuid ?? '').trim();
    const signer = await neynar(context, 'signer/', signerSchema, { query: { signer_uuid: signerUuid } });
    if (signer.status !== 'approved' || signer.fid === undefined) {
      throw invalidInput(`This Neynar signer is ${signer.status.replace('_', ' ')}, not approved.`, { hint: 'Finish signing in with Neynar (approve the signer in the Farcaster app), then connect again.' });
    }
    if (fields.fid?.trim() && fields.fid.trim() !== String(signer.fid)) {
      throw invalidInput(`This signer belongs to fid ${signer.fid}, not ${fields.fid.trim()}.`, { hint: 'Connect with the signer_uuid and fid from the same sign-in.' });
    }
    if (signer.permissions && !signer.permissions.some((permission) => permission === 'WRITE_ALL' || permission === 'PUBLISH_CAST')) {
      throw invalidInput('This Neynar signer may not publish casts (read-only).', { hint: 'Give the Neynar app "Read and write" permission, then sign in again.' });
    }
    const user = await lookupUser(context, String(signer.fid));
    return {
      internalId: String(signer.fid),
      name: user?.display_name?.trim() || user?.username || `fid ${signer.fid}`,
      profile: user?.username ?? String(signer.fid),
      picture: user?.pfp_url ?? undefined,
      accessToken: signer.signer_uuid,
      data: {},
    };
  },

  async publish(context, item) {
    const channels = (settingsSchema.parse(context.settings).subreddit ?? []).map((entry) => entry.value.id);
    return cast(context, item, channels.length > 0 ? channels.map((channel) => ({ channel })) : [{ channel: '' }], 'cast');
  },

  // A reply to each cast of the previous item, so a post cast in two channels becomes two threads.
  // A reply to someone's comment (`toComment`) is one cast whose parent is that comment's hash: it lands under THAT reply.
  comment: (context, item, { parent }) => cast(context, item, castsOf(parent).map((entry) => ({ channel: entry.channel, parent: entry.hash })), 'reply'),

  comments: (context, post) => repliesOf(context, post),
  deletePublished: (context, ref) => deleteCasts(context, ref),
  unchangeable: {
    edit: 'a Farcaster cast is a signed message that cannot be edited (the protocol and Neynar\'s API only add or remove casts): delete it and cast again.',
  },

  async postAnalytics(context, post) {
    const totals = { likes: 0, recasts: 0, replies: 0 };
    for (const entry of castsOf(post)) {
      const { cast: found } = await neynar(context, 'cast/', z.object({ cast: castSchema }), { query: { identifier: entry.hash, type: 'hash' } });
      totals.likes += found.reactions.likes_count;
      totals.recasts += found.reactions.recasts_count;
      totals.replies += found.replies.count;
    }
    return [currentMetric('Likes', totals.likes), currentMetric('Recasts', totals.recasts), currentMetric('Replies', totals.replies)];
  },

  async analytics(context, days) {
    const user = await lookupUser(context, context.auth.internalId);
    const since = new Date(Date.now() - days * 86_400_000);
    const casts = await recentCasts(context, { pages: 2, since, replies: true });
    const posts = casts.map((item) => ({ publishedAt: item.timestamp, counts: { Likes: item.reactions.likes_count, Recasts: item.reactions.recasts_count, Replies: item.replies.count } }));
    return [currentMetric('Followers', user?.follower_count), currentMetric('Following', user?.following_count), ...engagementByDay(days, posts, ['Likes', 'Recasts', 'Replies'], 'Casts')];
  },

  async recent(context) {
    const casts = await recentCasts(context, { pages: 1, replies: false });
    return casts.map((item) => ({ id: item.hash, url: item.embeds.find((embed) => embed.url)?.url ?? castUrl(context, item.hash) }));
  },
};

export default warpcast;
