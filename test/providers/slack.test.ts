// Slack end to end against the fake: OAuth v2 (bot token, team name and icon), listChannels across pages, a post with files and
// replies through the worker (joining the channel on not_in_channel), long text split into sections, a 429 retried after
// Retry-After, an archived channel in ERROR, an interrupted post found by its metadata among every message since the attempt
// (never an older one), mentions and links only as Slack syntax allows them, token rotation, a revoked token.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { escapeMrkdwn, sectionBlocks, splitText } from '../../providers/slack/blocks.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { PlatformHttpError, type PlatformRequest } from '../../src/lib/platform-http.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { runPlatformChanges } from '../../tools/internal/platform-change-run.js';
import { slackContractProblems, slackContractSource } from '../contracts/slack/contract.js';
import { startSlackFake, type SlackFake } from '../fakes/slack.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf, withPlatformFetch } from '../helpers/lost-answer.js';
import { acceptedSamples, goodMp4, uploadAll } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished, reopenAsInterrupted } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

let fake: SlackFake;
let herald: Herald;
let channelId: string;
const media = {} as Record<'png' | 'jpeg' | 'mp4', { id: string; path: string; bytes: Buffer }>;

const post = (items: Parameters<typeof createPost>[2], channel = fake.channel('random').id, extra: Record<string, unknown> = {}) =>
  createPost(herald, channelId, items, { settings: { __type: 'slack', channel, ...extra }, allowDuplicate: true });
const isPost = (request: PlatformRequest<unknown>) => request.url.endsWith('/api/chat.postMessage');
const integration = () => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
const calls = (method: string) => fake.server.requestsTo('POST', `/api/${method}`);

beforeAll(async () => {
  fake = await startSlackFake();
  herald = await startHerald(
    { SLACK_CLIENT_ID: fake.authority.clientId, SLACK_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ slack: fake.endpoints }) },
    { guard: { allowLoopback: true } },
  );
  const jpeg = acceptedSamples().find((sample) => sample.type === 'image/jpeg')!.bytes;
  const files = { png: [tinyPng(), 'dot.png'], jpeg: [jpeg, 'red.jpg'], mp4: [goodMp4(), 'clip.mp4'] } as const;
  const stored = await uploadAll(herald, files);
  for (const key of ['png', 'jpeg', 'mp4'] as const) media[key] = { ...stored[key], bytes: files[key][0] };
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

afterEach(() => {
  // Every call Herald made matched Slack's contract (test/contracts/slack/openapi.json).
  expect(fake.contractViolations.splice(0)).toEqual([]);
});

