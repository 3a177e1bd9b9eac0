// Article content (DESIGN.md §1 Content, §9 "What Herald sends to a platform"): WordPress, Medium, Hashnode, DEV and
// listmonk take Markdown or the rich HTML an article needs. Markdown is converted with markdown-it (CommonMark + GFM
// tables and strikethrough); either way the result is cut to the article set, so nothing live a user did not mean
// (scripts, event handlers, javascript: and data: addresses, iframes, styles) is stored or sent. What each platform
// itself would still read as markup (WordPress shortcodes, listmonk's Go templates, DEV's Liquid tags) is made inert
// by the functions at the end, applied by each provider to what it sends.
import type MarkdownIt from 'markdown-it';
import { parseTree, render, sanitizeWith, type SanitizeRules } from './content-tree.js';
import { escapeMarkdownText, markdownRenderer } from './content-markdown.js';
import { onFirstUse } from './on-first-use.js';

const ARTICLE_TAGS = [
  'p', 'br', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'u', 's', 'a', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'hr',
  'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'img', 'figure', 'figcaption',
];

/** Pictures load from public http(s) addresses only: no data: URLs, no relative paths that mean nothing off the page. */
const isPictureAddress = (src: string | undefined) => /^https?:\/\/\S+$/i.test(src?.trim() ?? '');

/** The article set as stored and as converted for publishing. */
export const ARTICLE_RULES: SanitizeRules = {
  tags: ARTICLE_TAGS,
  attributes: { img: ['src', 'alt', 'title'], code: ['class'], ol: ['start'] },
  classes: { code: ['language-*'] },
  schemesByTag: { img: ['http', 'https'] },
  drop: (frame) => frame.tag === 'img' && !isPictureAddress(frame.attribs.src),
};

// What editors write for the same things, named as the article set names them when the post is stored.
const ARTICLE_INPUT_RULES: SanitizeRules = { ...ARTICLE_RULES, transform: { b: 'strong', i: 'em', del: 's', strike: 's' } };

// Raw HTML inside Markdown is parsed too, then cut to the article set like any HTML. A line break in the text is a line
// break on the page (as DEV's and GitHub's comment Markdown read it), never words run together.
const markdown = onFirstUse('markdown-it', (Markdown: typeof MarkdownIt) => {
  const converter = new Markdown({ html: true, linkify: false, breaks: true });
  converter.renderer.rules.softbreak = () => '<br>';
  converter.renderer.rules.hardbreak = () => '<br>';
  return converter;
});

/** Content that begins with a tag is HTML; anything else is Markdown (which may hold inline HTML). */
const isHtml = (content: string) => /^\s*<[a-zA-Z][a-zA-Z0-9-]*[\s/>]/.test(content);

/** An article's content (Markdown or HTML) as the sanitized article HTML Herald stores and converts per platform. */
export function articleHtml(content: string): string {
  if (!content.trim()) return '';
  return sanitizeWith(isHtml(content) ? content : markdown().render(content), ARTICLE_INPUT_RULES).trim();
}

export interface ArticleMarkdownDialect {
  /** GFM tables; without them each row becomes a line of its cells. */
  tables: boolean;
  /** How a line break inside a paragraph is written: `\n` where the platform breaks lines on it, else `\\` + newline. */
  lineBreak: '\n' | '\\\n';
  /** Text the platform's own template language would run (DEV's Liquid `{% %}` and `{{ }}`). */
  templates?: 'liquid';
}

/** Characters only an article's Markdown reads as markup: strikethrough, and entities that would decode. */
function articleText(text: string): string {
  return escapeMarkdownText(text).replace(/~/g, '\\~').replace(/&(?=#?[a-zA-Z0-9]+;)/g, '\\&');
}

/**
 * The article as a platform's Markdown, from the Markdown of the markdown editor (or legacy stored text): parsed again
 * and written in the platform's dialect, so the platform reads exactly the structure and text Herald means.
 */
export function articleMarkdown(text: string, dialect: ArticleMarkdownDialect): string {
  const literal = dialect.templates === 'liquid' ? (value: string) => withoutLiquid(articleText(value)) : articleText;
  const renderer = markdownRenderer({ text: literal, lineBreak: dialect.lineBreak, url: dialect.templates === 'liquid' ? (href) => href.replace(/[{}]/g, encodeURIComponent) : undefined });
  return render(parseTree(articleHtml(text)), dialect.tables ? renderer : { ...renderer, table: undefined });
}

// Liquid runs on the rendered page before it is shown; an entity is text to it, and the page shows the brace.
const withoutLiquid = (markdownText: string) => markdownText.replace(/\{(?=[{%])/g, '&#123;');

/**
 * HTML for WordPress: its shortcodes (`[gallery]`, `[embed]…`, any plugin's) run wherever a `[` is, in text and attributes.
 * As entities the brackets show the same and start nothing (WordPress leaves `&#91;` alone).
 */
export const withoutShortcodes = (html: string) => html.replace(/\[/g, '&#91;').replace(/\]/g, '&#93;');

/** HTML for listmonk: its campaign bodies are Go templates, so `{{` would run. As an entity the brace shows the same. */
export const withoutGoTemplatesInHtml = (html: string) => html.replace(/\{/g, '&#123;');

/** Plain text for a listmonk subject (a Go text template): each `{{` is written as the template's own literal of it. */
export const withoutGoTemplatesInText = (text: string) => text.replace(/\{\{/g, '{{"{{"}}');
