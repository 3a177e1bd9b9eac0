// Issue 21: nothing an author writes reaches a chat platform as live markup it did not mean. One corpus of injections (script,
// event handlers, javascript: links, entities that decode into tags, Markdown links and autolinks to other schemes, raw HTML a
// Markdown renderer would take, mass mentions, Slack link syntax), converted for each platform's editor as publishing does, then
// built into the body each provider sends: the text below is what the platform receives, field by field.
// Discord, Whop and Moltbook render Markdown (links only to web/mail addresses, everything else backslash-escaped; Discord's
// allowed_mentions lets only <@id>/<@&role> notify); Slack renders mrkdwn (&, <, > escaped, only mentions kept, @here without
// notifyEveryone); Telegram parses HTML (its own tags only, hrefs only to web addresses). Kick and Twitch chat and Skool posts
// show text as typed (no markup to escape), so they are not in this table.
import { describe, expect, it } from 'vitest';
import { messageBody } from '../providers/discord/message.js';
import { postBody, commentBody } from '../providers/moltbook.js';
import { postMessageArguments } from '../providers/slack/index.js';
import { telegramHtml } from '../providers/telegram.js';
import { forumPostBody } from '../providers/whop.js';
import { convertContent } from '../src/lib/content.js';

const corpus = {
  script: '<p>Hi <script>alert(1)</script></p>',
  handler: '<p><img src=x onerror=alert(1)>look <strong onmouseover="alert(1)">here</strong></p>',
  jsHref: '<p><a href="javascript:alert(1)">prize</a> and <a href="https://example.com/a?b=1&amp;c=2">docs</a></p>',
  entities: '<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;a href="javascript:x"&gt;t&lt;/a&gt;</p>',
  mdLink: '[prize](javascript:alert(1)) ![x](data:text/html,hi) [docs](https://example.com)',
  autolink: 'see <javascript:alert(1)> or <img/src=x onerror=alert(1)> <!-- hidden -->',
  mass: '@everyone @here <!channel> <!here> hi <@123456789012345678> <@U0ABC123>',
  slackLink: '<http://evil.example|Docs> & <!date^1^{date}^http://evil.example|now>',
};
type Case = keyof typeof corpus;

const markdownSafe: Record<Case, string> = {
  script: 'Hi',
  handler: 'look **here**',
  jsHref: 'prize and [docs](https://example.com/a?b=1&c=2)',
  entities: '\\<script>alert(1)\\</script> \\<a href="javascript:x">t\\</a>',
  mdLink: '[prize\\](javascript:alert(1)) ![x\\](data:text/html,hi) [docs](https://example.com)',
  autolink: 'see \\<javascript:alert(1)> or \\<img/src=x onerror=alert(1)> \\<!-- hidden -->',
  mass: '@everyone @here \\<!channel> \\<!here> hi <@123456789012345678> <@U0ABC123>',
  slackLink: '<http://evil.example|Docs> & \\<!date^1^{date}^http://evil.example|now>',
};

const expected: Record<string, { build: (content: string) => unknown; cases: Record<Case, unknown> }> = {
  discord: {
    build: (content) => {
      const body = messageBody({ postId: 'p', text: convertContent(content, 'markdown') }, false);
      return { content: body.content, notifies: body.allowed_mentions };
    },
    cases: Object.fromEntries(
      Object.entries(markdownSafe).map(([name, content]) => [name, { content, notifies: name === 'mass' ? { parse: [], users: ['123456789012345678'] } : { parse: [] } }]),
    ) as Record<Case, unknown>,
  },
  whop: { build: (content) => forumPostBody('exp', convertContent(content, 'markdown'), {}, []).content, cases: markdownSafe },
  moltbook: {
    build: (content) => [postBody('general', convertContent(content, 'plain')).content, commentBody(convertContent(content, 'plain')).content],
    cases: Object.fromEntries(
      Object.entries({ ...markdownSafe, handler: 'look 𝗵𝗲𝗿𝗲', jsHref: 'prize and docs (https://example.com/a?b=1&c=2)' }).map(([name, text]) => [name, [text, text]]),
    ) as Record<Case, unknown>,
  },
  slack: {
    build: (content) => {
      const body = postMessageArguments('C0RANDOM01', { postId: 'p', text: convertContent(content, 'plain') });
      expect(body.blocks.map((block) => block.text.text).join('')).toBe(body.text);
      return body.text;
    },
    cases: {
      script: 'Hi',
      handler: 'look 𝗵𝗲𝗿𝗲',
      jsHref: 'prize and docs (<https://example.com/a?b=1&amp;c=2>)',
      entities: '&lt;script&gt;alert(1)&lt;/script&gt; &lt;a href="javascript:x"&gt;t&lt;/a&gt;',
      mdLink: '[prize](javascript:alert(1)) ![x](data:text/html,hi) [docs](<https://example.com>)',
      autolink: 'see &lt;javascript:alert(1)&gt; or &lt;img/src=x onerror=alert(1)&gt; &lt;!-- hidden --&gt;',
      mass: '@everyone @here @channel @here hi &lt;@123456789012345678&gt; <@U0ABC123>',
      slackLink: '&lt;<http://evil.example%7CDocs>&gt; &amp; &lt;!date^1^{date}^<http://evil.example%7Cnow>&gt;',
    },
  },
  telegram: {
    build: (content) => telegramHtml(convertContent(content, 'html')),
    cases: {
      script: 'Hi',
      handler: 'look <strong>here</strong>',
      jsHref: 'prize and <a href="https://example.com/a?b=1&amp;c=2">docs</a>',
      entities: '&lt;script&gt;alert(1)&lt;/script&gt; &lt;a href="javascript:x"&gt;t&lt;/a&gt;',
      mdLink: '[prize](javascript:alert(1)) ![x](data:text/html,hi) [docs](https://example.com)',
      autolink: 'see &lt;javascript:alert(1)&gt; or &lt;img/src=x onerror=alert(1)&gt; &lt;!-- hidden --&gt;',
      mass: '@everyone @here &lt;!channel&gt; &lt;!here&gt; hi &lt;@123456789012345678&gt; &lt;@U0ABC123&gt;',
      slackLink: '&lt;http://evil.example|Docs&gt; &amp; &lt;!date^1^{date}^http://evil.example|now&gt;',
    },
  },
};

for (const [platform, { build, cases }] of Object.entries(expected)) {
  describe(`${platform}: what an injection becomes`, () => {
    it.each(Object.keys(corpus) as Case[])('%s', (name) => {
      expect(build(corpus[name])).toEqual(cases[name]);
    });
  });
}
