// Content rules and per-platform conversion (DESIGN.md §1 Content, anchor-behaviour A9). Pure functions, no I/O.
import sanitizeHtml from 'sanitize-html';

export type EditorKind = 'plain' | 'markdown' | 'html';

const ALLOWED_TAGS = ['p', 'h1', 'h2', 'h3', 'strong', 'u', 'ul', 'li', 'br', 'a'];
// Telegram renders b and i itself, so its conversion keeps them instead of dropping the formatting.
const TELEGRAM_TAGS = [...ALLOWED_TAGS, 'b', 'i'];
const BLOCK_TAGS = new Set(['p', 'h1', 'h2', 'h3', 'ul', 'li']);
const VOID_TAGS = new Set(['br']);
// `<` must be followed directly by a letter, so text such as "a < b" or "<3" is not taken for markup.
const TAG_PATTERN = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>/;

/** Whether the content is HTML (at least one tag); tagless content is taken as typed by every editor. */
export function hasHtmlTag(text: string): boolean {
  return TAG_PATTERN.test(text);
}

// Relative and protocol-relative links mean nothing in a social post, so only absolute http(s) and mailto links survive.
function isAllowedHref(href: string | undefined): href is string {
  return href !== undefined && /^(https?:\/\/|mailto:)/i.test(href.trim());
}

const UNLINK_TAG = 'herald-unlink';

