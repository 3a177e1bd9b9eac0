// Mastodon: any instance, connected with an access token the user creates on it (credentials form).
// Media go to POST /api/v2/media (202 = still processing, polled on GET /api/v1/media/:id until 200), then
// POST /api/v1/statuses carries an Idempotency-Key (our post id), so a create of unknown outcome can be repeated.
// Reference: https://docs.joinmastodon.org/methods/statuses/, …/methods/media/, …/methods/accounts/ (verify_credentials,
// statuses with max_id paging and the Link header), …/entities/Status/.
import { z } from 'zod';
import { PlatformHttpError } from '../src/lib/platform-http.js';
import type { ConnectContext, MediaFile, Provider, ProviderContext, PublishItem, PublishedRef } from './types.js';
import { blobOf, currentMetric, engagementByDay, normalizeInstance, pagesSince } from './shared.js';

/** What the calls below need of a context: connect has no stored channel yet, only a token. */
type PlatformFetchContext = Pick<ProviderContext, 'fetch'> & { auth: Pick<ProviderContext['auth'], 'accessToken'> };

/** How media processing is awaited. Mutable so tests (and end-to-end tests using the fake) can make it fast. */
export const mastodonPolling = { attempts: 30, delayMs: 1000 };

const MAX_IMAGES = 4;

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

async function createStatus(context: ProviderContext, item: PublishItem, inReplyToId?: string): Promise<PublishedRef> {
  const instance = instanceOf(context);
  const mediaIds: string[] = [];
  for (const [index, file] of item.media.entries()) mediaIds.push(await uploadMedia(context, instance, file, index));
  const { data } = await context.fetch({
    method: 'POST',
    url: `${instance}/api/v1/statuses`,
    headers: { ...bearer(context.auth.accessToken), 'Idempotency-Key': item.postId },
    form: { status: item.text, visibility: 'public', in_reply_to_id: inReplyToId, 'media_ids[]': mediaIds.length > 0 ? mediaIds : undefined },
    schema: statusSchema,
  });
  return { id: data.id, url: data.url ?? data.uri };
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
  maxLength: () => 500,
  rules:
    'Mastodon: plain text up to 500 characters per post (links count as typed). Each post may carry up to 4 images, or exactly 1 video ' +
    '(a video cannot be mixed with images). Add alt text to media: it is sent as the image description. Thread items are published as replies to the previous post.',
  settings: null,
  chain: 'thread',
  tools: [],
  idempotentCreate: true,
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

  validate(items) {
    for (const [index, item] of items.entries()) {
      const where = items.length > 1 ? ` (item ${index + 1})` : '';
      const videos = item.media.filter((media) => media.kind === 'video').length;
      if (item.media.length > MAX_IMAGES) return `Mastodon allows at most ${MAX_IMAGES} attachments per post${where}; this one has ${item.media.length}.`;
      if (videos > 0 && item.media.length > 1) return `Mastodon allows a video only on its own: remove the other media or move them to another post${where}.`;
    }
    return undefined;
  },

  async connect(context: ConnectContext, fields) {
    const instance = normalizeInstance(fields.instance || context.endpoints.instance || '');
    const accessToken = (fields.accessToken ?? '').trim();
    const account = await verifyCredentials({ fetch: context.fetch, auth: { accessToken } }, instance);
    const host = new URL(instance).host;
    return {
      internalId: account.id,
      name: account.display_name || account.username,
      profile: account.acct.includes('@') ? account.acct : `${account.acct}@${host}`,
      picture: account.avatar ?? undefined,
      accessToken,
      data: { instance },
    };
  },

  publish: (context, item) => createStatus(context, item),

  comment: (context, item, { parent }) => createStatus(context, item, parent.id),

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
