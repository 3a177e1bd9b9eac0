// Reading an RSS 2.0 (also 0.9x and 1.0/RDF) or Atom 1.0 feed into its entries (tools/internal/feeds.ts turns them into
// posts). Pure: no I/O.
//
// Safe by construction: a document that declares entities (a DTD internal subset, `<!ENTITY`) is refused before it is
// parsed, since declared entities are how external-entity (XXE) reads and entity expansion ("billion laughs") work; any
// other DOCTYPE is dropped unread (an external DTD is never fetched). fast-xml-parser runs with entity processing off, so
// only the five predefined entities and character references are decoded (by Herald, text node by text node), and CDATA
// is kept literally.
import type { XMLParser } from 'fast-xml-parser';
import type SanitizeHtml from 'sanitize-html';
import { decodeEntities } from './content-tree.js';
import { onFirstUse } from './on-first-use.js';

const sanitizeHtml = onFirstUse<typeof SanitizeHtml>('sanitize-html');

export interface FeedEntry {
  /** What makes the entry the same entry when it is seen again: its GUID (RSS) or id (Atom), else its link, else title and date. */
  key: string;
  title: string;
  /** Absolute http(s) URL (relative links resolved against xml:base or the feed's URL). */
  link?: string;
  /** Plain text of the summary (or of the content when there is no summary), HTML removed, whitespace collapsed. */
  summary: string;
  /** The entry's picture: an image enclosure, media:content or media:thumbnail, else the first <img> of its HTML. */
  picture?: string;
  publishedAt?: Date;
}

export interface ParsedFeed {
  format: 'rss' | 'atom';
  title: string;
  link?: string;
  /** In document order (most feeds put the newest first; ordering by date is the caller's). */
  entries: FeedEntry[];
}

/** The document is not a feed Herald can read; the message says why (shown to the person, so it names what was found). */
export class FeedParseError extends Error {}

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
}
type XmlNode = XmlElement | string;

const parser = onFirstUse('fast-xml-parser', (xml: { XMLParser: typeof XMLParser }) => new xml.XMLParser({
  preserveOrder: true,
  processEntities: false,
  htmlEntities: false,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  cdataPropName: '#cdata',
  commentPropName: false,
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
}));

/** XML's own decoding of a text node or attribute: the predefined entities and character references (HTML's names too, as feeds use them). */
const decodeXml = (text: string) => decodeEntities(text);

type Raw = Record<string, unknown>;

function toNodes(raw: Raw[]): XmlNode[] {
  const nodes: XmlNode[] = [];
  for (const item of raw) {
    for (const [key, value] of Object.entries(item)) {
      if (key === ':@') continue;
      if (key === '#text') nodes.push(decodeXml(String(value)));
      else if (key === '#cdata') nodes.push(((value as Raw[]) ?? []).map((part) => String(part['#text'] ?? '')).join(''));
      else {
        const attributes = Object.fromEntries(Object.entries((item[':@'] as Record<string, string> | undefined) ?? {}).map(([name, text]) => [name, decodeXml(String(text))]));
        nodes.push({ name: key, attributes, children: toNodes((value as Raw[]) ?? []) });
      }
    }
  }
  return nodes;
}

