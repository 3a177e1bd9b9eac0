// The tree of sanitized HTML and the one walk that renders it as plain text, Markdown or Telegram HTML (content.ts picks
// the renderer). Social content holds p, h1–h3, strong, u, ul, li, br and a; article content (article-content.ts) adds
// ol, em, s, code, pre, blockquote, h4–h6, hr, table, img and figure, each rendered so that what a target cannot show
// stays readable: a list stays lines, a table becomes rows, code keeps its lines. Pure functions, no I/O.
import type SanitizeHtml from 'sanitize-html';
import { onFirstUse } from './on-first-use.js';

const sanitizeHtml = onFirstUse<typeof SanitizeHtml>('sanitize-html');

export interface TextNode {
  kind: 'text';
  text: string;
}
export interface ElementNode {
  kind: 'el';
  tag: string;
  href?: string;
  /** The other attributes the sanitizer kept (src, alt, class, start), decoded. */
  attrs: Record<string, string>;
  children: ContentNode[];
}
export type ContentNode = TextNode | ElementNode;

/**
 * A line break inside a structure (list, quote, code, table). Unlike `\n` it is never collapsed with its neighbours, and a
 * list item or quote carries its lines along (indents or quotes each one); it becomes `\n` when the rendering is done.
 * Input text never holds it: private-use characters are removed from text when the tree is read.
 */
export const NL = '\uE000';
const ANY_NEWLINE = /\n|\uE000/g;

// Relative and protocol-relative links mean nothing in a post, so only absolute http(s) and mailto links survive.
export function isAllowedHref(href: string | undefined): href is string {
  return href !== undefined && /^(https?:\/\/|mailto:)/i.test(href.trim());
}

const UNLINK_TAG = 'herald-unlink';

export interface SanitizeRules {
  tags: string[];
  attributes?: SanitizeHtml.IOptions['allowedAttributes'];
  classes?: SanitizeHtml.IOptions['allowedClasses'];
  schemesByTag?: SanitizeHtml.IOptions['allowedSchemesByTag'];
  /** Renames and attribute rewrites of the first pass (b → strong), besides the unlinking of links without a usable href. */
  transform?: SanitizeHtml.IOptions['transformTags'];
  /** Elements dropped whole (an image without a usable address). */
  drop?: (frame: SanitizeHtml.IFrame) => boolean;
}

export function sanitizeWith(html: string, rules: SanitizeRules): string {
  const options = (allowedTags: string[]): SanitizeHtml.IOptions => ({
    allowedTags,
    allowedAttributes: { a: ['href'], ...rules.attributes },
    allowedClasses: rules.classes ?? {},
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: rules.schemesByTag ?? {},
    allowedSchemesAppliedToAttributes: ['href', 'src'],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    ...(rules.drop ? { exclusiveFilter: rules.drop } : {}),
  });
  // A link without a usable href is unwrapped (text kept, no empty <a>). It is renamed to a marker tag that the first
  // pass still allows and the second pass removes: sanitize-html mislabels the next closing tag at the same depth
  // when a renamed tag is itself discarded in the same pass.
  const marked = sanitizeHtml()(html, {
    ...options([...rules.tags, UNLINK_TAG]),
    transformTags: {
      ...rules.transform,
      a: (tagName, attribs): SanitizeHtml.Tag =>
        isAllowedHref(attribs.href) ? { tagName, attribs: { href: attribs.href.trim() } } : { tagName: UNLINK_TAG, attribs: {} },
    },
  });
  return sanitizeHtml()(marked, options(rules.tags));
}

// ---------------------------------------------------------------------------------------------
// The tree. Input is always sanitize-html output, which is well formed with double-quoted, escaped attributes, so a small
// tokenizer is enough.

const VOID_TAGS = new Set(['br', 'hr', 'img']);

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00A0',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (match, body: string) => {
    if (body.startsWith('#')) {
      const hex = body[1] === 'x' || body[1] === 'X';
      const code = parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10);
      const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
      return valid ? String.fromCodePoint(code) : match;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? match;
  });
}

