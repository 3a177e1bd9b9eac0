// The one-line excerpts of the console's lists and calendar: the post's words as a person reads them, whatever the markup.
import { describe, expect, it } from 'vitest';
import { excerpt } from '../src/lib/content.js';

describe('excerpt', () => {
  it('keeps the words: tags dropped, blocks and line breaks as spaces, entities decoded', () => {
    expect(excerpt('<p>Fresh <strong>bread</strong> &amp; <u>rolls</u></p><p>from 9:00</p><ul><li>rye</li><li>spelt<br>loaves</li></ul>', 200)).toBe(
      'Fresh bread & rolls from 9:00 rye spelt loaves',
    );
    // Bold stays plain letters (a platform's Unicode bold is read aloud letter by letter), links keep their text.
    expect(excerpt('<p><strong>Big</strong> news: <a href="https://example.com/a">read it</a></p>', 200)).toBe('Big news: read it');
  });

  it('leaves text that only looks like markup, and drops what is not text', () => {
    expect(excerpt('a < b and 3 > 2, <3', 200)).toBe('a < b and 3 > 2, <3');
    expect(excerpt('<p>Hi</p><script>alert(1)</script><style>p{}</style><!-- note --><p>there</p>', 200)).toBe('Hi there');
  });

  it('cuts at the length with an ellipsis', () => {
    expect(excerpt(`<p>${'word '.repeat(40)}</p>`, 20)).toBe('word word word wo…');
    expect(excerpt('short', 20)).toBe('short');
  });
});
