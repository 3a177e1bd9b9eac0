// Changing what went out (issue 24): DELETE /posts/{id} with deleteOnPlatform and PUT /posts/{id} on a published post,
// made by the `platform_change` job as recorded steps, exactly once, against fake platforms; refused with the reason where
// the platform cannot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { chainOf, publishedPost, publishUntilSettled, waitFor } from './helpers/posts.js';
import { setupToken } from './helpers/setup-link.js';
import { connectFakeChannels } from './helpers/channels.js';
import { loseAnswerOf } from './helpers/lost-answer.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { startMediumFake, type MediumFake } from './fakes/medium.js';
import { runPlatformChanges, type ChangeOutcome } from '../tools/internal/platform-change-run.js';
import { cancelChange, changeJobKey } from '../tools/internal/platform-changes.js';
import { sweepPendingChanges } from '../src/jobs/platform-change.js';
import { signUp } from '../tools/internal/accounts.js';
import { registerApp } from '../tools/internal/oauth-apps.js';
import { approve, checkAuthorizationRequest, exchangeCode } from '../tools/internal/oauth.js';
import { changeUntilSettled } from './helpers/after-publishing.js';

let herald: Herald;
let bluesky: BlueskyFake;
let mastodon: MastodonFake;
let telegram: TelegramFake;
let medium: MediumFake;
const channel: Record<'bluesky' | 'mastodon' | 'telegram' | 'medium', string> = { bluesky: '', mastodon: '', telegram: '', medium: '' };

beforeAll(async () => {
  [bluesky, mastodon, telegram, medium] = await Promise.all([startBlueskyFake(), startMastodonFake(), startTelegramFake(), startMediumFake()]);
  herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url }, medium: { api: medium.url } }) });
  Object.assign(channel, await connectFakeChannels(herald, { bluesky, mastodon, telegram }));
  const connected = await herald.rest('POST', '/integrations/medium/connect', { integrationToken: medium.token });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channel.medium = connected.body.id;
});

afterAll(async () => {
  await herald.stop();
  await Promise.all([bluesky.close(), mastodon.close(), telegram.close(), medium.close()]);
});

/** A published post: created for now and published through the real publishing run. */
async function published(integrationId: string, parts: string[]): Promise<string> {
  return publishedPost(herald, integrationId, parts, { type: 'now', allowDuplicate: true });
}

/** Runs the change job of a chain until it settles, moving the clock to each time it would run again. */
const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

