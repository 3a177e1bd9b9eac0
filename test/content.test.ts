import { describe, expect, it } from 'vitest';
import {
  checkContentRules,
  convertContent,
  escapeHtml,
  escapeMarkdownBlock,
  escapeMarkdownText,
  htmlBody,
  isBlankContent,
  markdownImage,
  sanitizeContent,
  toTelegramHtml,
} from '../src/lib/content.js';
import { contentLength } from '../src/lib/length.js';

describe('convertContent plain', () => {
  it('turns strong into sans-serif bold letters and digits', () => {
    expect(convertContent('<p><strong>Hi 5</strong></p>', 'plain')).toBe('𝗛𝗶 𝟱');
    expect(convertContent('<p><strong>Az09</strong></p>', 'plain')).toBe('\u{1D5D4}\u{1D607}\u{1D7EC}\u{1D7F5}');
  });

  it('follows every underlined character with U+0332', () => {
    expect(convertContent('<p><u>ab c</u></p>', 'plain')).toBe('a\u0332b\u0332 \u0332c\u0332');
  });

  it('turns list items into "- " lines', () => {
    expect(convertContent('<ul><li>a</li><li>b</li></ul>', 'plain')).toBe('- a\n- b');
    expect(convertContent('<p>Intro</p><ul><li><p>a</p></li><li>b</li></ul><p>End</p>', 'plain')).toBe(
      'Intro\n- a\n- b\nEnd',
    );
  });

  it('separates paragraphs by one newline, keeps empty paragraphs as blank lines and collapses runs', () => {
    expect(convertContent('<p>a</p>\n<p>b</p>', 'plain')).toBe('a\nb');
    expect(convertContent('<p>a</p><p></p><p>b</p>', 'plain')).toBe('a\n\nb');
    expect(convertContent('<p>a</p><p></p><p><br></p><p></p><p>b</p>', 'plain')).toBe('a\n\nb');
    expect(convertContent('<p>line one<br>line two</p>', 'plain')).toBe('line one\nline two');
    expect(convertContent('<h2>Title</h2><p>body</p>', 'plain')).toBe('Title\nbody');
  });

  it('writes links as the URL, or text followed by the URL', () => {
    expect(convertContent('<p><a href="https://x.com">https://x.com</a></p>', 'plain')).toBe('https://x.com');
    expect(convertContent('<p>Read <a href="https://x.com/a?b=1&amp;c=2">this</a>.</p>', 'plain')).toBe(
      'Read this (https://x.com/a?b=1&c=2).',
    );
    expect(convertContent('<p><a href="javascript:alert(1)">bad</a> <a href="/rel">rel</a></p>', 'plain')).toBe(
      'bad rel',
    );
  });

  it('decodes entities', () => {
    expect(convertContent('<p>Tom &amp; Jerry &lt;3 &quot;x&quot; &#39;y&#39;&nbsp;z &#x1F600; &#233;</p>', 'plain')).toBe(
      'Tom & Jerry <3 "x" \'y\'\u00A0z 😀 é',
    );
  });

  it('strips other tags but keeps their text, and drops script content', () => {
    expect(convertContent('<p>a<span>b</span><script>alert(1)</script><em>c</em></p>', 'plain')).toBe('abc');
  });
});

describe('convertContent markdown', () => {
  it('converts headings, bold, underline, lists and links', () => {
    const html =
      '<h1>One</h1><h2>Two</h2><h3>Three</h3><p>Some <strong>bold </strong>and <u>under</u></p>' +
      '<ul><li>a</li><li>b</li></ul><p>See <a href="https://x.com/p">the post</a></p>';
    expect(convertContent(html, 'markdown')).toBe(
      '# One\n\n## Two\n\n### Three\n\nSome **bold** and __under__\n\n- a\n- b\n\nSee [the post](https://x.com/p)',
    );
  });

  it('decodes entities and separates paragraphs by a blank line', () => {
    expect(convertContent('<p>a &amp; b</p><p>c</p>', 'markdown')).toBe('a & b\n\nc');
  });

  it('escapes text that Markdown would read as markup, but not bare URLs or words with underscores', () => {
    const html =
      '<h2>Why *this* matters</h2><p>2*3*4 is [not] a `link` &lt;b&gt; _really_ or snake_case, see https://x.com/a_b*c</p>' +
      '<p># not a heading</p><p>1. not a list<br>- nor this<br>&gt; nor a quote</p><ul><li>3) item</li></ul>' +
      '<p><a href="https://x.com/p">[1] the *post*</a></p>';
    expect(convertContent(html, 'markdown')).toBe(
      '## Why \\*this\\* matters\n\n' +
        '2\\*3\\*4 is \\[not\\] a \\`link\\` \\<b> \\_really\\_ or snake_case, see https://x.com/a_b*c\n\n' +
        '\\# not a heading\n\n1\\. not a list\n\\- nor this\n\\> nor a quote\n\n- 3\\) item\n\n' +
        '[\\[1\\] the \\*post\\*](https://x.com/p)',
    );
  });

  it('writes images and escapes titles for Markdown', () => {
    expect(markdownImage('https://cdn.example/a b(1).png', 'A [red] *dot*')).toBe('![A \\[red\\] \\*dot\\*](https://cdn.example/a%20b%281%29.png)');
    expect(escapeMarkdownBlock(escapeMarkdownText('# 1 * 2'))).toBe('\\# 1 \\* 2');
    // Chat mention tokens stay as typed (Discord reads them); other angle brackets are escaped.
    expect(escapeMarkdownText('Hi <@123> in <#456> at <t:1700000000:R>, <b>x</b>')).toBe('Hi <@123> in <#456> at <t:1700000000:R>, \\<b>x\\</b>');
  });
});

