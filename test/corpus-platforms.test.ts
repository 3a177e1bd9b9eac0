// The round-trip corpus of issue 36 (test/helpers/corpus.ts) on the chat and community platforms: each typed text is
// turned into content by the composer's own conversion (composedContent), stored as a post over REST, published against
// the platform's fake, and read back as that platform's readers see it (Markdown on Discord and Whop, Slack's mrkdwn,
// plain text elsewhere). Plain-text platforms must show the text exactly; Markdown and mrkdwn readers may space
// paragraphs their own way. The compose form itself is test/console-corpus.test.ts; Meta, Google and the media
// platforms are test/corpus-media.test.ts; the article platforms test/corpus-articles.test.ts.
import * as nip19 from 'nostr-tools/nip19';
import { generateSecretKey } from 'nostr-tools/pure';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composedContent } from '../src/http/web/compose-text.js';
import { startDiscordFake } from './fakes/discord.js';
import { startKickFake } from './fakes/kick.js';
import { startLemmyFake } from './fakes/lemmy.js';
import { startMoltbookFake } from './fakes/moltbook.js';
import { startNostrRelay, type NostrRelayFake } from './fakes/nostr.js';
import { startRedditFake } from './fakes/reddit.js';
import { startSkoolFake } from './fakes/skool.js';
import { startSlackFake } from './fakes/slack.js';
import { startTwitchFake } from './fakes/twitch.js';
import { startVkFake } from './fakes/vk.js';
import { startWarpcastFake, type WarpcastFake } from './fakes/warpcast.js';
import { startWhopFake } from './fakes/whop.js';
import { CORPUS, decodeReferences, letters, markdownReads, paragraphs } from './helpers/corpus.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { connectOAuthChannel } from './helpers/oauth-channel.js';
import { createPost, publishUntilSettled } from './helpers/posts.js';

type Awaited<T> = T extends Promise<infer U> ? U : T;
let herald: Herald;
let discord: Awaited<ReturnType<typeof startDiscordFake>>;
let slack: Awaited<ReturnType<typeof startSlackFake>>;
let twitch: Awaited<ReturnType<typeof startTwitchFake>>;
let kick: Awaited<ReturnType<typeof startKickFake>>;
let vk: Awaited<ReturnType<typeof startVkFake>>;
let whop: Awaited<ReturnType<typeof startWhopFake>>;
let lemmy: Awaited<ReturnType<typeof startLemmyFake>>;
let reddit: Awaited<ReturnType<typeof startRedditFake>>;
let moltbook: Awaited<ReturnType<typeof startMoltbookFake>>;
let skool: Awaited<ReturnType<typeof startSkoolFake>>;
let warpcast: WarpcastFake;
let relay: NostrRelayFake;
const channels: Record<string, string> = {};

/** Slack's mrkdwn as Slack shows it: `<url>` and `<url|text>` links, `&amp;` `&lt;` `&gt;`, `*bold*`. */
const mrkdwnReads = (text: string) =>
  text
    .replace(/<([^<>|]+)\|([^<>]+)>/g, (_, url: string, label: string) => `${label} (${url})`)
    .replace(/<([^<>]+)>/g, '$1')
    .replace(/&(amp|lt|gt);/g, (whole) => decodeReferences(whole));

const commonMark = (text: string) => markdownReads(text, { softBreaks: true });

const PLAIN_BOLD = '𝗦𝗮𝗹𝗲';

interface Platform {
  settings: () => Record<string, unknown>;
  /** What the fake received of the newest post. */
  received: () => string;
  /** How the platform's readers read it: Markdown and mrkdwn may space paragraphs their own way; plain text is shown exactly. */
  reads?: { markup: (text: string) => string };
  /** How "Sale" in bold reaches the platform. */
  bold: string;
}