/** The post as GET /posts lists it (around now), or undefined when it is no longer listed. */
async function listed(id: string): Promise<Record<string, any> | undefined> {
  const day = 86_400_000;
  const query = new URLSearchParams({ startDate: new Date(Date.now() - day).toISOString(), endDate: new Date(Date.now() + 2 * day).toISOString() });
  const answer = await herald.rest('GET', `/posts?${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body.posts as Record<string, any>[]).find((post) => post.id === id);
}

async function hasChangeJob(rootId: string): Promise<boolean> {
  const rows = await herald.services.orm.em.getConnection().execute('select 1 from graphile_worker.jobs where key = ?', [changeJobKey(rootId)]);
  return rows.length > 0;
}

describe('delete on the platform', () => {
  it('deletes a published Mastodon thread there, replies first, exactly once, then forgets it in Herald', async () => {
    const other = mastodon.seedStatus('An older status that must stay', { createdAt: new Date(Date.now() - 3_600_000) });
    const id = await published(channel.mastodon, ['First of two', 'Second of two']);
    const [first, second] = await chainOf(herald, id);

    const answer = await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.onPlatform.pending.map((item: { id: string }) => item.id)).toEqual([first.id, second.id]);
    expect(answer.body.onPlatform.stayed).toEqual([]);
    expect(await hasChangeJob(id)).toBe(true);
    // Until the job ran, the post stays listed and shows what is under way; nothing was deleted on the platform yet.
    const before = { body: (await listed(id))! };
    expect(before.body.platformChange).toMatchObject({ action: 'delete', state: 'pending' });
    expect(mastodon.deleted).toHaveLength(0);

    const runs = await settleChanges(id);
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(mastodon.deleted.map((status) => status.id)).toEqual([second.releaseId, first.releaseId]);
    expect(mastodon.statuses.map((status) => status.id)).toContain(other.id);
    expect(await listed(id)).toBeUndefined();

    // Running again (a duplicate job) deletes nothing more.
    expect(await runPlatformChanges(herald.services, id)).toMatchObject({ kind: 'skipped' });
    expect(mastodon.server.requestsTo('DELETE', '/api/v1/statuses/*')).toHaveLength(2);
  });

  it('resumes after a lost answer without deleting anything else', async () => {
    const id = await published(channel.mastodon, ['Lost answer of a deletion']);
    const [item] = await chainOf(herald, id);
    const deletesBefore = mastodon.server.requestsTo('DELETE', '/api/v1/statuses/*').length;
    expect((await herald.rest('DELETE', `/posts/${id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE');
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(id);
    } finally {
      restore();
    }
    expect(runs[0].kind).toBe('waiting');
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    // The status went with the lost call; the second call found it gone (404) and counted that as done.
    expect(mastodon.deleted.filter((status) => status.id === item.releaseId)).toHaveLength(1);
    expect(mastodon.server.requestsTo('DELETE', '/api/v1/statuses/*').length - deletesBefore).toBe(2);
    expect(await listed(id)).toBeUndefined();
  });

  it('deletes a group where each platform can, and says which items stay and why', async () => {
    const created = await herald.rest('POST', '/posts', {
      type: 'now',
      date: new Date().toISOString(),
      shortLink: false,
      tags: [],
      allowDuplicate: true,
      posts: [
        { integration: { id: channel.bluesky }, value: [{ content: 'Announced on two channels', image: [] }], settings: {} },
        { integration: { id: channel.medium }, value: [{ content: '<p>Announced on two channels</p>', image: [] }], settings: { title: 'Announced' } },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const [onBluesky, onMedium] = created.body.map((entry: { postId: string }) => entry.postId);
    for (const id of [onBluesky, onMedium]) expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
    const [skeet] = await chainOf(herald, onBluesky);
    const group = (await listed(onBluesky))!.group;

    const answer = await herald.rest('DELETE', `/posts/group/${group}`, { deleteOnPlatform: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.onPlatform.pending).toEqual([expect.objectContaining({ postId: onBluesky, platform: 'bluesky' })]);
    expect(answer.body.onPlatform.stayed).toEqual([expect.objectContaining({ postId: onMedium, platform: 'medium', reason: expect.stringMatching(/Medium's API .* no way to delete/) })]);
    expect(answer.body.onPlatform.message).toMatch(/1 published item stay on the platform/);
    // What cannot be deleted on its platform is forgotten in Herald at once, as a plain DELETE does.
    expect(await listed(onMedium)).toBeUndefined();

    expect((await settleChanges(onBluesky)).at(-1)).toEqual({ kind: 'done' });
    expect(bluesky.deleted.map((record) => record.uri)).toEqual([skeet.releaseId]);
    expect(bluesky.records.some((record) => record.uri === skeet.releaseId)).toBe(false);
    expect(await listed(onBluesky)).toBeUndefined();
  });

  it('re-enqueues a change whose job was lost (a crash between commit and enqueue) with the publishing sweep', async () => {
    const id = await published(channel.mastodon, ['A job lost in a crash']);
    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    const em = herald.services.orm.em.fork();
    await cancelChange(em, id);
    expect(await hasChangeJob(id)).toBe(false);
    expect(await sweepPendingChanges(em, new Date())).toBeGreaterThanOrEqual(1);
    expect(await hasChangeJob(id)).toBe(true);
    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
  });

  it('without deleteOnPlatform deletes in Herald only, and refuses a deleteOnPlatform that is not a boolean', async () => {
    const id = await published(channel.mastodon, ['Stays on Mastodon']);
    const bad = await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=yes`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/deleteOnPlatform/);
    const [item] = await chainOf(herald, id);
    const answer = await herald.rest('DELETE', `/posts/${id}`);
    expect(answer).toMatchObject({ status: 200, body: { id } });
    expect(answer.body.onPlatform).toBeUndefined();
    expect(await hasChangeJob(id)).toBe(false);
    expect(mastodon.statuses.some((status) => status.id === item.releaseId)).toBe(true);
  });
});

describe('edit on the platform', () => {
  it('edits a published Mastodon status in place, keeping its media, and stores the new text once Mastodon took it', async () => {
    const id = await published(channel.mastodon, ['Typo in the frist post']);
    const [item] = await chainOf(herald, id);
    const status = mastodon.statuses.find((entry) => entry.id === item.releaseId)!;
    status.media_ids = ['media-kept'];
    mastodon.media.push({ id: 'media-kept', bytes: Buffer.from('x'), mimeType: 'image/png', description: null, filename: 'kept.png', pendingPolls: 0 });

    const answer = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Typo in the first post, fixed', image: [] }] });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.platformChange).toMatchObject({ action: 'edit', state: 'pending' });
    // The stored text changes only once the platform took the edit.
    expect(answer.body.content).toBe(item.content);

    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
    expect(status.status).toBe('Typo in the first post, fixed');
    expect(status.media_ids).toEqual(['media-kept']);
    expect(status.edited_at).toBeTruthy();
    const after = { body: (await listed(id))! };
    expect(after.body.content).toContain('Typo in the first post, fixed');
    expect(after.body.platformChange).toMatchObject({ action: 'edit', state: 'done' });
    expect(mastodon.server.requestsTo('PUT', `/api/v1/statuses/${item.releaseId}`)).toHaveLength(1);
  });

  it('fails with the platform\'s words when the status is gone, and keeps the earlier text', async () => {
    const id = await published(channel.mastodon, ['Deleted by hand on the instance']);
    const [item] = await chainOf(herald, id);
    mastodon.statuses.find((entry) => entry.id === item.releaseId)!.foreign = true;
    expect((await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'An edit that cannot land', image: [] }] })).status).toBe(200);
    const runs = await settleChanges(id);
    expect(runs.at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/Mastodon refused the edit: .*Record not found/) });
    const after = { body: (await listed(id))! };
    expect(after.body.content).toBe(item.content);
    expect(after.body.platformChange).toMatchObject({ action: 'edit', state: 'failed', message: expect.stringMatching(/Record not found/) });
  });

  it('refuses what a published post cannot change: other items, the date, a platform without edits', async () => {
    const id = await published(channel.mastodon, ['One item only']);
    const more = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'One', image: [] }, { content: 'Two', image: [] }] });
    expect(more.status).toBe(409);
    expect(more.body.message ?? JSON.stringify(more.body)).toMatch(/cannot add or remove items/);
    const date = await herald.rest('PUT', `/posts/${id}`, { date: new Date(Date.now() + 86_400_000).toISOString() });
    expect(date.status).toBe(409);
    expect(JSON.stringify(date.body)).toMatch(/date of a published post cannot change/);

    const onBluesky = await published(channel.bluesky, ['Skeets are records']);
    const refused = await herald.rest('PUT', `/posts/${onBluesky}`, { value: [{ content: 'Edited skeet', image: [] }] });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/Bluesky/);
    expect(JSON.stringify(refused.body)).toMatch(/cannot be edited/);
    expect(await hasChangeJob(onBluesky)).toBe(false);
  });
});

describe('Telegram', () => {
  it('edits a message\'s text, deletes it, and says why one older than 48 hours stays', async () => {
    const id = await published(channel.telegram, ['Telegram text with a typo']);
    const [item] = await chainOf(herald, id);
    expect((await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Telegram text, fixed', image: [] }] })).status).toBe(200);
    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
    expect(telegram.messages.find((message) => message.message_id === Number(item.releaseId))?.text).toBe('Telegram text, fixed');

    const old = await published(channel.telegram, ['Sent three days ago']);
    const [oldItem] = await chainOf(herald, old);
    telegram.age(Number(oldItem.releaseId), 72);
    expect((await herald.rest('DELETE', `/posts/${old}?deleteOnPlatform=true`)).status).toBe(200);
    expect((await settleChanges(old)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/can't be deleted.*48 hours/) });
    expect((await listed(old))!.platformChange).toMatchObject({ action: 'delete', state: 'failed' });
    expect(telegram.messages.some((message) => message.message_id === Number(oldItem.releaseId))).toBe(true);

    expect((await herald.rest('DELETE', `/posts/${id}?deleteOnPlatform=true`)).status).toBe(200);
    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
    expect(telegram.deleted.map((message) => message.message_id)).toEqual([Number(item.releaseId)]);
  });
});

describe('the approval gate', () => {
  it('holds an agent\'s edit and deletion of a published post for an owner; rejected changes nothing, approved is made by the worker', async () => {
    const em = herald.services.orm.em.fork();
    const userId = (await signUp(em, { email: 'owner@example.com', password: 'correct horse battery', name: 'Olivia', organizationName: '', invitationToken: await setupToken(herald) }, { allowSignup: false, now: new Date() })).user.id;
    const { app, clientSecret } = await registerApp(em, herald.organizationId, { name: 'Acme Planner', redirectUrl: 'https://app.example/callback' }, new Date());
    const request = await checkAuthorizationRequest(em, { client_id: app.clientId, response_type: 'code' });
    const code = new URL(await approve(em, request, userId, herald.organizationId, new Date())).searchParams.get('code')!;
    const agent = `Bearer ${(await exchangeCode(em, { grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: clientSecret }, new Date())).access_token}`;
    expect((await herald.rest('PUT', '/approval-settings', { agents: true })).status).toBe(200);

    const toEdit = await published(channel.mastodon, ['An agent wants to reword this']);
    const toDelete = await published(channel.mastodon, ['An agent wants this gone']);
    const [edited] = await chainOf(herald, toEdit);
    const [doomed] = await chainOf(herald, toDelete);

    const edit = await herald.rest('PUT', `/posts/${toEdit}`, { value: [{ content: 'Reworded by the agent', image: [] }] }, { authorization: agent });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(edit.body.platformChange).toMatchObject({ action: 'edit', state: 'awaiting_approval' });
    const deletion = await herald.rest('DELETE', `/posts/${toDelete}?deleteOnPlatform=true`, undefined, { authorization: agent });
    expect(deletion.status, JSON.stringify(deletion.body)).toBe(200);
    expect(deletion.body.onPlatform.awaitingApproval.map((item: { id: string }) => item.id)).toEqual([doomed.id]);
    expect(await hasChangeJob(toEdit)).toBe(false);
    expect(await hasChangeJob(toDelete)).toBe(false);
    // Agents cannot decide.
    expect((await herald.rest('POST', `/posts/${toDelete}/approve`, undefined, { authorization: agent })).status).toBe(403);
    // Nor can a key that may approve decide a change it asked for itself.
    const reviewer = await herald.rest('POST', '/keys', { name: 'Reviewer agent', scopes: ['read', 'posts:write', 'approve'] });
    expect(reviewer.status, JSON.stringify(reviewer.body)).toBe(201);
    const selfAsked = await published(channel.mastodon, ['The reviewer wants to reword this']);
    const asked = await herald.rest('PUT', `/posts/${selfAsked}`, { value: [{ content: 'Reworded by the reviewer', image: [] }] }, { authorization: reviewer.body.secret });
    expect(asked.body.platformChange).toMatchObject({ action: 'edit', state: 'awaiting_approval' });
    const own = await herald.rest('POST', `/posts/${selfAsked}/approve`, undefined, { authorization: reviewer.body.secret });
    expect(own.status, JSON.stringify(own.body)).toBe(403);
    expect(own.body.message).toContain('asked for the change');

    const rejected = await herald.rest('POST', `/posts/${toEdit}/reject`, { reason: 'Keep the original wording' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body).toMatchObject({ id: toEdit, state: 'PUBLISHED', platformChange: 'edit', approval: { decision: 'rejected', reason: 'Keep the original wording' } });
    expect((await listed(toEdit))!.platformChange).toMatchObject({ action: 'edit', state: 'rejected', message: expect.stringMatching(/Keep the original wording/) });

    const approved = await herald.rest('POST', `/posts/${toDelete}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ id: toDelete, state: 'PUBLISHED', platformChange: 'delete', approval: { decision: 'approved' } });
    expect(await hasChangeJob(toDelete)).toBe(true);
    await herald.startWorker();
    await waitFor(async () => ((await listed(toDelete)) === undefined ? true : undefined));
    expect(mastodon.deleted.filter((status) => status.id === doomed.releaseId)).toHaveLength(1);
    expect(mastodon.statuses.find((status) => status.id === edited.releaseId)?.status).toBe('An agent wants to reword this');
    expect(mastodon.server.requestsTo('PUT', `/api/v1/statuses/${edited.releaseId}`)).toHaveLength(0);
  });
});
