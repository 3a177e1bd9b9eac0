// Publishing on LinkedIn, as a member or an organization: media first (each upload a recorded step), then the post through
// the Posts API (its URN comes back in the x-restli-id header), later items as comments on it.
// References:
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/multiimage-post-api
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/comments-api (message.text, created.time)
//   https://learn.microsoft.com/linkedin/marketing/community-management/shares/little-text-format (commentary and comment text)
// (read 2026-11-27). An interrupted create is looked up only where the channel may read its author's posts and comments, and
// only what was created since the attempt began counts (providers/recovery.ts): an older post with the same text is
// never taken for it.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { JsonValue, ProviderContext, PublishItem, PublishedRef, StepAttempt, ValidationItem } from '../types.js';
import { firstProblem } from '../shared.js';
import { createdSince, onlyCandidate } from '../recovery.js';
import { authorOf, littleText, postUrl, rest, urnParam } from './api.js';
import { carouselPdf, uploadDocument, uploadImage, uploadVideo, videoReady } from './media.js';

export const MAX_PICTURES = 20;

export const carouselSetting = z.boolean().optional().describe('Publish the pictures as a carousel (a PDF document built from them, one page per picture)');
export const MAX_COMMENT_LENGTH = 1250;

export const linkedinRules =
  'LinkedIn: plain text up to 3000 characters (reserved characters are escaped and #hashtags kept clickable for you). A post takes up to 20 pictures, ' +
  'or one video as its only attachment (MP4, 3 seconds to 30 minutes). With post_as_images_carousel the pictures (at least 2, no video) are published ' +
  'as one swipeable PDF document, one page per picture. Later items are comments on the post: text only, up to 1250 characters.';

/** Media and settings rules shared by both LinkedIn providers. */
export function linkedinMediaRules(items: ValidationItem[], settings: Record<string, unknown>): string | undefined {
  const carousel = settings.post_as_images_carousel === true;
  return (
    firstProblem(
      items,
      ({ images, videos }) => {
        if (carousel && (videos > 0 || images < 2)) return 'is a carousel, which needs at least 2 pictures and no video: add pictures or turn post_as_images_carousel off.';
        if (videos > 1 || (videos === 1 && images > 0)) return 'has a video with other media; a LinkedIn video must be the only attachment.';
        if (images > MAX_PICTURES) return `has ${images} pictures; LinkedIn takes at most ${MAX_PICTURES}: remove some or split the post.`;
        return undefined;
      },
      'first',
    ) ??
    firstProblem(
      items,
      ({ total }, item) => {
        if (total > 0) return 'has attachments, but comments on LinkedIn take text only: remove them.';
        if (item.text.length > MAX_COMMENT_LENGTH) return `is a comment of ${item.text.length} characters; LinkedIn comments take at most ${MAX_COMMENT_LENGTH}: shorten it.`;
        return undefined;
      },
      'rest',
    )
  );
}

type Step = <T extends JsonValue>(name: string, run: () => Promise<T>) => Promise<T>;

/** An upload interrupted mid-call is made again: an upload no post refers to is never shown and LinkedIn discards it. */
const uploadStep = (context: ProviderContext): Step => (name, run) => context.step(name, run, async () => undefined);

/** A sensible document title: the carousel_name setting, else the first line of the text, else "Carousel". */
function carouselTitle(context: ProviderContext, text: string): string {
  const setting = typeof context.settings.carousel_name === 'string' ? context.settings.carousel_name.trim() : '';
  const firstLine = text.split('\n').find((line) => line.trim())?.trim() ?? '';
  const title = setting || firstLine || 'Carousel';
  return title.length > 100 ? `${title.slice(0, 99)}…` : title;
}

/** The `content` of the post: a document (carousel), a video, one picture, or several (multiImage). */
async function content(context: ProviderContext, item: PublishItem): Promise<Record<string, JsonValue> | undefined> {
  const owner = authorOf(context);
  const step = uploadStep(context);
  if (item.media.length === 0) return undefined;
  if (context.settings.post_as_images_carousel === true) {
    const title = carouselTitle(context, item.text);
    const document = await step('document', async () => uploadDocument(context, owner, await carouselPdf(await Promise.all(item.media.map((file) => file.load())), title)));
    return { media: { id: document, title } };
  }
  const video = item.media.find((file) => file.kind === 'video');
  if (video) {
    const urn = await step('video:0', async () => uploadVideo(context, owner, await video.load()));
    await videoReady(context, urn);
    return { media: { id: urn } };
  }
  const images: { id: string; altText?: string }[] = [];
  for (const [index, file] of item.media.entries()) {
    const id = await step(`image:${index}`, async () => uploadImage(context, owner, await file.load()));
    images.push({ id, ...(file.alt ? { altText: file.alt.slice(0, 4086) } : {}) });
  }
  return images.length === 1 ? { media: images[0] } : { multiImage: { images } };
}

