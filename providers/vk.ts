// VK: wall posts with photos and videos, later items as comments; VK ID OAuth 2.1 with PKCE.
// API reference: https://id.vk.com/about/business/go/docs/ru/vkid/latest/vk-id/connection/api-integration/api-description
// (authorize, POST /oauth2/auth with code_verifier and the device_id of the redirect, refresh_token grant, /oauth2/user_info),
// https://dev.vk.com/ru/method/wall.post (owner_id, message, attachments, guid), https://dev.vk.com/ru/method/wall.createComment,
// https://dev.vk.com/ru/api/upload/wall-photo (photos.getWallUploadServer → multipart `photo` → photos.saveWallPhoto),
// https://dev.vk.com/ru/api/upload/video (video.save → multipart `video_file`), https://dev.vk.com/ru/reference/errors,
// https://dev.vk.com/ru/method/wall.getById and wall.get. Method calls answer errors as HTTP 200 `{error: {error_code, error_msg}}`.
// `guid` prevents a repeated post "for one hour" (dev.vk.com wall.post, as VK's SDKs quote it): within that hour a create of
// unknown outcome is repeated with it; later, the post is looked up on the wall (our text, dated since the attempt began), and
// a comment, which has no such lookup here, stops with "could not confirm".
// Comments and changes (read 2026-11-27 in VK's own method schema, github.com/VKCOM/vk-api-schema wall/methods.json,
// responses.json, objects.json and errors.json at 0efe478, 2025-01-21; pages dev.vk.com/ru/method/wall.getComments,
// wall.deleteComment, wall.edit, wall.editComment, wall.delete): wall.getComments (owner_id, post_id, count ≤ 100, offset,
// sort asc, extended=1 with `profiles`/`groups` for the authors, thread_items_count ≤ 10, comment_id for the rest of a thread);
// a reply is wall.createComment with reply_to_comment; wall.deleteComment (the wall's owner may delete any comment on its wall;
// 211 otherwise); no method hides a comment. wall.edit sets message and attachments (the post's attachments are read with
// wall.getById and sent again, so they stay); wall.editComment for a later item; wall.delete / wall.deleteComment, 104 "Not
// found" of a repeat counted as done.
// Every call is checked in the tests against VK's method schema (github.com/VKCOM/vk-api-schema at 0efe478, 2025-01-21, API
// 5.199; vendored in test/contracts/vk/methods.json). wall.get has no `owner_id` there since the schema of 2024-04-19 (only
// `domain`, an id or short name); without either it reads the wall of the token's user, which is the channel's wall, so it
// is called without one.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ChainRefs, ChannelAuth, ConnectContext, EditItem, MediaFile, PlatformComment, Provider, ProviderContext, PublishItem, PublishedRef } from './types.js';
import { blobOf, currentMetric, firstProblem, oauth2AuthorizeUrl, permanent, tokenGrant } from './shared.js';
import { couldNotConfirm, earliestCreationSeconds } from './recovery.js';

const scopes = ['vkid.personal_info', 'email', 'wall', 'status', 'docs', 'photos', 'video'];
const MAX_ATTACHMENTS = 10;

const tokenSchema = z.object({ access_token: z.string().min(1), refresh_token: z.string().optional(), expires_in: z.number().int().positive().optional(), user_id: z.union([z.number(), z.string()]).optional() });
const userInfoSchema = z.object({ user: z.looseObject({ user_id: z.union([z.number(), z.string()]).transform(String), first_name: z.string().nullish(), last_name: z.string().nullish(), avatar: z.string().nullish() }) });
const methodSchema = z.looseObject({ response: z.unknown().optional(), error: z.looseObject({ error_code: z.number(), error_msg: z.string().optional() }).optional() });

