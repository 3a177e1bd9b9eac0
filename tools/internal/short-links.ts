// Link shortening for `shortLink: true`: the links of an item are shortened when it is published (Herald's own
// PUBLIC_URL/l/<code>, or Dub), one short link per (item, URL) so a retried publication reuses it. Validation counts the
// short form, which has a fixed length. Clicks: a count per link and UTC day (Herald's redirect keeps nothing else), or
// Dub's analytics; they are the `clicks` metric of post analytics on every platform.
import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Config } from '../../src/config.js';
import { ShortLinkSchema, type ShortLink } from '../../src/db/agent-entities.js';
import type { Post } from '../../src/db/entities.js';
import { newId } from '../../src/lib/crypto.js';
import { isLocalHost } from '../../src/lib/ssrf.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { DomainError } from '../../src/errors.js';
import { dailyMetric, isoDay } from '../../providers/shared.js';
import type { AnalyticsMetric } from '../../providers/types.js';
import type { Services } from '../types.js';

const CODE_LENGTH = 7;
const CODE_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Dub's own domain when the workspace has none (its default slugs are 7 characters too). */
const DUB_DEFAULT_DOMAIN = 'dub.sh';
const URL_IN_HTML = /https?:\/\/[^\s<>"']+/gi;
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * A URL found in content (text or href): the part of the match that is the URL (sentence punctuation after it and a
 * non-breaking space left out) and the URL decoded (sanitized HTML writes `&` as `&amp;`).
 */
function urlOf(match: string): { url: string; consumed: number } {
  let raw = match.split('&nbsp;')[0];
  for (;;) {
    const trimmed = raw.replace(/[.,;:!?]+$/, '');
    const unbalanced = trimmed.endsWith(')') && (trimmed.match(/\(/g)?.length ?? 0) < (trimmed.match(/\)/g)?.length ?? 0);
    const next = unbalanced ? trimmed.slice(0, -1) : trimmed;
    if (next === raw) break;
    raw = next;
  }
  return { url: raw.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]), consumed: raw.length };
}

const isAbsoluteUrl = (url: string) => {
  try {
    return Boolean(new URL(url).hostname);
  } catch {
    return false;
  }
};

/** Where short links of this Herald point: `PUBLIC_URL/l/` or the Dub domain. */
function shortPrefix(config: Config): string | undefined {
  if (config.shortLinks.kind === 'herald') return `${config.publicUrl}/l/`;
  if (config.shortLinks.kind === 'dub') return `https://${config.shortLinks.domain ?? DUB_DEFAULT_DOMAIN}/`;
  return undefined;
}

/** The links of an item's content that shortening replaces (already-short links and mailto are left alone). */
export function linksToShorten(config: Config, html: string): string[] {
  const prefix = shortPrefix(config);
  if (!prefix) return [];
  const urls = [...html.matchAll(URL_IN_HTML)].map((match) => urlOf(match[0]).url);
  return [...new Set(urls.filter((url) => isAbsoluteUrl(url) && !url.startsWith(prefix)))];
}

/** Replaces each URL that `map` names (in text and in href) with its short form. */
function replaceLinks(html: string, map: Map<string, string>): string {
  return html.replace(URL_IN_HTML, (match) => {
    const { url, consumed } = urlOf(match);
    const short = map.get(url);
    // What followed the URL in the match (sentence punctuation, an entity) stays after the short link.
    return short ? short + match.slice(consumed) : match;
  });
}

/** The content as validation counts it: each link that will be shortened replaced by a short link of the same length. */
export function shortFormForCounting(config: Config, html: string): string {
  const prefix = shortPrefix(config);
  const links = linksToShorten(config, html);
  if (!prefix || links.length === 0) return html;
  return replaceLinks(html, new Map(links.map((url) => [url, `${prefix}${'x'.repeat(CODE_LENGTH)}`])));
}