/** Per platform: the settings a post needs there, what its fake received, how its readers read it, and its bold. */
const PLATFORMS: Record<string, Platform> = {
  discord: { settings: () => ({ __type: 'discord', channel: discord.channel('general').id }), received: () => discord.messages.at(-1)!.content, reads: { markup: markdownReads }, bold: '**Sale**' },
  slack: {
    settings: () => ({ __type: 'slack', channel: slack.channel('random').id }),
    received: () => slack.messages.at(-1)!.blocks!.map((block) => block.text!.text).join('\n\n'),
    reads: { markup: mrkdwnReads },
    bold: PLAIN_BOLD,
  },
  twitch: { settings: () => ({ __type: 'twitch' }), received: () => twitch.messages.at(-1)!.message, bold: PLAIN_BOLD },
  kick: { settings: () => ({ __type: 'kick' }), received: () => kick.messages.at(-1)!.content, bold: PLAIN_BOLD },
  vk: { settings: () => ({ __type: 'vk' }), received: () => vk.posts.at(-1)!.message, bold: PLAIN_BOLD },
  whop: {
    settings: () => ({ __type: 'whop', company: 'biz_herald', experience: 'exp_announce', title: 'Corpus' }),
    received: () => whop.posts.at(-1)!.content,
    reads: { markup: markdownReads },
    bold: '**Sale**',
  },
  // Lemmy and Reddit show a post's body as Markdown, CommonMark's way (lemmy-ui's markdown-it without `breaks`).
  lemmy: {
    settings: () => ({ __type: 'lemmy', subreddit: [{ value: { subreddit: 'selfhosted', id: '999', title: 'Corpus' } }] }),
    received: () => lemmy.posts.at(-1)!.body,
    reads: { markup: commonMark },
    bold: PLAIN_BOLD,
  },
  reddit: {
    settings: () => ({ __type: 'reddit', subreddit: [{ value: { type: 'self', is_flair_required: false, flair: null, url: '', subreddit: 'r/typescript', title: 'Corpus' } }] }),
    received: () => reddit.submissions.at(-1)!.text,
    reads: { markup: commonMark },
    bold: PLAIN_BOLD,
  },
  // One post every 30 minutes on Moltbook: the fake forgets the last one before each. Moltbook shows content as Markdown.
  moltbook: {
    settings: () => (moltbook.resetRateLimits(), { __type: 'moltbook', submolt: 'general' }),
    received: () => moltbook.posts.at(-1)!.content,
    reads: { markup: markdownReads },
    bold: PLAIN_BOLD,
  },
  skool: { settings: () => ({ __type: 'skool', group: 'group-1', label: 'label-2', title: 'Corpus' }), received: () => skool.posts.at(-1)!.content, bold: PLAIN_BOLD },
  warpcast: { settings: () => ({ __type: 'warpcast' }), received: () => warpcast.casts.at(-1)!.text, bold: PLAIN_BOLD },
  nostr: { settings: () => ({ __type: 'nostr' }), received: () => relay.events.at(-1)!.content, bold: PLAIN_BOLD },
};

/** What each platform received of the formatting sample (the corpus's last), for the bold check. */
const formatted: Record<string, string> = {};