/** VK ID's OAuth errors `{error, error_description}`: a dead code or refresh token is a 401, so the channel is flagged for reconnection. */
function classifyVkId(status: number, body: string): Partial<PlatformHttpErrorInit> {
  let said = body.slice(0, 200) || 'no answer body';
  try {
    const parsed = JSON.parse(body) as { error?: string; error_description?: string };
    said = [parsed.error, parsed.error_description].filter(Boolean).join(': ') || said;
  } catch {
    /* not JSON */
  }
  if (/invalid_grant|invalid_token|invalid_client/.test(body)) return { status: 401, retryable: false, message: `VK ID refused the token (${said})` };
  return { message: `${said} (HTTP ${status})` };
}

/** VK's method errors (https://dev.vk.com/ru/reference/errors), thrown as the error a core acts on. */
function vkMethodError(code: number, said: string): PlatformHttpError {
  const fail = (status: number, retryable: boolean, message: string, retryAfterSeconds?: number) =>
    new PlatformHttpError({ status, retryable, bodyExcerpt: `${code}: ${said}`, message, retryAfterSeconds });
  if (code === 5) return fail(401, false, `the access token was refused (${said}); it expired or was revoked`);
  if (code === 6) return fail(429, true, `too many requests per second (${said})`, 2);
  if (code === 9) return fail(429, true, `flood control: too many similar actions (${said})`, 300);
  if (code === 29) return fail(429, true, `the method's daily rate limit was reached (${said})`, 3600);
  if (code === 1 || code === 10) return fail(503, true, `VK had an internal error (${said})`);
  if (code === 14) return fail(400, false, `VK asks for a captcha on this account (${said}): post once from vk.com, then retry the post`);
  if (code === 214) return fail(403, false, `VK refused to add the post (${said}): a wall takes at most 50 posts a day, and the wall must accept posts`);
  if (code === 104) return fail(404, false, `VK did not find it (${said})`);
  if (code === 210 || code === 211 || code === 212) return fail(403, false, `VK denied access to this post or comment (${said})`);
  if (code === 15 || code === 7 || code === 200) return fail(403, false, `VK denied access (${said}): reconnect the channel and grant the wall, photos and video permissions`);
  return fail(400, false, `${said} (VK error ${code})`);
}

type MethodContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: Pick<ChannelAuth, 'accessToken'> };

/** A VK API method: the token and the API version (`apiVersion`) in the form body, the answer's `response` parsed. */
async function method<T>(context: MethodContext, name: string, params: Record<string, string | undefined>, schema: z.ZodType<T>): Promise<T> {
  const { data } = await context.fetch({
    method: 'POST',
    url: `${context.endpoints.api}/method/${name}`,
    form: { ...params, access_token: context.auth.accessToken, v: context.endpoints.apiVersion },
    schema: methodSchema,
  });
  if (data.error) throw vkMethodError(data.error.error_code, data.error.error_msg ?? 'no message');
  const parsed = schema.safeParse(data.response);
  if (!parsed.success) throw new PlatformHttpError({ status: 200, retryable: false, bodyExcerpt: JSON.stringify(data).slice(0, 500), message: `VK answered ${name} with an unexpected shape` });
  return parsed.data;
}

async function vkId(context: Pick<ProviderContext, 'fetch' | 'endpoints'>, form: Record<string, string | undefined>) {
  return tokenGrant(context.fetch, `${context.endpoints.id}/oauth2/auth`, form, tokenSchema, classifyVkId);
}

