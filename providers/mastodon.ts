// Mastodon: any instance, connected with an access token the user creates on it (credentials form).
// Media go to POST /api/v2/media (202 = still processing, polled on GET /api/v1/media/:id until 200), then
// POST /api/v1/statuses carries an Idempotency-Key (our post id). Mastodon keeps that key one hour (PostStatusService:
// redis setex 3600), so a create of unknown outcome is repeated with it only within the hour; later, the status is looked up
// among the account's statuses made since the attempt, compared by its source text (GET /api/v1/statuses/:id/source).
// The instance's own limits (GET /api/v2/instance `configuration`) are read at connect and used instead of fixed ones.
// Reference (2026-08): https://docs.joinmastodon.org/methods/statuses/ (create with Idempotency-Key, source),
// …/methods/media/, …/methods/accounts/ (verify_credentials, statuses with max_id paging and the Link header),
// …/methods/instance/#v2 and …/entities/Instance/ (configuration.statuses, configuration.media_attachments),
// …/entities/Status/, and (2026-11) …/methods/statuses/#edit (PUT /api/v1/statuses/:id: status, media_ids[]; Mastodon's
// UpdateStatusService drops the attachments whose ids are not sent, so an edit sends the status's current ones) and
// …/methods/statuses/#delete (DELETE /api/v1/statuses/:id; 404 "Record not found" for a status that is gone or not the
// account's; deletions are rate limited to 30 per 30 minutes, answered 429), …/methods/statuses/#context and
// …/entities/Context/ (comments: the descendants of a status; 2026-11). Bodies checked against masto 7.7.1's types
// (test/contracts/mastodon-masto.test.ts).
import { z } from 'zod';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import { convertContent } from '../src/lib/content.js';
import type { ConnectContext, EditItem, MediaFile, PlatformComment, Provider, ProviderContext, PublishItem, PublishedRef, ValidationItem } from './types.js';
import { blobOf, currentMetric, engagementByDay, normalizeInstance, pagesSince } from './shared.js';
import { couldNotConfirm, earliestCreation } from './recovery.js';

/** What the calls below need of a context: connect has no stored channel yet, only a token. */
type PlatformFetchContext = Pick<ProviderContext, 'fetch'> & { auth: Pick<ProviderContext['auth'], 'accessToken'> };

/** How media processing is awaited. Mutable so tests (and end-to-end tests using the fake) can make it fast. */
export const mastodonPolling = { attempts: 30, delayMs: 1000 };

/** Mastodon's defaults, for an instance that does not say (docs.joinmastodon.org/entities/Instance, mastodon.social's values). */
const DEFAULTS = { max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23, image_size_limit: 16_777_216, video_size_limit: 103_809_024, description_limit: 1500 };
type InstanceLimits = typeof DEFAULTS;

/** The instance's configured limits the channel keeps (its `channelSettings`): only what Mastodon reported. */
const instanceSchema = z.looseObject({
  configuration: z.looseObject({
    statuses: z.looseObject({ max_characters: z.number().int().positive().optional(), max_media_attachments: z.number().int().positive().optional(), characters_reserved_per_url: z.number().int().nonnegative().optional() }).optional(),
    media_attachments: z.looseObject({ image_size_limit: z.number().int().positive().optional(), video_size_limit: z.number().int().positive().optional(), description_limit: z.number().int().positive().optional() }).optional(),
  }).optional(),
});
export type InstanceAnswer = z.infer<typeof instanceSchema>;

/** A limit of the channel: what the instance reported at connect, else Mastodon's default. */
function limitOf(channel: Record<string, unknown> | undefined, key: keyof InstanceLimits): number {
  const value = channel?.[key];
  return typeof value === 'number' && value > 0 ? value : DEFAULTS[key];
}

/** Mastodon keeps an Idempotency-Key for an hour; a repeat is trusted to find the first status only well within it. */
const IDEMPOTENCY_WINDOW_MS = 50 * 60_000;

const accountSchema = z.object({
  id: z.string(),
  username: z.string(),
  acct: z.string(),
  display_name: z.string().nullish(),
  avatar: z.string().nullish(),
  followers_count: z.number().int().nonnegative(),
  following_count: z.number().int().nonnegative(),
  statuses_count: z.number().int().nonnegative(),
});