describe("Slack's contract", () => {
  const call = (body: { json?: unknown; form?: Record<string, string> }) => ({
    method: 'POST',
    query: new URLSearchParams(),
    headers: { 'content-type': body.json === undefined ? 'application/x-www-form-urlencoded' : 'application/json' },
    json: body.json,
    form: body.form ? new URLSearchParams(body.form) : undefined,
    body: Buffer.from(body.json === undefined ? new URLSearchParams(body.form).toString() : JSON.stringify(body.json)),
  });

  it("is Slack's 2020 description pinned to its commit, completed from the docs pages, and refuses what they refuse", () => {
    expect(slackContractSource).toMatchObject({ version: '1.7.0', revision: expect.stringMatching(/^[0-9a-f]{40}$/), committed: '2021-09-07' });
    const post = { channel: 'C1', text: 'x', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x' } }], metadata: { event_type: 'herald_post', event_payload: { post_id: 'p' } } };
    expect(slackContractProblems(call({ json: post }), 'chat.postMessage')).toEqual([]);
    expect(slackContractProblems(call({ json: { ...post, thread_id: '1.2' } }), 'chat.postMessage')).toEqual([expect.stringMatching(/^thread_id is not an argument of chat.postMessage/)]);
    expect(slackContractProblems(call({ json: { ...post, metadata: { event_payload: {} } } }), 'chat.postMessage').join()).toMatch(/body\/metadata must have required property 'event_type'/);
    expect(slackContractProblems(call({ json: { channel: 'C1', ts: '1.2', link_names: false } }), 'chat.update')).toEqual(['body/link_names must be string']);
    expect(slackContractProblems(call({ json: { channel: 'C1' } }), 'conversations.history')).toEqual(['conversations.history takes application/x-www-form-urlencoded arguments, not application/json']);
    expect(slackContractProblems(call({ form: { channel: 'C1', limit: 'many' } }), 'conversations.history')).toEqual(['body/limit must be integer']);
    expect(slackContractProblems(call({ form: { length: '12' } }), 'files.getUploadURLExternal')).toEqual(["body must have required property 'filename'"]);
    expect(slackContractProblems(call({ json: { files: [{ id: 'F1' }] } }), 'files.upload')).toEqual([expect.stringMatching(/files.upload is not a method/)]);
  });
});

describe('installing the Slack app', () => {
  it('trades the code with Basic client credentials for an xoxb bot token, and names the channel after the team', async () => {
    const connected = await connectOAuthChannel(herald, 'slack');
    channelId = connected.integrationId;
    expect(connected.authorizeUrl.pathname).toBe('/oauth/v2/authorize');
    expect(connected.authorizeUrl.searchParams.get('scope')).toBe('channels:read,channels:join,channels:history,chat:write,files:write,team:read');
    const [exchange] = calls('oauth.v2.access');
    expect(exchange.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.authority.clientId}:${fake.authority.clientSecret}`).toString('base64')}`);
    expect(exchange.form?.get('redirect_uri')).toBe(`${herald.url}/api/integrations/social/slack/callback`);
    const list = (await herald.rest('GET', '/integrations')).body as { id: string; name: string; profile: string; picture: string }[];
    expect(list.find((item) => item.id === channelId)).toMatchObject({ name: 'Herald Labs', profile: 'heraldlabs', picture: fake.team.icon.image_132 });
    const saved = await integration();
    expect(channelAuth(herald.services, saved).accessToken).toMatch(/^xoxb-/);
    expect(saved.tokenExpiresAt).toBeNull();
  });

  it('lists the public channels across pages', async () => {
    const listed = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'listChannels' });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.output).toEqual([
      { id: 'C0GENERAL1', name: 'general', isMember: false },
      { id: 'C0RANDOM01', name: 'random', isMember: true },
      { id: 'C0RELEASE1', name: 'releases', isMember: true },
      { id: 'C0DESIGN01', name: 'design', isMember: false },
    ]);
    const pages = calls('conversations.list');
    expect(pages).toHaveLength(2);
    expect(pages[1].form?.get('cursor')).toBeTruthy();
    expect(Object.fromEntries(pages[0].form!)).toMatchObject({ types: 'public_channel', exclude_archived: 'true' });
  });
});