/** A multipart upload to the server VK handed out (its own host, followed as given). */
async function uploadTo<T>(context: ProviderContext, url: string, field: string, file: MediaFile, schema: z.ZodType<T>): Promise<T> {
  const { bytes, mimeType } = await file.load();
  const form = new FormData();
  const name = file.url.split(/[?#]/)[0].split('/').pop() || `upload.${mimeType.split('/')[1] ?? 'bin'}`;
  form.append(field, blobOf(bytes, mimeType), name);
  const { data } = await context.fetch({ method: 'POST', url, multipart: form, schema, timeoutMs: 600_000 });
  return data;
}

/** A picture for the wall: upload server, the bytes, then saveWallPhoto → `photo{owner}_{id}`. */
async function wallPhoto(context: ProviderContext, file: MediaFile): Promise<string> {
  const server = await method(context, 'photos.getWallUploadServer', {}, z.looseObject({ upload_url: z.string() }));
  const sent = await uploadTo(context, server.upload_url, 'photo', file, z.looseObject({ server: z.union([z.number(), z.string()]).transform(String), photo: z.string(), hash: z.string() }));
  if (sent.photo === '[]' || sent.photo === '') throw new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: sent.photo, message: 'VK did not accept the picture (empty upload): send a JPEG, PNG or GIF under 50 MB' });
  const [saved] = await method(context, 'photos.saveWallPhoto', { server: sent.server, photo: sent.photo, hash: sent.hash, user_id: context.auth.internalId }, z.array(z.looseObject({ id: z.number(), owner_id: z.number() })).min(1));
  return `photo${saved.owner_id}_${saved.id}`;
}

/** A video: video.save gives the upload URL and the id, then the file goes in the `video_file` field (VK processes it afterwards). */
async function video(context: ProviderContext, file: MediaFile): Promise<string> {
  const saved = await method(context, 'video.save', { wallpost: '0', name: 'Video' }, z.looseObject({ upload_url: z.string(), video_id: z.number(), owner_id: z.number() }));
  await uploadTo(context, saved.upload_url, 'video_file', file, z.looseObject({ video_id: z.number().optional(), size: z.number() }));
  return `video${saved.owner_id}_${saved.video_id}`;
}

/**
 * Uploads an item's media, each a recorded step. An interrupted upload is done again (recover answers nothing): at worst it
 * leaves an unused picture in the wall album or an unused video, never a second post.
 */
async function attachments(context: ProviderContext, item: PublishItem): Promise<string | undefined> {
  const list: string[] = [];
  for (const [index, file] of item.media.entries()) {
    list.push(await context.step(`media:${index}`, () => (file.kind === 'video' ? video(context, file) : wallPhoto(context, file)), async () => undefined));
  }
  return list.length > 0 ? list.join(',') : undefined;
}

/** VK honours a guid for an hour; a repeat is trusted to find the first post only well within it. */
const GUID_WINDOW_MS = 50 * 60_000;
const unconfirmed = (why: string) => couldNotConfirm('VK', `whether it created this ${why} is unknown`, 'the wall');

/**
 * The wall post an interrupted create made after its guid expired: by the owner, with our text, dated since the attempt began
 * (an older post with the same text is never taken for it). Nothing found while the page reaches back before the attempt:
 * nothing was made.
 */
async function findWallPost(context: ProviderContext, text: string, startedAt: Date): Promise<number | undefined> {
  const since = earliestCreationSeconds(startedAt);
  const { items } = await method(context, 'wall.get', { count: '100', filter: 'owner' }, z.looseObject({ items: z.array(z.looseObject({ id: z.number(), date: z.number().optional(), text: z.string().optional() })) }));
  const found = items.filter((post) => {
    if (post.date === undefined) throw unconfirmed('post (the wall answered without dates)');
    return post.date >= since && (post.text ?? '').trim() === text.trim();
  });
  if (found.length > 1) throw unconfirmed(`post (${found.length} posts with this text were made since the attempt)`);
  if (found.length === 1) return found[0].id;
  const oldest = items.at(-1);
  if (items.length === 100 && oldest?.date !== undefined && oldest.date >= since) throw unconfirmed('post (the wall had more posts since the attempt than one page)');
  return undefined;
}

const ownerOf = (context: ProviderContext) => context.auth.internalId;
const withinGuidHour = (startedAt: Date) => Date.now() - startedAt.getTime() < GUID_WINDOW_MS;
const wallUrl = (context: ProviderContext, postId: string) => `${context.endpoints.web}/wall${ownerOf(context)}_${postId}`;

