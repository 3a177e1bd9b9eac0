// The duplicate guard: a post whose text is the same, or nearly the same, as one already queued, waiting for approval or
// published on the same channel less than DUPLICATE_WINDOW_DAYS (default 7) from its date is refused with the earlier
// post's id and date, unless the request says the repetition is intended (`allowDuplicate: true`). Drafts are not
// checked (nothing is published), nor posts with no text (media only); an edit is checked when it changes the text.
//
// Texts are compared as the platforms would show them: converted to plain text, HTML entities decoded (`d&#97;y` is shown
// as "day"), Unicode-folded (NFKC: the bold and underline styling of the plain-text conversion does not count), invisible
// characters removed (default-ignorable code points: zero-width space and joiners, soft hyphen, word joiner, direction
// marks; they do not split a word), lower case, look-alike letters folded to one skeleton (UTS #39 confusables: a Cyrillic
// "а" is a Latin "a"), whitespace collapsed, and every link reduced to host
// and path with tracking parameters (utm_*, fbclid, gclid...), "www.", the scheme, a trailing slash and the fragment
// dropped. A title setting (articles, Dribbble, Pinterest...) is part of the text. "Nearly the same": the same letters and
// digits once punctuation, symbols and emoji are set aside too. Any other difference (a word, a number: "Day 1" and "Day 2"
// of a series) makes another post: a fuzzier match would refuse series and corrections people mean to publish.
//
// The guard runs on every path that makes a post due: creation, an edit of its text or date, scheduling a draft (or
// retrying a failed post), and approval. `allowDuplicate` given at creation is kept on the post (`allow_duplicate`).
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeHTML } from 'entities';
import unhomoglyph from 'unhomoglyph';
import type { Integration, Post, PostState } from '../../src/db/entities.js';
import { convertContent, sanitizeContent } from '../../src/lib/content.js';
import { PostValidationError, type EntryProblem, type PlanEntry } from './create-posts.js';

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

/** Entities decoded until none is left (a platform that renders HTML shows `&amp;#97;` as "&#97;", one more step away). */
function decodedText(text: string): string {
  for (let round = 0; round < 3 && /&(#\d+|#x[\da-f]+|[a-z][a-z\d]*);?/i.test(text); round++) {
    const decoded = decodeHTML(text);
    if (decoded === text) break;
    text = decoded;
  }
  return text;
}

const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\u0332]/gu;

/**
 * The UTS #39 skeleton: NFD, each character replaced by its prototype in Unicode's confusables data (`unhomoglyph`, data
 * from confusables.txt), NFD again; lower-cased after, so an uppercase prototype meets its lowercase letter. For comparing
 * only: a skeleton is not text to show ("m" becomes "rn").
 */
const confusableSkeleton = (text: string) => unhomoglyph(text.normalize('NFD')).normalize('NFD').toLowerCase();

/** The text of a post as the duplicate guard compares it. */
export function comparableText(html: string): string {
  const text = decodedText(convertContent(sanitizeContent(html), 'plain')).normalize('NFKC').replace(INVISIBLE, '');
  const linked = text.replace(LINK, (match) => {
    const trailing = /[.,;:!?)\]]+$/.exec(match)?.[0] ?? '';
    return normalizeLink(match.slice(0, match.length - trailing.length)) + trailing;
  });
  return linked.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Letters, digits and single spaces: what is left when punctuation, symbols and emoji are set aside (marks stay with their letter). */
const skeleton = (text: string) => text.replace(/[^\p{L}\p{M}\p{N}\s]+/gu, ' ').replace(/\s+/g, ' ').trim();

/** Same (comparable texts equal), or nearly the same (see the top of this file). */
export function nearlySame(a: string, b: string): { same: boolean; exact: boolean } {
  if (a === b) return { same: true, exact: true };
  const foldedA = confusableSkeleton(a);
  const foldedB = confusableSkeleton(b);
  // Two texts of emoji or punctuation only are compared as they are (look-alikes folded).
  const letters = skeleton(foldedA);
  return { same: foldedA === foldedB || (letters !== '' && letters === skeleton(foldedB)), exact: false };
}

/** What the guard compares of a post: its title setting, if any, and the text of its first item. */
export function comparablePost(content: string, settings: Record<string, unknown>): { text: string; key: string } {
  const text = comparableText(content);
  const title = typeof settings.title === 'string' ? settings.title : typeof settings.subject === 'string' ? settings.subject : '';
  return { text, key: title.trim() ? `${comparableText(title)}\n${text}` : text };
}

/** What the guard compares of a post (`comparablePost`) and the key stored on its root item, computed once. */
export interface PostKeys {
  text: string;
  key: string;
  /**
   * The key stored on a root item (`post.duplicate_key`): two posts are nearly the same (`nearlySame` of their comparable
   * texts) exactly when their keys are equal, so the guard finds an earlier post by one indexed lookup. Null without text.
   */
  duplicateKey: string | null;
}

