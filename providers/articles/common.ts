// What the five article and newsletter platforms (WordPress, DEV, Hashnode, Medium, listmonk) share: the article body
// with its pictures, instance URLs, tag values, the rules every one of them checks, and the platform's error words.
// Herald's content has no <img> (DESIGN.md, Content): pictures are the item's attachments. The first one is the cover
// where the platform has one; the others follow the text, as Markdown images or <figure>s of their public URL.
import { z } from 'zod';
import { articleMarkdown, type ArticleMarkdownDialect } from '../../src/lib/article-content.js';
import { escapeHtml, htmlBody, markdownImage } from '../../src/lib/content.js';
import type { PlatformHttpErrorInit } from '../../src/lib/platform-http.js';
import type { MediaFile } from '../types.js';
import { normalizeInstance, permanent } from '../shared.js';

interface ArticleImage {
  url: string;
  alt?: string;
}

/** The first picture (the cover, where the platform has one) and the rest. */
export function splitCover<T extends ArticleImage>(media: T[]): { cover?: T; rest: T[] } {
  const [cover, ...rest] = media;
  return { cover, rest };
}

/**
 * The Markdown article in the platform's dialect: `lead` (headings written as Markdown), the pictures `before`, the text
 * (the markdown editor's output), then the other pictures, each as an image of its public URL, written out again so the platform reads exactly the structure Herald means (article-content.ts).
 */
export function markdownArticle(text: string, images: ArticleImage[], dialect: ArticleMarkdownDialect, before: ArticleImage[] = [], lead: string[] = []): string {
  const parts = [...lead, ...before.map((image) => markdownImage(image.url, image.alt)), text.trim(), ...images.map((image) => markdownImage(image.url, image.alt))];
  return articleMarkdown(parts.filter((part) => part.length > 0).join('\n\n'), dialect);
}

/** An HTML picture as the block editor writes one. */
const htmlFigure = (image: ArticleImage) =>
  `<figure class="wp-block-image"><img src="${escapeHtml(image.url)}" alt="${escapeHtml(image.alt ?? '')}"/></figure>`;

/** Tags that start or end a block (and <br>): a line break beside one is the page's own whitespace. */
const BLOCK_TAG = /^<\/?(?:p|h[1-6]|ul|ol|li|blockquote|pre|table|thead|tbody|tfoot|tr|td|th|figure|figcaption|hr|div|br)\b/i;

/**
 * A line break in the text of Herald's content is a line break (every other conversion reads it so: plain text, Markdown,
 * Telegram), but a page or an email shows a bare one as a space: each becomes a `<br />` there, between two inline
 * elements too. Whitespace between blocks, a break beside a block tag or a `<br>`, and the text of a `<pre>` stay as they are.
 */
export function htmlLineBreaks(html: string): string {
  const parts = html.split(/(<[^>]*>)/);
  let pre = 0;
  return parts
    .map((part, index) => {
      if (index % 2 === 1) {
        if (/^<pre\b/i.test(part)) pre++;
        else if (/^<\/pre\b/i.test(part)) pre = Math.max(0, pre - 1);
        return part;
      }
      if (pre > 0 || !part.includes('\n')) return part;
      const inline = (tag: string | undefined) => tag !== undefined && !BLOCK_TAG.test(tag);
      if (!part.trim()) return inline(parts[index - 1]) && inline(parts[index + 1]) ? part.replace(/\n/g, '<br />\n') : part;
      const [, lead, core, trail] = /^(\s*)([\s\S]*?)(\s*)$/.exec(part)!;
      const broken = (space: string, beside: string | undefined) => (inline(beside) ? space.replace(/\n/g, '<br />\n') : space);
      return broken(lead, parts[index - 1]) + core.replace(/[ \t]*\n/g, '<br />\n') + broken(trail, parts[index + 1]);
    })
    .join('');
}

/** The HTML article: the text (tagless text made paragraphs, line breaks kept), with pictures before and after it. */
export function htmlArticle(text: string, images: ArticleImage[], before: ArticleImage[] = []): string {
  return [...before.map(htmlFigure), htmlLineBreaks(htmlBody(text.trim())), ...images.map(htmlFigure)].join('');
}

/** A user-typed instance or site URL ({@link normalizeInstance}), refused when it is not http(s). */
export function normalizeBaseUrl(value: string): string {
  const withScheme = normalizeInstance(value);
  const url = new URL(withScheme);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw permanent(`${value} is not an http(s) address`);
  return withScheme;
}

/** The `{data}` envelope these APIs wrap their answers in. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ data });

/** The values of `[{value, label}]` settings, trimmed, empty ones left out. */
export const valuesOf = (entries: { value: string }[] | undefined) => (entries ?? []).map((entry) => entry.value.trim()).filter((value) => value.length > 0);

/** The pictures of an item, checked again at publish time (the validation ran at creation, the media may have changed). */
export function picturesOf(media: MediaFile[], platform: string): MediaFile[] {
  if (media.some((file) => file.kind !== 'image')) throw permanent(`${platform} takes pictures only: remove the video from the post.`);
  return media;
}

/** The platform's own message in an error body: `message`, `error`, or the first of `errors`. */
export function messageIn(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message?: unknown; error?: unknown; errors?: { message?: unknown }[] };
    if (typeof parsed.message === 'string' && parsed.message) return parsed.message;
    if (typeof parsed.error === 'string' && parsed.error) return parsed.error;
    if (Array.isArray(parsed.errors) && typeof parsed.errors[0]?.message === 'string') return parsed.errors[0].message;
  } catch {
    /* not JSON */
  }
  return undefined;
}

/** What a failed call said, for messages: the platform's words, or the start of the body, and the status. */
export function saidIn(status: number, body: string): string {
  const said = messageIn(body) ?? (body.trim().startsWith('<') ? 'an HTML page instead of JSON' : body.trim().slice(0, 200) || 'no answer body');
  return `${said} (HTTP ${status})`;
}

/** The default words of a refusal: what the platform said; 429 and 5xx stay retryable as the fetch wrapper decided. */
export function plainRefusal(status: number, body: string): Partial<PlatformHttpErrorInit> {
  return { message: saidIn(status, body) };
}

/** A file name for an uploaded picture: the URL's last segment when it has an extension, else one made from the type. */
export function fileNameOf(file: MediaFile, mimeType: string, index: number): string {
  try {
    const last = decodeURIComponent(new URL(file.url).pathname.split('/').pop() ?? '');
    if (/^[\w.-]+\.[a-z0-9]+$/i.test(last)) return last;
  } catch {
    /* not a URL: a name is made below */
  }
  return `image-${index + 1}.${mimeType.split('/')[1]?.split(/[;+]/)[0] || 'bin'}`;
}
