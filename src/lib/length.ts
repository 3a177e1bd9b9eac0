// How long a text is in a platform's own counting: UTF-16 units, X's weighted length, graphemes, or UTF-8 bytes. Pure functions.
// twitter-text is required on first use, by the first text counted X's way (loading it at start cost every start a fifth
// of a second, needed or not).
import { onFirstUse } from './on-first-use.js';

/** twitter-text, loaded on first use. */
export const twitterText = onFirstUse<typeof import('twitter-text')>('twitter-text');

export type LengthMethod = 'characters' | 'twitter' | 'graphemes' | 'bytes';

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const GRAPHEME_CHUNK = 512;

/**
 * V8's segmenter is quadratic in the string length (80k characters take over a second), so the text is segmented a
 * window at a time. Every segment of a window but the last is counted; the next window starts at the last segment's
 * start, which is a true boundary, so a cluster cut by the window's end is counted whole in the next one.
 */
function countGraphemes(text: string): number {
  let count = 0;
  let start = 0;
  let window = GRAPHEME_CHUNK;
  while (start < text.length) {
    const end = start + window;
    if (end >= text.length) {
      for (const _segment of graphemeSegmenter.segment(text.slice(start))) count++;
      break;
    }
    let segments = 0;
    let lastIndex = 0;
    for (const segment of graphemeSegmenter.segment(text.slice(start, end))) {
      segments++;
      lastIndex = segment.index;
    }
    if (segments < 2) {
      // One cluster longer than the window: look further.
      window *= 2;
      continue;
    }
    count += segments - 1;
    start += lastIndex;
    window = GRAPHEME_CHUNK;
  }
  return count;
}

export function contentLength(text: string, method: LengthMethod): number {
  switch (method) {
    case 'twitter':
      return twitterText().parseTweet(text).weightedLength;
    case 'graphemes':
      return countGraphemes(text);
    case 'bytes':
      // YouTube's description limit (5000 bytes): a character beyond ASCII takes 2 to 4.
      return Buffer.byteLength(text, 'utf8');
    default:
      // UTF-16 units on purpose: that is what the platforms' own limits count, so a sans-serif bold letter
      // (an astral-plane character, one surrogate pair) uses 2 of the allowed characters.
      return text.length;
  }
}

/**
 * What a create says of a text over its platform's limit, in the platform's counting; on a thread platform, that it may be
 * split into several items.
 */
export function tooLong(platform: { name: string; lengthMethod: LengthMethod; chain: string }, length: number, maxLength: number): string {
  if (platform.lengthMethod === 'bytes') {
    return `The text takes ${length} bytes; ${platform.name} allows ${maxLength} bytes (UTF-8: a character beyond ASCII takes 2 to 4): shorten it`;
  }
  const split = platform.chain === 'thread' ? ` or split it into several items of postsAndComments (each item is a post of the thread, each up to ${maxLength})` : '';
  return `The maximum characters is ${maxLength}, we got ${length}; shorten the text${split}`;
}
