import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { goodMp4, upload } from '../helpers/media-samples.js';
import { chainOf, createPost, publishUntilSettled, waitForPublished } from '../helpers/posts.js';
import telegram from '../../providers/telegram.js';
import type { ProviderContext, PublishItem } from '../../providers/types.js';
import { PlatformHttpError, createPlatformFetch } from '../../src/lib/platform-http.js';
import { convertContent } from '../../src/lib/content.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';
import { startTelegramFake, telegramError } from '../fakes/telegram.js';
import type { TelegramFake } from '../fakes/telegram.js';

let tg: TelegramFake;

beforeEach(async () => {
  tg = await startTelegramFake();
});
afterEach(async () => {
  await tg.close();
  // Every call Herald made fits the Bot API contract (tests that send a refused call on purpose empty the list themselves).
  expect(tg.contractViolations).toEqual([]);
});

const connectContext = () => ({ fetch: createPlatformFetch({ timeoutMs: 5000, userAgent: 'Herald-test/1.0' }), dial: async () => undefined, endpoints: { api: tg.url } });

function context(data: Record<string, string> = { chatId: String(tg.chat.id), username: tg.chat.username ?? '' }): ProviderContext {
  return providerContext({ endpoints: { api: tg.url }, auth: { accessToken: tg.token, internalId: String(tg.chat.id), data } });
}

const item = (text: string, media: PublishItem['media'] = []): PublishItem => ({ postId: 'post-1', text, media });

async function failure(promise: Promise<unknown>): Promise<PlatformHttpError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(PlatformHttpError);
  return error as PlatformHttpError;
}

describe('telegram descriptor', () => {
  it('declares the credential form, limits and chain', () => {
    expect(telegram.identifier).toBe('telegram');
    expect(telegram.editor).toBe('html');
    expect(telegram.maxLength({})).toBe(4096);
    expect(telegram.chain).toBe('thread');
    expect(telegram.settings).toBeNull();
    expect(telegram.endpoints).toEqual({ api: 'https://api.telegram.org' });
    expect(telegram.auth.kind).toBe('credentials');
    expect(telegram.auth.fields?.map((field) => [field.key, field.type])).toEqual([
      ['botToken', 'password'],
      ['chatId', 'text'],
    ]);
    expect(telegram.rules).toMatch(/1024/);
    expect(telegram.analytics).toBeUndefined();
    expect(telegram.recent).toBeUndefined();
  });
});

describe('telegram connect', () => {
  it('checks the bot and resolves the chat by @username', async () => {
    const account = await telegram.connect!(connectContext(), { botToken: tg.token, chatId: '@herald_test' });
    expect(account).toEqual({
      internalId: String(tg.chat.id),
      name: 'Herald Test Channel',
      profile: '@herald_test',
      accessToken: tg.token,
      data: { chatId: String(tg.chat.id), username: 'herald_test' },
    });
    expect(tg.server.requests.map((request) => request.path.split('/')[2])).toEqual(['getMe', 'getChat']);
  });

  it('resolves a private chat by numeric id, without a username', async () => {
    await tg.close();
    tg = await startTelegramFake({ chat: { id: -4242, title: 'Team room', type: 'group' } });
    const account = await telegram.connect!(connectContext(), { botToken: tg.token, chatId: ' -4242 ' });
    expect(account.profile).toBe('-4242');
    expect(account.data).toEqual({ chatId: '-4242' });
  });

  it('surfaces a wrong token as a 401 PlatformHttpError quoting Telegram', async () => {
    const error = await failure(telegram.connect!(connectContext(), { botToken: '987654321:WrongTokenWrongToken', chatId: '@herald_test' }));
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('Unauthorized');
    expect(error.message).not.toContain('987654321:WrongTokenWrongToken');
  });

  it('surfaces an unknown chat as a 400 PlatformHttpError quoting Telegram', async () => {
    const error = await failure(telegram.connect!(connectContext(), { botToken: tg.token, chatId: '@nobody_here' }));
    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('Bad Request: chat not found');
  });
});