/** Refuses declared entities; drops any other DOCTYPE so the parser never reads one. */
function withoutDoctype(text: string): string {
  if (/<!ENTITY/i.test(text)) throw new FeedParseError('the document declares XML entities (<!ENTITY>), which Herald refuses to read: feeds do not need them, and they are how external-entity and entity-expansion attacks work');
  const doctype = /<!DOCTYPE[^>[]*(\[[\s\S]*?\]\s*)?>/i.exec(text);
  if (!doctype) return text;
  if (doctype[1]) throw new FeedParseError('the document has a DTD internal subset (<!DOCTYPE … [ … ]>), which Herald refuses to read');
  return text.slice(0, doctype.index) + text.slice(doctype.index + doctype[0].length);
}

const local = (name: string) => name.slice(name.indexOf(':') + 1);
const elements = (node: XmlElement | undefined) => (node?.children ?? []).filter((child): child is XmlElement => typeof child !== 'string');
const child = (node: XmlElement | undefined, name: string) => elements(node).find((item) => item.name === name);
const childrenNamed = (node: XmlElement | undefined, name: string) => elements(node).filter((item) => item.name === name);

/** All text inside an element (markup of an xhtml child dropped). */
function textOf(node: XmlElement | undefined): string {
  if (!node) return '';
  return node.children.map((item) => (typeof item === 'string' ? item : textOf(item))).join('');
}

const escapeMarkup = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An element's content as HTML: the text of an HTML-escaped or CDATA body, or the serialized children of inline XHTML. */
function htmlOf(node: XmlElement | undefined): string {
  if (!node) return '';
  return node.children
    .map((item) => {
      if (typeof item === 'string') return node.attributes.type === 'xhtml' ? escapeMarkup(item) : item;
      const attributes = Object.entries(item.attributes).map(([name, value]) => ` ${local(name)}="${escapeMarkup(value).replace(/"/g, '&quot;')}"`).join('');
      return `<${local(item.name)}${attributes}>${htmlOf({ ...item, attributes: { type: 'xhtml' } })}</${local(item.name)}>`;
    })
    .join('');
}

const collapse = (text: string) => text.replace(/[\s\u00a0]+/g, ' ').trim();

/** HTML as the text it reads: block ends become spaces, scripts and styles dropped, entities decoded. */
export function htmlToText(html: string): string {
  const spaced = html.replace(/<(br|\/p|\/div|\/li|\/h[1-6]|\/blockquote|\/tr)\b[^>]*>/gi, ' ');
  const stripped = sanitizeHtml()(spaced, { allowedTags: [], allowedAttributes: {}, nonTextTags: ['script', 'style', 'textarea', 'noscript', 'title'] });
  return collapse(decodeEntities(stripped));
}

/**
 * Text that may hold HTML or escaped entities (titles often do, though RSS says plain text): as the text it reads. Only
 * HTML's own inline tags count as markup, so a literal title such as "Cats & <dogs>" stays as written.
 */
const INLINE_MARKUP = /<\/?(a|b|i|u|s|em|strong|span|br|code|sup|sub|small|mark|abbr|q|cite|p|div)\b[^>]*>|&(#\d+|#x[0-9a-f]+|[a-z]+);/i;
const plainOf = (text: string) => (INLINE_MARKUP.test(text) ? htmlToText(text) : collapse(text));

function absolute(value: string | undefined, base: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  try {
    const url = base ? new URL(trimmed, base) : new URL(trimmed);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

function dateOf(...values: (string | undefined)[]): Date | undefined {
  for (const value of values) {
    if (!value?.trim()) continue;
    const parsed = new Date(value.trim());
    if (!Number.isNaN(parsed.getTime())) return parsed;
  }
  return undefined;
}

const IMAGE_EXTENSION = /\.(jpe?g|png|gif|webp|avif)(\?|#|$)/i;
const isImage = (type: string | undefined, url: string | undefined, medium?: string) =>
  medium === 'image' || (type ? type.toLowerCase().startsWith('image/') : Boolean(url && IMAGE_EXTENSION.test(url)));

/** The picture of an entry: an image enclosure, media:content, media:thumbnail (also inside media:group), else the HTML's first <img>. */
function pictureOf(entry: XmlElement, html: string, base: string | undefined): string | undefined {
  const media = [...elements(entry), ...elements(child(entry, 'media:group'))];
  const candidates: (string | undefined)[] = [
    ...childrenNamed(entry, 'enclosure').filter((item) => isImage(item.attributes.type, item.attributes.url)).map((item) => item.attributes.url),
    ...childrenNamed(entry, 'link').filter((item) => item.attributes.rel === 'enclosure' && isImage(item.attributes.type, item.attributes.href)).map((item) => item.attributes.href),
    ...media.filter((item) => item.name === 'media:content' && isImage(item.attributes.type, item.attributes.url, item.attributes.medium)).map((item) => item.attributes.url),
    ...media.filter((item) => item.name === 'media:thumbnail').map((item) => item.attributes.url),
    /<img\b[^>]*?\bsrc\s*=\s*["']([^"']+)["']/i.exec(html)?.[1],
  ];
  for (const candidate of candidates) {
    const url = absolute(candidate && decodeEntities(candidate), base);
    if (url) return url;
  }
  return undefined;
}

const baseOf = (node: XmlElement, base: string | undefined) => absolute(node.attributes['xml:base'], base) ?? base;

function rssEntry(item: XmlElement, feedBase: string | undefined): FeedEntry | undefined {
  const base = baseOf(item, feedBase);
  const link = absolute(textOf(child(item, 'link')), base);
  const description = htmlOf(child(item, 'description'));
  const content = htmlOf(child(item, 'content:encoded'));
  const title = plainOf(textOf(child(item, 'title')));
  const publishedAt = dateOf(textOf(child(item, 'pubDate')), textOf(child(item, 'dc:date')));
  return entryOf({ id: textOf(child(item, 'guid')) || item.attributes['rdf:about'], link, title, summary: description || content, picture: pictureOf(item, content || description, base), publishedAt });
}

function atomEntry(entry: XmlElement, feedBase: string | undefined): FeedEntry | undefined {
  const base = baseOf(entry, feedBase);
  const links = childrenNamed(entry, 'link');
  const alternate = links.find((item) => !item.attributes.rel || item.attributes.rel === 'alternate') ?? links.find((item) => item.attributes.rel !== 'enclosure' && item.attributes.rel !== 'self');
  const textual = (node: XmlElement | undefined) => (!node ? '' : !node.attributes.type || node.attributes.type === 'text' ? escapeMarkup(textOf(node)) : htmlOf(node));
  const summary = textual(child(entry, 'summary'));
  const content = textual(child(entry, 'content'));
  return entryOf({
    id: textOf(child(entry, 'id')),
    link: absolute(alternate?.attributes.href, baseOf(alternate ?? entry, base)),
    title: plainOf(textual(child(entry, 'title'))),
    summary: summary || content,
    picture: pictureOf(entry, content || summary, base),
    publishedAt: dateOf(textOf(child(entry, 'published')), textOf(child(entry, 'updated'))),
  });
}

function entryOf(read: { id?: string; link?: string; title: string; summary: string; picture?: string; publishedAt?: Date }): FeedEntry | undefined {
  const key = read.id?.trim() || read.link || (read.title ? `${read.title}|${read.publishedAt?.toISOString() ?? ''}` : '');
  if (!key) return undefined;
  return { key: key.slice(0, 2000), title: read.title.slice(0, 1000), link: read.link, summary: htmlToText(read.summary).slice(0, 5000), picture: read.picture, publishedAt: read.publishedAt };
}

/** Parses a feed document; `url` (where it was fetched, after redirects) resolves relative links. */
export function parseFeed(text: string, url?: string): ParsedFeed {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  if (/^(<!doctype html|<html)/i.test(trimmed)) throw new FeedParseError('the URL answered a web page (HTML), not an RSS or Atom feed: give the address of the feed itself (a page links it as RSS or Atom, often at /feed or /rss.xml)');
  const source = withoutDoctype(trimmed);
  let raw: Raw[];
  try {
    raw = parser().parse(source, true) as Raw[];
  } catch (error) {
    throw new FeedParseError(`the document is not well-formed XML (${(error as Error).message.slice(0, 200)})`);
  }
  const root = toNodes(raw).find((node): node is XmlElement => typeof node !== 'string');
  if (!root) throw new FeedParseError('the document is empty');
  const base = baseOf(root, url);
  if (root.name === 'rss' || root.name === 'rdf:RDF') {
    const channel = child(root, 'channel');
    const items = root.name === 'rss' ? childrenNamed(channel, 'item') : childrenNamed(root, 'item');
    const channelBase = channel ? baseOf(channel, base) : base;
    return {
      format: 'rss',
      title: plainOf(textOf(child(channel, 'title'))),
      link: absolute(textOf(child(channel, 'link')), channelBase),
      entries: items.map((item) => rssEntry(item, channelBase)).filter((entry): entry is FeedEntry => Boolean(entry)),
    };
  }
  if (root.name === 'feed') {
    const link = childrenNamed(root, 'link').find((item) => !item.attributes.rel || item.attributes.rel === 'alternate');
    return {
      format: 'atom',
      title: plainOf(textOf(child(root, 'title'))),
      link: absolute(link?.attributes.href, base),
      entries: childrenNamed(root, 'entry').map((entry) => atomEntry(entry, base)).filter((entry): entry is FeedEntry => Boolean(entry)),
    };
  }
  throw new FeedParseError(`the document is XML but not an RSS or Atom feed (its root element is <${root.name.slice(0, 40)}>)`);
}
