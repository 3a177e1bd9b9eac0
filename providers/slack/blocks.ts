// A post as Slack Block Kit: mrkdwn section blocks of at most 3000 characters each (https://docs.slack.dev/reference/block-kit/blocks/section-block),
// at most 50 blocks a message (https://docs.slack.dev/reference/block-kit/blocks). Long text is split between paragraphs, then
// lines, then words, never cut; only the whitespace where it splits is dropped, the sections themselves being separate blocks.
// What the author typed reaches Slack as text, per https://docs.slack.dev/messaging/formatting-message-text (read 2026-11):
// &, < and > are escaped, so `<http://evil|innocent>` and `<!date^…^http://evil|…>` show as typed instead of becoming links;
// the only control sequences kept are mentions of a user (<@U…>), a channel (<#C…>) and a user group (<!subteam^S…>), and the
// special mentions <!here>, <!channel>, <!everyone> only with notifyEveryone (otherwise they show as @here, @channel,
// @everyone and notify no one). Text objects are `verbatim` (https://docs.slack.dev/reference/block-kit/composition-objects/text-object):
// Slack does not look for mentions or links in them itself, so bare web addresses are written as <url> links here.
import { escapeHtmlText } from '../../src/lib/content.js';

const SECTION_LIMIT = 3000;
export const BLOCK_LIMIT = 50;

/** Control sequences an author may write in Slack syntax, bare web addresses, and the special mentions. */
const TOKENS = /<@[UW][A-Z0-9]{2,}>|<#C[A-Z0-9]{2,}>|<!subteam\^S[A-Z0-9]{2,}>|<!(here|channel|everyone)>|https?:\/\/[^\s<>]+/g;

export interface MrkdwnOptions {
  /** Whether <!here>, <!channel> and <!everyone> stay special mentions (the post's notifyEveryone setting). */
  notifyEveryone?: boolean;
}

/** A web address as an explicit link: `&` escaped and `|` encoded, since `|` would start the link's label. */
const link = (url: string) => `<${escapeHtmlText(url).replace(/\|/g, '%7C')}>`;

export function escapeMrkdwn(text: string, options: MrkdwnOptions = {}): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(TOKENS)) {
    const [token, special] = match;
    // Punctuation that ends a sentence after an address is not part of it.
    const url = token.startsWith('<') ? '' : token.replace(/[.,;:!?'")\]]+$/, '');
    const kept = special ? (options.notifyEveryone ? token : `@${special}`) : url ? link(url) : token;
    out += escapeHtmlText(text.slice(last, match.index)) + kept;
    last = match.index + (url ? url.length : token.length);
  }
  return out + escapeHtmlText(text.slice(last));
}

// The longest form of the text (special mentions kept) decides where it is split, whichever way they are written.
const measure = (text: string) => escapeMrkdwn(text, { notifyEveryone: true }).length;

/** Splits `text` into parts whose escaped length is at most `limit`, at the coarsest boundary that fits. */
export function splitText(text: string, limit = SECTION_LIMIT): string[] {
  if (measure(text) <= limit) return text.trim() ? [text] : [];
  for (const separator of ['\n\n', '\n', ' ']) {
    const parts = text.split(separator);
    if (parts.length === 1) continue;
    const chunks: string[] = [];
    let current = '';
    for (const part of parts) {
      const joined = current ? `${current}${separator}${part}` : part;
      if (measure(joined) <= limit) {
        current = joined;
        continue;
      }
      if (current.trim()) chunks.push(current);
      const pieces = splitText(part, limit);
      chunks.push(...pieces.slice(0, -1));
      current = pieces.at(-1) ?? '';
    }
    if (current.trim()) chunks.push(current);
    return chunks;
  }
  // One word longer than a section (a long URL): split by characters, keeping surrogate pairs and escapes whole.
  const chunks: string[] = [];
  let current = '';
  for (const character of text) {
    if (measure(current + character) > limit) {
      chunks.push(current);
      current = '';
    }
    current += character;
  }
  return current ? [...chunks, current] : chunks;
}

export function sectionBlocks(text: string, options: MrkdwnOptions = {}) {
  return splitText(text).map((part) => ({ type: 'section' as const, text: { type: 'mrkdwn' as const, text: escapeMrkdwn(part, options), verbatim: true } }));
}