const authorSchema = z.looseObject({ id: z.number(), first_name: z.string().optional(), last_name: z.string().optional(), name: z.string().optional(), screen_name: z.string().optional(), photo_100: z.string().optional() });
interface VkComment {
  id: number;
  from_id: number;
  date: number;
  text?: string;
  reply_to_comment?: number;
  deleted?: boolean;
  thread?: { count: number; items?: VkComment[] };
}
const commentSchema: z.ZodType<VkComment> = z.looseObject({
  id: z.number(),
  from_id: z.number(),
  date: z.number(),
  text: z.string().optional(),
  reply_to_comment: z.number().optional(),
  deleted: z.boolean().optional(),
  thread: z.looseObject({ count: z.number(), items: z.array(z.lazy(() => commentSchema)).optional() }).optional(),
}) as z.ZodType<VkComment>;
const commentsPage = z.looseObject({ count: z.number(), items: z.array(commentSchema), profiles: z.array(authorSchema).default([]), groups: z.array(authorSchema).default([]) });
const PAGE = 100;
const MAX_PAGES = 20;

/** One level of comments (the post's, or one thread's with `comment_id`), every page, with the authors VK sent along. */
async function commentLevel(context: ProviderContext, postId: string, threadOf?: number) {
  const items: VkComment[] = [];
  const authors = new Map<number, z.infer<typeof authorSchema> & { group?: boolean }>();
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await method(
      context,
      'wall.getComments',
      { owner_id: ownerOf(context), post_id: postId, comment_id: threadOf === undefined ? undefined : String(threadOf), count: String(PAGE), offset: String(page * PAGE), sort: 'asc', extended: '1', fields: 'screen_name,photo_100', thread_items_count: threadOf === undefined ? '10' : undefined, preview_length: '0' },
      commentsPage,
    );
    items.push(...answer.items);
    for (const user of answer.profiles) authors.set(user.id, user);
    for (const group of answer.groups) authors.set(-group.id, { ...group, group: true });
    if (answer.items.length < PAGE || (page + 1) * PAGE >= answer.count) break;
  }
  return { items, authors };
}

/**
 * Every comment on the post, threads flattened, oldest first. A thread's first 10 replies come with its comment; a longer thread
 * is read on its own (comment_id). A reply's parent is the comment it answers (reply_to_comment), else its thread's comment.
 */
async function wallComments(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const top = await commentLevel(context, post.id);
  const authors = new Map(top.authors);
  const flat: { comment: VkComment; parent?: number }[] = [];
  for (const comment of top.items) {
    flat.push({ comment });
    let replies = comment.thread?.items ?? [];
    if ((comment.thread?.count ?? 0) > replies.length) {
      const thread = await commentLevel(context, post.id, comment.id);
      for (const [id, author] of thread.authors) authors.set(id, author);
      replies = thread.items;
    }
    for (const reply of replies) flat.push({ comment: reply, parent: reply.reply_to_comment ?? comment.id });
  }
  const web = context.endpoints.web;
  return flat
    .filter(({ comment }) => !comment.deleted)
    .sort((a, b) => a.comment.date - b.comment.date || a.comment.id - b.comment.id)
    .map(({ comment, parent }) => {
      const author = authors.get(comment.from_id);
      const handle = author?.screen_name ?? (comment.from_id < 0 ? `club${-comment.from_id}` : `id${comment.from_id}`);
      return {
        id: String(comment.id),
        ...(parent !== undefined ? { parentId: String(parent) } : {}),
        author: {
          id: String(comment.from_id),
          name: author?.name ?? ([author?.first_name, author?.last_name].filter(Boolean).join(' ') || handle),
          handle,
          url: `${web}/${handle}`,
          ...(author?.photo_100 ? { picture: author.photo_100 } : {}),
        },
        text: comment.text ?? '',
        createdAt: new Date(comment.date * 1000).toISOString(),
        url: `${wallUrl(context, post.id)}?reply=${comment.id}`,
        ...(String(comment.from_id) === ownerOf(context) ? { byAccount: true } : {}),
      };
    });
}

const done = (error: unknown) => {
  if (!(error instanceof PlatformHttpError && error.status === 404)) throw error;
  return 1;
};
const okSchema = z.literal(1);

