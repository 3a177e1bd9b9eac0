// The composer's text as Herald's content: the one conversion of what a person types in the console (a new post, an
// edit), so what is typed is what goes out. A textarea sends its line breaks as \r\n (every HTML form does): each is one
// \n, as the API stores them, so a text counts the same before and after saving. `<b>`, the bold people type, is Herald's
// `<strong>`. Everything else is the API's own sanitizing (sanitizeContent when the tool stores it); tags it removes are
// named by unshownTags so the preview says so instead of dropping them without a word.
import type { Provider } from '../../../providers/types.js';
import { sanitizeContent } from '../../lib/content.js';

const BOLD_TAG = /<(\/?)b(?=[\s/>])([^<>]*)>/gi;

export function composedContent(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(BOLD_TAG, '<$1strong$2>');
}

const TAG_NAME = /<\/?([a-zA-Z][a-zA-Z0-9-]*)(?=[\s/>])[^<>]*>/g;
const tagNames = (text: string) => new Set([...text.matchAll(TAG_NAME)].map((match) => match[1].toLowerCase()));

/** The tags of a composed text that this platform's content does not keep (removed, their text kept), by name. */
export function unshownTags(content: string, provider: Provider): string[] {
  const typed = tagNames(content);
  if (typed.size === 0) return [];
  const kept = tagNames(sanitizeContent(content, provider));
  return [...typed].filter((tag) => !kept.has(tag)).sort();
}

/** The preview's sentence for removed tags, or undefined when none. */
export function unshownSentence(tags: string[], platform: string): string | undefined {
  if (tags.length === 0) return undefined;
  const names = tags.map((tag) => `<${tag}>`).join(', ');
  return `${platform} does not show ${names}: ${tags.length > 1 ? 'these tags are' : 'this tag is'} removed and ${tags.length > 1 ? 'their' : 'its'} text kept. Use <strong> (bold), <u> (underline), <ul>/<li>, <h1>–<h3> or <a href>.`;
}