export function postKeys(content: string, settings: Record<string, unknown>): PostKeys {
  const { text, key } = comparablePost(content, settings);
  return { text, key, duplicateKey: text ? matchKey(key) : null };
}

/** Equal for two keys exactly when `nearlySame` says so. */
function matchKey(key: string): string {
  const folded = confusableSkeleton(key);
  const letters = skeleton(folded);
  return createHash('sha256').update(letters ? `letters:${letters}` : `exact:${folded}`).digest('base64url');
}

export interface DuplicateProblem extends EntryProblem {
  duplicateOf: { postId: string; date: string; state: string };
}

const STATE_WORDS: Record<string, string> = { QUEUE: 'scheduled for', AWAITING_APPROVAL: 'waiting for approval, for', PUBLISHED: 'published on' };

/** One indexed lookup of the guard: the latest root of the channel with the entry's key whose date is within the window. */
export interface DuplicateLookup {
  /** The entry's index in the plan. */
  index: number;
  integrationId: string;
  key: string;
  since: Date;
  until: Date;
}

/** What an earlier post needs to be named in a refusal. */
export type EarlierPost = Pick<Post, 'id' | 'state' | 'publishDate' | 'publishedAt' | 'content' | 'settings'>;

/**
 * The lateral subquery that answers one lookup (`q`: a row of `jsonb_to_recordset(...) as q(index int, integration_id
 * text, key text, since timestamptz, until timestamptz)`; `$org`: the organization, `$exclude`: root ids not to compare
 * with): the lookup's index and the earlier post's id, state, publish_date, published_at, content and settings. Every root with text has its key (Migration20261127400000).
 */
export function duplicateLookupSql(org: string, exclude: string): string {
  return `select q.index, p.id, p.state, p.publish_date, p.published_at, p.content, p.settings from post p
    where p.organization_id = ${org} and p.integration_id = q.integration_id and p.duplicate_key = q.key and p.position = 0
      and p.deleted_at is null and p.state in ('QUEUE', 'AWAITING_APPROVAL', 'PUBLISHED')
      and p.publish_date between q.since and q.until and p.id <> all(${exclude})
    order by p.publish_date desc limit 1`;
}

/** The lookups `findDuplicates` answers from, as the JSON parameter of `duplicateLookupSql`'s recordset. */
export function duplicateLookupsJson(lookups: DuplicateLookup[]): string {
  return JSON.stringify(lookups.map((lookup) => ({ index: lookup.index, integration_id: lookup.integrationId, key: lookup.key, since: lookup.since, until: lookup.until })));
}

export interface EarlierPostRow {
  id: string;
  state: string;
  publish_date: string | Date;
  published_at: string | Date | null;
  content: string;
  settings: Record<string, unknown>;
}

/** An earlier post as `duplicateLookupSql` answers it (timestamps as text, from json or from the ORM's connections). */
export function earlierPostOf(row: EarlierPostRow): EarlierPost {
  return {
    id: row.id,
    state: row.state as PostState,
    publishDate: new Date(row.publish_date),
    publishedAt: row.published_at ? new Date(row.published_at) : null,
    content: row.content,
    settings: row.settings,
  };
}

interface GuardOptions {
  now: Date;
  windowDays: number;
  /** `postKeys` of each entry's first item, by entry index, when the caller computed them already (it stores their `duplicateKey`). */
  keys?: PostKeys[];
}

/** The entries the guard compares (not drafts, not texts without letters; none with a window of 0 days), each with its keys and date. */
function guarded(entries: PlanEntry[], options: GuardOptions): { index: number; entry: PlanEntry; keys: PostKeys & { duplicateKey: string }; date: Date }[] {
  if (options.windowDays <= 0) return [];
  return entries.flatMap((entry, index) => {
    if (entry.type === 'draft') return [];
    const keys = options.keys?.[index] ?? postKeys(entry.items[0]?.content ?? '', entry.settings);
    if (keys.duplicateKey === null) return [];
    return [{ index, entry, keys: { ...keys, duplicateKey: keys.duplicateKey }, date: entry.type === 'now' ? options.now : (entry.date ?? options.now) }];
  });
}

/** The lookups a plan needs: one per entry the guard compares. */
export function duplicateLookups(entries: PlanEntry[], options: GuardOptions): DuplicateLookup[] {
  const window = options.windowDays * DAY_MS;
  return guarded(entries, options).map(({ index, entry, keys, date }) => ({
    index,
    integrationId: entry.integrationId,
    key: keys.duplicateKey,
    since: new Date(date.getTime() - window),
    until: new Date(date.getTime() + window),
  }));
}

/**
 * The entries of a plan that repeat a post on the same channel (`earlier`: what each entry's lookup found, by entry index) or
 * an earlier entry of the same plan, each with the earlier post.
 */
export function judgeDuplicates(entries: PlanEntry[], integrations: Map<string, Integration>, earlier: Map<number, EarlierPost>, options: GuardOptions): DuplicateProblem[] {
  return [...duplicatesByEntry(entries, integrations, earlier, options).values()];
}