type Attached = { attachments?: { type: string; [kind: string]: unknown }[] };
const itemsOf = z.union([z.array(z.unknown()), z.looseObject({ items: z.array(z.unknown()) })]);

/**
 * The attachments of a post (wall.getById) or comment (wall.getComment) as an edit takes them again
 * (`photo{owner}_{id}[_{access_key}]`): an edit sets the attachments it is given, so they are sent again to stay.
 */
async function currentAttachments(context: ProviderContext, id: string, comment: boolean): Promise<string | undefined> {
  const answer = comment
    ? await method(context, 'wall.getComment', { owner_id: ownerOf(context), comment_id: id }, itemsOf)
    : await method(context, 'wall.getById', { posts: `${ownerOf(context)}_${id}` }, itemsOf);
  const [found] = (Array.isArray(answer) ? answer : answer.items) as Attached[];
  if (!found) throw new PlatformHttpError({ status: 404, retryable: false, bodyExcerpt: id, message: `VK did not find the ${comment ? 'comment' : 'post'} on the wall (deleted?)` });
  const list = (found.attachments ?? []).flatMap((attachment) => {
    const media = attachment[attachment.type] as { id?: number; owner_id?: number; access_key?: string } | undefined;
    return media?.id !== undefined && media.owner_id !== undefined ? [`${attachment.type}${media.owner_id}_${media.id}${media.access_key ? `_${media.access_key}` : ''}`] : [];
  });
  return list.length > 0 ? list.join(',') : undefined;
}

/** wall.edit (the post) or wall.editComment (a later item): the new text, the attachments kept. Repeating it is harmless. */
async function editWall(context: ProviderContext, ref: PublishedRef, item: EditItem, thread?: ChainRefs): Promise<PublishedRef> {
  await context.step('edit', async () => {
    const attachments = await currentAttachments(context, ref.id, Boolean(thread));
    if (thread) await method(context, 'wall.editComment', { owner_id: ownerOf(context), comment_id: ref.id, message: item.text, attachments }, okSchema);
    else await method(context, 'wall.edit', { owner_id: ownerOf(context), post_id: ref.id, message: item.text, attachments }, z.looseObject({ post_id: z.number() }));
    return true;
  });
  return { id: ref.id, url: ref.url };
}

/** wall.delete (the post) or wall.deleteComment (a later item); VK's 104 "Not found" of a repeat counts as deleted. */
async function deleteWall(context: ProviderContext, ref: PublishedRef, thread?: ChainRefs): Promise<void> {
  await context.step('delete', () =>
    (thread
      ? method(context, 'wall.deleteComment', { owner_id: ownerOf(context), comment_id: ref.id }, okSchema)
      : method(context, 'wall.delete', { owner_id: ownerOf(context), post_id: ref.id }, okSchema)
    ).catch(done),
  );
}

