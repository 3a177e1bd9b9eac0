// A post as Slack Block Kit: mrkdwn section blocks of at most 3000 characters each (https://docs.slack.dev/reference/block-kit/blocks/section-block),
// at most 50 blocks a message (https://docs.slack.dev/reference/block-kit/blocks). Long text is split between paragraphs, then
// lines, then words, never cut; only the whitespace where it splits is dropped, the sections themselves being separate blocks.
import { escapeHtmlText } from '../../src/lib/content.js';

const SECTION_LIMIT = 3000;
export const BLOCK_LIMIT = 50;

/** Slack's control sequences the author typed (<@U123>, <#C123>, <!here>, <!subteam^S1>) are kept; every other &, < and > is escaped. */
const CONTROL = /<[@#!][^<>\s][^<>]*>/g;

export function escapeMrkdwn(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(CONTROL)) {
    out += escapeHtmlText(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return out + escapeHtmlText(text.slice(last));
}

const measure = (text: string) => escapeMrkdwn(text).length;

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

export function sectionBlocks(text: string): { type: 'section'; text: { type: 'mrkdwn'; text: string } }[] {
  return splitText(text).map((part) => ({ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(part) } }));
}
