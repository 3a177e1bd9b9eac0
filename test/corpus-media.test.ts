// The round-trip corpus of issue 36 (test/helpers/corpus.ts) on Meta's, Google's, LinkedIn's pages and the media
// platforms: each typed text is turned into content by the composer's own conversion (composedContent), stored as a
// post over REST with the sample media the platform needs, published against its fake, and read back as its readers see
// it: a plain-text caption, description or message, shown exactly. The chat and community platforms are
// test/corpus-platforms.test.ts, the article platforms test/corpus-articles.test.ts, the compose form itself
// test/console-corpus.test.ts.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composedContent } from '../src/http/web/compose-text.js';
import { startDribbbleFake, type DribbbleFake } from './fakes/dribbble.js';
import { startFacebookFake } from './fakes/facebook.js';
import { startGmbFake, type GmbFake } from './fakes/gmb.js';
import { startLinkedinFake, type LinkedinFake } from './fakes/linkedin.js';
import { startPinterestFake, type PinterestFake } from './fakes/pinterest.js';
import { startThreadsFake, type ThreadsFake } from './fakes/threads.js';
import { startTikTokFake } from './fakes/tiktok.js';
import { startYouTubeFake } from './fakes/youtube.js';
import { CORPUS, letters } from './helpers/corpus.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { acceptedSamples, goodMp4, uploadAll } from './helpers/media-samples.js';
import { connectOAuthChannel } from './helpers/oauth-channel.js';
import { createPost, publishUntilSettled, submitPost } from './helpers/posts.js';

type Started<T extends () => Promise<unknown>> = Awaited<ReturnType<T>>;
let herald: Herald;
let meta: Started<typeof startFacebookFake>;
let threads: ThreadsFake;
let youtube: Started<typeof startYouTubeFake>;
let tiktok: Started<typeof startTikTokFake>;
let pinterest: PinterestFake;
let dribbble: DribbbleFake;
let gmb: GmbFake;
let linkedin: LinkedinFake;
const channels: Record<string, string> = {};
let media: Record<'jpeg' | 'square' | 'shot' | 'mp4', { id: string; path: string }>;

const picture = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 60 } } }).png().toBuffer();

/** Per platform: the settings and media a post needs there, and the text its readers see of the newest one. */
const PLATFORMS: Record<string, { settings: () => Record<string, unknown>; media?: () => { id: string; path: string }[]; reads: () => string; refuses?: RegExp }> = {
  facebook: { settings: () => ({ __type: 'facebook' }), reads: () => meta.posts.at(-1)!.message ?? '' },
  instagram: { settings: () => ({ __type: 'instagram', post_type: 'post' }), media: () => [media.jpeg], reads: () => meta.media.at(-1)!.caption ?? '' },
  'instagram-standalone': { settings: () => ({ __type: 'instagram-standalone', post_type: 'post' }), media: () => [media.jpeg], reads: () => meta.media.at(-1)!.caption ?? '' },
  threads: { settings: () => ({ __type: 'threads' }), reads: () => threads.posts.at(-1)!.text },
  // YouTube refuses < and > in a description: a text with them is refused when the post is made, saying so, never mangled.
  youtube: {
    settings: () => ({ __type: 'youtube', title: 'Corpus', type: 'public' }),
    media: () => [media.mp4],
    reads: () => youtube.sessions.at(-1)!.metadata.snippet.description,
    refuses: /[<>]/,
  },
  tiktok: {
    settings: () => ({ __type: 'tiktok', content_posting_method: 'DIRECT_POST', privacy_level: 'PUBLIC_TO_EVERYONE', duet: false, stitch: true, comment: true, autoAddMusic: 'no', brand_content_toggle: false, brand_organic_toggle: false }),
    media: () => [media.mp4],
    reads: () => tiktok.posts.at(-1)!.postInfo.title,
  },
  pinterest: { settings: () => ({ __type: 'pinterest', board: pinterest.boards[0].id }), media: () => [media.square], reads: () => pinterest.pins.at(-1)!.description ?? '' },
  // A multipart form sends each line break as \r\n (the form encoding's own rule): one line break to a reader.
  dribbble: { settings: () => ({ __type: 'dribbble', title: 'Corpus' }), media: () => [media.shot], reads: () => (dribbble.shots.at(-1)!.description ?? '').replace(/\r\n/g, '\n') },
  gmb: { settings: () => ({ __type: 'gmb' }), reads: () => gmb.posts.at(-1)!.body.summary ?? '' },
  'linkedin-page': { settings: () => ({ __type: 'linkedin-page' }), reads: () => linkedin.posts.at(-1)!.text },
};

/** What each platform received of the formatting sample (the corpus's last), for the bold check. */
const formatted: Record<string, string> = {};

/** Connects over OAuth, choosing the page, account or location when the platform asks for one. */
async function connect(identifier: string, choice?: string) {
  const connected = await connectOAuthChannel(herald, identifier);
  if (connected.inBetweenSteps) {
    const chosen = await herald.rest('POST', `/integrations/${connected.integrationId}/accounts`, { id: choice });
    expect(chosen.status, `${identifier}: ${JSON.stringify(chosen.body)}`).toBe(200);
  }
  channels[identifier] = connected.integrationId;
}

