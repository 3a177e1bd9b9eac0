// The round-trip corpus of issue 36 (test/helpers/corpus.ts) on the article platforms: each typed text is turned into
// content by the composer's own conversion (composedContent), stored as a post over REST, published against the
// platform's fake, and read back as its readers see it: the HTML page of WordPress and listmonk, the Markdown of Medium,
// DEV and Hashnode. An article page spaces its paragraphs its own way, so only the spacing between paragraphs may differ.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composedContent } from '../src/http/web/compose-text.js';
import { connect } from './fakes/articles.js';
import { startDevtoFake, type DevtoFake } from './fakes/devto.js';
import { startHashnodeFake, type HashnodeFake } from './fakes/hashnode.js';
import { startListmonkFake, type ListmonkFake } from './fakes/listmonk.js';
import { startMediumFake, type MediumFake } from './fakes/medium.js';
import { startWordPressFake, type WordPressFake } from './fakes/wordpress.js';
import { CORPUS, htmlReads, markdownReads, paragraphs } from './helpers/corpus.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { createPost, publishUntilSettled } from './helpers/posts.js';

let herald: Herald;
let wordpress: WordPressFake;
let medium: MediumFake;
let devto: DevtoFake;
let hashnode: HashnodeFake;
let listmonk: ListmonkFake;
const channels: Record<string, string> = {};

/** Per platform: the settings an article needs there, what the fake received of the newest one, and how its readers read it. */
const PLATFORMS: Record<string, { settings: Record<string, unknown>; received: () => string; reads: (received: string) => string }> = {
  wordpress: { settings: { __type: 'wordpress', title: 'Corpus', type: 'post' }, received: () => String(wordpress.posts.at(-1)!.body.content), reads: htmlReads },
  medium: {
    settings: { __type: 'medium', title: 'Corpus' },
    received: () => String(medium.posts.at(-1)!.body.content),
    // Medium shows the title Herald writes as the story's first heading as its title, above the text.
    reads: (text) => markdownReads(text.replace(/^# Corpus\n+/, '')),
  },
  devto: { settings: { __type: 'devto', title: 'Corpus' }, received: () => String(devto.articles.at(-1)!.article.body_markdown), reads: (text) => markdownReads(text) },
  hashnode: {
    settings: { __type: 'hashnode', title: 'Corpus', publication: '64a1f0c2e4b0a1b2c3d4e5aa', tags: [{ value: '56744721958ef13879b94cad', label: 'JavaScript' }] },
    received: () => String(hashnode.posts.at(-1)!.input.contentMarkdown),
    reads: (text) => markdownReads(text, { softBreaks: true }),
  },
  listmonk: { settings: { __type: 'listmonk', subject: 'Corpus', list: '3' }, received: () => String(listmonk.campaigns.at(-1)!.body.body), reads: htmlReads },
};

/** What each platform received of the formatting sample (the corpus's last), for the bold check. */
const formatted: Record<string, string> = {};

beforeAll(async () => {
  [wordpress, medium, devto, hashnode, listmonk] = await Promise.all([startWordPressFake(), startMediumFake(), startDevtoFake(), startHashnodeFake(), startListmonkFake()]);
  herald = await startHerald(
    { SOCIAL_ENDPOINTS: JSON.stringify({ medium: { api: medium.url }, devto: { api: devto.url }, hashnode: { gql: hashnode.url } }) },
    { guard: { allowLoopback: true } },
  );
  const fields: Record<string, Record<string, string>> = {
    wordpress: wordpress.fields(),
    medium: { integrationToken: medium.token },
    devto: { apiKey: devto.apiKey },
    hashnode: { accessToken: hashnode.token },
    listmonk: listmonk.fields(),
  };
  for (const [identifier, values] of Object.entries(fields)) {
    const response = await connect(herald, identifier, values);
    expect(response.status, `${identifier}: ${JSON.stringify(response.body)}`).toBe(200);
    channels[identifier] = response.body.id as string;
  }
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([wordpress, medium, devto, hashnode, listmonk].map((fake) => fake?.close()));
});

describe('what is typed in the composer is what the readers of each article platform see', () => {
  for (const sample of CORPUS) {
    it(`${sample.name}: compose, store, publish to ${Object.keys(PLATFORMS).join(', ')}`, async () => {
      const content = composedContent(sample.typed);
      const problems: string[] = [];
      for (const [platform, { settings, received, reads }] of Object.entries(PLATFORMS)) {
        const rootId = await createPost(herald, channels[platform], [content], { settings, type: 'now', allowDuplicate: true });
        const { outcome } = await publishUntilSettled(herald, rootId);
        if (outcome.kind !== 'published') {
          problems.push(`${platform}: ${JSON.stringify(outcome)}`);
          continue;
        }
        if (sample === CORPUS.at(-1)) formatted[platform] = received();
        const seen = paragraphs(reads(received()));
        if (seen !== paragraphs(sample.reads)) problems.push(`${platform} shows ${JSON.stringify(seen)} (sent ${JSON.stringify(received())})`);
      }
      expect(problems, `expected ${JSON.stringify(paragraphs(sample.reads))}`).toEqual([]);
    }, 120_000);
  }

  it('sends bold as each shows it: <strong> on the HTML platforms, ** on the Markdown ones', () => {
    const bold = (platform: string) => (['wordpress', 'listmonk'].includes(platform) ? '<strong>Sale</strong>' : '**Sale**');
    expect(Object.fromEntries(Object.entries(formatted).map(([platform, text]) => [platform, text.includes(bold(platform))]))).toEqual(
      Object.fromEntries(Object.keys(PLATFORMS).map((platform) => [platform, true])),
    );
  });
});
