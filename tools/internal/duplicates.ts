// The duplicate guard: a post whose text is the same, or nearly the same, as one already queued, waiting for approval or
// published on the same channel less than DUPLICATE_WINDOW_DAYS (default 7) from its date is refused with the earlier
// post's id and date, unless the request says the repetition is intended (`allowDuplicate: true`). Drafts are not
// checked (nothing is published); posts with no text (media only) are not either.
//
// Texts are compared as the platforms would show them, normalised: converted to plain text, Unicode-folded (the bold and
// underline styling of the plain-text conversion does not count), lower case, whitespace collapsed, and every link
// reduced to host and path with tracking parameters (utm_*, fbclid, gclid...), "www.", the scheme, a trailing slash and
// the fragment dropped. "Nearly the same": at most one character in ten differs (edit distance).
import type { EntityManager } from '@mikro-orm/postgresql';
import { PostSchema, type Integration, type Post } from '../../src/db/entities.js';
import { convertContent, sanitizeContent } from '../../src/lib/content.js';
import type { EntryProblem, PlanEntry } from './create-posts.js';

const DAY_MS = 86_400_000;
const TRACKING_PARAMETER = /^(utm_.*|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|igshid|ref|ref_src|si|_hsenc|_hsmi)$/i;
const LINK = /https?:\/\/[^\s<>"']+/gi;

/** A link as two people would call it the same: host (no www.) and path, without scheme, tracking parameters, fragment or trailing slash. */
export function normalizeLink(raw: string): string {
  try {
    const url = new URL(raw);
    const host = url.hostname.toLowerCase().replace(/^www\./, '');
    const kept = [...url.searchParams].filter(([key]) => !TRACKING_PARAMETER.test(key)).sort(([a], [b]) => a.localeCompare(b));
    const query = kept.length > 0 ? `?${new URLSearchParams(kept).toString()}` : '';
    return `${host}${url.pathname.replace(/\/+$/, '')}${query}`;
  } catch {
    return raw;
  }
}

/** The text of a post as the duplicate guard compares it. */
export function comparableText(html: string): string {
  const text = convertContent(sanitizeContent(html), 'plain').normalize('NFKC').replace(/\u0332/g, '');
  const linked = text.replace(LINK, (match) => {
    const trailing = /[.,;:!?)\]]+$/.exec(match)?.[0] ?? '';
    return normalizeLink(match.slice(0, match.length - trailing.length)) + trailing;
  });
  return linked.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Whether `a` becomes `b` in at most `max` single-character edits (a banded Levenshtein: O(length × max)). */
export function withinEdits(a: string, b: string, max: number): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > max) return false;
  const big = max + 1;
  let previous = new Int32Array(b.length + 1).fill(big);
  let current = new Int32Array(b.length + 1).fill(big);
  for (let j = 0; j <= Math.min(b.length, max); j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current.fill(big);
    if (i <= max) current[0] = i;
    let best = current[0];
    for (let j = Math.max(1, i - max); j <= Math.min(b.length, i + max); j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      current[j] = Math.min(previous[j - 1] + cost, previous[j] + 1, current[j - 1] + 1, big);
      if (current[j] < best) best = current[j];
    }
    if (best > max) return false;
    [previous, current] = [current, previous];
  }
  return previous[b.length] <= max;
}

/** Same, or nearly the same (at most one character in ten differs). */
export function nearlySame(a: string, b: string): { same: boolean; exact: boolean } {
  if (a === b) return { same: true, exact: true };
  return { same: withinEdits(a, b, Math.floor(Math.max(a.length, b.length) / 10)), exact: false };
}

export interface DuplicateProblem extends EntryProblem {
  duplicateOf: { postId: string; date: string; state: string };
}

const STATE_WORDS: Record<string, string> = { QUEUE: 'scheduled', AWAITING_APPROVAL: 'waiting for approval', PUBLISHED: 'published' };

/**
 * The entries of a plan that repeat a post on the same channel (or an earlier entry of the same plan), each with the
 * earlier post. `exclude`: root ids not to compare with (the post being edited).
 */
export async function findDuplicates(
  em: EntityManager,
  organizationId: string,
  entries: PlanEntry[],
  integrations: Map<string, Integration>,
  options: { now: Date; windowDays: number; exclude?: string[] },
): Promise<DuplicateProblem[]> {
  if (options.windowDays <= 0) return [];
  const window = options.windowDays * DAY_MS;
  const problems: DuplicateProblem[] = [];
  const seen: { integrationId: string; text: string; date: Date; index: number }[] = [];
  for (const [index, entry] of entries.entries()) {
    if (entry.type === 'draft') continue;
    const text = comparableText(entry.items[0]?.content ?? '');
    if (!text) continue;
    const date = entry.type === 'now' ? options.now : (entry.date ?? options.now);
    const integration = integrations.get(entry.integrationId);
    const channel = integration?.name ?? entry.integrationId;
    const candidates: Post[] = await em.find(
      PostSchema,
      {
        organizationId,
        integrationId: entry.integrationId,
        position: 0,
        deletedAt: null,
        state: { $in: ['QUEUE', 'AWAITING_APPROVAL', 'PUBLISHED'] },
        publishDate: { $gte: new Date(date.getTime() - window), $lte: new Date(date.getTime() + window) },
        ...(options.exclude?.length ? { id: { $nin: options.exclude } } : {}),
      },
      { orderBy: { publishDate: 'desc' }, limit: 500 },
    );
    const earlier = candidates.map((post) => ({ post, match: nearlySame(text, comparableText(post.content)) })).find((candidate) => candidate.match.same);
    if (earlier) {
      const { post, match } = earlier;
      const when = post.state === 'PUBLISHED' ? (post.publishedAt ?? post.publishDate) : post.publishDate;
      problems.push({
        integrationId: entry.integrationId,
        channel,
        platform: integration?.providerIdentifier,
        message:
          `this text is ${match.exact ? 'the same as' : 'nearly the same as'} post ${post.id}, ${STATE_WORDS[post.state] ?? post.state} for ${when.toISOString()} on this channel ` +
          `(less than ${options.windowDays} days apart); change the text, or send allowDuplicate: true if posting it again is intended`,
        duplicateOf: { postId: post.id, date: when.toISOString(), state: post.state },
      });
      continue;
    }
    const inRequest = seen.find((other) => other.integrationId === entry.integrationId && Math.abs(other.date.getTime() - date.getTime()) < window && nearlySame(text, other.text).same);
    if (inRequest) {
      problems.push({
        integrationId: entry.integrationId,
        channel,
        platform: integration?.providerIdentifier,
        message: `entry ${index + 1} repeats entry ${inRequest.index + 1} of this request on the same channel; change the text, or send allowDuplicate: true if posting it twice is intended`,
        duplicateOf: { postId: '', date: inRequest.date.toISOString(), state: 'REQUEST' },
      });
      continue;
    }
    seen.push({ integrationId: entry.integrationId, text, date, index });
  }
  return problems;
}