describe('convertContent html and sanitizeContent', () => {
  it('keeps the allowed tags', () => {
    const html =
      '<h1>T</h1><h2>U</h2><h3>V</h3><p><strong>b</strong> <u>u</u><br /><a href="https://x.com">l</a></p><ul><li>i</li></ul>';
    expect(convertContent(html, 'html')).toBe(html);
  });

  it('drops script, style, img, event handlers and disallowed tags', () => {
    const html = '  <p onclick="x()">hi<script>alert(1)</script><style>p{}</style><img src="x.png"><b>b</b></p>  ';
    expect(convertContent(html, 'html')).toBe('<p>hib</p>');
    expect(sanitizeContent('<a href="javascript:alert(1)" title="t">x</a><a href="mailto:a@b.c">m</a>')).toBe(
      'x<a href="mailto:a@b.c">m</a>',
    );
  });
});

describe('htmlBody', () => {
  it('keeps HTML and turns tagless text into escaped paragraphs, one per line', () => {
    expect(htmlBody('<p>a &amp; b</p>')).toBe('<p>a &amp; b</p>');
    expect(htmlBody('Tom & Jerry <3\n\n  second line  \r\nthird')).toBe('<p>Tom &amp; Jerry &lt;3</p><p>second line</p><p>third</p>');
    expect(escapeHtml('"a" <b> & c')).toBe('&quot;a&quot; &lt;b&gt; &amp; c');
  });
});

describe('toTelegramHtml', () => {
  it('keeps b/strong, u, i and links and turns blocks into lines', () => {
    const html =
      '<h1>Title</h1><p><strong>s</strong> <b>b</b> <i>i</i> <u>u</u> 1 &lt; 2 &amp; 3</p>' +
      '<ul><li>a</li><li><a href="https://x.com/?a=1&amp;b=2">l</a></li></ul>';
    expect(toTelegramHtml(html)).toBe(
      'Title\n<strong>s</strong> <b>b</b> <i>i</i> <u>u</u> 1 &lt; 2 &amp; 3\n- a\n- <a href="https://x.com/?a=1&amp;b=2">l</a>',
    );
  });

  it('escapes tagless text so parse_mode HTML accepts it', () => {
    expect(toTelegramHtml('a < b & c')).toBe('a &lt; b &amp; c');
  });
});

describe('checkContentRules', () => {
  it('refuses strong inside u and u inside strong, at any depth', () => {
    expect(checkContentRules('<p><u>a <strong>b</strong></u></p>')).toMatch(
      /^Bold and underline cannot be combined in one element: <strong> is nested inside <u>\. Use either <strong>/,
    );
    expect(checkContentRules('<strong><p>a <u>b</u></p></strong>')).toMatch(
      /^Bold and underline cannot be combined in one element: <u> is nested inside <strong>\./,
    );
  });

  it('refuses nested lists', () => {
    expect(checkContentRules('<ul><li>a<ul><li>b</li></ul></li></ul>')).toMatch(/^Nested lists are not supported/);
  });

  it('refuses a ul holding something other than li', () => {
    expect(checkContentRules('<ul><p>x</p></ul>')).toBe(
      'A <ul> may contain only <li> items, but it contains <p>. Wrap every item in its own <li> and put other content outside the list.',
    );
  });

  it('accepts valid content and plain text', () => {
    expect(checkContentRules('<p><strong>a</strong> <u>b</u></p><ul><li>x</li></ul>')).toBeUndefined();
    expect(checkContentRules('plain <strong text')).toBeUndefined();
  });
});

describe('tagless content', () => {
  it('is returned unchanged by every editor and by sanitizeContent', () => {
    const text = 'Tom & Jerry &amp; <3 a > b';
    expect(convertContent(text, 'plain')).toBe(text);
    expect(convertContent(text, 'markdown')).toBe(text);
    expect(convertContent(text, 'html')).toBe(text);
    expect(sanitizeContent(text)).toBe(text);
  });

  it('is what is left of markup that is all removed: its text as typed, so no conversion escapes it twice (issue 36)', () => {
    const stored = sanitizeContent('Tom & Jerry <b>bold</b> "quoted" <3');
    expect(stored).toBe('Tom & Jerry bold "quoted" <3');
    expect(toTelegramHtml(stored)).toBe('Tom &amp; Jerry bold "quoted" &lt;3');
    expect(convertContent(stored, 'plain')).toBe('Tom & Jerry bold "quoted" <3');
    // Escaped markup stays text: it is kept as HTML rather than decoded into a tag.
    const escaped = sanitizeContent('<em>x</em> &lt;b&gt;');
    expect(convertContent(escaped, 'plain')).toBe('x <b>');
    expect(toTelegramHtml(escaped)).toBe('x &lt;b&gt;');
  });
});