function sanitizeWith(html: string, tags: string[]): string {
  const options = (allowedTags: string[]): sanitizeHtml.IOptions => ({
    allowedTags,
    allowedAttributes: { a: ['href'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesAppliedToAttributes: ['href'],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
  });
  // A link without a usable href is unwrapped (text kept, no empty <a>). It is renamed to a marker tag that the first
  // pass still allows and the second pass removes: sanitize-html mislabels the next closing tag at the same depth
  // when a renamed tag is itself discarded in the same pass.
  const marked = sanitizeHtml(html, {
    ...options([...tags, UNLINK_TAG]),
    transformTags: {
      a: (tagName, attribs): sanitizeHtml.Tag =>
        isAllowedHref(attribs.href)
          ? { tagName, attribs: { href: attribs.href.trim() } }
          : { tagName: UNLINK_TAG, attribs: {} },
    },
  });
  return sanitizeHtml(marked, options(tags));
}

export function sanitizeContent(html: string): string {
  if (!hasHtmlTag(html)) return html;
  return sanitizeWith(html, ALLOWED_TAGS);
}

// ---------------------------------------------------------------------------------------------
// Tree of sanitized HTML. Input is always sanitize-html output, which is well formed with
// double-quoted, escaped attributes, so a small tokenizer is enough.

interface TextNode {
  kind: 'text';
  text: string;
}
interface ElementNode {
  kind: 'el';
  tag: string;
  href?: string;
  children: ContentNode[];
}
type ContentNode = TextNode | ElementNode;

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00A0',
};

function decodeEntities(text: string): string {
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

function parseTree(html: string): ElementNode {
  const root: ElementNode = { kind: 'el', tag: '#root', children: [] };
  const stack: ElementNode[] = [root];
  const tagRe = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g;
  let last = 0;
  const pushText = (end: number) => {
    if (end > last) stack[stack.length - 1].children.push({ kind: 'text', text: decodeEntities(html.slice(last, end)) });
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
    const el: ElementNode = { kind: 'el', tag, children: [] };
    const href = /\bhref\s*=\s*"([^"]*)"/i.exec(match[3]);
    if (href) el.href = decodeEntities(href[1]);
    stack[stack.length - 1].children.push(el);
    if (!VOID_TAGS.has(tag) && !match[3].trimEnd().endsWith('/')) stack.push(el);
  }
  pushText(html.length);
  return root;
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

export function checkContentRules(html: string): string | undefined {
  if (!hasHtmlTag(html)) return undefined;
  // Rules are checked on the sanitized tree: tags that would be removed anyway cannot break them.
  return findViolation(parseTree(sanitizeWith(html, ALLOWED_TAGS)).children, []);
}

// ---------------------------------------------------------------------------------------------
// Conversion

interface Style {
  bold: boolean;
  underline: boolean;
}

interface Renderer {
  text(text: string, style: Style): string;
  inline(el: ElementNode, inner: (style: Style) => string, style: Style): string;
  heading(level: number, content: string): string;
  blockSeparator: string;
  // In plain text an empty <p> is the author's blank line; Markdown ignores extra blank lines anyway.
  keepEmptyParagraphs: boolean;
  /** A run of inline content made a block (a paragraph, a list item's text): Markdown escapes what would start a block. */
  paragraph?(content: string): string;
}

function renderInline(node: ContentNode, r: Renderer, style: Style): string {
  if (node.kind === 'text') return r.text(node.text, style);
  if (node.tag === 'br') return '\n';
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

function renderBlock(el: ElementNode, r: Renderer, style: Style): string[] {
  const inner = renderBlocks(el.children, r, style);
  switch (el.tag) {
    case 'ul':
      // List items are one block so Markdown keeps them a tight list instead of separating them by blank lines.
      return inner.length ? [inner.join('\n')] : [];
    case 'li':
      // Editors commonly wrap item text in <p>; further paragraphs become indented continuation lines.
      return [`- ${inner.join('\n  ')}`];
    case 'h1':
    case 'h2':
    case 'h3':
      return inner.length ? [r.heading(Number(el.tag[1]), inner.join(' '))] : [];
    default:
      return inner.length ? inner : r.keepEmptyParagraphs ? [''] : [];
  }
}

function render(root: ElementNode, r: Renderer): string {
  return renderBlocks(root.children, r, { bold: false, underline: false })
    .join(r.blockSeparator)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

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

// Markdown does not render `** x**`, so edge whitespace is moved outside the markers.
function wrapMarkers(inner: string, marker: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(inner);
  if (!m || !m[2]) return inner;
  return `${m[1]}${marker}${m[2]}${marker}${m[3]}`;
}

function markdownUrl(href: string): string {
  return href.replace(/[()\s]/g, (ch) => (ch === '(' ? '%28' : ch === ')' ? '%29' : '%20'));
}

// Bare URLs are left as typed (platforms link them); escaping inside them would change the address. So are chat mention
// tokens (Discord's <@id>, <@&role>, <#channel>, <:emoji:id>, <t:time:R>): escaped, they would show as text.
const KEPT_AS_TYPED = /https?:\/\/[^\s<>]+|<(?:@[!&]?\d+|#\d+|a?:\w+:\d+|t:\d+(?::[tTdDfFR])?)>/g;

function escapeInline(text: string): string {
  return text.replace(/[\\`*[\]<]|_/g, (ch, offset: number, whole: string) => {
    // An underscore inside a word never starts emphasis (snake_case stays readable).
    if (ch === '_' && /[\p{L}\p{N}]/u.test(whole[offset - 1] ?? '') && /[\p{L}\p{N}]/u.test(whole[offset + 1] ?? '')) return ch;
    return `\\${ch}`;
  });
}

/**
 * Text as Markdown shows it literally: characters that would start emphasis, code, a link or inline HTML are
 * backslash-escaped (bare URLs and chat mention tokens are kept as typed). Block markers at the start of a line are `escapeMarkdownBlock`'s job.
 */
export function escapeMarkdownText(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(KEPT_AS_TYPED)) {
    out += escapeInline(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return out + escapeInline(text.slice(last));
}

/** Escapes what would make a line of text a heading, quote, list item, rule or setext underline. */
export function escapeMarkdownBlock(content: string): string {
  return content.replace(/^([ \t]*)([#>+=-]|\d{1,9}(?=[.)]))/gm, (_match, indent: string, marker: string) =>
    /^\d/.test(marker) ? `${indent}${marker}\\` : `${indent}\\${marker}`,
  );
}

/** A Markdown image of a public URL. */
export function markdownImage(url: string, alt = ''): string {
  return `![${escapeMarkdownText(alt.replace(/\s+/g, ' ').trim())}](${markdownUrl(url)})`;
}

const MARKDOWN: Renderer = {
  text: (text) => escapeMarkdownText(text),
  inline(el, inner, style) {
    if (el.tag === 'strong' || el.tag === 'b') return wrapMarkers(inner(style), '**');
    if (el.tag === 'u') return wrapMarkers(inner(style), '__');
    if (el.tag === 'a' && el.href) {
      const text = inner(style).trim();
      // The link text is already escaped as text, brackets included.
      return text ? `[${text}](${markdownUrl(el.href)})` : el.href;
    }
    return inner(style);
  },
  heading: (level, content) => `${'#'.repeat(level)} ${content}`,
  blockSeparator: '\n\n',
  keepEmptyParagraphs: false,
  paragraph: escapeMarkdownBlock,
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

const TELEGRAM: Renderer = {
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

export function convertContent(html: string, editor: EditorKind): string {
  if (!hasHtmlTag(html)) return html;
  const clean = sanitizeWith(html, ALLOWED_TAGS);
  if (editor === 'html') return clean.trim();
  return render(parseTree(clean), editor === 'markdown' ? MARKDOWN : PLAIN);
}

// Telegram's parse_mode HTML rejects p/ul/li/h1, and every bare &, < and > in the text, so even tagless
// content has to be escaped here to be posted verbatim.
export function toTelegramHtml(html: string): string {
  if (!hasHtmlTag(html)) return escapeHtmlText(html);
  return render(parseTree(sanitizeWith(html, TELEGRAM_TAGS)), TELEGRAM);
}

export function isBlankContent(html: string): boolean {
  const text = hasHtmlTag(html) ? decodeEntities(sanitizeHtml(html, { allowedTags: [], allowedAttributes: {} })) : html;
  // Zero-width characters are invisible, so content made only of them is blank too.
  return text.replace(/[\s\u200B-\u200D\uFEFF]/g, '') === '';
}