beforeAll(async () => {
  [discord, slack, twitch, kick, vk, whop, lemmy, reddit, moltbook, skool, warpcast, relay] = await Promise.all([
    startDiscordFake(), startSlackFake(), startTwitchFake(), startKickFake(), startVkFake(), startWhopFake(), startLemmyFake(), startRedditFake(),
    startMoltbookFake(), startSkoolFake(), startWarpcastFake(), startNostrRelay(),
  ] as const);
  herald = await startHerald(
    {
      DISCORD_CLIENT_ID: discord.authority.clientId, DISCORD_CLIENT_SECRET: discord.authority.clientSecret, DISCORD_BOT_TOKEN: discord.botToken,
      SLACK_CLIENT_ID: slack.authority.clientId, SLACK_CLIENT_SECRET: slack.authority.clientSecret,
      TWITCH_CLIENT_ID: twitch.authority.clientId, TWITCH_CLIENT_SECRET: twitch.authority.clientSecret,
      KICK_CLIENT_ID: kick.authority.clientId, KICK_CLIENT_SECRET: kick.authority.clientSecret,
      VK_CLIENT_ID: vk.authority.clientId,
      WHOP_CLIENT_ID: whop.authority.clientId,
      REDDIT_CLIENT_ID: reddit.authority.clientId, REDDIT_CLIENT_SECRET: reddit.authority.clientSecret,
      WARPCAST_CLIENT_ID: warpcast.clientId, WARPCAST_CLIENT_SECRET: warpcast.apiKey,
      PUBLISH_RECHECK_MAX_SECONDS: '1',
      SOCIAL_ENDPOINTS: JSON.stringify({
        discord: discord.endpoints, slack: slack.endpoints, twitch: twitch.endpoints, kick: kick.endpoints, vk: vk.endpoints, whop: whop.endpoints,
        reddit: reddit.endpoints, moltbook: moltbook.endpoints, skool: skool.endpoints, warpcast: { api: warpcast.url, web: 'https://farcaster.example' },
      }),
    },
    { guard: { allowLoopback: true } },
  );
  for (const identifier of ['discord', 'slack', 'twitch', 'kick', 'vk', 'whop', 'reddit']) channels[identifier] = (await connectOAuthChannel(herald, identifier)).integrationId;
  const connect = async (identifier: string, fields: Record<string, string>) => {
    const response = await herald.rest('POST', `/integrations/${identifier}/connect`, fields);
    expect(response.status, `${identifier}: ${JSON.stringify(response.body)}`).toBe(200);
    channels[identifier] = response.body.id as string;
  };
  await connect('lemmy', { instanceUrl: lemmy.url, username: 'herald', password: lemmy.password });
  await connect('moltbook', { apiKey: moltbook.apiKey });
  await connect('skool', { authToken: skool.authToken, clientId: skool.clientId });
  await connect('warpcast', { signerUuid: warpcast.signerUuid, fid: String(warpcast.fid) });
  await connect('nostr', { privateKey: nip19.nsecEncode(generateSecretKey()), relays: relay.url });
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([discord, slack, twitch, kick, vk, whop, lemmy, reddit, moltbook, skool, warpcast, relay].map((fake) => fake?.close()));
});

describe('what is typed in the composer is what the readers of each chat and community platform see', () => {
  for (const sample of CORPUS) {
    it(`${sample.name}: compose, store, publish to ${Object.keys(PLATFORMS).join(', ')}`, async () => {
      const content = composedContent(sample.typed);
      const problems: string[] = [];
      for (const [platform, { settings, received, reads }] of Object.entries(PLATFORMS)) {
        const rootId = await createPost(herald, channels[platform], [content], { settings: settings(), type: 'now', allowDuplicate: true });
        const { outcome } = await publishUntilSettled(herald, rootId);
        if (outcome.kind !== 'published') {
          problems.push(`${platform}: ${JSON.stringify(outcome)}`);
          continue;
        }
        const sent = received();
        if (sample === CORPUS.at(-1)) formatted[platform] = sent;
        const [seen, expected] = reads ? [paragraphs(reads.markup(sent)), paragraphs(sample.reads)] : [letters(sent), sample.reads];
        if (seen !== expected) problems.push(`${platform} shows ${JSON.stringify(seen)} (sent ${JSON.stringify(sent)})`);
      }
      expect(problems, `expected ${JSON.stringify(sample.reads)}`).toEqual([]);
    }, 120_000);
  }

  it('sends bold as each platform shows it: Markdown on Discord and Whop, Unicode bold letters on the others', () => {
    const bolds = Object.fromEntries(Object.entries(PLATFORMS).map(([platform, { bold }]) => [platform, formatted[platform]?.includes(bold) ? bold : formatted[platform]]));
    expect(bolds).toEqual(Object.fromEntries(Object.entries(PLATFORMS).map(([platform, { bold }]) => [platform, bold])));
  });
});
