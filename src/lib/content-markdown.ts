// Markdown out of the content tree: text escaped so it shows literally, and the renderer of the markdown editor. The
// social form (discord, whop) is the one it always was; article platforms get the same walk with their own dialect
// (article-content.ts): hard line breaks, more characters escaped, a platform's template syntax made inert.
import { NL, type Renderer } from './content-tree.js';

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
export function markdownImage(url: string, alt = '', text: (text: string) => string = escapeMarkdownText): string {
  return `![${text(alt.replace(/\s+/g, ' ').trim())}](${markdownUrl(url)})`;
}

/** Inline code: a backtick run longer than any inside the code, padded where the code starts or ends with one (CommonMark). */
function codeSpan(code: string): string {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = /^[`\s]|[`\s]$/.test(code) && code.trim() ? ' ' : '';
  return `${fence}${pad}${code.replace(/\n/g, ' ')}${pad}${fence}`;
}

/** A fenced code block whose fence is longer than any backtick run of the code, with its language. */
function codeBlock(code: string, language: string | undefined): string {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${language ?? ''}`, ...code.split('\n'), fence].join(NL);
}

/** A GFM table: the first row is the header (GFM has no table without one), every row as wide as the widest. */
function gfmTable(rows: string[][]): string[] {
  const width = Math.max(...rows.map((row) => row.length));
  const line = (row: string[]) => `| ${Array.from({ length: width }, (_, index) => (row[index] ?? '').replace(/\|/g, '\\|')).join(' | ')} |`;
  return [[line(rows[0]), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join(NL)];
}

/** A quote: every line behind `> `, blank lines as `>`. */
const quoted = (content: string) => content.split(/\n|\uE000/).map((line) => (line ? `> ${line}` : '>')).join(NL);

export interface MarkdownDialect {
  /** How text is made literal (the social escaping by default). */
  text?: (text: string) => string;
  /** A line break inside a paragraph: `\n` (platforms that break lines on it) or an explicit hard break. */
  lineBreak?: string;
  /** An address as written in a link or image, after Markdown's own escaping of parentheses and spaces. */
  url?: (href: string) => string;
}

export function markdownRenderer(dialect: MarkdownDialect = {}): Renderer {
  const text = dialect.text ?? escapeMarkdownText;
  const url = dialect.url ?? ((href: string) => href);
  return {
    text: (value) => text(value),
    inline(el, inner, style) {
      if (el.tag === 'strong' || el.tag === 'b') return wrapMarkers(inner(style), '**');
      if (el.tag === 'u') return wrapMarkers(inner(style), '__');
      if (el.tag === 'em' || el.tag === 'i') return wrapMarkers(inner(style), '*');
      if (el.tag === 's') return wrapMarkers(inner(style), '~~');
      if (el.tag === 'a' && el.href) {
        const label = inner(style).trim();
        // The link text is already escaped as text, brackets included.
        return label ? `[${label}](${markdownUrl(url(el.href))})` : url(el.href);
      }
      return inner(style);
    },
    heading: (level, content) => `${'#'.repeat(level)} ${content}`,
    blockSeparator: '\n\n',
    keepEmptyParagraphs: false,
    paragraph: escapeMarkdownBlock,
    lineBreak: dialect.lineBreak,
    code: codeBlock,
    inlineCode: codeSpan,
    quote: quoted,
    table: gfmTable,
    image: (src, alt) => markdownImage(url(src), alt, text),
    // Not `---`: a body starting with two such lines is front matter on DEV.
    rule: '***',
  };
}
