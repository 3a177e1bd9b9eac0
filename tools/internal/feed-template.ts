// A feed's template (tools/internal/feeds.ts): plain text whose placeholders take an entry's title, link, summary and
// picture, each line a paragraph of the post, every value escaped; the summary is cut to fit the channel's length.
import { invalidInput } from '../../src/errors.js';
import { escapeHtmlText } from '../../src/lib/content.js';
import type { FeedEntry } from '../../src/lib/feed-parse.js';

export const FEED_PLACEHOLDERS = ['title', 'link', 'summary', 'picture'] as const;
export const DEFAULT_TEMPLATE = '{title}\n{link}';
const SUMMARY_CHARACTERS = 500;

export function checkTemplate(template: string): string {
  const unknown = [...template.matchAll(/\{([^{}\s]*)\}/g)].map((match) => match[1]).filter((name) => !(FEED_PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw invalidInput(`template: Herald does not know ${unknown.map((name) => `{${name}}`).join(', ')}.`, { hint: `The placeholders are ${FEED_PLACEHOLDERS.map((name) => `{${name}}`).join(', ')}.` });
  }
  if (!FEED_PLACEHOLDERS.some((name) => template.includes(`{${name}}`))) {
    throw invalidInput('template: it has no placeholder, so every post would read the same.', { hint: `Use at least one of ${FEED_PLACEHOLDERS.map((name) => `{${name}}`).join(', ')}, e.g. "{title}\\n{link}".` });
  }
  return template;
}

/** The post's text for one channel: the template's lines as paragraphs, each value escaped; the summary cut to fit the channel. */
export function renderTemplate(template: string, entry: FeedEntry, fit?: (content: string) => number): string {
  const render = (summary: string) =>
    template
      .replace(/\r\n?/g, '\n')
      .split('\n')
      .map((line) => line.replace(/\{(title|link|summary|picture)\}/g, (_all, name: string) => (name === 'summary' ? summary : name === 'title' ? entry.title : name === 'link' ? (entry.link ?? '') : (entry.picture ?? ''))))
      .filter((line) => line.trim() !== '')
      .map((line) => `<p>${escapeHtmlText(line)}</p>`)
      .join('');
  let summary = cut(entry.summary, SUMMARY_CHARACTERS);
  let content = render(summary);
  const over = fit?.(content) ?? 0;
  if (over > 0 && template.includes('{summary}') && summary) {
    summary = cut(summary, summary.length - over - 1);
    content = render(summary);
    if ((fit?.(content) ?? 0) > 0) content = render('');
  }
  return content;
}

/** At most `length` characters, cut at a word and marked with an ellipsis. */
function cut(text: string, length: number): string {
  if (text.length <= length) return text;
  if (length <= 1) return '';
  const part = text.slice(0, length - 1);
  const space = part.lastIndexOf(' ');
  return `${(space > length / 2 ? part.slice(0, space) : part).trimEnd()}…`;
}
