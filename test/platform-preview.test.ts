// The platform preview (src/http/web/platform-preview.ts) draws validatePost's answer (POST /posts/validate, real
// Postgres, real HTTP) as each platform shows it: Telegram's formatting as formatting, what a platform cannot show named,
// media with alt text and a video's poster, a thread as a thread, Reddit's title; and every string a client sends
// escaped (an injection corpus), checked by parsing the fragment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument, DomUtils } from 'htmlparser2';
import type { Element } from 'domhandler';
import { startHerald, type Herald } from './helpers/harness.js';
import { tinyPng } from './helpers/provider-context.js';
import { uploaded } from './helpers/media-samples.js';
import { findProvider } from '../providers/index.js';
import { saveConnectedAccount } from '../tools/internal/integrations.js';
import { platformPreview, PLATFORM_PREVIEW_STYLE, type EntryPreview } from '../src/http/web/platform-preview.js';

let herald: Herald;
const channels: Record<string, string> = {};
const date = new Date(Date.now() + 5 * 86_400_000).toISOString();

async function connect(identifier: string, name: string): Promise<string> {
  const integration = await saveConnectedAccount(herald.services.orm.em.fork(), herald.services, herald.organizationId, findProvider(identifier)!, {
    internalId: `${identifier}-1`,
    name,
    profile: name.toLowerCase(),
    accessToken: 'token',
    refreshToken: 'refresh',
    data: { username: 'herald', chatId: '-100123' },
  });
  return integration.id;
}

type Image = { id: string; path: string; alt?: string; thumbnail?: string };
async function entryOf(identifier: string, contents: string[], options: { settings?: Record<string, unknown>; image?: Image[] } = {}): Promise<EntryPreview> {
  const response = await herald.rest('POST', '/posts/validate', {
    type: 'schedule',
    date,
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channels[identifier] }, value: contents.map((content, index) => ({ content, image: index === 0 ? (options.image ?? []) : [] })), settings: options.settings ?? {} }],
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.entries[0] as EntryPreview;
}

const draw = (entry: EntryPreview) => platformPreview(entry, { zone: 'Europe/Berlin' }).value;
const elements = (fragment: string) => DomUtils.findAll(() => true, parseDocument(fragment).children) as Element[];
const textOf = (fragment: string) => DomUtils.textContent(parseDocument(fragment));

beforeAll(async () => {
  herald = await startHerald();
  for (const [identifier, name] of [['telegram', 'Herald on Telegram'], ['linkedin', 'Herald on LinkedIn'], ['x', 'Herald on X'], ['bluesky', 'Herald on Bluesky'], ['instagram', 'Herald on Instagram'], ['reddit', 'Herald on Reddit'], ['devto', 'Herald on DEV']]) {
    channels[identifier] = await connect(identifier, name);
  }
});

afterAll(async () => {
  await herald?.stop();
});

