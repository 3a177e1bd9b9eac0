// Farcaster (Neynar) comments and changes against the fake, through Herald: replies read from the cast conversation at any
// depth and past a page, stored once; a reply published under THAT reply exactly once (idem, after a crash); hiding and
// deleting someone's reply refused as not_supported; a published thread deleted cast by cast (a lost answer, a cast already
// gone, an unknown signer that must not count as done); an edit refused with the reason; the provider's refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import warpcast from '../../providers/warpcast.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { startWarpcastFake, type WarpcastFake, type WarpcastFakeCast } from '../fakes/warpcast.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { changeUntilSettled, pollCommentsAt } from '../helpers/after-publishing.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted } from '../helpers/posts.js';
import { providerContext } from '../helpers/provider-context.js';

let fake: WarpcastFake;
let herald: Herald;
let channelId: string;

beforeAll(async () => {
  fake = await startWarpcastFake();
  herald = await startHerald(
    { COMMENT_POLL_SECONDS: '60', WARPCAST_CLIENT_ID: fake.clientId, WARPCAST_CLIENT_SECRET: fake.apiKey, SOCIAL_ENDPOINTS: JSON.stringify({ warpcast: { api: fake.url, web: 'https://farcaster.example' } }) },
    { guard: { allowLoopback: true } },
  );
  const connected = await herald.rest('POST', '/integrations/warpcast/connect', { signerUuid: fake.signerUuid });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

async function published(parts: string[], settings: Record<string, unknown> = {}) {
  const id = await createPost(herald, channelId, parts, { allowDuplicate: true, settings });
  expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
  return chainOf(herald, id);
}

const context = () => providerContext({ endpoints: { api: fake.url, web: 'https://farcaster.example' }, auth: { accessToken: fake.signerUuid, internalId: String(fake.fid) }, client: { clientId: fake.clientId, clientSecret: fake.apiKey } });

describe('Farcaster comments', () => {
  it('reads every reply: deeper than one read reaches, past a page, once; the account\'s own thread cast is not a comment', async () => {
    const [root] = await published(['Ask me about casts', 'A second cast of the thread']);
    const base = Date.now() - 60_000;
    // A chain seven levels deep: one conversation read answers five.
    let parent = root.releaseId!;
    const deep: WarpcastFakeCast[] = [];
    for (let level = 1; level <= 7; level++) {
      const reply = fake.addReply(`level ${level}`, { parent, fid: 900 + level, username: `deep${level}`, timestamp: new Date(base + level) });
      deep.push(reply);
      parent = reply.hash;
    }
    // 51 direct replies: more than the 50 a page holds.
    for (let index = 0; index < 50; index++) fake.addReply(`top ${index}`, { parent: root.releaseId!, fid: 500, username: 'bob', timestamp: new Date(base + 100 + index) });

    await pollCommentsAt(herald, minutesLater(5));
    await pollCommentsAt(herald, minutesLater(10)); // a second read stores nothing twice

    const listed = await herald.rest('GET', `/comments?post=${root.id}&pageSize=100`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.total).toBe(57);
    const byText = new Map<string, any>(listed.body.comments.map((comment: any) => [comment.text, comment]));
    expect(byText.get('level 1')).toMatchObject({ platform: 'warpcast', platformId: deep[0].hash, parentId: null, author: { id: '901', handle: 'deep1', name: 'Deep1' }, url: `https://farcaster.example/~/conversations/${deep[0].hash}` });
    expect(byText.get('level 7')).toMatchObject({ platformId: deep[6].hash, parentPlatformId: deep[5].hash, parentId: byText.get('level 6').id });
    expect(byText.has('A second cast of the thread')).toBe(false);

    const reads = fake.server.requestsTo('GET', '/v2/farcaster/cast/conversation/');
    for (const read of reads) expect(Object.fromEntries(read.query)).toMatchObject({ type: 'hash', reply_depth: '5', limit: '50' });
    expect(reads.some((read) => read.query.get('identifier') === root.releaseId && read.query.get('cursor') === '50')).toBe(true);
    expect(reads.some((read) => read.query.get('identifier') === deep[4].hash)).toBe(true);
  });

  it('publishes a reply under THAT reply, exactly once even after a crash mid-cast', async () => {
    const [root] = await published(['Replies go where they belong']);
    const question = fake.addReply('What about channels?', { parent: root.releaseId!, fid: 601, username: 'carol' });
    const follow = fake.addReply('And long casts?', { parent: question.hash, fid: 602, username: 'dave' });
    await pollCommentsAt(herald, minutesLater(5));
    const comment = (await herald.rest('GET', `/comments?post=${root.id}`)).body.comments.find((entry: any) => entry.platformId === follow.hash);

    const reply = await herald.rest('POST', `/comments/${comment.id}/reply`, { content: 'Up to 1024 bytes.' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');
    await reopenAsInterrupted(herald, reply.body.postId, 'reply:profile');
    expect((await publishUntilSettled(herald, reply.body.postId)).outcome.kind).toBe('published');

    const made = fake.casts.filter((entry) => entry.text === 'Up to 1024 bytes.');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ parent: follow.hash, parentAuthorFid: fake.fid, idem: reply.body.postId, channel: null });
    const sends = fake.server.requestsTo('POST', '/v2/farcaster/cast/').filter((request) => request.json?.text === 'Up to 1024 bytes.');
    expect(sends).toHaveLength(2); // sent again after the crash with the same idem: Neynar answered the cast it made
    expect(sends[1].json).toEqual(sends[0].json);

    await pollCommentsAt(herald, minutesLater(30));
    const states = (await herald.rest('GET', `/comments?post=${root.id}`)).body.comments.map((entry: any) => [entry.text, entry.state]);
    expect(states).toEqual(expect.arrayContaining([['And long casts?', 'answered'], ['What about channels?', 'new']]));
    expect(states).toHaveLength(2);
  });

  it('reads the replies under each channel\'s cast of a post as comments on the post, and deletes every cast', async () => {
    const settings = { subreddit: [{ value: { id: 'farcaster' } }, { value: { id: 'photography' } }] };
    const [root] = await published(['Cast in two channels'], settings);
    const casts = JSON.parse(root.releaseMeta!.casts) as { channel: string; hash: string }[];
    expect(casts.map((entry) => entry.channel)).toEqual(['farcaster', 'photography']);
    fake.addReply('From the farcaster channel', { parent: casts[0].hash, fid: 606, username: 'gina' });
    fake.addReply('From the photography channel', { parent: casts[1].hash, fid: 607, username: 'hal' });
    await pollCommentsAt(herald, minutesLater(5));
    const listed = (await herald.rest('GET', `/comments?post=${root.id}`)).body.comments;
    expect(listed.map((entry: any) => [entry.text, entry.parentPlatformId]).sort()).toEqual([['From the farcaster channel', null], ['From the photography channel', null]]);

    expect((await herald.rest('DELETE', `/posts/${root.id}?deleteOnPlatform=true`)).status).toBe(200);
    expect((await changeUntilSettled(herald, root.id)).at(-1)).toEqual({ kind: 'done' });
    expect(casts.every((entry) => fake.deleted.some((gone) => gone.hash === entry.hash))).toBe(true);
  });

  it('refuses hiding or deleting someone else\'s reply: Farcaster has no such call', async () => {
    const [root] = await published(['Moderation on Farcaster']);
    fake.addReply('spam', { parent: root.releaseId!, fid: 603, username: 'spammer' });
    await pollCommentsAt(herald, minutesLater(5));
    const comment = (await herald.rest('GET', `/comments?post=${root.id}`)).body.comments[0];
    const hidden = await herald.rest('POST', `/comments/${comment.id}/hide`, { hidden: true });
    expect(hidden.status).toBe(400);
    expect(hidden.body).toMatchObject({ code: 'not_supported' });
    const deleted = await herald.rest('DELETE', `/comments/${comment.id}`);
    expect(deleted.status).toBe(400);
    expect(deleted.body).toMatchObject({ code: 'not_supported' });
    expect(fake.server.requestsTo('DELETE', '/v2/farcaster/cast/').filter((request) => request.json?.target_hash === comment.platformId)).toHaveLength(0);
  });

  it('answers Neynar\'s refusals of a read: a 429 is retryable, a wrong API key the operator\'s to fix', async () => {
    const [root] = await published(['Read refusals']);
    fake.server.failNext('GET', '/v2/farcaster/cast/conversation/', { status: 429, json: { code: 'RateLimitExceeded', message: 'Too many requests' } });
    const limited = await warpcast.comments!(context(), { id: root.releaseId! }, undefined).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(PlatformHttpError);
    expect(limited).toMatchObject({ retryable: true });
    const wrongKey = providerContext({ endpoints: { api: fake.url }, auth: { accessToken: fake.signerUuid, internalId: String(fake.fid) }, client: { clientId: fake.clientId, clientSecret: 'wrong' } });
    await expect(warpcast.comments!(wrongKey, { id: root.releaseId! }, undefined)).rejects.toThrow(/API key \(WARPCAST_CLIENT_SECRET\)/);
    expect(await warpcast.comments!(context(), { id: root.releaseId! }, undefined)).toEqual([]);
  });
});

describe('changing what went out on Farcaster', () => {
  it('deletes a published thread cast by cast, replies first, exactly once, leaving others\' replies alone', async () => {
    const [first, second] = await published(['A thread to delete', 'Its second cast']);
    const other = fake.addReply('Someone else\'s reply', { parent: first.releaseId!, fid: 604, username: 'erin' });
    const answer = await herald.rest('DELETE', `/posts/${first.id}?deleteOnPlatform=true`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await changeUntilSettled(herald, first.id)).at(-1)).toEqual({ kind: 'done' });
    const deletes = fake.server.requestsTo('DELETE', '/v2/farcaster/cast/').filter((request) => [first.releaseId, second.releaseId].includes(request.json?.target_hash));
    expect(deletes.map((request) => request.json)).toEqual([
      { signer_uuid: fake.signerUuid, target_hash: second.releaseId },
      { signer_uuid: fake.signerUuid, target_hash: first.releaseId },
    ]);
    expect(fake.deleted.map((entry) => entry.hash)).toEqual(expect.arrayContaining([first.releaseId, second.releaseId]));
    expect(fake.casts.some((entry) => entry.hash === other.hash)).toBe(true);
  });

  it('resumes after a lost answer: the cast already gone (404) counts as deleted', async () => {
    const [item] = await published(['Lost answer of a deletion']);
    expect((await herald.rest('DELETE', `/posts/${item.id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE');
    let runs;
    try {
      runs = await changeUntilSettled(herald, item.id);
    } finally {
      restore();
    }
    expect(runs[0].kind).toBe('waiting');
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(fake.deleted.filter((entry) => entry.hash === item.releaseId)).toHaveLength(1);
    expect(fake.server.requestsTo('DELETE', '/v2/farcaster/cast/').filter((request) => request.json?.target_hash === item.releaseId)).toHaveLength(2);
  });

  it('does not take Neynar\'s 404 for an unknown signer as a cast already gone', async () => {
    const [item] = await published(['Deleted with a signer Neynar no longer knows']);
    const signer = fake.signers.get(fake.signerUuid)!;
    fake.signers.delete(fake.signerUuid);
    try {
      expect((await herald.rest('DELETE', `/posts/${item.id}?deleteOnPlatform=true`)).status).toBe(200);
      expect((await changeUntilSettled(herald, item.id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/Signer not found/) });
    } finally {
      fake.signers.set(fake.signerUuid, signer);
    }
    expect(fake.casts.some((entry) => entry.hash === item.releaseId)).toBe(true);
  });

  it('refuses an edit with the reason, before anything is sent', async () => {
    const [item] = await published(['Casts are signed messages']);
    const refused = await herald.rest('PUT', `/posts/${item.id}`, { value: [{ content: 'Edited cast', image: [] }] });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/Farcaster cast is a signed message that cannot be edited/);
    expect(fake.casts.find((entry) => entry.hash === item.releaseId)?.text).toBe('Casts are signed messages');
  });

  it('refuses a delete the signer may not make (read-only, another fid\'s cast) on the fake as Neynar does', async () => {
    const [item] = await published(['Refusals of a delete']);
    const someone = fake.addReply('Not yours', { parent: item.releaseId!, fid: 605, username: 'frank' });
    await expect(warpcast.deletePublished!(context(), { id: someone.hash })).rejects.toThrow(/only delete casts of its own fid/);
    const readOnly = crypto.randomUUID();
    fake.signers.set(readOnly, { status: 'approved', fid: fake.fid, permissions: ['READ_ONLY'] });
    const reader = providerContext({ endpoints: { api: fake.url }, auth: { accessToken: readOnly, internalId: String(fake.fid) }, client: { clientId: fake.clientId, clientSecret: fake.apiKey } });
    await expect(warpcast.deletePublished!(reader, { id: item.releaseId! })).rejects.toThrow(/no permission to delete/);
    expect(fake.casts.some((entry) => entry.hash === item.releaseId)).toBe(true);
  });
});