describe('telegram publish', () => {
  it('sends a text message in HTML parse mode', async () => {
    const ref = await telegram.publish!(context(), item('<b>Hello</b> <a href="https://example.com">world</a> &amp; co'));
    expect(tg.messages).toHaveLength(1);
    expect(tg.messages[0]).toMatchObject({ text: '<b>Hello</b> <a href="https://example.com">world</a> &amp; co', parse_mode: 'HTML', chat_id: tg.chat.id });
    expect(ref).toEqual({ id: String(tg.messages[0].message_id), url: `https://t.me/herald_test/${tg.messages[0].message_id}` });
  });

  it('gives no url for a chat without a public username', async () => {
    const ref = await telegram.publish!(context({ chatId: String(tg.chat.id) }), item('hi'));
    expect(ref.url).toBeUndefined();
  });

  it('uploads one picture with sendPhoto and the text as caption', async () => {
    const png = tinyPng();
    const ref = await telegram.publish!(context(), item('<u>Look</u>', [mediaFile(png)]));
    expect(tg.server.requestsTo('POST', '/*/sendPhoto')).toHaveLength(1);
    expect(tg.messages).toHaveLength(1);
    const [message] = tg.messages;
    expect(message.photo?.bytes.equals(png)).toBe(true);
    expect(message.photo?.mimeType).toBe('image/png');
    expect(message).toMatchObject({ caption: '<u>Look</u>', parse_mode: 'HTML' });
    expect(ref.id).toBe(String(message.message_id));
  });

  it('sends 3 pictures as one album with the caption on the first', async () => {
    const pictures = [tinyPng(), Buffer.concat([tinyPng(), Buffer.from([1])]), Buffer.concat([tinyPng(), Buffer.from([2])])];
    const ref = await telegram.publish!(context(), item('Album', pictures.map((bytes) => mediaFile(bytes))));
    expect(tg.server.requestsTo('POST', '/*/sendMediaGroup')).toHaveLength(1);
    expect(tg.messages).toHaveLength(3);
    expect(tg.messages.map((message) => message.caption)).toEqual(['Album', undefined, undefined]);
    expect(tg.messages.every((message, index) => message.photo?.bytes.equals(pictures[index]))).toBe(true);
    expect(new Set(tg.messages.map((message) => message.media_group_id)).size).toBe(1);
    expect(ref.id).toBe(String(tg.messages[0].message_id));
  });

  it('keeps the ids of an album\'s messages, so a deletion on the platform takes them all, and edits its caption', async () => {
    const pictures = [tinyPng(), Buffer.concat([tinyPng(), Buffer.from([1])])];
    const ref = await telegram.publish!(context(), item('Album', pictures.map((bytes) => mediaFile(bytes))));
    const ids = tg.messages.map((message) => message.message_id);
    expect(ref.meta).toEqual({ albumIds: ids.join(',') });
    await telegram.editPublished!(context(), ref, { ...item('Album, captioned again', pictures.map((bytes) => mediaFile(bytes))), previousText: 'Album' });
    expect(tg.messages[0].caption).toBe('Album, captioned again');
    expect(tg.server.requestsTo('POST', '/*/editMessageCaption')).toHaveLength(1);
    await telegram.deletePublished!(context(), ref);
    expect(tg.deleted.map((message) => message.message_id)).toEqual(ids);
    expect(tg.messages).toHaveLength(0);
    // Again (a lost answer): the messages are gone, which counts as done.
    await telegram.deletePublished!(context(), ref);
    expect(tg.server.requestsTo('POST', '/*/deleteMessage')).toHaveLength(4);
  });

  it('uploads one video with sendVideo, streaming, the text as caption', async () => {
    const mp4 = goodMp4();
    const ref = await telegram.publish!(context(), item('<b>Clip</b>', [mediaFile(mp4, { kind: 'video', mimeType: 'video/mp4', url: 'https://media.example/clip.mp4' })]));
    expect(tg.server.requestsTo('POST', '/*/sendVideo')).toHaveLength(1);
    expect(tg.server.requestsTo('POST', '/*/sendPhoto')).toHaveLength(0);
    const [message] = tg.messages;
    expect(message.video?.bytes.equals(mp4)).toBe(true);
    expect(message).toMatchObject({ caption: '<b>Clip</b>', parse_mode: 'HTML', supports_streaming: true, video: { mimeType: 'video/mp4' } });
    expect(message.photo).toBeUndefined();
    expect(ref.id).toBe(String(message.message_id));
  });

  it('sends pictures and videos mixed in one album, each as its own kind, the caption on the first', async () => {
    const mp4 = goodMp4();
    const png = tinyPng();
    const ref = await telegram.publish!(context(), item('Mixed', [mediaFile(png), mediaFile(mp4, { kind: 'video', mimeType: 'video/mp4' }), mediaFile(png)]));
    const [request] = tg.server.requestsTo('POST', '/*/sendMediaGroup');
    const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': String(request.headers['content-type']) }, body: new Uint8Array(request.body) }).formData();
    expect(JSON.parse(String(form.get('media')))).toEqual([
      { type: 'photo', media: 'attach://file0', caption: 'Mixed', parse_mode: 'HTML' },
      { type: 'video', media: 'attach://file1', supports_streaming: true },
      { type: 'photo', media: 'attach://file2' },
    ]);
    expect(tg.messages.map((message) => [message.photo ? 'photo' : 'video', message.caption])).toEqual([['photo', 'Mixed'], ['video', undefined], ['photo', undefined]]);
    expect(tg.messages[1].video?.bytes.equals(mp4)).toBe(true);
    expect(new Set(tg.messages.map((message) => message.media_group_id)).size).toBe(1);
    expect(ref.id).toBe(String(tg.messages[0].message_id));
  });
});

