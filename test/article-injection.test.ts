// Issue 21: nothing a user writes reaches an article platform as live markup it did not mean. Each payload of the corpus is
// written as the content (stored as Herald stores it, converted as Herald publishes it) and into every text field the
// platform takes (titles, subtitles, subjects, previews, alt text); what the fake platform received is then read the way
// that platform reads it: HTML parsed as a browser would, Markdown rendered (markdown-it, raw HTML on) then parsed, Go
// templates, Liquid tags, WordPress shortcodes and Hashnode embeds looked for. Plain-text fields must arrive as typed.
import { Parser } from 'htmlparser2';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import devto from '../providers/devto.js';
import hashnode from '../providers/hashnode.js';
import listmonk from '../providers/listmonk.js';
import medium from '../providers/medium.js';
import type { Provider } from '../providers/types.js';
import wordpress from '../providers/wordpress.js';
import { convertContent, sanitizeContent } from '../src/lib/content.js';
import { startDevtoFake, type DevtoFake } from './fakes/devto.js';
import { startHashnodeFake, type HashnodeFake } from './fakes/hashnode.js';
import { startListmonkFake, type ListmonkFake } from './fakes/listmonk.js';
import { startMediumFake, type MediumFake } from './fakes/medium.js';
import { startWordPressFake, type WordPressFake } from './fakes/wordpress.js';
import { mediaFile, providerContext, tinyPng } from './helpers/provider-context.js';

const CORPUS: [string, string][] = [
  ['a script element', '<script>alert(1)</script>Hello'],
  ['an event handler', '<img src=x onerror=alert(1)> <svg onload=alert(2)>Hello</svg>'],
  ['a javascript: link', '<a href="javascript:alert(1)">click</a> and <a href="java&#x09;script:alert(2)">tab</a>'],
  ['a data: link and picture', '<a href="data:text/html;base64,PHNjcmlwdD4=">d</a><img src="data:image/png;base64,AAAA">'],
  ['entities that decode into tags', '&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;'],
  ['Markdown links to javascript:', '[x](javascript:alert(1)) ![y](javascript:alert(2)) <javascript:alert(3)>'],
  ['raw HTML inside Markdown', 'Some *text*\n\n<iframe src="https://evil.example"></iframe><style>body{display:none}</style>\n\n<div onclick="x()">raw</div>'],
  ['platform template syntax', '[embed]https://evil.example[/embed] {% embed https://evil.example %} {{ .Subscriber.Email }} %[https://evil.example]'],
];

const SAFE_TAGS = new Set(['p', 'br', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'u', 's', 'del', 'a', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'hr', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'img', 'figure', 'figcaption', 'div']);
const SAFE_ATTRIBUTES = new Set(['href', 'src', 'alt', 'title', 'class', 'start', 'style']);