export function parseTree(html: string): ElementNode {
  const root: ElementNode = { kind: 'el', tag: '#root', attrs: {}, children: [] };
  const stack: ElementNode[] = [root];
  const tagRe = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g;
  let last = 0;
  const pushText = (end: number) => {
    if (end > last) stack[stack.length - 1].children.push({ kind: 'text', text: decodeEntities(html.slice(last, end)).replace(/[\uE000\uE001]/g, '') });
  };
  for (const match of html.matchAll(tagRe)) {
    const index = match.index ?? 0;
    pushText(index);
    last = index + match[0].length;
    const tag = match[2].toLowerCase();
    if (match[1]) {
      for (let i = stack.length - 1; i > 0; i--) {
        if (stack[i].tag === tag) {
          stack.length = i;
          break;
        }
      }
      continue;
    }
    const el: ElementNode = { kind: 'el', tag, attrs: {}, children: [] };
    for (const attribute of match[3].matchAll(/([a-zA-Z-]+)\s*=\s*"([^"]*)"/g)) el.attrs[attribute[1].toLowerCase()] = decodeEntities(attribute[2]);
    if (el.attrs.href !== undefined) el.href = el.attrs.href;
    stack[stack.length - 1].children.push(el);
    if (!VOID_TAGS.has(tag) && !match[3].trimEnd().endsWith('/')) stack.push(el);
  }
  pushText(html.length);
  return root;
}

/** The text of a node as written (code keeps its characters). */
export const rawText = (node: ContentNode): string => (node.kind === 'text' ? node.text : node.children.map(rawText).join(''));

// ---------------------------------------------------------------------------------------------
// Rendering

export interface Style {
  bold: boolean;
  underline: boolean;
}

export interface Renderer {
  text(text: string, style: Style): string;
  inline(el: ElementNode, inner: (style: Style) => string, style: Style): string;
  heading(level: number, content: string): string;
  blockSeparator: string;
  // In plain text an empty <p> is the author's blank line; Markdown ignores extra blank lines anyway.
  keepEmptyParagraphs: boolean;
  /** A run of inline content made a block (a paragraph, a list item's text): Markdown escapes what would start a block. */
  paragraph?(content: string): string;
  /** A line break inside a paragraph (`\n` unless the target wants a hard break written out). */
  lineBreak?: string;
  /** Article elements; absent, they render as readable text (see the defaults below). */
  code?(code: string, language: string | undefined): string;
  inlineCode?(code: string): string;
  quote?(content: string): string;
  table?(rows: string[][]): string[];
  image?(src: string, alt: string): string;
  rule?: string;
}

const BLOCK_TAGS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'pre', 'table', 'figure', 'figcaption', 'hr']);

const indentLines = (text: string, indent: string) => text.replace(/\uE000/g, `${NL}${indent}`);

function renderInline(node: ContentNode, r: Renderer, style: Style): string {
  if (node.kind === 'text') return r.text(node.text, style);
  if (node.tag === 'br') return r.lineBreak ?? '\n';
  if (node.tag === 'img') return node.attrs.src ? (r.image?.(node.attrs.src, node.attrs.alt ?? '') ?? (node.attrs.alt ?? '')) : '';
  if (node.tag === 'code') return r.inlineCode ? r.inlineCode(rawText(node)) : r.text(rawText(node), style);
  if (BLOCK_TAGS.has(node.tag)) return renderBlock(node, r, style).join(r.blockSeparator);
  return r.inline(node, (s) => node.children.map((child) => renderInline(child, r, s)).join(''), style);
}