beforeAll(async () => {
  [meta, threads, youtube, tiktok, pinterest, dribbble, gmb, linkedin] = await Promise.all([
    startFacebookFake(), startThreadsFake(), startYouTubeFake(), startTikTokFake(), startPinterestFake(), startDribbbleFake(), startGmbFake(), startLinkedinFake(),
  ] as const);
  const metaEnvironment = meta.environment();
  const linkedinEnvironment = linkedin.heraldEnvironment();
  herald = await startHerald(
    {
      ...metaEnvironment,
      ...linkedinEnvironment,
      THREADS_CLIENT_ID: threads.oauth.clientId, THREADS_CLIENT_SECRET: threads.oauth.clientSecret,
      YOUTUBE_CLIENT_ID: youtube.authority.clientId, YOUTUBE_CLIENT_SECRET: youtube.authority.clientSecret,
      TIKTOK_CLIENT_ID: tiktok.authority.clientId, TIKTOK_CLIENT_SECRET: tiktok.authority.clientSecret,
      PINTEREST_CLIENT_ID: pinterest.authority.clientId, PINTEREST_CLIENT_SECRET: pinterest.authority.clientSecret,
      DRIBBBLE_CLIENT_ID: dribbble.authority.clientId, DRIBBBLE_CLIENT_SECRET: dribbble.authority.clientSecret,
      GMB_CLIENT_ID: gmb.authority.clientId, GMB_CLIENT_SECRET: gmb.authority.clientSecret,
      PUBLISH_RECHECK_MAX_SECONDS: '1',
      SOCIAL_ENDPOINTS: JSON.stringify({
        ...JSON.parse(metaEnvironment.SOCIAL_ENDPOINTS ?? '{}'),
        ...JSON.parse(linkedinEnvironment.SOCIAL_ENDPOINTS),
        threads: { authorize: threads.url, graph: threads.url },
        youtube: youtube.endpoints, tiktok: tiktok.endpoints, pinterest: pinterest.endpoints, dribbble: dribbble.endpoints, gmb: gmb.endpoints,
      }),
    },
    { guard: { allowLoopback: true } },
  );
  const jpeg = acceptedSamples().find((sample) => sample.type === 'image/jpeg')!.bytes;
  media = await uploadAll(herald, { jpeg: [jpeg, 'loaf.jpg'], square: [await picture(300, 300), 'pin.png'], shot: [await picture(400, 300), 'shot.png'], mp4: [goodMp4(), 'clip.mp4'] });
  await connect('facebook', meta.pages[0].id);
  await connect('instagram', meta.pages[0].instagram!.id);
  await connect('instagram-standalone');
  await connect('threads');
  await connect('youtube', youtube.channels[0].id);
  await connect('tiktok');
  await connect('pinterest');
  await connect('dribbble');
  await connect('gmb', 'accounts/111/locations/1001');
  await connect('linkedin-page', 'urn:li:organization:101');
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([meta, threads, youtube, tiktok, pinterest, dribbble, gmb, linkedin].map((fake) => fake?.close()));
});

describe('what is typed in the composer is what the readers of each page and media platform see', () => {
  for (const sample of CORPUS) {
    it(`${sample.name}: compose, store, publish to ${Object.keys(PLATFORMS).join(', ')}`, async () => {
      const content = composedContent(sample.typed);
      const problems: string[] = [];
      for (const [platform, entry] of Object.entries(PLATFORMS)) {
        const item = { content, image: entry.media?.() ?? [] };
        if (entry.refuses?.test(sample.reads)) {
          const refused = await submitPost(herald, channels[platform], [item], { settings: entry.settings(), type: 'now', allowDuplicate: true });
          if (refused.status !== 400 || !/cannot contain < or >/.test(refused.body.message)) problems.push(`${platform} was not refused: ${refused.status} ${JSON.stringify(refused.body)}`);
          continue;
        }
        const rootId = await createPost(herald, channels[platform], [item], { settings: entry.settings(), type: 'now', allowDuplicate: true });
        const { outcome } = await publishUntilSettled(herald, rootId);
        if (outcome.kind !== 'published') {
          problems.push(`${platform}: ${JSON.stringify(outcome)}`);
          continue;
        }
        if (sample === CORPUS.at(-1)) formatted[platform] = entry.reads();
        const seen = letters(entry.reads());
        if (seen !== sample.reads) problems.push(`${platform} shows ${JSON.stringify(seen)}`);
      }
      expect(problems, `expected ${JSON.stringify(sample.reads)}`).toEqual([]);
    }, 120_000);
  }

  it('sends bold as Unicode bold letters to each of them (YouTube refused the sample with < in it)', () => {
    const expected = Object.fromEntries(Object.keys(PLATFORMS).filter((platform) => platform !== 'youtube').map((platform) => [platform, true]));
    expect(Object.fromEntries(Object.entries(formatted).map(([platform, text]) => [platform, text.startsWith('𝗦𝗮𝗹𝗲')]))).toEqual(expected);
  });
});
