// Skool (unofficial web API) end to end against its fake: the session cookies checked at connect, the groups and label
// helpers, posts with title, label and files by presigned upload, comments down the chain, a failed upload resumed without
// a second file record, refusals in Skool's words, rate limits, and the end of the session flagging the channel.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startSkoolFake, type SkoolFake } from '../fakes/skool.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { upload } from '../helpers/media-samples.js';
import { chainOf, createPost, publishUntilSettled, waitForPublished } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

let fake: SkoolFake;
let herald: Herald;
let channelId: string;
let picture: { id: string; path: string };
const settings = (extra: Record<string, string> = {}) => ({ __type: 'skool', group: 'group-1', label: 'label-2', title: 'Shipped it', ...extra });
const trigger = (methodName: string, data: Record<string, string> = {}) => herald.rest('POST', `/integration-trigger/${channelId}`, { methodName, data });

beforeAll(async () => {
  fake = await startSkoolFake();
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ skool: fake.endpoints }) }, { guard: { allowLoopback: true } });
  const uploaded = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'win.png');
  picture = { id: uploaded.body.id, path: uploaded.body.path };
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

describe('connecting with the session cookies', () => {
  it('refuses cookies Skool does not accept, saying the session ended', async () => {
    const refused = await herald.rest('POST', '/integrations/skool/connect', { authToken: 'stale', clientId: fake.clientId });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^Skool refused the connection: Skool refused the session \(.*auth required.*\); the cookies expired or were signed out/);
  });

  it('connects with auth_token and client_id, and knows when the session ends', async () => {
    const connected = await herald.rest('POST', '/integrations/skool/connect', { authToken: fake.authToken, clientId: fake.clientId });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    channelId = connected.body.id;
    expect(connected.body).toMatchObject({ identifier: 'skool', name: 'Ada Lovelace', profile: 'ada-lovelace-1234', picture: `${fake.url}/avatar.jpg` });
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(row.tokenExpiresAt!.getTime()).toBe(fake.sessionEnds * 1000);
    expect(fake.server.requestsTo('GET', '/self').at(-1)!.headers.cookie).toBe(`auth_token=${fake.authToken}; client_id=${fake.clientId}`);
  });
});

describe('helpers', () => {
  it('lists the groups and a group\'s labels through the trigger endpoint', async () => {
    expect((await trigger('groups')).body).toEqual({ output: [{ id: 'group-1', name: 'Builders Club' }, { id: 'group-2', name: 'VIP Lounge' }] });
    expect((await trigger('label', { group: 'group-1' })).body).toEqual({ output: [{ id: 'label-1', name: 'Announcements' }, { id: 'label-2', name: 'Wins' }] });
    expect((await trigger('label', { group: 'group-2' })).body).toEqual({ output: [] });
  });
});

describe('publishing', () => {
  it('posts with its title, label and a picture through the worker, then comments down the chain', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: 'We launched today', image: [picture] }, 'Thanks everyone', { content: 'A reply with the screenshot', image: [picture] }], { settings: settings() });
      const items = await waitForPublished(herald, rootId);
      const [post, comment, reply] = fake.posts.slice(-3);
      expect(post).toMatchObject({ postType: 'generic', groupId: 'group-1', title: 'Shipped it', content: 'We launched today', labels: 'label-2', attachments: [fake.files[0].id] });
      expect(fake.files[0]).toMatchObject({ contentType: 'image/png', length: tinyPng().length });
      expect(fake.files[0].bytes!.equals(tinyPng())).toBe(true);
      expect(fake.server.requestsTo('POST', '/files')[0].json).toMatchObject({ file_name: expect.stringMatching(/\.png$/), content_type: 'image/png', content_length: tinyPng().length, owner_id: 'user-1' });
      expect(items[0]).toMatchObject({ releaseId: post.id, releaseUrl: `${fake.url}/builders-club/shipped-it` });
      expect([comment.rootId, comment.parentId, comment.content]).toEqual([post.id, post.id, 'Thanks everyone']);
      expect([reply.rootId, reply.parentId, reply.attachments]).toEqual([post.id, comment.id, [fake.files[1].id]]);
      expect(items[2].releaseId).toBe(reply.id);
    } finally {
      await worker.stop();
    }
  });

  it('resumes a failed upload with the file record it already made, not a second one', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'Second try', image: [picture] }], { settings: settings({ title: 'Resumed' }) });
    const records = fake.files.length;
    fake.server.failNext('PUT', '/storage/*', { status: 503, body: 'Slow Down' });
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.files).toHaveLength(records + 1);
    expect(fake.posts.at(-1)).toMatchObject({ title: 'Resumed', attachments: [fake.files.at(-1)!.id] });
  });

  it('retries a 429 with backoff', async () => {
    const rootId = await createPost(herald, channelId, ['Busy'], { settings: settings({ title: 'Busy' }) });
    fake.server.failNext('POST', '/posts', { status: 429, headers: { 'retry-after': '90' }, json: { error: 'too many requests' } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    expect((await chainOf(herald, rootId))[0].nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(89_000);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('stops a post whose answer was lost after Skool made it with "could not confirm" (no lookup exists), and never posts it twice', async () => {
    const rootId = await createPost(herald, channelId, ['Lost answer'], { settings: settings({ title: 'Lost answer' }) });
    const restore = loseAnswerOf(herald, (request) => /\/posts\?follow=true$/.test(request.url));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    } finally {
      restore();
    }
    expect((await chainOf(herald, rootId))[0].error).toMatch(/^Could not confirm whether Skool published this item/);
    expect(fake.posts.filter((post) => JSON.stringify(post).includes('Lost answer'))).toHaveLength(1);
  });

  it('puts a post in a group that requires a level in ERROR, with Skool\'s words, and notifies', async () => {
    const rootId = await createPost(herald, channelId, ['Not allowed'], { settings: settings({ group: 'group-2', label: 'none' }) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/^Skool refused the post: this account may not post in this group \(.*must be admin or level 3 to post.*\): Skool requires a higher level or admin rights$/);
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('must be admin or level 3'))).toBe(true);
  });

  it('flags the channel for reconnection when the Skool session ends (there is no refresh)', async () => {
    fake.endSession();
    const rootId = await createPost(herald, channelId, ['After logout'], { settings: settings({ title: 'Logged out' }) });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId })).refreshNeeded).toBe(true);
    expect((await trigger('groups')).status).toBe(401);
  });
});