const attachmentSchema = z.object({
  id: z.string(),
  type: z.string(),
  url: z.string().nullish(),
  preview_url: z.string().nullish(),
});

const statusSchema = z.object({
  id: z.string(),
  in_reply_to_id: z.string().nullish(),
  url: z.string().nullish(),
  uri: z.string(),
  media_attachments: z.array(attachmentSchema).default([]),
  created_at: z.string(),
  favourites_count: z.number().int().nonnegative().default(0),
  reblogs_count: z.number().int().nonnegative().default(0),
  replies_count: z.number().int().nonnegative().default(0),
});

function instanceOf(context: ProviderContext): string {
  const instance = context.auth.data.instance || context.endpoints.instance;
  if (!instance) throw new Error('The Mastodon channel has no instance URL: reconnect it.');
  return normalizeInstance(instance);
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function filenameOf(file: MediaFile, mimeType: string, index: number): string {
  try {
    const last = new URL(file.url).pathname.split('/').pop();
    if (last && /\.[a-z0-9]+$/i.test(last)) return decodeURIComponent(last);
  } catch {
    /* not a URL: fall through to a generated name */
  }
  return `upload-${index + 1}.${mimeType.split('/')[1]?.split(/[;+]/)[0] || 'bin'}`;
}

async function uploadMedia(context: PlatformFetchContext, instance: string, file: MediaFile, index: number): Promise<string> {
  const { bytes, mimeType } = await file.load();
  const form = new FormData();
  form.append('file', blobOf(bytes, mimeType), filenameOf(file, mimeType, index));
  if (file.alt) form.append('description', file.alt);
  const headers = bearer(context.auth.accessToken);
  const uploaded = await context.fetch({ method: 'POST', url: `${instance}/api/v2/media`, headers, multipart: form, schema: attachmentSchema, timeoutMs: 120_000 });
  if (uploaded.status === 200 && uploaded.data.url) return uploaded.data.id;
  // 202 (or a 200 without url): the file is still being processed; GET answers 206 until it is ready.
  for (let attempt = 0; attempt < mastodonPolling.attempts; attempt++) {
    await sleep(mastodonPolling.delayMs);
    const polled = await context.fetch({ url: `${instance}/api/v1/media/${encodeURIComponent(uploaded.data.id)}`, headers, schema: attachmentSchema });
    if (polled.status === 200) return polled.data.id;
  }
  throw new PlatformHttpError({
    status: 0,
    retryable: true,
    bodyExcerpt: '',
    message: `Mastodon was still processing media ${uploaded.data.id} after ${mastodonPolling.attempts} checks; try again later.`,
  });
}

/** The parameters of POST /api/v1/statuses as Herald sends them (masto's CreateStatusParams, in the API's snake_case). */
export type StatusBody = { status: string; visibility: 'public'; in_reply_to_id?: string } & ({ media_ids?: undefined } | { media_ids: string[] });

export function statusBody(text: string, inReplyToId: string | undefined, mediaIds: string[]): StatusBody {
  return { status: text, visibility: 'public', ...(inReplyToId ? { in_reply_to_id: inReplyToId } : {}), ...(mediaIds.length > 0 ? { media_ids: mediaIds } : {}) };
}

/** A status as the step records it. */
type StatusRef = { id: string; url: string };

const unconfirmed = (why: string) => couldNotConfirm('Mastodon', `the connection was lost before the instance answered (${why})`);

/**
 * The status an interrupted create made after its idempotency key expired: among the account's statuses created since the
 * attempt began (newest first, a few pages), one replying to the same status whose source text is ours. None found while the
 * pages reach back before the attempt: nothing was made. An older status with the same text is never taken for it.
 */
async function findStatus(context: ProviderContext, instance: string, text: string, inReplyToId: string | undefined, startedAt: Date): Promise<StatusRef | undefined> {
  const since = earliestCreation(startedAt);
  const headers = bearer(context.auth.accessToken);
  let maxId: string | undefined;
  for (let page = 0; page < 5; page++) {
    const { data, headers: answer } = await context.fetch({
      url: `${instance}/api/v1/accounts/${encodeURIComponent(context.auth.internalId)}/statuses`,
      query: { exclude_reblogs: true, limit: 40, max_id: maxId },
      headers,
      schema: z.array(statusSchema),
    });
    for (const status of data) {
      if (Date.parse(status.created_at) < since || (status.in_reply_to_id ?? undefined) !== inReplyToId) continue;
      const { data: source } = await context.fetch({ url: `${instance}/api/v1/statuses/${encodeURIComponent(status.id)}/source`, headers, schema: z.looseObject({ text: z.string() }) });
      if (source.text.trim() === text.trim()) return { id: status.id, url: status.url ?? status.uri };
    }
    const oldest = data.at(-1);
    if (!oldest || Date.parse(oldest.created_at) < since || !/rel="next"/.test(answer.get('link') ?? '')) return undefined;
    maxId = oldest.id;
  }
  throw unconfirmed('the account posted more since the attempt than the lookup reads');
}

async function createStatus(context: ProviderContext, item: PublishItem, inReplyToId?: string): Promise<PublishedRef> {
  const instance = instanceOf(context);
  const mediaIds: string[] = [];
  // An upload of unknown outcome is made again: an unattached upload is harmless, and the instance removes it after a day.
  for (const [index, file] of item.media.entries()) mediaIds.push(await context.step(`media:${index}`, () => uploadMedia(context, instance, file, index), async () => undefined));
  const { media_ids: ids, ...fields } = statusBody(item.text, inReplyToId, mediaIds);
  const create = async (): Promise<StatusRef> => {
    const { data } = await context.fetch({
      method: 'POST',
      url: `${instance}/api/v1/statuses`,
      headers: { ...bearer(context.auth.accessToken), 'Idempotency-Key': item.postId },
      form: { ...fields, 'media_ids[]': ids },
      schema: statusSchema,
    });
    return { id: data.id, url: data.url ?? data.uri };
  };
  const ref = await context.step('status', create, async ({ startedAt }) =>
    // Within the key's hour the same call answers the status the lost one made, or makes it once.
    Date.now() - startedAt.getTime() < IDEMPOTENCY_WINDOW_MS ? create() : findStatus(context, instance, item.text, inReplyToId, startedAt),
  );
  return { id: ref.id, url: ref.url };
}

/**
 * Edits a status in place (Mastodon keeps its edit history, boosts and replies). The attachments are read first and sent
 * again, since an edit without media_ids removes them. Setting the same text again is harmless, so a lost answer is simply
 * repeated.
 */
async function editStatus(context: ProviderContext, ref: PublishedRef, item: EditItem): Promise<PublishedRef> {
  const instance = instanceOf(context);
  const url = `${instance}/api/v1/statuses/${encodeURIComponent(ref.id)}`;
  const headers = bearer(context.auth.accessToken);
  const edited = await context.step('edit', async (): Promise<StatusRef> => {
    const { data: current } = await context.fetch({ url, headers, schema: statusSchema });
    const { data } = await context.fetch({ method: 'PUT', url, headers, form: { status: item.text, 'media_ids[]': current.media_attachments.map((media) => media.id) }, schema: statusSchema });
    return { id: data.id, url: data.url ?? data.uri };
  });
  return { id: edited.id, url: edited.url };
}

/** Deletes a status; one already gone (404) counts as deleted, so a repeat after a lost answer deletes nothing else. */
async function deleteStatus(context: ProviderContext, ref: PublishedRef): Promise<void> {
  const url = `${instanceOf(context)}/api/v1/statuses/${encodeURIComponent(ref.id)}`;
  await context.step('delete', async () => {
    try {
      await context.fetch({ method: 'DELETE', url, headers: bearer(context.auth.accessToken) });
    } catch (error) {
      if (!(error instanceof PlatformHttpError && error.status === 404)) throw error;
    }
    return true;
  });
}

const contextSchema = z.object({
  descendants: z.array(
    z.object({
      id: z.string(),
      in_reply_to_id: z.string().nullish(),
      url: z.string().nullish(),
      uri: z.string(),
      created_at: z.string(),
      content: z.string(),
      account: z.object({ id: z.string(), acct: z.string(), display_name: z.string().nullish(), url: z.string().nullish(), avatar: z.string().nullish() }),
    }),
  ),
});

/**
 * Every reply under the status, at any depth (GET /api/v1/statuses/:id/context `descendants`, oldest first as the instance
 * sorts them). The instance answers what it knows of the conversation, remote replies included once they reached it.
 */
async function descendantsOf(context: ProviderContext, statusId: string): Promise<PlatformComment[]> {
  const { data } = await context.fetch({ url: `${instanceOf(context)}/api/v1/statuses/${encodeURIComponent(statusId)}/context`, headers: bearer(context.auth.accessToken), schema: contextSchema });
  return data.descendants.map((status) => ({
    id: status.id,
    parentId: status.in_reply_to_id ?? undefined,
    author: { id: status.account.id, name: status.account.display_name || status.account.acct, handle: status.account.acct, url: status.account.url ?? undefined, picture: status.account.avatar ?? undefined },
    text: convertContent(status.content, 'plain').trim(),
    createdAt: status.created_at,
    url: status.url ?? status.uri,
    byAccount: status.account.id === context.auth.internalId,
  }));
}

/** The instance's configured limits (v2 instance, Mastodon 4.0+); an instance that does not answer keeps the defaults. */
async function instanceLimits(context: Pick<ConnectContext, 'fetch'>, instance: string): Promise<Record<string, number>> {
  const answer = await context.fetch({ url: `${instance}/api/v2/instance`, schema: instanceSchema }).catch(() => undefined);
  const configuration = answer?.data.configuration;
  const reported = { ...configuration?.statuses, ...configuration?.media_attachments } as Record<string, unknown>;
  return Object.fromEntries(Object.keys(DEFAULTS).flatMap((key) => (typeof reported[key] === 'number' ? [[key, reported[key] as number]] : [])));
}

/** The first problem of an item against the instance's limits, or undefined. */
function itemProblem(item: ValidationItem, channel: Record<string, unknown> | undefined, where: string): string | undefined {
  const maxMedia = limitOf(channel, 'max_media_attachments');
  const videos = item.media.filter((media) => media.kind === 'video').length;
  if (item.media.length > maxMedia) return `This Mastodon instance allows at most ${maxMedia} attachments per post${where}; this one has ${item.media.length}.`;
  if (videos > 0 && item.media.length > 1) return `Mastodon allows a video only on its own: remove the other media or move them to another post${where}.`;
  for (const media of item.media) {
    const limit = limitOf(channel, media.kind === 'video' ? 'video_size_limit' : 'image_size_limit');
    if (media.size !== undefined && media.size > limit) {
      return `A ${media.kind === 'video' ? 'video' : 'picture'}${where} is ${(media.size / 1_048_576).toFixed(1)} MB; this Mastodon instance takes up to ${(limit / 1_048_576).toFixed(1)} MB: make it smaller.`;
    }
  }
  return undefined;
}

async function verifyCredentials(context: PlatformFetchContext, instance: string) {
  const { data } = await context.fetch({ url: `${instance}/api/v1/accounts/verify_credentials`, headers: bearer(context.auth.accessToken), schema: accountSchema });
  return data;
}

/** The account's own statuses of the last `days` days (boosts of others left out), newest first, up to 5 pages of 40. */
function statusesOfPeriod(context: ProviderContext, instance: string, days: number) {
  return pagesSince(5, new Date(Date.now() - days * 86_400_000), async (maxId) => {
    const { data, headers } = await context.fetch({
      url: `${instance}/api/v1/accounts/${encodeURIComponent(context.auth.internalId)}/statuses`,
      query: { exclude_reblogs: true, limit: 40, max_id: maxId },
      headers: bearer(context.auth.accessToken),
      schema: z.array(statusSchema),
    });
    // The Link header says whether there is an older page; its max_id is the last status's id.
    return { items: data, next: /rel="next"/.test(headers.get('link') ?? '') ? data.at(-1)?.id : undefined };
  }, (status) => status.created_at);
}

const mastodon: Provider = {
  identifier: 'mastodon',
  name: 'Mastodon',
  editor: 'plain',
  lengthMethod: 'characters',
  // The instance's configured max_characters (read at connect), else Mastodon's default 500.
  maxLength: ({ channel }) => limitOf(channel, 'max_characters'),
  rules:
    "Mastodon: plain text up to the instance's configured limit per post (500 characters on a default instance; Herald reads the " +
    "instance's own limits when the channel connects; links count as typed). Each post may carry up to 4 images (or the instance's " +
    'configured number), or exactly 1 video (a video cannot be mixed with images), within the instance\'s file size limits. Add alt ' +
    'text to media: it is sent as the image description. Thread items are published as replies to the previous post.',
  settings: null,
  chain: 'thread',
  tools: [],
  // The create carries an Idempotency-Key, but Mastodon keeps it an hour: the status step recovers beyond that by looking up.
  idempotentCreate: true,
  recordsSteps: true,
  endpoints: { instance: 'https://mastodon.social' },
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'instance', label: 'Instance URL', type: 'url', required: true, endpoint: 'instance', description: 'The address of your Mastodon server; leave empty for the one shown.' },
      {
        key: 'accessToken',
        label: 'Access token',
        type: 'password',
        required: true,
        description: 'An access token from Preferences → Development → New application with write:statuses, write:media and read:accounts.',
      },
    ],
  },

  validate(items, _settings, channel) {
    for (const [index, item] of items.entries()) {
      const problem = itemProblem(item, channel, items.length > 1 ? ` (item ${index + 1})` : '');
      if (problem) return problem;
    }
    return undefined;
  },

  async connect(context: ConnectContext, fields) {
    const instance = normalizeInstance(fields.instance || context.endpoints.instance || '');
    const accessToken = (fields.accessToken ?? '').trim();
    const account = await verifyCredentials({ fetch: context.fetch, auth: { accessToken } }, instance);
    const channelSettings = await instanceLimits(context, instance);
    const host = new URL(instance).host;
    return {
      internalId: account.id,
      name: account.display_name || account.username,
      profile: account.acct.includes('@') ? account.acct : `${account.acct}@${host}`,
      picture: account.avatar ?? undefined,
      accessToken,
      data: { instance },
      channelSettings,
    };
  },

  publish: (context, item) => createStatus(context, item),

  // A thread item, or a reply to someone's comment: both are statuses in_reply_to the status they answer.
  comment: (context, item, { parent }) => createStatus(context, item, parent.id),

  editPublished: (context, ref, item) => editStatus(context, ref, item),
  deletePublished: (context, ref) => deleteStatus(context, ref),
  comments: (context, post) => descendantsOf(context, post.id),

  async postAnalytics(context, post) {
    const { data } = await context.fetch({
      url: `${instanceOf(context)}/api/v1/statuses/${encodeURIComponent(post.id)}`,
      headers: bearer(context.auth.accessToken),
      schema: statusSchema,
    });
    return [currentMetric('Favourites', data.favourites_count), currentMetric('Boosts', data.reblogs_count), currentMetric('Replies', data.replies_count)];
  },

  async analytics(context, days) {
    const instance = instanceOf(context);
    const account = await verifyCredentials(context, instance);
    const posts = (await statusesOfPeriod(context, instance, days)).map((status) => ({
      publishedAt: status.created_at,
      counts: { Favourites: status.favourites_count, Boosts: status.reblogs_count, Replies: status.replies_count },
    }));
    return [
      currentMetric('Followers', account.followers_count),
      currentMetric('Following', account.following_count),
      currentMetric('Posts', account.statuses_count),
      ...engagementByDay(days, posts, ['Favourites', 'Boosts', 'Replies'], 'Posts published'),
    ];
  },

  async recent(context) {
    const { data } = await context.fetch({
      url: `${instanceOf(context)}/api/v1/accounts/${encodeURIComponent(context.auth.internalId)}/statuses`,
      query: { exclude_replies: true, limit: 20 },
      headers: bearer(context.auth.accessToken),
      schema: z.array(statusSchema),
    });
    return data.map((status) => ({ id: status.id, url: status.media_attachments.find((media) => media.preview_url)?.preview_url ?? status.url ?? status.uri }));
  },
};

export default mastodon;