describe('contentLength', () => {
  it('counts a URL as 23 and CJK as 2 with twitter weighting', () => {
    expect(contentLength('https://example.com/a/very/long/path/that/is/longer/than/23', 'twitter')).toBe(23);
    expect(contentLength('日本語', 'twitter')).toBe(6);
    expect(contentLength('abc', 'twitter')).toBe(3);
  });

  it('counts an emoji family as one grapheme', () => {
    expect(contentLength('👨‍👩‍👧‍👦', 'graphemes')).toBe(1);
    expect(contentLength('e\u0301a', 'graphemes')).toBe(2);
  });

  it('counts UTF-16 units, so a bold letter counts 2', () => {
    expect(contentLength('𝗛', 'characters')).toBe(2);
    expect(contentLength(convertContent('<p><strong>Hi</strong> x</p>', 'plain'), 'characters')).toBe(6);
  });
});

describe('isBlankContent', () => {
  it('is true only when no visible text remains', () => {
    expect(isBlankContent('<p> &nbsp; </p><p><br></p>')).toBe(true);
    expect(isBlankContent('   ')).toBe(true);
    expect(isBlankContent('<p><script>x</script></p>')).toBe(true);
    expect(isBlankContent('<p>x</p>')).toBe(false);
    expect(isBlankContent('x')).toBe(false);
  });
});

describe('grapheme counting across segmentation windows', () => {
  const reference = (text: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].length;
  it.each([
    ['flag pairs', '🇫🇷🇩🇪'.repeat(700) + 'a'],
    ['one long cluster', 'e' + '\u0301'.repeat(2000) + 'x'],
    ['CR LF pairs', 'a\r\n'.repeat(900)],
    ['ZWJ families', '👨‍👩‍👧'.repeat(400)],
    ['underlined text', 'x\u0332 '.repeat(800)],
    ['accented letters only', 'é'.repeat(3000)],
  ])('counts %s exactly', (_name, text) => {
    expect(contentLength(text, 'graphemes')).toBe(reference(text));
  });
});

describe('article content (markdown or rich HTML, issue 22)', () => {
  const article = { article: true };

  it('converts Markdown with a CommonMark/GFM parser and keeps the rich set when stored', () => {
    const stored = sanitizeContent('# Title\n\nSome *em*, `code`\nnext line.\n\n1. one\n2. two\n\n> quoted\n\n```js\nconst x = 1 < 2;\n```\n\n| a | b |\n|---|---|\n| c | d |', article);
    expect(stored).toBe(
      '<h1>Title</h1>\n<p>Some <em>em</em>, <code>code</code><br />next line.</p>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n<blockquote>\n<p>quoted</p>\n</blockquote>\n' +
        '<pre><code class="language-js">const x = 1 &lt; 2;\n</code></pre>\n<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>c</td>\n<td>d</td>\n</tr>\n</tbody>\n</table>',
    );
  });

  it('keeps the article tags of HTML (b and i named strong and em) where social content loses them', () => {
    const html = '<p><b>b</b> <i>i</i> <em>e</em></p><ol start="3"><li>x</li></ol><blockquote><p>q</p></blockquote><h4>h</h4>';
    expect(sanitizeContent(html, article)).toBe('<p><strong>b</strong> <em>i</em> <em>e</em></p><ol start="3"><li>x</li></ol><blockquote><p>q</p></blockquote><h4>h</h4>');
    expect(sanitizeContent(html)).toBe('<p>b i e</p><li>x</li><p>q</p>h');
  });

  it('renders an article as Markdown and as readable plain text: lists stay lists, tables rows, code its lines', () => {
    const stored = sanitizeContent('<ol><li>a<ul><li>b</li></ul></li><li>c</li></ol><table><tr><th>h</th><th>i</th></tr><tr><td>1</td><td>2</td></tr></table><pre><code class="language-ts">a\n\n\nb</code></pre><p>x<br>y</p>', article);
    expect(convertContent(stored, 'markdown')).toBe('1. a\n   - b\n2. c\n\n| h | i |\n| --- | --- |\n| 1 | 2 |\n\n```ts\na\n\n\nb\n```\n\nx\ny');
    expect(convertContent(stored, 'plain')).toBe('1. a\n   - b\n2. c\nh | i\n1 | 2\na\n\n\nb\nx\ny');
  });

  it('allows nested lists and bold in underline in an article (no social rules)', () => {
    expect(checkContentRules('<ul><li>a<ul><li>b</li></ul></li></ul>', article)).toBeUndefined();
    expect(checkContentRules('<ul><li>a<ul><li>b</li></ul></li></ul>')).toMatch(/^Nested lists/);
  });
});