/** Every element and attribute a browser would build from `html` that could run or load something unasked. */
function liveMarkup(html: string): string[] {
  const found: string[] = [];
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (!SAFE_TAGS.has(name)) found.push(`<${name}>`);
        for (const [attribute, value] of Object.entries(attributes)) {
          if (!SAFE_ATTRIBUTES.has(attribute)) found.push(`${name}[${attribute}]`);
          if ((attribute === 'href' || attribute === 'src') && !/^(https?:\/\/|mailto:)/i.test(value.trim())) found.push(`${name}[${attribute}=${value}]`);
          // The preheader is Herald's own hidden block: only its fixed style is allowed.
          if (attribute === 'style' && !(name === 'div' && value.startsWith('display:none'))) found.push(`${name}[style]`);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return found;
}

const markdownReader = new MarkdownIt({ html: true, linkify: true });
/** What a Markdown platform that allows raw HTML would build. */
const markdownLiveMarkup = (markdown: string) => liveMarkup(markdownReader.render(markdown));

interface Sent {
  /** The body as sent, in the platform's format. */
  body: string;
  format: 'html' | 'markdown';
  /** Plain-text fields: what was typed and what arrived. */
  plain: [string, unknown][];
  /** Fields the platform reads as HTML. */
  html: string[];
}

interface Platform {
  provider: Provider;
  publish(payload: string): Promise<Sent>;
}

/** The content as Herald stores it for an article channel and converts it when publishing. */
const asPublished = (provider: Provider, payload: string) => convertContent(sanitizeContent(payload, provider), provider.editor);
const picture = (url: string, alt: string) => [mediaFile(tinyPng(), { url: `${url}/cover.png`, alt }), mediaFile(tinyPng(), { url: `${url}/inline.png`, alt })];
const title = (payload: string, max: number) => `T ${payload}`.slice(0, max);

let wp: WordPressFake;
let md: MediumFake;
let dev: DevtoFake;
let hn: HashnodeFake;
let lm: ListmonkFake;
const platforms: Record<string, Platform> = {};

beforeAll(async () => {
  [wp, md, dev, hn, lm] = await Promise.all([startWordPressFake(), startMediumFake(), startDevtoFake(), startHashnodeFake(), startListmonkFake()]);
  const wpAccount = await wordpress.connect!(providerContext({}), wp.fields());
  platforms.wordpress = {
    provider: wordpress,
    async publish(payload) {
      const context = providerContext({ auth: { accessToken: wpAccount.accessToken, internalId: wpAccount.internalId, data: wpAccount.data }, settings: { title: payload, type: 'post' } });
      await wordpress.publish!(context, { postId: 'p', text: asPublished(wordpress, payload), media: picture(wp.url, payload) });
      const { body } = wp.posts.at(-1)!;
      return { body: String(body.content), format: 'html', plain: [], html: [String(body.title)] };
    },
  };
  platforms.medium = {
    provider: medium,
    async publish(payload) {
      const settings = { title: title(payload, 100), subtitle: `S ${payload}` };
      const context = providerContext({ endpoints: { api: md.url }, auth: { accessToken: md.token, internalId: md.user.id }, settings });
      await medium.publish!(context, { postId: 'p', text: asPublished(medium, payload), media: picture(md.url, payload) });
      const { body } = md.posts.at(-1)!;
      return { body: String(body.content), format: 'markdown', plain: [[settings.title, body.title]], html: [] };
    },
  };
  platforms.devto = {
    provider: devto,
    async publish(payload) {
      const settings = { title: title(payload, 128) };
      const context = providerContext({ endpoints: { api: dev.url }, auth: { accessToken: dev.apiKey, internalId: String(dev.user.id) }, settings });
      await devto.publish!(context, { postId: 'p', text: asPublished(devto, `${payload} ${dev.articles.length}`), media: picture(dev.url, payload) });
      const { article } = dev.articles.at(-1)!;
      return { body: String(article.body_markdown), format: 'markdown', plain: [[settings.title, article.title]], html: [] };
    },
  };
  platforms.hashnode = {
    provider: hashnode,
    async publish(payload) {
      const settings = { title: payload, subtitle: `S ${payload}`, publication: hn.publications[0].id, tags: [{ value: hn.tags[0].id, label: 'JavaScript' }] };
      const context = providerContext({ endpoints: { gql: hn.url }, auth: { accessToken: hn.token, internalId: hn.user.id }, settings });
      await hashnode.publish!(context, { postId: 'p', text: asPublished(hashnode, payload), media: picture(hn.url, payload) });
      const { input } = hn.posts.at(-1)!;
      return { body: String(input.contentMarkdown), format: 'markdown', plain: [[payload, input.title], [`S ${payload}`, input.subtitle]], html: [] };
    },
  };
  platforms.listmonk = {
    provider: listmonk,
    async publish(payload) {
      const context = providerContext({ auth: { accessToken: lm.token, internalId: `2@${lm.url}`, data: { url: lm.url, username: lm.username } }, settings: { subject: payload, preview: payload, list: '3' } });
      await listmonk.publish!(context, { postId: 'p', text: asPublished(listmonk, payload), media: picture(lm.url, payload) });
      const { body } = lm.campaigns.at(-1)!;
      return { body: String(body.body), format: 'html', plain: [], html: [], subject: String(body.subject) } as Sent;
    },
  };
});

afterAll(async () => {
  await Promise.all([wp, md, dev, hn, lm].map((fake) => fake?.close()));
});

/** Go template actions that would run: every `{{` that is not the template's own literal `{{"{{"}}`. */
const goActions = (text: string) => text.replace(/\{\{"\{\{"\}\}/g, '').match(/\{\{/g) ?? [];

describe.each(['wordpress', 'medium', 'devto', 'hashnode', 'listmonk'])('%s: injection corpus', (name) => {
  it.each(CORPUS)('%s stays inert in the body and every field', async (_label, payload) => {
    const sent = await platforms[name].publish(payload);
    const body = sent.format === 'html' ? liveMarkup(sent.body) : markdownLiveMarkup(sent.body);
    expect(body, sent.body).toEqual([]);
    for (const html of sent.html) expect(liveMarkup(html), html).toEqual([]);
    for (const [typed, arrived] of sent.plain) expect(arrived).toBe(typed.trim());
    // What each platform itself would run.
    if (name === 'wordpress') expect(`${sent.body} ${sent.html.join(' ')}`).not.toMatch(/\[/);
    if (name === 'devto') {
      expect(sent.body).not.toMatch(/\{%|\{\{/);
      expect(sent.body).not.toMatch(/^---/);
    }
    if (name === 'hashnode') expect(sent.body).not.toMatch(/%\[/);
    if (name === 'listmonk') {
      expect(goActions(sent.body)).toEqual([]);
      expect(goActions((sent as Sent & { subject: string }).subject)).toEqual([]);
    }
  });
});

describe('what the corpus proves', () => {
  it('the checks see live markup where it is: unescaped HTML and Markdown are caught', () => {
    expect(liveMarkup('<p>ok</p><img src=x onerror=alert(1)>')).toEqual(['img[src=x]', 'img[onerror]']);
    expect(markdownLiveMarkup('[x](https://x.example) <script>alert(1)</script>')).toEqual(['<script>']);
    expect(goActions('{{"{{"}} a {{ .Subscriber.Email }}')).toEqual(['{{']);
  });

  it('an entity that decodes into a tag reaches WordPress as text, never as the tag', async () => {
    const sent = await platforms.wordpress.publish('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(sent.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(sent.html[0]).toBe('&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;');
  });
});