describe('telegram: what the text may do', () => {
  // Content as a client sends it, and the HTML Telegram receives: the fake parses it as the Bot API does and refuses anything else.
  const corpus: [string, string][] = [
    ['<p>Hi<script>alert(1)</script></p>', 'Hi'],
    ['<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['<p><a href="javascript:alert(1)">tap</a> <a href="data:text/html,x">data</a></p>', 'tap data'],
    ['<p><img src=x onerror=alert(1)>seen <strong onclick="steal()">bold</strong></p>', 'seen <strong>bold</strong>'],
    ['<p><a href="https://example.com/?a=1&amp;b=&quot;2&quot;">safe</a></p>', '<a href="https://example.com/?a=1&amp;b=&quot;2&quot;">safe</a>'],
    ['<p><a href="mailto:press@example.com">write us</a>, <a href="mailto:press@example.com">press@example.com</a></p>', 'write us (press@example.com), press@example.com'],
    ['<p>&amp;lt;b&amp;gt; stays text</p>', '&amp;lt;b&amp;gt; stays text'],
    ['a < b && c > d <3 &lt;b&gt;', 'a &lt; b &amp;&amp; c &gt; d &lt;3 &amp;lt;b&amp;gt;'],
    ['<p>[prize](javascript:alert(1)) <tg-spoiler>x</tg-spoiler> <a href="tg://user?id=1">me</a></p>', '[prize](javascript:alert(1)) x me'],
  ];
  it.each(corpus)('%s reaches Telegram as %s', async (content, html) => {
    await telegram.publish!(context(), item(convertContent(content, telegram.editor)));
    expect(tg.messages.at(-1)?.text).toBe(html);
  });

  it('sends the same safe HTML as a caption', async () => {
    await telegram.publish!(context(), item(convertContent('<p><a href="javascript:alert(1)">x</a> &lt;i&gt;</p>', telegram.editor), [mediaFile(tinyPng())]));
    expect(tg.messages.at(-1)?.caption).toBe('x &lt;i&gt;');
  });
});

describe('telegram comment', () => {
  it('replies to the parent message, for text and pictures', async () => {
    const root = await telegram.publish!(context(), item('root'));
    const textReply = await telegram.comment!(context(), item('second'), { root, parent: root });
    const photoReply = await telegram.comment!(context(), item('third', [mediaFile(tinyPng())]), { root, parent: textReply });
    const albumReply = await telegram.comment!(context(), item('fourth', [mediaFile(tinyPng()), mediaFile(tinyPng())]), { root, parent: photoReply });
    expect(tg.messages.map((message) => message.reply_to_message_id)).toEqual([
      undefined,
      Number(root.id),
      Number(textReply.id),
      Number(photoReply.id),
      Number(photoReply.id),
    ]);
    expect(albumReply.id).toBe(String(tg.messages[3].message_id));
  });

  it('fails when the parent message does not exist', async () => {
    const error = await failure(telegram.comment!(context(), item('orphan'), { root: { id: '999' }, parent: { id: '999' } }));
    expect(error.message).toContain('message to be replied not found');
  });
});

describe('telegram errors', () => {
  it('classifies a 429 as retryable with retry_after', async () => {
    tg.failNext('sendMessage', telegramError(429, 'Too Many Requests: retry after 7', 7));
    const error = await failure(telegram.publish!(context(), item('hi')));
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterSeconds).toBe(7);
    expect(tg.messages).toHaveLength(0);
  });

  it('classifies a kicked bot as permanent', async () => {
    tg.failNext('sendPhoto', telegramError(403, 'Forbidden: bot was kicked from the channel chat'));
    const error = await failure(telegram.publish!(context(), item('hi', [mediaFile(tinyPng())])));
    expect(error.status).toBe(403);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('bot was kicked');
  });

  it('never puts the bot token in an error message or excerpt', async () => {
    const errors: PlatformHttpError[] = [];
    const wrong = { ...context(), auth: { ...context().auth, accessToken: '555:AnotherWrongToken' } };
    errors.push(await failure(telegram.publish!(wrong, item('hi'))));
    errors.push(await failure(telegram.connect!(connectContext(), { botToken: tg.token, chatId: '@missing_chat' })));
    tg.failNext('sendMessage', telegramError(400, `Bad Request: echo of ${tg.token}`));
    errors.push(await failure(telegram.publish!(context(), item('hi'))));
    tg.failNext('sendMessage', { status: 502, body: '<html>Bad Gateway</html>' });
    errors.push(await failure(telegram.publish!(context(), item('hi'))));
    // The core's HTML is turned into Telegram's tag set before sending, so <p> is not refused.
    await telegram.publish!(context(), item('<p>first</p><p><strong>second</strong></p>'));
    expect(tg.messages.at(-1)?.text).toBe('first\n<strong>second</strong>');
    const closed = providerContext({ endpoints: { api: 'http://127.0.0.1:1' }, auth: { accessToken: tg.token, data: { chatId: '1' } } });
    errors.push(await failure(telegram.publish!(closed, item('hi'))));
    for (const error of errors) {
      for (const secret of [tg.token, '555:AnotherWrongToken', tg.token.split(':')[1]]) {
        expect(error.message).not.toContain(secret);
        expect(error.bodyExcerpt).not.toContain(secret);
        expect(String(error.stack)).not.toContain(secret);
      }
      expect(error.message).not.toContain('/bot');
    }
    expect(errors[4].message).toContain('Could not reach');
    expect(errors[3].retryable).toBe(true);
  });

  it('refuses a malformed token without calling Telegram', async () => {
    const error = await failure(telegram.connect!(connectContext(), { botToken: 'not a token/../x', chatId: '@herald_test' }));
    expect(error.status).toBe(401);
    expect(tg.server.requests).toHaveLength(0);
  });
});