/** What the answer to a create (or a preview) says about `shortLink: true`. */
export function shortLinkWarnings(config: Config, shortLink: boolean, contents: string[]): string[] {
  if (!shortLink) return [];
  const links = contents.flatMap((content) => linksToShorten(config, content));
  const anyLink = contents.some((content) => /https?:\/\//i.test(content));
  if (config.shortLinks.kind === 'none') return anyLink ? ['Link shortening is turned off on this Herald (LINK_SHORTENER=none): the links are posted as they are.'] : [];
  if (links.length === 0) return [];
  const where = config.shortLinks.kind === 'dub' ? `Dub (${shortPrefix(config)}…)` : `${shortPrefix(config)}<code>`;
  const warnings = [`${links.length === 1 ? 'The link' : `${links.length} links`} will be shortened to ${where} when the post is published; clicks appear as the "clicks" metric of the post's analytics.`];
  if (config.shortLinks.kind === 'herald') {
    const host = new URL(config.publicUrl).hostname;
    if (isLocalHost(host)) warnings.push(`PUBLIC_URL is ${config.publicUrl}, which people on the internet cannot open: set PUBLIC_URL to this Herald's public address, or the short links will not work.`);
  }
  return warnings;
}

function randomCode(): string {
  let code = '';
  for (let index = 0; index < CODE_LENGTH; index++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

const dubLinkSchema = z.object({ id: z.string(), shortLink: z.string() });

/** Dub's errors are a shortening failure of ours, not the social platform's: the publication retries, naming Dub. */
function dubFailure(error: unknown): Error {
  const detail = error instanceof PlatformHttpError ? `${error.status || 'network'} ${error.message}` : (error as Error).message;
  return new Error(`link shortening through Dub failed (${detail})`);
}

async function createDubLink(services: Services, row: ShortLink): Promise<{ id: string; shortLink: string }> {
  const settings = services.config.shortLinks as Extract<Config['shortLinks'], { kind: 'dub' }>;
  const headers = { authorization: `Bearer ${settings.apiKey}` };
  try {
    // externalId is unique per workspace: a repeated create (a crash after Dub answered) is a 409, and the link is read back.
    const created = await services.fetch({
      method: 'POST',
      url: `${settings.apiUrl}/links`,
      headers,
      json: { url: row.targetUrl, externalId: row.id, ...(settings.domain ? { domain: settings.domain } : {}) },
      okStatuses: [409],
    });
    if (created.status !== 409) return dubLinkSchema.parse(created.data);
    const found = await services.fetch({ url: `${settings.apiUrl}/links/info`, query: { externalId: `ext_${row.id}` }, headers, schema: dubLinkSchema });
    return found.data;
  } catch (error) {
    throw dubFailure(error);
  }
}

/** The short link of `url` in `item`, created once (a unique key per item and URL makes a second run reuse it). */
async function shortLinkFor(services: Services, em: EntityManager, item: Post, url: string): Promise<string> {
  const kind = services.config.shortLinks.kind as 'herald' | 'dub';
  for (let attempt = 0; attempt < 5; attempt++) {
    const code = kind === 'herald' ? randomCode() : null;
    await em.getConnection().execute(
      `insert into short_link (id, organization_id, post_id, root_post_id, target_url, shortener, code, short_url, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
      [newId(), item.organizationId, item.id, item.rootPostId, url, kind, code, code ? `${services.config.publicUrl}/l/${code}` : null, services.now()],
    );
    const row = await em.findOne(ShortLinkSchema, { postId: item.id, targetUrl: url }, { refresh: true });
    if (!row) continue; // the code was taken by another link: draw another
    if (row.shortUrl) return row.shortUrl;
    const link = await createDubLink(services, row);
    row.shortUrl = link.shortLink;
    row.externalId = link.id;
    await em.flush();
    return link.shortLink;
  }
  throw new Error('could not draw a free short-link code');
}

/** The item's content with its links shortened (publish time), or as it is when the post did not ask for it. */
export async function shortenContent(services: Services, em: EntityManager, item: Post): Promise<string> {
  if (!item.shortLink) return item.content;
  const links = linksToShorten(services.config, item.content);
  if (links.length === 0) return item.content;
  const map = new Map<string, string>();
  for (const url of links) map.set(url, await shortLinkFor(services, em, item, url));
  return replaceLinks(item.content, map);
}

// Link-preview fetchers of the platforms (TelegramBot, Twitterbot, LinkedInBot, Slackbot, Discordbot…, facebookexternalhit,
// WhatsApp, Mastodon servers, Bluesky's Cardyb) are not people; in-app browsers of the platforms' apps are.
const BOT_AGENTS = /bot\b|bot\/|crawl|spider|slurp|preview|facebookexternalhit|embedly|whatsapp|skypeuripreview|mastodon\/|cardyb|vkshare|headless/i;

/**
 * Follows a short link: answers its target and counts a click for today, unless the visitor is a platform's link-preview
 * fetcher. Nothing about the visitor is stored.
 */
export async function followShortLink(em: EntityManager, code: string, userAgent: string | undefined, now: Date, count: boolean): Promise<string | undefined> {
  if (!/^[0-9A-Za-z]{1,32}$/.test(code)) return undefined;
  const rows = await em.getConnection().execute<{ id: string; target_url: string }[]>("select id, target_url from short_link where code = ? and shortener = 'herald'", [code]);
  const link = rows[0];
  if (!link) return undefined;
  if (count && !BOT_AGENTS.test(userAgent ?? '')) {
    await em.getConnection().execute(
      `insert into short_link_click (short_link_id, day, clicks) values (?, ?::date, 1)
       on conflict (short_link_id, day) do update set clicks = short_link_click.clicks + 1`,
      [link.id, isoDay(now)],
    );
  }
  return link.target_url;
}

const dubTimeseries = z.array(z.object({ start: z.string(), clicks: z.number() }));

/** Daily clicks of Dub links, read from Dub's analytics (groupBy timeseries, one call per link). */
async function dubClicks(services: Services, links: ShortLink[], start: Date, end: Date): Promise<Map<string, number>> {
  const settings = services.config.shortLinks as Extract<Config['shortLinks'], { kind: 'dub' }>;
  const byDay = new Map<string, number>();
  for (const link of links) {
    if (!link.externalId) continue;
    let data: z.infer<typeof dubTimeseries>;
    try {
      ({ data } = await services.fetch({
        url: `${settings.apiUrl}/analytics`,
        headers: { authorization: `Bearer ${settings.apiKey}` },
        query: { event: 'clicks', groupBy: 'timeseries', linkId: link.externalId, start: start.toISOString(), end: end.toISOString(), timezone: 'UTC' },
        schema: dubTimeseries,
      }));
    } catch (error) {
      throw new DomainError('provider_error', `Dub answered with an error reading the clicks: ${(error as Error).message}`, {
        hint: "Dub's analytics need a workspace plan that includes them (Pro or higher) and a key with analytics access.",
      });
    }
    for (const point of data) byDay.set(point.start.slice(0, 10), (byDay.get(point.start.slice(0, 10)) ?? 0) + point.clicks);
  }
  return byDay;
}

/**
 * The `clicks` metric of a published post over the last `days` days: the clicks on the short links of its chain (the
 * root's whole thread, or one item), one point per day. Undefined when the post has no short link.
 */
export async function clicksMetric(services: Services, em: EntityManager, post: Post, days: number): Promise<AnalyticsMetric | undefined> {
  // Short links are made only by shortenContent, for items of a post created with shortLink (every item of a chain shares it).
  if (!post.shortLink) return undefined;
  const links = await em.find(ShortLinkSchema, post.id === post.rootPostId ? { organizationId: post.organizationId, rootPostId: post.id } : { organizationId: post.organizationId, postId: post.id });
  if (links.length === 0) return undefined;
  const end = services.now();
  const start = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate()) - (days - 1) * 86_400_000);
  let byDay: Map<string, number>;
  const herald = links.filter((link) => link.shortener === 'herald');
  const dub = links.filter((link) => link.shortener === 'dub');
  byDay = dub.length > 0 && services.config.shortLinks.kind === 'dub' ? await dubClicks(services, dub, start, end) : new Map();
  if (herald.length > 0) {
    const rows = await em.getConnection().execute<{ day: string; clicks: number }[]>(
      `select to_char(day, 'YYYY-MM-DD') as day, sum(clicks)::int as clicks from short_link_click
       where short_link_id in (${herald.map(() => '?').join(',')}) and day >= ?::date group by day`,
      [...herald.map((link) => link.id), isoDay(start)],
    );
    for (const row of rows) byDay.set(row.day, (byDay.get(row.day) ?? 0) + Number(row.clicks));
  }
  const points = Array.from({ length: days }, (_, index) => {
    const date = isoDay(new Date(start.getTime() + index * 86_400_000));
    return { date, value: byDay.get(date) ?? 0 };
  });
  return dailyMetric('clicks', points);
}
