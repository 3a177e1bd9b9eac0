// Content rules and per-platform conversion (DESIGN.md §1 Content, anchor-behaviour A9). Pure functions, no I/O.
// Social platforms take the social set of HTML (p, h1–h3, strong, u, ul, li, br, a); article platforms (a provider with
// `article: true`) also take Markdown and the rich set an article needs, kept when the post is stored (article-content.ts).
// The walk that renders the sanitized tree is content-tree.ts; Markdown escaping and rendering is content-markdown.ts.
import { decodeHTML } from 'entities';
import type SanitizeHtml from 'sanitize-html';
import { articleHtml, ARTICLE_RULES } from './article-content.js';
import { decodeEntities, parseTree, render, sanitizeWith, type ContentNode, type ElementNode, type Renderer } from './content-tree.js';
import { markdownRenderer } from './content-markdown.js';
import { onFirstUse } from './on-first-use.js';

const sanitizeHtml = onFirstUse<typeof SanitizeHtml>('sanitize-html');

export { escapeMarkdownBlock, escapeMarkdownText, markdownImage } from './content-markdown.js';

export type EditorKind = 'plain' | 'markdown' | 'html';

/** What a platform takes: article platforms (WordPress, Medium, Hashnode, DEV, listmonk) say so on their provider. */
export interface ContentTarget {
  article?: boolean;
}

const ALLOWED_TAGS = ['p', 'h1', 'h2', 'h3', 'strong', 'u', 'ul', 'li', 'br', 'a'];
const SOCIAL = { tags: ALLOWED_TAGS };
// Telegram renders b and i itself, so its conversion keeps them instead of dropping the formatting.
const TELEGRAM = { tags: [...ALLOWED_TAGS, 'b', 'i'] };
// `<` must be followed directly by a letter, so text such as "a < b" or "<3" is not taken for markup.
const TAG_PATTERN = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>/;

/** Whether the content is HTML (at least one tag); tagless content is taken as typed by every editor. */
export function hasHtmlTag(text: string): boolean {
  return TAG_PATTERN.test(text);
}

/**
 * The content as it is stored: social content cut to the social set (tagless text kept as typed); article content as the
 * rich article HTML, Markdown converted to it first.
 */
export function sanitizeContent(content: string, target: ContentTarget = {}): string {
  if (target.article) return articleHtml(content);
  if (!hasHtmlTag(content)) return content;
  const clean = sanitizeWith(content, SOCIAL);
  if (hasHtmlTag(clean)) return clean;
  // Markup that was all removed (`<b>`, `<em>`) leaves text: stored as the text it reads, since tagless content is taken
  // as typed, and its entities would be escaped a second time (`&amp;amp;` on Telegram). Text that would read as a tag
  // once decoded stays HTML, in a paragraph.
  const text = decodeEntities(clean);
  return hasHtmlTag(text) ? `<p>${clean}</p>` : text;
}

// ---------------------------------------------------------------------------------------------
// Rules

const BOLD_UNDERLINE_MESSAGE = (inner: string, outer: string) =>
  `Bold and underline cannot be combined in one element: <${inner}> is nested inside <${outer}>. ` +
  'Use either <strong> (bold) or <u> (underline) for that text, not both, and do not put one inside the other.';
const NESTED_LIST_MESSAGE =
  'Nested lists are not supported: a <ul> is placed inside another list or list item. ' +
  'Use one flat <ul> with one <li> per item, or write the sub-items as separate <li> items.';

function ruleViolation(el: ElementNode, ancestors: string[]): string | undefined {
  if (el.tag === 'strong' && ancestors.includes('u')) return BOLD_UNDERLINE_MESSAGE('strong', 'u');
  if (el.tag === 'u' && ancestors.includes('strong')) return BOLD_UNDERLINE_MESSAGE('u', 'strong');
  if (el.tag !== 'ul') return undefined;
  if (ancestors.includes('li') || ancestors.includes('ul')) return NESTED_LIST_MESSAGE;
  for (const child of el.children) {
    if (child.kind === 'text') {
      if (child.text.trim()) {
        const text = child.text.trim();
        const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
        return `A <ul> may contain only <li> items, but it contains the text "${shown}". Wrap every item in its own <li>.`;
      }
    } else if (child.tag === 'ul') {
      return NESTED_LIST_MESSAGE;
    } else if (child.tag !== 'li') {
      return `A <ul> may contain only <li> items, but it contains <${child.tag}>. Wrap every item in its own <li> and put other content outside the list.`;
    }
  }
  return undefined;
}

function findViolation(nodes: ContentNode[], ancestors: string[]): string | undefined {
  for (const node of nodes) {
    if (node.kind !== 'el') continue;
    const violation = ruleViolation(node, ancestors) ?? findViolation(node.children, [...ancestors, node.tag]);
    if (violation) return violation;
  }
  return undefined;
}

/** The social rules (no bold in underline, flat lists); an article is HTML or Markdown as any editor writes it, so none apply. */
export function checkContentRules(html: string, target: ContentTarget = {}): string | undefined {
  if (target.article || !hasHtmlTag(html)) return undefined;
  // Rules are checked on the sanitized tree: tags that would be removed anyway cannot break them.
  return findViolation(parseTree(sanitizeWith(html, SOCIAL)).children, []);
}

// ---------------------------------------------------------------------------------------------
// Conversion

