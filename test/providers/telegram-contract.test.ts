// The Telegram fake against the Bot API's own contract (test/contracts/telegram/bot-api.json, the reference page rendered to
// JSON by telegram-bot-api-spec): a call the Bot API does not define (a method it has not, a parameter a method has not, a
// required one missing, a value of the wrong type, inside JSON-serialized objects too) is answered with Telegram's error shape
// and recorded, so a wrong request from Herald fails its test; the calls Herald makes (test/providers/telegram.test.ts checks
// every one after each test) fit.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blobOf } from '../../providers/shared.js';
import { inputMedia, messageParams } from '../../providers/telegram.js';
import { botApiProblems, telegramContractSource } from '../contracts/telegram/contract.js';
import { startTelegramFake, type TelegramFake } from '../fakes/telegram.js';
import { tinyPng } from '../helpers/provider-context.js';

let tg: TelegramFake;
beforeEach(async () => {
  tg = await startTelegramFake();
});
afterEach(async () => {
  await tg.close();
});

const call = async (method: string, body?: Record<string, unknown> | FormData) => {
  const response = await fetch(`${tg.url}/bot${tg.token}/${method}`, {
    method: body ? 'POST' : 'GET',
    ...(body instanceof FormData ? { body } : body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: response.status, body: (await response.json()) as { ok: boolean; error_code?: number; description?: string; result?: unknown } };
};
const chat = () => String(tg.chat.id);
const png = () => blobOf(tinyPng(), 'image/png');

describe('the vendored Bot API contract', () => {
  it('names its source, revision and the Bot API version the page states', () => {
    expect(telegramContractSource.url).toContain('PaulSonOfLars/telegram-bot-api-spec');
    expect(telegramContractSource.revision).toMatch(/^[0-9a-f]{40}$/);
    expect(telegramContractSource.version).toMatch(/^Bot API \d+\.\d+$/);
  });

  it("takes Herald's own bodies: a reply in HTML parse mode and a mixed album", () => {
    expect(botApiProblems('sendMessage', messageParams(chat(), '<b>hi</b>', 3), {})).toEqual([]);
    const media = JSON.stringify([inputMedia('photo', 'file0', 'caption'), inputMedia('video', 'file1')]);
    const file = png();
    expect(botApiProblems('sendMediaGroup', {}, { chat_id: chat(), media, file0: file, file1: file })).toEqual([]);
  });
});

describe('the fake refuses what the Bot API does not define', () => {
  it('a parameter the method does not have, with Telegram\'s error shape, recorded', async () => {
    const answer = await call('sendMessage', { ...messageParams(chat(), 'hi'), reply_to: 1 });
    expect(answer).toEqual({ status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: sendMessage has no parameter "reply_to"' } });
    expect(tg.messages).toEqual([]);
    expect(tg.contractViolations).toEqual(['sendMessage: sendMessage has no parameter "reply_to"']);
  });

  it('a missing required parameter and a value of the wrong type', async () => {
    expect((await call('sendMessage', { text: 'hi' })).body.description).toBe('Bad Request: parameter "chat_id" is required');
    expect((await call('deleteMessage', { chat_id: chat(), message_id: '7' })).body.description).toBe('Bad Request: parameter "message_id" must be Integer');
    expect((await call('sendMessage', { chat_id: Number(tg.chat.id), text: 'hi', parse_mode: 1 })).body.description).toBe('Bad Request: parameter "parse_mode" must be String');
    expect(tg.contractViolations).toHaveLength(3);
  });

  it('form values as their types read them: a Boolean is true or false, an upload a file part', async () => {
    const form = new FormData();
    form.append('chat_id', chat());
    form.append('video', 'not-a-file-id-but-a-string-is-allowed');
    form.append('supports_streaming', 'yes');
    expect((await call('sendVideo', form)).body.description).toBe('Bad Request: parameter "supports_streaming" must be Boolean');
  });

  it('inside JSON-serialized objects: fields of the type, required ones, each item of an album by its own type', async () => {
    const reply = await call('sendMessage', { chat_id: chat(), text: 'hi', reply_parameters: { message: 1 } });
    expect(reply.body.description).toBe('Bad Request: parameter "reply_parameters" has no field "message"');
    const form = new FormData();
    form.append('chat_id', chat());
    form.append('file0', png(), 'photo.png');
    form.append('file1', png(), 'photo.png');
    form.append('media', JSON.stringify([{ type: 'photo', media: 'attach://file0', supports_streaming: true }, { type: 'photo', media: 'attach://file1' }]));
    const album = await call('sendMediaGroup', form);
    expect(album.status).toBe(400);
    expect(album.body.description).toBe('Bad Request: parameter "media"[0] has no field "supports_streaming"');
    form.set('media', JSON.stringify([{ type: 'photo', media: 'attach://file0' }, { type: 'video' }]));
    expect((await call('sendMediaGroup', form)).body.description).toBe('Bad Request: sendMediaGroup has no parameter "file1"; parameter "media"[1].media is required');
  });

  it('a file part no field attaches', async () => {
    const form = new FormData();
    form.append('chat_id', chat());
    form.append('photo', png(), 'photo.png');
    form.append('extra', png(), 'extra.png');
    expect((await call('sendPhoto', form)).body.description).toBe('Bad Request: sendPhoto has no parameter "extra"');
  });

  it('a method the Bot API does not have: 404 Not Found', async () => {
    expect(await call('sendPost', { chat_id: chat(), text: 'hi' })).toEqual({ status: 404, body: { ok: false, error_code: 404, description: 'Not Found' } });
    expect(tg.contractViolations).toEqual(['sendPost: not a Bot API method']);
  });

  it('still takes what the Bot API allows: a numeric chat id in JSON, a mixed album of a photo and a video', async () => {
    expect((await call('sendMessage', { chat_id: tg.chat.id, text: 'hi' })).body.ok).toBe(true);
    const form = new FormData();
    form.append('chat_id', chat());
    form.append('file0', png(), 'photo.png');
    form.append('file1', blobOf(Buffer.from('fake mp4'), 'video/mp4'), 'video.mp4');
    form.append('media', JSON.stringify([inputMedia('photo', 'file0', 'both'), inputMedia('video', 'file1')]));
    const album = await call('sendMediaGroup', form);
    expect(album.body.ok).toBe(true);
    expect(tg.contractViolations).toEqual([]);
  });
});