describe('telegram validate', () => {
  const picture = { kind: 'image' as const, url: 'https://media.example/p.png' };

  it('accepts text, a picture with a short caption and 10 pictures', () => {
    expect(telegram.validate!([{ text: 'x'.repeat(4096), media: [] }], {})).toBeUndefined();
    expect(telegram.validate!([{ text: `<b>${'x'.repeat(1024)}</b>`, media: [picture] }], {})).toBeUndefined();
    expect(telegram.validate!([{ text: 'ten', media: Array(10).fill(picture) }], {})).toBeUndefined();
  });

  it('rejects more than 10 pictures', () => {
    expect(telegram.validate!([{ text: 'eleven', media: Array(11).fill(picture) }], {})).toMatch(/at most 10 pictures/);
  });

  it('rejects a caption over 1024 characters', () => {
    const message = telegram.validate!([{ text: 'ok', media: [] }, { text: 'x'.repeat(1025), media: [picture] }], {});
    expect(message).toMatch(/1024/);
    expect(message).toMatch(/item 2/);
  });

  it('accepts a video and a mixed album, and refuses what a bot cannot upload', () => {
    const video = { kind: 'video' as const, url: 'https://media.example/v.mp4' };
    expect(telegram.validate!([{ text: 'clip', media: [video] }, { text: 'mixed', media: [picture, video, picture] }], {})).toBeUndefined();
    expect(telegram.validate!([{ text: 'big', media: [{ ...video, size: 60 * 1024 * 1024 }] }], {})).toBe('Telegram bots upload videos of at most 50 MB: this one is 60 MB, shorten or compress it.');
    expect(telegram.validate!([{ text: 'big', media: [{ ...picture, size: 11 * 1024 * 1024 }] }], {})).toMatch(/pictures of at most 10 MB/);
    expect(telegram.validate!([{ text: 'wide', media: [{ ...picture, width: 8000, height: 300 }] }], {})).toMatch(/ratio of at most 20: this one is 8000x300/);
    expect(telegram.validate!([{ text: 'x'.repeat(1025), media: [video] }], {})).toMatch(/caption limit of 1024/);
  });
});