function toSansSerifBold(text: string): string {
  return text.replace(/[A-Za-z0-9]/g, (ch) => {
    const code = ch.charCodeAt(0);
    if (code <= 57) return String.fromCodePoint(0x1d7ec + code - 48);
    if (code <= 90) return String.fromCodePoint(0x1d5d4 + code - 65);
    return String.fromCodePoint(0x1d5ee + code - 97);
  });
}

// Per code point so astral characters keep their surrogate pairs; spaces are underlined too for a continuous line.
function toUnderlined(text: string): string {
  return Array.from(text, (ch) => (ch === '\n' || ch === '\r' ? ch : `${ch}\u0332`)).join('');
}

function plainLink(text: string, href: string): string {
  if (!text || text === href) return href;
  if (href.toLowerCase() === `mailto:${text.toLowerCase()}`) return text;
  return `${text} (${href})`;
}

const PLAIN: Renderer = {
  text(text, style) {
    let out = style.bold ? toSansSerifBold(text) : text;
    if (style.underline) out = toUnderlined(out);
    return out;
  },
  inline(el, inner, style) {
    if (el.tag === 'strong' || el.tag === 'b') return inner({ ...style, bold: true });
    if (el.tag === 'u') return inner({ ...style, underline: true });
    if (el.tag === 'a' && el.href) return plainLink(inner(style).trim(), el.href);
    return inner(style);
  },
  heading: (_level, content) => content,
  blockSeparator: '\n',
  keepEmptyParagraphs: true,
};

export function escapeHtmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Text or an attribute value made safe inside HTML. */
export function escapeHtml(text: string): string {
  return escapeHtmlText(text).replace(/"/g, '&quot;');
}

/**
 * The html editor's output as an HTML body: HTML passes as it is, and tagless text (which every editor keeps as typed)
 * is escaped with each line made a paragraph, so line breaks survive in a page or an email.
 */
export function htmlBody(converted: string): string {
  if (hasHtmlTag(converted)) return converted;
  return converted
    .split(/\r?\n/)
    .filter((line) => line.trim())
    .map((line) => `<p>${escapeHtmlText(line.trim())}</p>`)
    .join('');
}

/** Plain text as Herald's content: each line a paragraph, what was typed shown as typed. */
export function plainTextContent(value: string): string {
  return value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => `<p>${escapeHtmlText(line)}</p>`)
    .join('');
}

const TELEGRAM_HTML: Renderer = {
  text: (text) => escapeHtmlText(text),
  inline(el, inner, style) {
    if (['strong', 'b', 'u', 'i'].includes(el.tag)) return `<${el.tag}>${inner(style)}</${el.tag}>`;
    if (el.tag === 'a' && el.href) return `<a href="${escapeHtml(el.href)}">${inner(style)}</a>`;
    return inner(style);
  },
  heading: (_level, content) => content,
  blockSeparator: '\n',
  keepEmptyParagraphs: true,
};

const MARKDOWN = markdownRenderer();

/**
 * Stored content as a platform's editor takes it. Stored content is already cut to its set (social or article), so the
 * article set is what is kept here: social content comes out as it always did, an article keeps its structure.
 */
export function convertContent(html: string, editor: EditorKind): string {
  if (!hasHtmlTag(html)) return html;
  const clean = sanitizeWith(html, ARTICLE_RULES);
  if (editor === 'html') return clean.trim();
  return render(parseTree(clean), editor === 'markdown' ? MARKDOWN : PLAIN);
}

// Telegram's parse_mode HTML rejects p/ul/li/h1, and every bare &, < and > in the text, so even tagless
// content has to be escaped here to be posted verbatim.
export function toTelegramHtml(html: string): string {
  if (!hasHtmlTag(html)) return escapeHtmlText(html);
  return render(parseTree(sanitizeWith(html, TELEGRAM)), TELEGRAM_HTML);
}

export function isBlankContent(html: string): boolean {
  const text = hasHtmlTag(html) ? decodeEntities(sanitizeHtml()(html, { allowedTags: [], allowedAttributes: {} })) : html;
  // Zero-width characters are invisible, so content made only of them is blank too.
  return text.replace(/[\s\u200B-\u200D\uFEFF]/g, '') === '';
}

// Where a post's HTML breaks a line (blocks, list items, <br>): a space in an excerpt. Scripts and styles are not text.
const BLOCK_BOUNDARY = /<\/?(?:p|h[1-6]|ul|ol|li|br|div|blockquote|pre|table|tr|td|th)\b[^<>]*>/gi;
const NOT_TEXT = /<!--[\s\S]*?-->|<(script|style)\b[\s\S]*?<\/\1\s*>/gi;
const TAG = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>/g;

/**
 * A post's text as one line of at most `max` characters, for lists: its words without markup (tags dropped, entities
 * decoded, blocks and line breaks as spaces). Not a platform's conversion: plain text for X writes bold as Unicode
 * mathematical letters, which screen readers spell out; the preview shows that. Cheap on purpose: a calendar month
 * lists a thousand posts. The result is text, escaped where it is shown.
 */
export function excerpt(content: string, max: number): string {
  const words = hasHtmlTag(content) ? decodeHTML(content.replace(NOT_TEXT, ' ').replace(BLOCK_BOUNDARY, ' ').replace(TAG, '')) : content;
  const text = words.replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 3)}…` : text;
}