describe('platformPreview', () => {
  it('Telegram: bold and links drawn as formatting, not as tags; a typed & shows as &', async () => {
    const entry = await entryOf('telegram', ['<p><strong>Release day.</strong> Fish &amp; chips at <a href="https://example.com/menu">the menu</a></p>']);
    const fragment = draw(entry);
    const strong = elements(fragment).find((element) => element.name === 'strong');
    expect(strong && DomUtils.textContent(strong)).toBe('Release day.');
    const link = elements(fragment).find((element) => element.name === 'a');
    expect(link?.attribs).toMatchObject({ href: 'https://example.com/menu', rel: 'noopener noreferrer nofollow' });
    const text = textOf(fragment);
    expect(text).toContain('Fish & chips');
    expect(text).not.toContain('<strong>');
    expect(text).not.toContain('&amp;');
    expect(text).toContain(`${entry.items[0].length} / 4096 characters`);
  });

  it('LinkedIn: bold, headings and lists it cannot show are named with what is sent instead', async () => {
    const entry = await entryOf('linkedin', ['<h2>News</h2><p><strong>Big</strong> day</p><ul><li>one</li><li>two</li></ul>']);
    expect(entry.items[0].formatting).toEqual([
      'LinkedIn shows no bold: sent as Unicode bold letters (𝗯𝗼𝗹𝗱, 2 characters each; screen readers may spell them out)',
      'LinkedIn shows no headings: sent as plain lines',
      'LinkedIn shows no lists: each item sent as a line starting with "- "',
    ]);
    const fragment = draw(entry);
    expect(textOf(fragment)).toContain('LinkedIn shows no bold');
    expect(fragment).toContain('pp-linkedin');
    expect(textOf(fragment)).toContain('- one');
  });

  it('Telegram names only what it cannot show (a heading), not its bold', async () => {
    const entry = await entryOf('telegram', ['<h1>Title</h1><p><strong>bold</strong></p>']);
    expect(entry.items[0].formatting).toEqual(['Telegram shows no headings: sent as plain lines']);
  });

  it('X: a thread drawn as a thread, each item with its weighted length', async () => {
    const entry = await entryOf('x', ['<p>First 日本</p>', '<p>Second</p>'], { settings: { who_can_reply_post: 'everyone' } });
    const fragment = draw(entry);
    const posts = elements(fragment).filter((element) => element.name === 'article');
    expect(posts.map((post) => post.attribs['aria-label'])).toEqual(['Post of 2 on X', 'Reply 1 of 2 on X']);
    expect(fragment).toContain('pp-thread');
    expect(textOf(fragment)).toContain(`${entry.items[0].length} / 280 weighted characters (X counting)`);
    expect(entry.items[0].length).toBe(10);
  });

  it('Bluesky over its limit is marked too long in graphemes', async () => {
    const entry = await entryOf('bluesky', ['a'.repeat(301)]);
    const fragment = draw(entry);
    expect(textOf(fragment)).toContain('301 / 300 graphemes (what readers see as characters) — too long');
    expect(fragment).toContain('pp-over');
  });

  it('Instagram: the picture first with its alt text, a video with its poster, the caption under them', async () => {
    const picture = await uploaded(herald, tinyPng(), 'dot.png');
    const poster = await uploaded(herald, tinyPng(), 'poster.png');
    const entry = await entryOf('instagram', ['<p>Caption</p>'], {
      settings: { post_type: 'post' },
      image: [{ ...picture, alt: 'A red dot' }, { id: 'video-1', path: 'https://example.com/clip.mp4', thumbnail: poster.path }],
    });
    expect(entry.items[0].media[0].alt).toBe('A red dot');
    expect(entry.items[0].media[1]).toMatchObject({ kind: 'video', thumbnail: poster.path });
    const fragment = draw(entry);
    const images = elements(fragment).filter((element) => element.name === 'img');
    expect(images.map((image) => [image.attribs.src, image.attribs.alt])).toEqual([[picture.path, 'A red dot'], [poster.path, '']]);
    expect(fragment.indexOf('pp-media')).toBeLessThan(fragment.indexOf('Caption'));
    expect(textOf(fragment)).toContain('Alt text: A red dot');
  });

  it('Reddit: the title above the body; a platform without a look of its own gets the generic card', async () => {
    const reddit = draw(await entryOf('reddit', ['Body text'], { settings: { subreddit: [{ value: { subreddit: 'test', title: 'The title', type: 'self' } }], title: 'The title' } }));
    expect(reddit).toContain('pp-reddit');
    expect(textOf(reddit).indexOf('The title')).toBeLessThan(textOf(reddit).indexOf('Body text'));
    const generic = draw(await entryOf('devto', ['# Article\n\nText'], { settings: { title: 'Article' } }));
    expect(generic).toContain('pp-generic');
    expect(textOf(generic)).toContain('DEV');
  });

  it('escapes every string a client sends: script, event handlers, javascript: links, bidi overrides', async () => {
    const corpus = [
      '<script>alert(1)</script>',
      '"><img src=x onerror=alert(2)>',
      "'onerror='alert(3)",
      '<a href="javascript:alert(4)">click</a>',
      '<a href=" JaVaScRiPt:alert(5)">again</a>',
      'evil \u202Egnp.exe\u202C text',
      '</bdi></div><style>*{display:none}</style>',
      // Entities a plain-text platform decodes: the visible text then holds real angle brackets.
      '<p>&lt;script&gt;alert(10)&lt;/script&gt; &lt;img src=x onerror=alert(11)&gt; &lt;a href="javascript:alert(12)"&gt;x&lt;/a&gt;</p>',
    ].join(' ');
    const image = await uploaded(herald, tinyPng(), 'x.png');
    for (const identifier of ['telegram', 'linkedin', 'x', 'instagram', 'reddit', 'devto']) {
      const entry = await entryOf(identifier, [corpus, corpus], {
        image: [{ ...image, alt: '"><script>alert(6)</script>' }],
        settings: { title: '<script>alert(7)</script>', who_can_reply_post: 'everyone', post_type: 'post' },
      });
      const fragment = draw({ ...entry, channel: '<img src=x onerror=alert(8)>', warnings: ['<script>alert(9)</script>'] });
      const all = elements(fragment);
      expect(all.filter((element) => ['script', 'style', 'iframe', 'object'].includes(element.name)), identifier).toEqual([]);
      for (const element of all) {
        expect(Object.keys(element.attribs).filter((name) => name.startsWith('on') || name === 'style'), identifier).toEqual([]);
        for (const name of ['href', 'src']) if (element.attribs[name] !== undefined) expect(element.attribs[name], identifier).toMatch(/^https?:\/\//);
      }
      // Only the renderer's own images: the corpus's <img> is text.
      expect(all.filter((element) => element.name === 'img').every((element) => element.attribs.src === image.path), identifier).toBe(true);
      // The override stays inside the text's own isolated element.
      const holder = all.find((element) => element.children.some((child) => child.type === 'text' && (child as unknown as { data: string }).data.includes('\u202E')));
      expect(holder, identifier).toBeDefined();
      expect(holder!.attribs.dir === 'auto' || holder!.name === 'bdi' || all.some((element) => element.attribs.dir === 'auto' && DomUtils.findOne((candidate) => candidate === holder, element.children)), identifier).toBe(true);
    }
  });

  it('the stylesheet holds only pp- rules (no url(), no import): safe for the console and the apps under their CSPs', () => {
    expect(PLATFORM_PREVIEW_STYLE).not.toMatch(/url\(|@import/);
    for (const selector of PLATFORM_PREVIEW_STYLE.match(/(^|\})\s*([^{]+)\{/g) ?? []) expect(selector).toMatch(/\.pp/);
  });
});
