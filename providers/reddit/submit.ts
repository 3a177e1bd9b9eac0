// Publishing on Reddit: one submission per chosen subreddit (each a recorded step), a picture sent once through Reddit's
// media lease, later items as comments replying to the one before in every subreddit. Reddit answers an image submission
// without its id (it finishes asynchronously), and a lost answer leaves no id at all: both are found in the user's
// `submitted` listing (same subreddit and title, created since the attempt began) instead of being submitted twice; a lost
// comment is found in the user's `comments` listing (same parent and text, created since the attempt began). Reddit keeps
// no marker of ours, so the attempt's start is what tells our item from an older one with the same title or text.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { CheckAgainLater, type MediaFile, type ProviderContext, type PublishItem, type PublishedRef } from '../types.js';
import { listing as listingOf, redditCall } from './api.js';
import { blobOf, idsOf, othersMeta } from '../shared.js';
import { earliestCreationSeconds } from '../recovery.js';
import { commonMarkLineBreaks } from '../safe-markdown.js';

export interface SubredditEntry {
  subreddit: string;
  title: string;
  type: 'self' | 'text' | 'link' | 'image' | 'video' | 'videogif';
  url?: string;
  is_flair_required: boolean;
  flair?: { id: string; name: string } | null;
}

/** `/r/name`, `r/name` or `name` → `name`. */
export const subredditName = (value: string) => value.trim().replace(/^\/?r\//i, '').replace(/\/+$/, '');

const submissionSchema = z.looseObject({ id: z.string(), title: z.string(), subreddit: z.string(), created_utc: z.number(), permalink: z.string() });
const commentSchema = z.looseObject({ id: z.string(), parent_id: z.string(), body: z.string(), created_utc: z.number(), permalink: z.string().optional() });
const leaseSchema = z.object({ args: z.object({ action: z.string(), fields: z.array(z.object({ name: z.string(), value: z.string() })) }) });
const submittedSchema = z.object({ json: z.object({ data: z.looseObject({ id: z.string().optional(), url: z.string().optional() }).optional() }) });
const commentedSchema = z.object({ json: z.object({ data: z.object({ things: z.array(z.object({ data: commentSchema })).min(1) }) }) });

const webUrl = (context: ProviderContext, permalink: string) => `${context.endpoints.www}${permalink}`;
const username = (context: ProviderContext) => encodeURIComponent(context.auth.data.username ?? '');
const now = () => Math.floor(Date.now() / 1000);

/** The picture on Reddit's storage: a lease (POST /api/media/asset.json), then the S3 form it hands back; answers the file's URL. */
async function uploadPicture(context: ProviderContext, file: MediaFile): Promise<string> {
  const { bytes, mimeType } = await file.load();
  const filename = file.url.split(/[?#]/)[0].split('/').pop() || `picture.${mimeType.split('/')[1] ?? 'png'}`;
  const lease = await redditCall(context, { method: 'POST', path: 'api/media/asset.json', form: { filepath: decodeURIComponent(filename), mimetype: mimeType }, schema: leaseSchema });
  // The lease's action is scheme-relative (//reddit-uploaded-media.s3-accelerate.amazonaws.com): https unless it names a scheme.
  const action = new URL(lease.args.action, 'https://reddit.invalid').toString().replace(/\/+$/, '');
  const form = new FormData();
  for (const field of lease.args.fields) form.append(field.name, field.value);
  form.append('file', blobOf(bytes, mimeType), filename);
  await context.fetch({
    method: 'POST',
    url: action,
    multipart: form,
    timeoutMs: 120_000,
    classify: (status, body) => ({ message: `Reddit's media storage refused the picture (${/<Message>([^<]*)<\/Message>/.exec(body)?.[1] ?? body.slice(0, 200)}, HTTP ${status})` }),
  });
  const key = lease.args.fields.find((field) => field.name === 'key')?.value;
  if (!key) throw new PlatformHttpError({ status: 200, retryable: false, bodyExcerpt: JSON.stringify(lease).slice(0, 500), message: 'Reddit\'s media lease had no key' });
  return `${action}/${key}`;
}

/** The user's own submission in `subreddit` with `title`, made since `since` (epoch seconds), from the `submitted` listing. */
async function findSubmission(context: ProviderContext, subreddit: string, title: string, since: number): Promise<{ id: string; url: string } | undefined> {
  const listing = await redditCall(context, { path: `user/${username(context)}/submitted`, query: { limit: 25, sort: 'new' }, schema: listingOf(submissionSchema) });
  const found = listing.data.children
    .map((child) => child.data)
    .find((post) => post.subreddit.toLowerCase() === subreddit.toLowerCase() && post.title === title && post.created_utc >= since);
  return found ? { id: found.id, url: webUrl(context, found.permalink) } : undefined;
}

/** Seconds Reddit may take before a new submission shows in the listing: until then an unseen one is waited for, not repeated. */
const LISTING_LAG_SECONDS = 120;
const secondsOf = (date: Date) => Math.floor(date.getTime() / 1000);

async function submitOne(context: ProviderContext, item: PublishItem, entry: SubredditEntry, index: number, picture?: string) {
  const subreddit = subredditName(entry.subreddit);
  const kind = entry.type === 'text' ? 'self' : entry.type;
  // When the submission was first attempted: an image submission's id is looked up in the listing from then on.
  const since = await context.step(`submit:${index}:at`, async () => now());
  const lookUp = async ({ startedAt }: { startedAt: Date }) => {
    const found = await findSubmission(context, subreddit, entry.title, secondsOf(startedAt));
    if (found || now() - secondsOf(startedAt) > LISTING_LAG_SECONDS) return found;
    throw new CheckAgainLater(30, `Checking whether Reddit received the submission to r/${subreddit}`, 600);
  };
  const sent = await context.step(
    `submit:${index}`,
    async () => {
      const answer = await redditCall(context, {
        method: 'POST',
        path: 'api/submit',
        form: {
          api_type: 'json',
          sr: subreddit,
          title: entry.title,
          kind,
          text: commonMarkLineBreaks(item.text) || undefined,
          url: kind === 'link' ? entry.url : kind === 'image' ? picture : undefined,
          flair_id: entry.flair?.id || undefined,
          resubmit: 'true',
          sendreplies: 'true',
        },
        schema: submittedSchema,
      });
      const { id, url } = answer.json.data ?? {};
      return { id: id ?? '', url: url ?? '' };
    },
    lookUp,
  );
  if (sent.id) return { id: sent.id, url: sent.url };
  // An image submission is answered with a websocket address only: its id appears in the listing once Reddit has made it.
  return context.step(`submit:${index}:id`, async () => {
    const found = await findSubmission(context, subreddit, entry.title, since);
    if (!found) throw new CheckAgainLater(10, `Reddit is still processing the image post to r/${subreddit}`, 900);
    return found;
  });
}

export async function publishSubmissions(context: ProviderContext, item: PublishItem): Promise<PublishedRef> {
  const entries = ((context.settings.subreddit ?? []) as { value: SubredditEntry }[]).map(({ value }) => value);
  const needsPicture = entries.some((entry) => entry.type === 'image');
  const picture = needsPicture && item.media[0] ? await context.step('picture', () => uploadPicture(context, item.media[0]), async () => undefined) : undefined;
  const sent = [];
  for (const [index, entry] of entries.entries()) sent.push(await submitOne(context, item, entry, index, picture));
  const [first, ...others] = sent;
  return { id: first.id, url: first.url, ...othersMeta(others.map((post) => post.id)) };
}

/** A comment whose answer was lost is found among the user's newest comments: same parent, same text, made since the attempt. */
async function findComment(context: ProviderContext, thingId: string, text: string, startedAt: Date): Promise<{ id: string; url: string } | undefined> {
  const listing = await redditCall(context, { path: `user/${username(context)}/comments`, query: { limit: 25, sort: 'new' }, schema: listingOf(commentSchema) });
  const since = earliestCreationSeconds(startedAt);
  const found = listing.data.children.map((child) => child.data).find((comment) => comment.parent_id === thingId && comment.body === text && comment.created_utc >= since);
  return found ? { id: found.id, url: found.permalink ? webUrl(context, found.permalink) : '' } : undefined;
}

/** Comments on every submission: the first replies to the submission (t3_), later ones to the previous comment (t1_). */
export async function publishComments(context: ProviderContext, item: PublishItem, root: PublishedRef, parent: PublishedRef): Promise<PublishedRef> {
  const parents = parent.id === root.id ? idsOf(root).map((id) => `t3_${id}`) : idsOf(parent).map((id) => `t1_${id}`);
  const text = commonMarkLineBreaks(item.text);
  const made = [];
  for (const [index, thingId] of parents.entries()) {
    made.push(
      await context.step(
        `comment:${index}`,
        async () => {
          const answer = await redditCall(context, { method: 'POST', path: 'api/comment', form: { api_type: 'json', thing_id: thingId, text }, schema: commentedSchema });
          const comment = answer.json.data.things[0].data;
          return { id: comment.id, url: comment.permalink ? webUrl(context, comment.permalink) : '' };
        },
        ({ startedAt }) => findComment(context, thingId, text, startedAt),
      ),
    );
  }
  const [first, ...others] = made;
  return { id: first.id, url: first.url || undefined, ...othersMeta(others.map((comment) => comment.id)) };
}