describe('telegram through Herald', () => {
  let herald: Herald;
  let channelId: string;
  const uploaded: Record<string, { id: string; path: string }> = {};

  beforeAll(async () => {
    herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: 'http://127.0.0.1:9' } }) });
  });
  afterAll(async () => {
    await herald?.stop();
  });

  /** The fake of this test (a new one each test) behind the deployment's endpoint. */
  const pointAtFake = () => {
    herald.services.config.socialEndpoints.telegram = { api: tg.url };
  };

  it('refuses a wrong bot token with Telegram\'s reason, and connects with the right one', async () => {
    pointAtFake();
    const wrong = await herald.rest('POST', '/integrations/telegram/connect', { botToken: '987654321:WrongTokenWrongToken', chatId: '@herald_test' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('Telegram refused the connection: Telegram getMe failed: Unauthorized (check the bot token from @BotFather)');
    const connected = await herald.rest('POST', '/integrations/telegram/connect', { botToken: tg.token, chatId: '@herald_test' });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    channelId = connected.body.id;
    for (const [name, bytes] of [['dot.png', tinyPng()], ['clip.mp4', goodMp4()]] as const) {
      const response = await upload(herald.restUrl, herald.apiKey, bytes, name);
      uploaded[name] = { id: response.body.id, path: response.body.path };
    }
  });

  it('publishes a video, then a mixed album in reply, through the worker', async () => {
    pointAtFake();
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>A <strong>clip</strong></p>', image: [uploaded['clip.mp4']] }, { content: '<p>Album</p>', image: [uploaded['dot.png'], uploaded['clip.mp4']] }], { type: 'now' });
      const items = await waitForPublished(herald, rootId);
      const [clip, albumPhoto, albumVideo] = tg.messages;
      expect(clip).toMatchObject({ caption: 'A <strong>clip</strong>', supports_streaming: true });
      expect(clip.video?.bytes.equals(goodMp4())).toBe(true);
      expect(albumPhoto).toMatchObject({ caption: 'Album', reply_to_message_id: clip.message_id });
      expect(albumPhoto.photo?.bytes.equals(tinyPng())).toBe(true);
      expect(albumVideo.video?.mimeType).toBe('video/mp4');
      expect(items.map((post) => post.releaseUrl)).toEqual([`https://t.me/herald_test/${clip.message_id}`, `https://t.me/herald_test/${albumPhoto.message_id}`]);
    } finally {
      await worker.stop();
    }
  });

  it('retries a 429 after Telegram\'s retry_after', async () => {
    pointAtFake();
    const rootId = await createPost(herald, channelId, ['<p>Later</p>'], { type: 'now' });
    tg.failNext('sendMessage', telegramError(429, 'Too Many Requests: retry after 300', 300));
    const before = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(299_000);
    expect(waiting.lastError).toContain('Too Many Requests: retry after 300');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(tg.messages.map((message) => message.text)).toEqual(['Later']);
  });

  it('stops a message whose answer was lost after Telegram sent it with "could not confirm", and never sends it twice', async () => {
    pointAtFake();
    const rootId = await createPost(herald, channelId, ['<p>Once only</p>'], { type: 'now' });
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/sendMessage'));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    } finally {
      restore();
    }
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toMatch(/^Could not confirm whether Telegram published this item/);
    expect((await publishChain(herald.services, rootId)).kind).not.toBe('published');
    expect(tg.messages.map((message) => message.text)).toEqual(['Once only']);
  });

  it('puts the post in ERROR with Telegram\'s description when the bot was removed, and notifies', async () => {
    pointAtFake();
    const rootId = await createPost(herald, channelId, [{ content: '<p>Kicked</p>', image: [uploaded['clip.mp4']] }], { type: 'now' });
    tg.failNext('sendVideo', telegramError(403, 'Forbidden: bot was kicked from the channel chat'));
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe('Telegram refused the post: Telegram sendVideo failed: Forbidden: bot was kicked from the channel chat (add the bot to the chat again, as an administrator)');
    const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notifications.some((notification) => notification.content.includes('bot was kicked'))).toBe(true);
  });
});
