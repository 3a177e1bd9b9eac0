// What is typed in the console is what goes out (issue 36): a corpus of texts with `&`, `<`, quotes, line breaks as a
// textarea sends them (\r\n), emoji and each formatting a platform shows, typed in the compose form (multipart, as a
// browser sends it), stored, published, and read back from each platform's fake as its readers see it: Telegram (HTML
// parse mode), X, Bluesky, Mastodon and LinkedIn. Plus the preview naming tags a platform does not show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient } from './helpers/console-client.js';
import { connectOAuthChannel } from './helpers/oauth-channel.js';
import { publishUntilSettled } from './helpers/posts.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { startXFake, type XFake } from './fakes/x.js';
import { startLinkedinFake, type LinkedinFake } from './fakes/linkedin.js';
import { CORPUS, letters } from './helpers/corpus.js';

let herald: Herald;
let telegram: TelegramFake;
let x: XFake;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let linkedin: LinkedinFake;
let browser: ConsoleClient;
const channels: Record<string, string> = {};


// Read without Herald's code: HTML entities of Telegram's parse mode (the letters behind Unicode bold and underline come
// from the shared corpus's readers).
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };
const telegramReads = (source: string) =>
  source
    .replace(/<a href="([^"]*)">([^<]*)<\/a>/g, (_, href: string, text: string) => `${text} (${href})`)
    .replace(/<[^>]+>/g, '').replace(/&(amp|lt|gt|quot);/g, (_, name: string) => ENTITIES[name]);

/** What a reader of each platform sees of the newest post there. */
const readers: Record<string, () => string> = {
  telegram: () => telegramReads(telegram.messages.at(-1)!.text!),
  x: () => letters(x.posts.at(-1)!.text),
  bluesky: () => letters(bluesky.records.at(-1)!.record.text),
  mastodon: () => letters(mastodon.statuses.at(-1)!.status),
  linkedin: () => letters(linkedin.posts.at(-1)!.text),
};

beforeAll(async () => {
  [telegram, x, bluesky, mastodon, linkedin] = await Promise.all([startTelegramFake(), startXFake(), startBlueskyFake(), startMastodonFake(), startLinkedinFake()]);
  const linkedinEnvironment = linkedin.heraldEnvironment();
  herald = await startHerald(
    {
      ...linkedinEnvironment,
      X_CLIENT_ID: x.oauth.clientId,
      X_CLIENT_SECRET: x.oauth.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ ...JSON.parse(linkedinEnvironment.SOCIAL_ENDPOINTS), x: { web: x.url, api: x.url }, telegram: { api: telegram.url } }),
    },
    { guard: { allowLoopback: true } },
  );
  browser = new ConsoleClient(herald.url);
  await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  const connect = async (identifier: string, fields: Record<string, string>) => {
    const response = await herald.rest('POST', `/integrations/${identifier}/connect`, fields);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.id as string;
  };
  channels.telegram = await connect('telegram', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  channels.bluesky = await connect('bluesky', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
  channels.mastodon = await connect('mastodon', { instance: mastodon.url, accessToken: mastodon.token });
  channels.x = (await connectOAuthChannel(herald, 'x')).integrationId;
  channels.linkedin = (await connectOAuthChannel(herald, 'linkedin')).integrationId;
}, 120_000);

afterAll(async () => {
  await herald?.stop();
  await Promise.all([telegram?.close(), x?.close(), bluesky?.close(), mastodon?.close(), linkedin?.close()]);
});

const db = () => herald.services.orm.em.fork().getConnection();

describe('what is typed in the composer is what each platform\'s readers see', () => {
  for (const [index, sample] of CORPUS.entries()) {
    it(`${sample.name}: compose, store, publish to Telegram, X, Bluesky, Mastodon and LinkedIn`, async () => {
      for (const [platform, channelId] of Object.entries(channels)) {
        const sent = await browser.sendCompose('/compose', [
          ['channel', channelId],
          ['items', '1'],
          ['content-0', sample.typed],
          ['timing', 'date'],
          ['timeZone', 'UTC'],
          ['idempotencyKey', `corpus-${index}-${platform}`],
          ['action', 'now'],
          ...(platform === 'x' ? ([[`setting:${channelId}:who_can_reply_post`, 'everyone']] as [string, string][]) : []),
        ]);
        expect(sent.status, `${platform}: ${sent.text.slice(0, 2000)}`).toBe(303);
        const id = /^\/posts\/([^/?]+)/.exec(sent.location!)![1];
        const [stored] = await db().execute('select content from post where id = ?', [id]);
        // The textarea's \r\n is one line break, as the API stores it: counted the same before and after saving.
        expect(stored.content).not.toContain('\r');
        expect((await publishUntilSettled(herald, id)).outcome.kind, platform).toBe('published');
        expect(readers[platform](), platform).toBe(sample.reads);
      }
    }, 120_000);
  }

  it('sends Telegram bold as its HTML and X bold as Unicode bold letters', () => {
    const lastTelegram = telegram.messages.at(-1)!;
    expect(lastTelegram.parse_mode).toBe('HTML');
    expect(lastTelegram.text).toMatch(/<(strong|b)>Sale<\/(strong|b)>/);
    expect(lastTelegram.text).not.toContain('&amp;amp;');
    expect(x.posts.at(-1)!.text.startsWith('𝗦𝗮𝗹𝗲')).toBe(true);
  });

  it('names in the preview the tags a platform does not show, instead of dropping them without a word', async () => {
    const page = await browser.sendCompose('/compose', [
      ['channel', channels.mastodon],
      ['items', '1'],
      ['content-0', 'An <em>important</em> <i>note</i> & more'],
      ['idempotencyKey', 'corpus-unshown'],
      ['action', 'preview'],
    ]);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Mastodon does not show &lt;em&gt;, &lt;i&gt;: these tags are removed and their text kept.');
    // The preview reads as the platform shows it, and without a date says none is chosen (not "Published" now).
    expect(page.text).toContain('>An important note &amp; more</pre>');
    expect(page.text).toContain('No date chosen yet');
  });
});