const vk: Provider = {
  identifier: 'vk',
  name: 'VK',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { id: 'https://id.vk.com', api: 'https://api.vk.com', web: 'https://vk.com', apiVersion: '5.199' },
  maxLength: () => 2048,
  rules:
    'A post on the account\'s wall with up to 10 pictures and videos. Later items are comments on the post, each replying to the one before, with ' +
    'up to 10 attachments each. VK allows 50 wall posts a day.',
  settings: null,
  chain: 'comments',
  recordsSteps: true,
  // wall.post and wall.createComment take a `guid` (our post id): for an hour VK refuses to create the same post or comment twice.
  idempotentCreate: true,
  validate: (items) => firstProblem(items, ({ total }) => (total > MAX_ATTACHMENTS ? `has ${total} attachments; VK takes at most ${MAX_ATTACHMENTS}.` : undefined)),
  tools: [],
  authorizeUrl: oauth2AuthorizeUrl('id', 'authorize', scopes, { pkce: true }),

  async exchangeCode(context: ConnectContext, options) {
    const deviceId = options.callback?.device_id;
    if (!deviceId) throw permanent('VK ID sent no device_id with the code: start the connection again');
    const tokens = await vkId(context, {
      grant_type: 'authorization_code',
      code: options.code,
      code_verifier: options.codeVerifier,
      client_id: options.clientId,
      device_id: deviceId,
      redirect_uri: options.redirectUri,
      state: randomBytes(16).toString('hex'),
    });
    const { data } = await context.fetch({ method: 'POST', url: `${context.endpoints.id}/oauth2/user_info`, form: { client_id: options.clientId, access_token: tokens.accessToken }, schema: userInfoSchema, classify: classifyVkId });
    const { user } = data;
    const name = [user.first_name, user.last_name].filter(Boolean).join(' ');
    return { internalId: user.user_id, name: name || `id${user.user_id}`, profile: `id${user.user_id}`, picture: user.avatar ?? undefined, ...tokens, data: { deviceId } };
  },

  // Refresh tokens are single use: the new one replaces the old; the device_id of the connection goes with every refresh.
  refresh: (context) =>
    vkId(context, {
      grant_type: 'refresh_token',
      refresh_token: context.auth.refreshToken,
      client_id: context.client?.clientId,
      device_id: context.auth.data.deviceId,
      state: randomBytes(16).toString('hex'),
    }),

  async publish(context, item) {
    const attached = await attachments(context, item);
    // Within the guid's hour, repeating the call answers the post already made (or makes it once); later it is looked up.
    const post = () => method(context, 'wall.post', { owner_id: ownerOf(context), message: item.text, attachments: attached, guid: item.postId }, z.object({ post_id: z.number() })).then((answer) => answer.post_id);
    const postId = await context.step('post', post, ({ startedAt }) => (withinGuidHour(startedAt) ? post() : findWallPost(context, item.text, startedAt)));
    return { id: String(postId), url: wallUrl(context, String(postId)) };
  },

  async comment(context, item, { root, parent }): Promise<PublishedRef> {
    const attached = await attachments(context, item);
    const create = () =>
      method(
        context,
        'wall.createComment',
        { owner_id: ownerOf(context), post_id: root.id, message: item.text, attachments: attached, reply_to_comment: parent.id === root.id ? undefined : parent.id, guid: item.postId },
        z.object({ comment_id: z.number() }),
      ).then((answer) => answer.comment_id);
    const commentId = await context.step('comment', create, async ({ startedAt }) => {
      if (withinGuidHour(startedAt)) return create();
      throw unconfirmed('comment (its guid expired after an hour)');
    });
    return { id: String(commentId), url: `${wallUrl(context, root.id)}?reply=${commentId}` };
  },

  comments: (context, post) => wallComments(context, post),
  // The wall's owner may delete any comment on its wall; VK has no method that hides a comment.
  async deleteComment(context, comment) {
    await method(context, 'wall.deleteComment', { owner_id: ownerOf(context), comment_id: comment.id }, okSchema).catch(done);
  },
  editPublished: (context, ref, item, thread) => editWall(context, ref, item, thread),
  deletePublished: (context, ref, thread) => deleteWall(context, ref, thread),

  async postAnalytics(context, post) {
    const answer = await method(context, 'wall.getById', { posts: `${ownerOf(context)}_${post.id}` }, z.union([z.array(z.unknown()), z.looseObject({ items: z.array(z.unknown()) })]));
    const [view] = (Array.isArray(answer) ? answer : answer.items) as { likes?: { count?: number }; reposts?: { count?: number }; comments?: { count?: number }; views?: { count?: number } }[];
    if (!view) return [];
    return [currentMetric('Views', view.views?.count), currentMetric('Likes', view.likes?.count), currentMetric('Reposts', view.reposts?.count), currentMetric('Comments', view.comments?.count)];
  },

  async recent(context) {
    const { items } = await method(context, 'wall.get', { count: '20' }, z.looseObject({ items: z.array(z.looseObject({ id: z.number() })) }));
    return items.map((post) => ({ id: String(post.id), url: wallUrl(context, String(post.id)) }));
  },
};

export default vk;