describe('publishing', () => {
  it('joins the channel when needed, posts through the worker, shares the files in the thread, and replies there', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await post(
        [
          { content: '<p>Release <strong>2.0</strong> &amp; friends, cc &lt;@U0OWNER001&gt;</p>', image: [media.png, media.jpeg] },
          { content: 'The demo', image: [media.mp4] },
        ],
        fake.channel('general').id,
      );
      const items = await waitForPublished(herald, rootId);
      expect(calls('conversations.join').map((request) => request.form?.get('channel'))).toEqual(['C0GENERAL1']);
      const [root, reply] = fake.messages.slice(-2);
      expect(root).toMatchObject({ channel: 'C0GENERAL1', threadTs: undefined, text: 'Release 𝟮.𝟬 &amp; friends, cc <@U0OWNER001>', metadata: { event_type: 'herald_post', event_payload: { post_id: rootId } } });
      expect(root.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: 'Release 𝟮.𝟬 &amp; friends, cc <@U0OWNER001>', verbatim: true } }]);
      expect(reply).toMatchObject({ channel: 'C0GENERAL1', threadTs: root.ts, text: 'The demo' });
      const uploads = fake.uploads.slice(-3);
      expect(uploads.map((file) => [file.filename, file.length])).toEqual([
        [media.png.path.split('/').pop(), media.png.bytes.length],
        [media.jpeg.path.split('/').pop(), media.jpeg.bytes.length],
        [media.mp4.path.split('/').pop(), media.mp4.bytes.length],
      ]);
      expect(uploads.every((file, index) => file.bytes?.equals([media.png, media.jpeg, media.mp4][index].bytes))).toBe(true);
      expect(fake.shares.slice(-2)).toEqual([
        { files: uploads.slice(0, 2).map((file) => ({ id: file.id, title: file.filename })), channelId: 'C0GENERAL1', threadTs: root.ts },
        { files: [{ id: uploads[2].id, title: uploads[2].filename }], channelId: 'C0GENERAL1', threadTs: root.ts },
      ]);
      expect(items.map((item) => item.releaseId)).toEqual([root.ts, reply.ts]);
      expect(items[0].releaseUrl).toBe(`https://heraldlabs.slack.com/archives/C0GENERAL1/p${root.ts.replace('.', '')}`);
    } finally {
      await worker.stop();
    }
  });

  it('splits a long text into sections of at most 3000 characters, between paragraphs, lines or words, never cutting one', async () => {
    const words = (count: number, word: string) => Array.from({ length: count }, (_, index) => `${word}${index}`).join(' ');
    const paragraphs = [words(300, 'alpha'), words(120, 'beta'), words(500, 'gamma')];
    const rootId = await post([`<p>${paragraphs.join('</p><p>')}</p>`]);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const blocks = fake.messages.at(-1)!.blocks!;
    expect(blocks.length).toBeGreaterThan(2);
    expect(blocks.every((block) => block.text!.text.length <= 3000)).toBe(true);
    expect(blocks.map((block) => block.text!.text).join(' ').split(/\s+/)).toEqual(paragraphs.join(' ').split(' '));
  });

  it('finds an interrupted message by the post id in its metadata instead of posting it twice', async () => {
    const rootId = await post(['Found again', 'Its reply too']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const before = await chainOf(herald, rootId);
    const posted = calls('chat.postMessage').length;
    await reopenAsInterrupted(herald, rootId, 'message', { wholeChain: true });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect((await chainOf(herald, rootId)).map((item) => item.releaseId)).toEqual(before.map((item) => item.releaseId));
    expect(calls('chat.postMessage')).toHaveLength(posted);
    expect(calls('conversations.history').at(-1)?.form?.get('include_all_metadata')).toBe('true');
    expect(calls('conversations.replies').at(-1)?.form?.get('ts')).toBe(before[0].releaseId);
  });

  it('finds a message whose answer was lost among every message since the attempt, however many came after it', async () => {
    const rootId = await post(['Busy day']);
    const restore = loseAnswerOf(herald, isPost);
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    for (let index = 0; index < 150; index++) fake.postAs(fake.channel('random').id, `chatter ${index}`);
    const posted = calls('chat.postMessage').length;
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [root] = await chainOf(herald, rootId);
    const ours = fake.messages.filter((message) => message.text === 'Busy day');
    expect(ours).toHaveLength(1);
    expect(root.releaseId).toBe(ours[0].ts);
    expect(calls('chat.postMessage')).toHaveLength(posted);
    const lookups = calls('conversations.history').slice(-2);
    expect(lookups[0].form?.get('cursor')).toBeFalsy();
    expect(lookups[1].form?.get('cursor')).toBeTruthy();
    expect(Number(lookups[0].form?.get('oldest'))).toBeGreaterThan(Date.now() / 1000 - 600);
  });

  it('posts once a message lost before it reached Slack, though an older message of the same text is in the channel', async () => {
    fake.postAs(fake.channel('random').id, 'Same words', { user: fake.botUserId, at: Date.now() - 3600_000, metadata: { event_type: 'herald_post', event_payload: { post_id: 'an-older-post' } } });
    const rootId = await post(['Same words']);
    const first = await withPlatformFetch(
      herald.services,
      (real) => async (request) => {
        if (isPost(request as PlatformRequest<unknown>)) throw new PlatformHttpError({ status: 0, retryable: true, outcomeUnknown: true, bodyExcerpt: '', message: 'Could not reach the platform: the connection was reset' });
        return real(request);
      },
      () => publishChain(herald.services, rootId),
    );
    expect(first.kind).toBe('waiting');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [root] = await chainOf(herald, rootId);
    const copies = fake.messages.filter((message) => message.text === 'Same words');
    expect(copies).toHaveLength(2);
    expect(root.releaseId).toBe(copies.at(-1)!.ts);
    expect(copies.at(-1)!.metadata?.event_payload.post_id).toBe(rootId);
  });

  it('keeps mentions of users, shows links in Slack syntax and special mentions as typed, and notifies the channel only with notifyEveryone', async () => {
    const text = '<!channel> <!here> read <http://evil.example|the docs> & thank <@U0OWNER001>, see https://herald.example/a?b=1&c=2.';
    const quiet = await post([text]);
    expect((await publishUntilSettled(herald, quiet)).outcome.kind).toBe('published');
    const sent = fake.messages.at(-1)!;
    const shown = '@channel @here read &lt;<http://evil.example%7Cthe> docs&gt; &amp; thank <@U0OWNER001>, see <https://herald.example/a?b=1&amp;c=2>.';
    expect(sent.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: shown, verbatim: true } }]);
    expect(sent).toMatchObject({ text: shown, parse: 'none', linkNames: false, notified: { channel: false, users: ['U0OWNER001'] } });
    const loud = await post([text], fake.channel('random').id, { notifyEveryone: true });
    expect((await publishUntilSettled(herald, loud)).outcome.kind).toBe('published');
    expect(fake.messages.at(-1)!.notified).toEqual({ channel: true, users: ['U0OWNER001'] });
  });

  it('refuses an item without text, and more files than one message shares, at validation', async () => {
    const attempt = (value: { content: string; image: { id: string; path: string }[] }[]) =>
      submitPost(herald, channelId, value, { settings: { __type: 'slack', channel: 'C0RANDOM01' } });
    const picture = { id: media.png.id, path: media.png.path };
    expect((await attempt([{ content: 'Text', image: [] }, { content: '', image: [picture] }])).body.message).toMatch(/Item 2 has no text/);
    expect((await attempt([{ content: 'Many', image: Array(11).fill(picture) }])).body.message).toMatch(/has 11 files/);
  });
});