/** `judgeDuplicates` by the index of the entry each problem is about. */
export function duplicatesByEntry(entries: PlanEntry[], integrations: Map<string, Integration>, earlier: Map<number, EarlierPost>, options: GuardOptions): Map<number, DuplicateProblem> {
  const window = options.windowDays * DAY_MS;
  const problems = new Map<number, DuplicateProblem>();
  const seen: { integrationId: string; key: string; date: Date; index: number }[] = [];
  for (const { index, entry, keys, date } of guarded(entries, options)) {
    const { key } = keys;
    const integration = integrations.get(entry.integrationId);
    const channel = integration?.name ?? entry.integrationId;
    const post = earlier.get(index);
    if (post) {
      // Equal keys are nearly the same texts (`matchKey`); the words say whether exactly.
      const { exact } = nearlySame(key, comparablePost(post.content, post.settings).key);
      const when = post.state === 'PUBLISHED' ? (post.publishedAt ?? post.publishDate) : post.publishDate;
      problems.set(index, {
        integrationId: entry.integrationId,
        channel,
        platform: integration?.providerIdentifier,
        message:
          `this text is ${exact ? 'the same as' : 'nearly the same as'} post ${post.id}, ${STATE_WORDS[post.state] ?? post.state} ${when.toISOString()} on this channel ` +
          `(less than ${options.windowDays} days apart); change the text, or send allowDuplicate: true if posting it again is intended`,
        duplicateOf: { postId: post.id, date: when.toISOString(), state: post.state },
      });
      continue;
    }
    const inRequest = seen.find((other) => other.integrationId === entry.integrationId && Math.abs(other.date.getTime() - date.getTime()) < window && nearlySame(key, other.key).same);
    if (inRequest) {
      problems.set(index, {
        integrationId: entry.integrationId,
        channel,
        platform: integration?.providerIdentifier,
        message: `entry ${index + 1} repeats entry ${inRequest.index + 1} of this request on the same channel; change the text, or send allowDuplicate: true if posting it twice is intended`,
        duplicateOf: { postId: '', date: inRequest.date.toISOString(), state: 'REQUEST' },
      });
      continue;
    }
    seen.push({ integrationId: entry.integrationId, key, date, index });
  }
  return problems;
}

/**
 * The entries of a plan that repeat a post on the same channel (or an earlier entry of the same plan), each with the
 * earlier post, in one query, by the index of the entry each problem is about. `exclude`: root ids not to compare with
 * (the post being edited).
 */
export async function findDuplicates(
  em: EntityManager,
  organizationId: string,
  entries: PlanEntry[],
  integrations: Map<string, Integration>,
  options: GuardOptions & { exclude?: string[] },
): Promise<Map<number, DuplicateProblem>> {
  const lookups = duplicateLookups(entries, options);
  const earlier = new Map<number, EarlierPost>();
  if (lookups.length > 0) {
    const rows = await em.getConnection().execute<(EarlierPostRow & { index: number })[]>(
      `select d.* from jsonb_to_recordset(?::jsonb) as q(index int, integration_id text, key text, since timestamptz, until timestamptz)
         cross join lateral (${duplicateLookupSql('?', 'array(select jsonb_array_elements_text(?::jsonb))')}) d`,
      // (knex spreads an array parameter into a list: the ids go as JSON)
      [duplicateLookupsJson(lookups), organizationId, JSON.stringify(options.exclude ?? [])],
      'all',
      em.getTransactionContext(),
    );
    for (const row of rows) earlier.set(row.index, earlierPostOf(row));
  }
  return duplicatesByEntry(entries, integrations, earlier, options);
}

export interface DuplicateGuardOptions {
  now: Date;
  windowDays: number;
  /** The request says the repetition is intended (or the post was created saying so). */
  allowDuplicate?: boolean;
}

/**
 * Refuses to make a post due (schedule a draft, retry, approve, move its date) when its text repeats another post of the
 * channel within the window, as creation does: the same PostValidationError, naming the earlier post.
 */
export async function refuseDuplicateOf(
  em: EntityManager,
  root: Post,
  integration: Integration,
  options: DuplicateGuardOptions & { date?: Date; content?: string; settings?: Record<string, unknown> },
): Promise<void> {
  if (options.allowDuplicate || root.allowDuplicate) return;
  const { __type: _type, ...settings } = options.settings ?? root.settings;
  const entry: PlanEntry = {
    integrationId: integration.id,
    type: 'schedule',
    date: options.date ?? root.publishDate,
    shortLink: root.shortLink,
    tags: root.tags,
    groupKey: 0,
    settings,
    items: [{ content: options.content ?? root.content, media: [], delay: 0 }],
  };
  const duplicates = await findDuplicates(em, root.organizationId, [entry], new Map([[integration.id, integration]]), { ...options, exclude: [root.id] });
  if (duplicates.size > 0) throw new PostValidationError([...duplicates.values()]);
}
