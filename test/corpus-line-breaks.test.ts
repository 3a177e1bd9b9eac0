// The two line-break conversions the round-trip corpus (issue 36) asked for, on the edges the corpus does not type: the
// HTML article's <br /> (WordPress, listmonk) and CommonMark's hard breaks (Reddit, Lemmy).
import { describe, expect, it } from 'vitest';
import { htmlLineBreaks } from '../providers/articles/common.js';
import { commonMarkLineBreaks } from '../providers/safe-markdown.js';

describe('line breaks of an HTML article', () => {
  it('breaks the lines of text, beside inline tags too', () => {
    expect(htmlLineBreaks('<h2>Menu</h2>Soup <strong>today</strong>\nbread\n\nSee you')).toBe('<h2>Menu</h2>Soup <strong>today</strong><br />\nbread<br />\n<br />\nSee you');
    expect(htmlLineBreaks('<p>Tom &amp; <strong>Jerry</strong>\n<u>live</u></p>')).toBe('<p>Tom &amp; <strong>Jerry</strong><br />\n<u>live</u></p>');
    expect(htmlLineBreaks('<p><strong>Jerry</strong>\nlive</p>')).toBe('<p><strong>Jerry</strong><br />\nlive</p>');
  });

  it('leaves whitespace between blocks, a break after <br> and the text of <pre> as they are', () => {
    const article = '<h2>Why</h2>\n<p>One<br>\ntwo</p>\n<pre><code>a\nb</code></pre>\n<ul>\n<li>x</li>\n</ul>';
    expect(htmlLineBreaks(article)).toBe(article);
  });
});

describe('line breaks of plain text shown as CommonMark', () => {
  it('makes each line break a hard break, keeps list items on their lines and ends a list with a blank line', () => {
    expect(commonMarkLineBreaks('Sale today\n- one\n- two\nSee you\nsoon\n\nBye')).toBe('Sale today\n- one\n- two\n\nSee you  \nsoon\n\nBye');
    expect(commonMarkLineBreaks('One line')).toBe('One line');
  });
});
