// Markdown a post carries to a platform that renders it (Discord, Whop), made safe as text the author typed: a link may only
// lead to a web or mail address, and nothing that a Markdown renderer would take for HTML or an autolink of another scheme
// survives as live markup. Content written as HTML was already converted by src/lib/content.ts (text escaped, links only
// http(s)/mailto); content without tags reaches the provider as typed, so `[x](javascript:…)`, `<javascript:…>`, a reference
// definition to `data:`, or `<img/src=x onerror=…>` (a tag content.ts does not see as one) would reach the renderer as is.
// CommonMark (https://spec.commonmark.org/0.31.2/ §6.3 code spans, §6.5 autolinks, §6.6 raw HTML, §6.3 links, §4.7 link
// reference definitions, §2.4 backslash escapes) is the grammar followed; code spans and fenced blocks are left alone, since
// nothing in them is rendered as markup.

/** Destinations a link may have: the schemes src/lib/content.ts keeps from HTML links. */
const SAFE_DESTINATION = /^(?:https?:\/\/|mailto:)/i;
/**
 * What may follow a `<` and stay live: an autolink to a web or mail address, an email autolink, and the chat tokens Discord
 * renders (`<@id>`, `<@!id>`, `<@&role>`, `<#channel>`, `<:emoji:id>`, `<a:emoji:id>`, `<t:123:R>`, `</command:id>`).
 */
const KEPT_AFTER_ANGLE = /^(?:(?:https?:\/\/|mailto:)[^\s<>]*>|[\w.+-]+@[\w-]+(?:\.[\w-]+)+>|@[!&]?\d+>|#\d+>|a?:\w+:\d+>|t:-?\d+(?::[tTdDfFRs])?>|\/[\w -]{1,64}:\d+>)/;

/** Whether the character at `index` is escaped by an odd run of backslashes before it. */
function escaped(text: string, index: number): boolean {
  let count = 0;
  for (let at = index - 1; at >= 0 && text[at] === '\\'; at--) count++;
  return count % 2 === 1;
}

/** The destination after `](`: CommonMark allows spaces, one line break and angle brackets around it. */
function destinationAfter(text: string, index: number): string {
  return text.slice(index).replace(/^[ \t]*\n?[ \t]*<?/, '');
}

function defuseProse(text: string): string {
  let out = '';
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === ']' && text[index + 1] === '(' && !escaped(text, index) && !SAFE_DESTINATION.test(destinationAfter(text, index + 2))) {
      out += '\\]';
      continue;
    }
    if (character === '<' && !escaped(text, index) && /^[A-Za-z!?/]/.test(text[index + 1] ?? '') && !KEPT_AFTER_ANGLE.test(text.slice(index + 1))) {
      out += '\\<';
      continue;
    }
    out += character;
  }
  // A link reference definition (`[name]: destination`) whose destination is not a web or mail address defines no link.
  return out.replace(/^( {0,3})\[([^\]\n]+)\]:[ \t]*(\S*)/gm, (definition, indent: string, label: string, destination: string) =>
    SAFE_DESTINATION.test(destination.replace(/^</, '')) ? definition : `${indent}\\[${label}]:${definition.slice(indent.length + label.length + 3)}`,
  );
}

/** Splits Markdown into prose and code (fenced blocks, then inline code spans), so only prose is defused. */
function segments(text: string): { code: boolean; text: string }[] {
  const parts: { code: boolean; text: string }[] = [];
  const fence = /^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\2[`~]*[ \t]*$|(?![\s\S]))/gm;
  let last = 0;
  const prose = (chunk: string) => {
    let from = 0;
    for (const span of chunk.matchAll(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g)) {
      if (escaped(chunk, span.index)) continue;
      parts.push({ code: false, text: chunk.slice(from, span.index) }, { code: true, text: span[0] });
      from = span.index + span[0].length;
    }
    parts.push({ code: false, text: chunk.slice(from) });
  };
  for (const block of text.matchAll(fence)) {
    prose(text.slice(last, block.index));
    parts.push({ code: true, text: block[0] });
    last = block.index + block[0].length;
  }
  prose(text.slice(last));
  return parts;
}

/**
 * The Markdown with every link to something other than a web or mail address, every autolink of another scheme and every
 * `<` that a renderer could take for HTML backslash-escaped, so each shows as the text typed. Safe links, chat tokens and
 * code are kept as they are.
 */
export function defuseMarkdown(text: string): string {
  return segments(text)
    .map((part) => (part.code ? part.text : defuseProse(part.text)))
    .join('');
}

const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]/;

/**
 * Text with its line breaks as a CommonMark renderer keeps them (Reddit, and Lemmy's markdown-it without `breaks`), for
 * platforms that show a plain-text post as Markdown: there a lone line break inside a paragraph is a space, and a line
 * after a list item continues that item. Each line break between two lines of text becomes a hard break (two spaces, which
 * Reddit's older renderer knows too), a list item starts on its own line, and the line after a list ends the list with a
 * blank line. Blank lines stay as typed.
 */
export function commonMarkLineBreaks(text: string): string {
  const lines = text.split('\n');
  return lines
    .map((line, index) => {
      const next = lines[index + 1];
      if (next === undefined) return line;
      if (!line.trim() || !next.trim() || LIST_ITEM.test(next)) return `${line}\n`;
      return LIST_ITEM.test(line) ? `${line}\n\n` : `${line.replace(/[ \t]+$/, '')}  \n`;
    })
    .join('');
}
