// The round-trip corpus of issue 36: texts as a person types them in the composer (`&`, `<`, quotes, line breaks as a
// textarea sends them, emoji, each formatting a platform shows), with what every platform's readers must see of them.
// Shared by test/console-corpus.test.ts (the compose form, five platforms) and test/corpus-*.test.ts (every other
// platform). The readers here read what a fake received as that platform shows it, without Herald's code.

export interface Sample {
  name: string;
  /** As the textarea sends it. */
  typed: string;
  /** What every platform's reader sees, formatting aside. */
  reads: string;
}

/** The corpus; its last sample is Herald's own formatting, which the files check each platform's bold on. */
export const CORPUS: Sample[] = [
  {
    name: 'plain text with &, <, quotes, emoji and line breaks',
    typed: 'Fish & chips <3 tonight, "fresh" & \'hot\'\r\n\r\nOnly 5 € 🍟 a < b > c',
    reads: 'Fish & chips <3 tonight, "fresh" & \'hot\'\n\nOnly 5 € 🍟 a < b > c',
  },
  {
    name: 'bold typed as <b> beside a bare &',
    typed: 'Tom & Jerry <b>live</b> today\r\nDoors at 8 🎬',
    reads: 'Tom & Jerry live today\nDoors at 8 🎬',
  },
  {
    name: 'a tag no platform shows beside a bare &',
    typed: 'Rock & roll <em>tonight</em> "live"',
    reads: 'Rock & roll tonight "live"',
  },
  {
    name: 'a heading, and a list typed as lines beside bold, a bare < and a blank line',
    typed: '<h2>Menu & prices</h2>Soup <b>today</b>:\r\n- soup & bread\r\n- "cake" <3\r\n\r\nSee you 👋',
    reads: 'Menu & prices\nSoup today:\n- soup & bread\n- "cake" <3\n\nSee you 👋',
  },
  {
    name: 'accents, scripts, joined and flag emoji, && and comparisons',
    typed: 'Café — naïve façade ü ß 日本 👨‍👩‍👧 🇩🇪 1 < 2 && 3 > 2',
    reads: 'Café — naïve façade ü ß 日本 👨‍👩‍👧 🇩🇪 1 < 2 && 3 > 2',
  },
  {
    name: 'Herald\'s formatting: paragraphs, bold, underline, a list, a link, escaped markup',
    typed: '<p><strong>Sale</strong> &amp; <u>today</u> only</p><ul><li>one</li><li>two &amp; three</li></ul><p>Write &lt;b&gt; for bold, see <a href="https://example.com/?a=1&amp;b=2">the shop</a> 👟</p>',
    reads: 'Sale & today only\n- one\n- two & three\nWrite <b> for bold, see the shop (https://example.com/?a=1&b=2) 👟',
  },
];

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** HTML character references as a browser decodes them (named ones the corpus can produce, and numeric ones). */
export function decodeReferences(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') return String.fromCodePoint(name[1].toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
    return NAMED[name.toLowerCase()] ?? whole;
  });
}

/** The letters behind Unicode bold and underline (plain-text platforms' formatting). */
export const letters = (text: string) => text.normalize('NFKC').replace(/\u0332/g, '');

/**
 * What a browser shows of an HTML body, as text: blocks and `<br>` on their own lines, list items with `- `, a link as
 * `text (href)`, character references decoded. Whitespace inside a block is HTML whitespace: a bare line break reads as
 * a space, as it does on the page.
 */
export function htmlReads(html: string): string {
  return decodeReferences(
    html
      .replace(/\s+/g, ' ')
      .replace(/<a\s[^>]*?href="([^"]*)"[^>]*>(.*?)<\/a>/gi, (_, href: string, text: string) => `${text} (${href})`)
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<li[^>]*>/gi, '\n- ')
      .replace(/<\/?(p|div|ul|ol|h[1-6]|blockquote|li)(\s[^>]*)?>/gi, '\n')
      .replace(/<\/?[a-z][^>]*>/gi, ''),
  )
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{2,}/g, '\n\n')
    .trim();
}

/**
 * What a Markdown reader shows, as text: emphasis marks gone, a link as `text (href)`, backslash escapes and character
 * references resolved, `*` bullets as `- `. A hard break (`\` or two spaces before a line break) is a line break. A lone
 * line break inside a paragraph is one too where the platform breaks lines on it (Discord, DEV's hard_wrap), and a space
 * where it follows CommonMark (`softBreaks`: Lemmy's markdown-it, Reddit, Hashnode), unless the next line starts a block.
 */
export function markdownReads(markdown: string, options: { softBreaks?: boolean } = {}): string {
  let text = markdown.replace(/(?:\\| {2,})\n/g, '\u2028');
  if (options.softBreaks) text = text.replace(/([^\n\u2028])\n(?!\n|[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]|[ \t]*[#>])/g, '$1 ');
  return decodeReferences(
    text
      .replace(/\u2028/g, '\n')
      .replace(/(?<!\\)\[([^\]]*)\]\(([^)\s]*)\)/g, (_, label: string, href: string) => `${label} (${href})`)
      .replace(/^\s*[*+] /gm, '- ')
      .replace(/^#{1,6}[ \t]+/gm, '')
      .replace(/(?<!\\)(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
      .replace(/(?<![\\*\w])([*_])(?=\S)(.+?)(?<=[^\s\\])\1(?![*\w])/g, '$2')
      .replace(/\\([!-/:-@[-`{-~])/g, '$1'),
  ).trim();
}

/** A reading compared where only paragraph spacing may differ: a Markdown or HTML page shows a break between paragraphs whether one line or two separate them. */
export const paragraphs = (text: string) => letters(text).replace(/\n{2,}/g, '\n').trim();
