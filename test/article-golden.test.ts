// Issue 22: article bodies keep their structure. One rich article (test/fixtures/articles/rich.md: headings, emphasis,
// ordered and nested lists, a quote, code with its language, inline code, a table, a picture, a rule, links) is created
// through Herald's REST API for a channel of each article platform and published by Herald's publishing job; what each
// fake platform received is compared with its golden file (test/fixtures/articles/rich.<platform>.golden). Regenerate a
// golden file with UPDATE_GOLDEN=1 and read the diff before committing it. The HTML article of issue 22 (ordinary article
// HTML that WordPress 6.1 received stripped, words run together) round-trips through the WordPress fake intact.
import { readFileSync, writeFileSync } from 'node:fs';
import { Parser } from 'htmlparser2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from './fakes/articles.js';
import { startDevtoFake, type DevtoFake } from './fakes/devto.js';
import { startHashnodeFake, type HashnodeFake } from './fakes/hashnode.js';
import { startListmonkFake, type ListmonkFake } from './fakes/listmonk.js';
import { startMediumFake, type MediumFake } from './fakes/medium.js';
import { startWordPressFake, type WordPressFake } from './fakes/wordpress.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { createPost, publishUntilSettled } from './helpers/posts.js';

const fixture = (name: string) => new URL(`./fixtures/articles/${name}`, import.meta.url);
const RICH = readFileSync(fixture('rich.md'), 'utf8');

let herald: Herald;
let wp: WordPressFake;
let md: MediumFake;
let dev: DevtoFake;
let hn: HashnodeFake;
let lm: ListmonkFake;
const channels: Record<string, string> = {};

beforeAll(async () => {
  [wp, md, dev, hn, lm] = await Promise.all([startWordPressFake(), startMediumFake(), startDevtoFake(), startHashnodeFake(), startListmonkFake()]);
  herald = await startHerald(
    { SOCIAL_ENDPOINTS: JSON.stringify({ medium: { api: md.url }, devto: { api: dev.url }, hashnode: { gql: hn.url } }) },
    { guard: { allowLoopback: true } },
  );
  const connected = await Promise.all([
    connect(herald, 'wordpress', wp.fields()),
    connect(herald, 'medium', { integrationToken: md.token }),
    connect(herald, 'devto', { apiKey: dev.apiKey }),
    connect(herald, 'hashnode', { accessToken: hn.token }),
    connect(herald, 'listmonk', lm.fields()),
  ]);
  for (const [index, name] of ['wordpress', 'medium', 'devto', 'hashnode', 'listmonk'].entries()) {
    expect(connected[index].status, JSON.stringify(connected[index].body)).toBe(200);
    channels[name] = connected[index].body.id;
  }
});

afterAll(async () => {
  await herald?.stop();
  await Promise.all([wp, md, dev, hn, lm].map((fake) => fake?.close()));
});

const SETTINGS: Record<string, Record<string, unknown>> = {
  wordpress: { __type: 'wordpress', title: 'Why we moved', type: 'post' },
  medium: { __type: 'medium', title: 'Why we moved' },
  devto: { __type: 'devto', title: 'Why we moved' },
  hashnode: { __type: 'hashnode', title: 'Why we moved', publication: '64a1f0c2e4b0a1b2c3d4e5aa', tags: [{ value: '56744721958ef13879b94cad', label: 'JavaScript' }] },
  listmonk: { __type: 'listmonk', subject: 'Why we moved', list: '3' },
};

/** The body each fake received for the last post. */
const RECEIVED: Record<string, () => string> = {
  wordpress: () => String(wp.posts.at(-1)!.body.content),
  medium: () => String(md.posts.at(-1)!.body.content),
  devto: () => String(dev.articles.at(-1)!.article.body_markdown),
  hashnode: () => String(hn.posts.at(-1)!.input.contentMarkdown),
  listmonk: () => String(lm.campaigns.at(-1)!.body.body),
};

async function publish(platform: string, content: string): Promise<string> {
  const rootId = await createPost(herald, channels[platform], [content], { settings: SETTINGS[platform], type: 'now', allowDuplicate: true });
  const { outcome } = await publishUntilSettled(herald, rootId);
  expect(outcome.kind, JSON.stringify(outcome)).toBe('published');
  return RECEIVED[platform]();
}

describe.each(['wordpress', 'medium', 'devto', 'hashnode', 'listmonk'])('%s: the rich sample article', (platform) => {
  it('arrives as the golden file says', async () => {
    const received = await publish(platform, RICH);
    const golden = fixture(`rich.${platform}.golden`);
    if (process.env.UPDATE_GOLDEN) writeFileSync(golden, `${received}\n`);
    expect(received).toBe(readFileSync(golden, 'utf8').replace(/\n$/, ''));
  });
});

/** The elements of an HTML body, in document order, and its text with the blocks it sits in. */
function structureOf(html: string): { tags: string[]; text: string } {
  const tags: string[] = [];
  let text = '';
  const blocks = new Set(['p', 'li', 'blockquote', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'td', 'th', 'tr', 'figure']);
  const parser = new Parser({
    onopentag: (name) => tags.push(name),
    ontext: (chunk) => (text += chunk),
    onclosetag: (name) => (text += blocks.has(name) ? '|' : ''),
  }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  return { tags, text };
}

describe('the HTML article of issue 22 on WordPress', () => {
  it('keeps em, ol, blockquote, pre/code with its language, h4 and table, and never runs words together', async () => {
    const received = await publish('wordpress', readFileSync(fixture('issue-22.html'), 'utf8'));
    expect(received).toBe(
      '<p>Some <em>quoted</em> words.</p><ol><li>first</li><li>second</li></ol><blockquote><p>quoted</p></blockquote>' +
        '<pre><code class="language-js">const x = 1 &lt; 2;</code></pre><h4>h4 title</h4><table><tr><td>cell</td><td>other</td></tr></table>',
    );
    const { tags, text } = structureOf(received);
    expect(tags).toEqual(['p', 'em', 'ol', 'li', 'li', 'blockquote', 'p', 'pre', 'code', 'h4', 'table', 'tr', 'td', 'td']);
    expect(text).toBe('Some quoted words.|first|second|quoted||const x = 1 < 2;|h4 title|cell|other||');
  });

  it('keeps the rich sample\'s structure on WordPress: lists in lists, the quote, code, the table and the picture', async () => {
    const { tags } = structureOf(await publish('wordpress', RICH));
    for (const tag of ['h2', 'h3', 'h4', 'em', 'strong', 'ol', 'ul', 'blockquote', 'pre', 'code', 'table', 'thead', 'th', 'td', 'img', 'hr', 'a']) expect(tags).toContain(tag);
    expect(tags.indexOf('ul')).toBeGreaterThan(tags.indexOf('ol'));
  });
});