function renderBlocks(nodes: ContentNode[], r: Renderer, style: Style): string[] {
  const blocks: string[] = [];
  let buffer = '';
  const flush = () => {
    // Whitespace-only runs are the indentation between block tags, not content.
    const content = buffer.trim();
    if (content) blocks.push(r.paragraph ? r.paragraph(content) : content);
    buffer = '';
  };
  for (const node of nodes) {
    if (node.kind === 'el' && BLOCK_TAGS.has(node.tag)) {
      flush();
      blocks.push(...renderBlock(node, r, style));
    } else {
      buffer += renderInline(node, r, style);
    }
  }
  flush();
  return blocks;
}

/** A list item: the marker, then its blocks; further paragraphs become indented continuation lines, nested structures move with it. */
function renderItem(item: ElementNode, marker: string, r: Renderer, style: Style): string {
  const indent = ' '.repeat(marker.length);
  const inner = renderBlocks(item.children, r, style);
  return indentLines(`${marker}${inner.join(`\n${indent}`)}`, indent);
}

function renderList(list: ElementNode, r: Renderer, style: Style): string[] {
  let number = Number.parseInt(list.attrs.start ?? '1', 10);
  if (!Number.isSafeInteger(number) || number < 0) number = 1;
  const items: string[] = [];
  for (const child of list.children) {
    if (child.kind === 'el' && child.tag === 'li') items.push(renderItem(child, list.tag === 'ol' ? `${number++}. ` : '- ', r, style));
    else items.push(...renderBlocks([child], r, style));
  }
  // List items are one block so Markdown keeps them a tight list instead of separating them by blank lines.
  return items.length ? [items.join(NL)] : [];
}

/** The cells of each row of a table (header rows first, as written), each cell's content on one line. */
function tableRows(table: ElementNode, r: Renderer, style: Style): string[][] {
  const rows: string[][] = [];
  const visit = (node: ContentNode) => {
    if (node.kind !== 'el') return;
    if (node.tag === 'tr') {
      const cells = node.children.filter((cell): cell is ElementNode => cell.kind === 'el' && (cell.tag === 'td' || cell.tag === 'th'));
      rows.push(cells.map((cell) => renderBlocks(cell.children, r, style).join(' ').replace(ANY_NEWLINE, ' ').trim()));
    } else node.children.forEach(visit);
  };
  table.children.forEach(visit);
  return rows.filter((row) => row.length > 0);
}

function renderBlock(el: ElementNode, r: Renderer, style: Style): string[] {
  switch (el.tag) {
    case 'ul':
    case 'ol':
      return renderList(el, r, style);
    case 'li':
      return [renderItem(el, '- ', r, style)];
    case 'pre': {
      const code = rawText(el).replace(/\n$/, '');
      const language = el.children.find((child): child is ElementNode => child.kind === 'el' && child.tag === 'code')?.attrs.class?.match(/language-([\w+#.-]+)/)?.[1];
      return [r.code ? r.code(code, language) : code.replace(/\n/g, NL)];
    }
    case 'blockquote': {
      const inner = renderBlocks(el.children, r, style).join(r.blockSeparator);
      return inner ? [r.quote ? r.quote(inner) : inner.replace(ANY_NEWLINE, NL)] : [];
    }
    case 'table': {
      const rows = tableRows(el, r, style);
      if (rows.length === 0) return [];
      // Without tables, each row is a line of its cells.
      return r.table ? r.table(rows) : rows.map((row) => row.filter((cell) => cell).join(' | '));
    }
    case 'hr':
      return [r.rule ?? '* * *'];
  }
  const inner = renderBlocks(el.children, r, style);
  if (/^h[1-6]$/.test(el.tag)) return inner.length ? [r.heading(Number(el.tag[1]), inner.join(' '))] : [];
  return inner.length ? inner : r.keepEmptyParagraphs && el.tag === 'p' ? [''] : [];
}

export function render(root: ElementNode, r: Renderer): string {
  return renderBlocks(root.children, r, { bold: false, underline: false })
    .join(r.blockSeparator)
    .replace(/[ \t]+(?=\n|\uE000)/g, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\uE000/g, '\n')
    .trim();
}