/** A create that succeeded without naming what it made: its step stays open, so a retry looks it up instead of repeating it. */
const unanswered = (what: string, status: number) =>
  new PlatformHttpError({ status, retryable: false, outcomeUnknown: true, bodyExcerpt: '', message: `LinkedIn created the ${what} without answering its id: check the account before retrying.` });

const postsSchema = z.object({
  elements: z.array(z.object({ id: z.string(), commentary: z.string().optional(), author: z.string().optional(), createdAt: z.number().optional() })),
});

/** The author's recent posts (organizations: r_organization_social; members need r_member_social, which LinkedIn restricts). */
export async function recentPosts(context: ProviderContext, count = 20) {
  const { data } = await rest(context, {
    path: `posts?q=author&author=${urnParam(authorOf(context))}&count=${count}&sortBy=LAST_MODIFIED`,
    headers: { 'x-restli-method': 'FINDER' },
    schema: postsSchema,
  });
  return data.elements;
}

/** Publishes the first item. `canRead`: the channel may read its author's posts, so an interrupted create is looked up. */
export async function publishPost(context: ProviderContext, item: PublishItem, options: { canRead: boolean }): Promise<PublishedRef> {
  const body = {
    author: authorOf(context),
    commentary: littleText(item.text),
    visibility: 'PUBLIC',
    distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
    lifecycleState: 'PUBLISHED',
    isReshareDisabledByAuthor: false,
    ...(await content(context, item).then((value) => (value ? { content: value } : {}))),
  };
  const create = async () => {
    const created = await rest(context, { method: 'POST', path: 'posts', json: body });
    const urn = created.headers.get('x-restli-id');
    if (!urn) throw unanswered('post', created.status);
    return urn;
  };
  // The same commentary created since the attempt began (LinkedIn keeps no marker of ours on a post).
  const lookUp = async (attempt: StepAttempt) => {
    const found = (await recentPosts(context)).filter((post) => post.commentary === body.commentary && createdSince(attempt, post.createdAt));
    return onlyCandidate(found, 'LinkedIn', 'posts')?.id;
  };
  const urn = await context.step('post', create, options.canRead ? lookUp : undefined);
  return { id: urn, url: postUrl(context, urn) };
}

const commentSchema = z.object({
  id: z.string().optional(),
  $URN: z.string().optional(),
  actor: z.string().optional(),
  message: z.object({ text: z.string() }).optional(),
  created: z.object({ time: z.number() }).optional(),
});

/** A comment on the post (`root`), by the channel's member or organization; its text is little text, as a post's commentary. */
export async function publishComment(context: ProviderContext, item: PublishItem, root: PublishedRef, options: { canRead: boolean }): Promise<PublishedRef> {
  const actor = authorOf(context);
  const path = `socialActions/${urnParam(root.id)}/comments`;
  const text = littleText(item.text);
  const urnOf = (comment: z.infer<typeof commentSchema>, header?: string | null) =>
    comment.$URN ?? (comment.id ? `urn:li:comment:(${root.id},${comment.id})` : header ?? undefined);
  const create = async () => {
    const created = await rest(context, { method: 'POST', path, json: { actor, object: root.id, message: { text } }, schema: commentSchema.optional() });
    const urn = urnOf(created.data ?? {}, created.headers.get('x-restli-id'));
    if (!urn) throw unanswered('comment', created.status);
    return urn;
  };
  const lookUp = async (attempt: StepAttempt) => {
    const { data } = await rest(context, { path, schema: z.object({ elements: z.array(commentSchema) }) });
    const found = data.elements.filter((comment) => comment.actor === actor && comment.message?.text === text && createdSince(attempt, comment.created?.time));
    const only = onlyCandidate(found, 'LinkedIn', 'comments');
    return only ? urnOf(only) : undefined;
  };
  const urn = await context.step('comment', create, options.canRead ? lookUp : undefined);
  return { id: urn, url: `${postUrl(context, root.id)}?commentUrn=${encodeURIComponent(urn)}` };
}