describe('changing what went out', () => {
  it('updates the message and its reply with chat.update, deletes them with chat.delete once, replies first', async () => {
    const rootId = await post(['Slack text with a typo', 'A reply in the thread']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [first, second] = await chainOf(herald, rootId);
    const edit = await herald.rest('PUT', `/posts/${rootId}`, { value: [{ content: 'Slack text, fixed', image: [] }, { content: 'A reply in the thread', image: [] }] });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(await runPlatformChanges(herald.services, rootId)).toEqual({ kind: 'done' });
    expect(fake.messages.find((message) => message.ts === first.releaseId)).toMatchObject({ text: 'Slack text, fixed', edited: true, metadata: { event_payload: { post_id: rootId } } });
    expect(calls('chat.update')).toHaveLength(1);
    // parse stays none (left out it would become client); link_names is left out, so it becomes none: the description types
    // chat.update's link_names as a string, and the boolean Herald sent was refused.
    expect(calls('chat.update')[0].json).toMatchObject({ parse: 'none' });
    expect(calls('chat.update')[0].json).not.toHaveProperty('link_names');

    expect((await herald.rest('DELETE', `/posts/${rootId}?deleteOnPlatform=true`)).status).toBe(200);
    expect(await runPlatformChanges(herald.services, rootId)).toEqual({ kind: 'done' });
    expect(fake.deleted.map((message) => message.ts)).toEqual([second.releaseId, first.releaseId]);
    expect(calls('chat.delete')).toHaveLength(2);
  });
});

describe('errors and tokens', () => {
  it('retries a 429 after the Retry-After Slack gave', async () => {
    fake.server.failNext('POST', '/api/chat.postMessage', { status: 429, headers: { 'retry-after': '90' }, json: { ok: false, error: 'ratelimited' } });
    const rootId = await post(['Slow down']);
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(89_000);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeLessThan(95_000);
    expect(waiting.lastError).toMatch(/ratelimited/);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('puts a post to an archived channel in ERROR with Slack\'s error named, and notifies', async () => {
    const rootId = await post(['Into the archive'], fake.channel('old-news').id);
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [failed] = await chainOf(herald, rootId);
    expect(failed.error).toBe('Slack refused the post: the channel is archived (is_archived): pick another one from listChannels');
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('is_archived'))).toBe(true);
    const secret = await post(['Private'], fake.channel('secret').id);
    expect((await publishChain(herald.services, secret)).kind).toBe('failed');
    expect((await chainOf(herald, secret))[0].error).toBe('Slack refused the post: the app is not a member of the channel and could not join it (not_in_channel): invite the app to the channel');
  });

  it('with token rotation, refreshes an expired token with the rotated refresh token each time', async () => {
    fake.setRotation(true);
    await connectOAuthChannel(herald, 'slack', { refresh: channelId });
    const saved = await integration();
    expect(channelAuth(herald.services, saved).accessToken).toMatch(/^xoxe\.xoxb-1-/);
    expect(saved.tokenExpiresAt).not.toBeNull();
    const refreshes = () => calls('oauth.v2.access').filter((request) => request.form?.get('grant_type') === 'refresh_token');
    for (const round of [1, 2]) {
      fake.authority.expireAccessTokens();
      const rootId = await post([`After refresh ${round}`]);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    }
    const [first, second] = refreshes();
    expect(first.headers.authorization).toMatch(/^Basic /);
    expect(second.form?.get('refresh_token')).not.toBe(first.form?.get('refresh_token'));
  });

  it('offers no analytics; flags the channel when its token is revoked, and listChannels then answers 401', async () => {
    expect((await herald.rest('GET', `/analytics/${channelId}?date=7`)).body).toEqual([]);
    fake.authority.revokeAll();
    const trigger = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'listChannels' });
    expect(trigger.status).toBe(401);
    expect((await integration()).refreshNeeded).toBe(true);
  });
});

describe('sections', () => {
  it('escapes &, < and > but keeps Slack mentions, and counts the escaped length', () => {
    expect(escapeMrkdwn('a < b & <@U0A1> <#C0B2> <!subteam^S0C3> <!here> <b> <@U1|label> <!date^1^{date}|x>')).toBe(
      'a &lt; b &amp; <@U0A1> <#C0B2> <!subteam^S0C3> @here &lt;b&gt; &lt;@U1|label&gt; &lt;!date^1^{date}|x&gt;',
    );
    expect(escapeMrkdwn('<!here>', { notifyEveryone: true })).toBe('<!here>');
    const ampersands = '&'.repeat(1000);
    expect(splitText(ampersands).map((part) => escapeMrkdwn(part).length)).toEqual([3000, 2000]);
    expect(sectionBlocks('short')).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: 'short', verbatim: true } }]);
    expect(splitText(`${'x'.repeat(2999)}\n\n${'y'.repeat(10)}`)).toEqual(['x'.repeat(2999), 'y'.repeat(10)]);
  });
});
