// REST v1 end to end: every route's happy path and its client errors, on a real Herald with channels connected
// through the API against the fake Bluesky PDS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { CustomerSchema, IntegrationSchema, PostSchema } from '../src/db/entities.js';
import { mintApiKey } from '../tools/internal/credentials.js';

let herald: Herald;
let fakeA: BlueskyFake;
let fakeB: BlueskyFake;
let channelA: any;
let channelB: any;

const ERROR_KEYS = ['statusCode', 'code', 'message', 'hint', 'details', 'requestId'];
function expectError(response: { status: number; body: any; headers?: Headers }, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ statusCode: status, code, message: expect.any(String), requestId: expect.any(String) });
  expect(response.body.requestId.length).toBeGreaterThan(0);
  for (const key of Object.keys(response.body)) expect(ERROR_KEYS).toContain(key);
  if (response.headers) expect(response.headers.get('content-type')).toMatch(/application\/json/);
}

const inDays = (days: number, hourUtc = 9) => {
  const date = new Date(Date.now() + days * 86400_000);
  date.setUTCHours(hourUtc, 0, 0, 0);
  return date.toISOString();
};
const range = () => `?startDate=${encodeURIComponent(new Date(Date.now() - 86400_000).toISOString())}&endDate=${encodeURIComponent(inDays(60))}`;

const postBody = (integrationId: string, content = 'Hello from Herald', extra: Record<string, unknown> = {}) => ({
  type: 'draft',
  date: inDays(3),
  shortLink: false,
  tags: [],
  posts: [{ integration: { id: integrationId }, value: [{ content, image: [] }], settings: { __type: 'bluesky' } }],
  ...extra,
});

async function listPosts(): Promise<any[]> {
  const response = await herald.rest('GET', `/posts${range()}`);
  expect(response.status).toBe(200);
  return response.body.posts;
}

async function createDraft(integrationId = channelA.id, content = 'A draft'): Promise<string> {
  const response = await herald.rest('POST', '/posts', postBody(integrationId, content));
  expect(response.status).toBe(200);
  return response.body[0].postId;
}

beforeAll(async () => {
  herald = await startHerald();
  fakeA = await startBlueskyFake();
  fakeB = await startBlueskyFake({ handle: 'bob.bsky.social', password: 'bbbb-cccc-dddd-eeee' });
  const a = await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeA.url, identifier: fakeA.handle, appPassword: fakeA.password });
  expect(a.status).toBe(200);
  channelA = a.body;
  const b = await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeB.url, identifier: fakeB.handle, appPassword: fakeB.password });
  expect(b.status).toBe(200);
  channelB = b.body;
});

afterAll(async () => {
  await herald?.stop();
  await fakeA?.close();
  await fakeB?.close();
});

/** A channel as listings show it: the connect answer without what only a connect says (`updated`, `message`). */
const listed = ({ updated: _updated, message: _message, ...channel }: Record<string, unknown>) => channel;

describe('channels', () => {
  it('connect answers the integration record', () => {
    expect(channelA).toEqual({
      id: expect.any(String),
      name: 'Alice',
      identifier: 'bluesky',
      platform: 'bluesky',
      picture: fakeA.profile.avatar,
      disabled: false,
      profile: 'alice.bsky.social',
      updated: false,
      message: 'Connected the Bluesky account "Alice" as a new channel.',
    });
    expect(channelB.id).not.toBe(channelA.id);
  });

  it('connect with a wrong password is a 400, not a 500', async () => {
    const response = await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeA.url, identifier: fakeA.handle, appPassword: 'wrong-pass-word-xxxx' });
    expectError(response, 400, 'invalid_input');
  });

  it('GET /integrations lists both channels, without customer when ungrouped', async () => {
    const response = await herald.rest('GET', '/integrations');
    expect(response.status).toBe(200);
    // Each listed channel also carries its health (the connect answer does not).
    // Each listed channel also carries its zone (the organization's default, UTC, when it has none of its own).
    expect(response.body).toEqual([channelA, channelB].map((channel) => ({ ...listed(channel), timeZone: 'UTC', health: { state: 'active' } })));
    expect(response.body[0]).not.toHaveProperty('customer');
  });

  it('GET /groups and GET /integrations?group= filter by customer', async () => {
    const empty = await herald.rest('GET', '/groups');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);

    const em = herald.services.orm.em.fork();
    em.create(CustomerSchema, { id: 'cust-1', organizationId: herald.organizationId, name: 'Acme', createdAt: new Date() });
    await em.flush();
    await em.nativeUpdate(IntegrationSchema, { id: channelB.id }, { customerId: 'cust-1' });

    const groups = await herald.rest('GET', '/groups');
    expect(groups.status).toBe(200);
    expect(groups.body).toEqual([{ id: 'cust-1', name: 'Acme' }]);

    const filtered = await herald.rest('GET', '/integrations?group=cust-1');
    expect(filtered.status).toBe(200);
    expect(filtered.body).toEqual([{ ...listed(channelB), customer: { id: 'cust-1', name: 'Acme' }, timeZone: 'UTC', health: { state: 'active' } }]);

    const all = await herald.rest('GET', '/integrations');
    expect(all.body).toHaveLength(2);
    // An empty group is no filter (a form or CLI that sends group= with nothing in it).
    expect((await herald.rest('GET', '/integrations?group=')).body).toHaveLength(2);
    const unknownGroup = await herald.rest('GET', '/integrations?group=nope');
    expect(unknownGroup.status).toBe(200);
    expect(unknownGroup.body).toEqual([]);
  });

  it('/public/v1 answers the same as /api/public/v1', async () => {
    const api = await herald.rest('GET', '/integrations');
    const hosted = await fetch(`${herald.url}/public/v1/integrations`, { headers: { authorization: herald.apiKey } });
    expect(hosted.status).toBe(200);
    expect(await hosted.json()).toEqual(api.body);
    const connected = await fetch(`${herald.url}/public/v1/is-connected`, { headers: { authorization: herald.apiKey } });
    expect(connected.status).toBe(200);
    expect(await connected.json()).toEqual({ connected: true });
    const noKey = await fetch(`${herald.url}/public/v1/integrations`);
    expect(noKey.status).toBe(401);
    expect((await noKey.json()).code).toBe('unauthenticated');
  });

  it('GET /is-connected', async () => {
    const response = await herald.rest('GET', '/is-connected');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ connected: true });
  });

  it('GET /integration-settings/{id} for bluesky; 404 for an unknown id', async () => {
    const response = await herald.rest('GET', `/integration-settings/${channelA.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ output: { rules: expect.any(String), maxLength: 300, settings: 'No additional settings required', tools: [] } });
    expect(response.body.output.rules.length).toBeGreaterThan(0);
    expectError(await herald.rest('GET', '/integration-settings/does-not-exist'), 404, 'not_found');
  });

  it('POST /integration-trigger/{id}: unknown method and unknown channel are 404', async () => {
    const method = await herald.rest('POST', `/integration-trigger/${channelA.id}`, { methodName: 'listChannels', data: {} });
    expectError(method, 404, 'not_found');
    expect(method.body.message).toContain('listChannels');
    const channel = await herald.rest('POST', '/integration-trigger/does-not-exist', { methodName: 'listChannels', data: {} });
    expectError(channel, 404, 'not_found');
    const noMethod = await herald.rest('POST', `/integration-trigger/${channelA.id}`, { data: {} });
    expectError(noMethod, 400, 'invalid_input');
  });

  it('GET /social/{integration}: credential platform, unknown identifier and unconfigured OAuth platform are 400', async () => {
    const bluesky = await herald.rest('GET', '/social/bluesky');
    expectError(bluesky, 400, 'invalid_input');
    expect(bluesky.body.hint).toContain('/integrations/bluesky/connect');
    const unknown = await herald.rest('GET', '/social/myspace');
    expectError(unknown, 400, 'invalid_input');
    expect(unknown.body.message).toBe('Integration not allowed');
    const linkedin = await herald.rest('GET', '/social/linkedin');
    expectError(linkedin, 400, 'invalid_input');
    expect(linkedin.body.hint).toContain('LINKEDIN_CLIENT_ID');
    const x = await herald.rest('GET', '/social/x');
    expectError(x, 400, 'invalid_input');
  });
});

describe('find-slot and posting times', () => {
  it('answers a future slot at a default posting time, moves past a taken slot, follows new posting times', async () => {
    const first = await herald.rest('GET', `/find-slot/${channelA.id}`);
    expect(first.status).toBe(200);
    // The slot in UTC, and in the channel's zone (issue 33: an agent reads local times from it).
    expect(Object.keys(first.body)).toEqual(['date', 'timeZone', 'localDate']);
    const slot = new Date(first.body.date);
    expect(slot.getTime()).toBeGreaterThan(Date.now());
    expect(slot.getTime() - Date.now()).toBeLessThanOrEqual(86400_000);
    expect(['02:00', '06:40', '11:40']).toContain(slot.toISOString().slice(11, 16));

    const created = await herald.rest('POST', '/posts', { ...postBody(channelA.id, 'In the slot'), date: first.body.date });
    expect(created.status).toBe(200);
    const second = await herald.rest('GET', `/find-slot/${channelA.id}`);
    expect(second.status).toBe(200);
    expect(new Date(second.body.date).getTime()).toBeGreaterThan(slot.getTime());
    expect(['02:00', '06:40', '11:40']).toContain(second.body.date.slice(11, 16));

    const times = await herald.rest('PUT', `/integrations/${channelA.id}/posting-times`, { postingTimes: [{ time: 540 }, { time: 540 }, { time: 1000 }] });
    expect(times.status).toBe(200);
    expect(times.body).toEqual({ id: channelA.id, postingTimes: [{ time: 540 }, { time: 1000 }], timeZone: 'UTC' });
    const third = await herald.rest('GET', `/find-slot/${channelA.id}`);
    expect(third.status).toBe(200);
    expect(['09:00', '16:40']).toContain(third.body.date.slice(11, 16));
    expect(new Date(third.body.date).getTime()).toBeGreaterThan(Date.now());

    // Clean up: this post and default times again, so later tests see a plain channel.
    expect((await herald.rest('DELETE', `/posts/${created.body[0].postId}`)).status).toBe(200);
  });

  it('posting-times: bad input 400, unknown channel 404; find-slot unknown channel 404', async () => {
    expectError(await herald.rest('PUT', `/integrations/${channelA.id}/posting-times`, { postingTimes: [] }), 400, 'invalid_input');
    expectError(await herald.rest('PUT', `/integrations/${channelA.id}/posting-times`, { postingTimes: [{ time: 1440 }] }), 400, 'invalid_input');
    expectError(await herald.rest('PUT', '/integrations/nope/posting-times', { postingTimes: [{ time: 60 }] }), 404, 'not_found');
    expectError(await herald.rest('GET', '/find-slot/nope'), 404, 'not_found');
  });
});

describe('posts', () => {
  it('GET /posts requires startDate and endDate', async () => {
    const none = await herald.rest('GET', '/posts');
    expectError(none, 400, 'invalid_input');
    expect(none.body.details.map((detail: any) => detail.path).sort()).toEqual(['endDate', 'startDate']);
    expectError(await herald.rest('GET', `/posts?startDate=${encodeURIComponent(new Date().toISOString())}`), 400, 'invalid_input');
    expectError(await herald.rest('GET', '/posts?startDate=yesterday&endDate=today'), 400, 'invalid_input');
  });

  it('POST /posts draft and schedule answer [{postId, integration}] and the posts are listed', async () => {
    const draft = await herald.rest('POST', '/posts', postBody(channelA.id, 'Draft post'));
    expect(draft.status).toBe(200);
    expect(draft.body).toEqual([{ postId: expect.any(String), integration: channelA.id }]);

    const scheduled = await herald.rest('POST', '/posts', { ...postBody(channelA.id, 'Scheduled post'), type: 'schedule' });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toEqual([{ postId: expect.any(String), integration: channelA.id }]);

    const posts = await listPosts();
    const draftRow = posts.find((post) => post.id === draft.body[0].postId);
    const scheduledRow = posts.find((post) => post.id === scheduled.body[0].postId);
    expect(draftRow).toMatchObject({ content: 'Draft post', state: 'DRAFT', releaseId: null, group: expect.any(String), integration: { id: channelA.id } });
    expect(scheduledRow).toMatchObject({ content: 'Scheduled post', state: 'QUEUE', date: postBody('x').date });
    expect(draftRow.group).not.toBe(scheduledRow.group);
  });

  it('one request to two channels shares one group; DELETE /posts/{id} removes the whole group', async () => {
    const body = postBody(channelA.id, 'Both channels');
    body.posts.push({ integration: { id: channelB.id }, value: [{ content: 'Both channels', image: [] }], settings: { __type: 'bluesky' } });
    const created = await herald.rest('POST', '/posts', body);
    expect(created.status).toBe(200);
    expect(created.body).toEqual([
      { postId: expect.any(String), integration: channelA.id },
      { postId: expect.any(String), integration: channelB.id },
    ]);
    const ids = created.body.map((item: any) => item.postId);
    const rows = (await listPosts()).filter((post) => ids.includes(post.id));
    expect(rows).toHaveLength(2);
    expect(rows[0].group).toBe(rows[1].group);

    const deleted = await herald.rest('DELETE', `/posts/${ids[0]}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: ids[0] });
    const after = (await listPosts()).filter((post) => ids.includes(post.id));
    expect(after).toEqual([]);
    expectError(await herald.rest('DELETE', `/posts/${ids[1]}`), 404, 'not_found');
    expectError(await herald.rest('DELETE', '/posts/does-not-exist'), 404, 'not_found');
  });

  it('DELETE /posts/group/{group} deletes the group; unknown group 404', async () => {
    const id = await createDraft(channelA.id, 'Group delete');
    const group = (await listPosts()).find((post) => post.id === id).group;
    const deleted = await herald.rest('DELETE', `/posts/group/${group}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: group });
    expect((await listPosts()).some((post) => post.id === id)).toBe(false);
    expectError(await herald.rest('DELETE', `/posts/group/${group}`), 404, 'not_found');
    expectError(await herald.rest('DELETE', '/posts/group/nope'), 404, 'not_found');
  });

  it('validation: 300 characters pass, 301 are refused for bluesky with details', async () => {
    expect((await herald.rest('POST', '/posts', postBody(channelA.id, 'a'.repeat(300)))).status).toBe(200);
    const response = await herald.rest('POST', '/posts', postBody(channelA.id, 'a'.repeat(301)));
    expectError(response, 400, 'invalid_input');
    expect(response.body.details).toEqual([
      { integrationId: channelA.id, channel: 'Alice', platform: 'bluesky', message: expect.stringContaining('The maximum characters is 300, we got 301') },
    ]);
  });

  it('validation: empty content needs an image', async () => {
    const empty = await herald.rest('POST', '/posts', postBody(channelA.id, ''));
    expectError(empty, 400, 'invalid_input');
    expect(empty.body.details[0].message).toContain('at least one character or one image');
    const body = postBody(channelA.id, '');
    (body.posts[0].value[0] as any).image = [{ id: 'media-1', path: 'https://cdn.example.com/picture.png' }];
    const withImage = await herald.rest('POST', '/posts', body);
    expect(withImage.status).toBe(200);
  });

  it('validation: unknown integration id, all or nothing', async () => {
    const before = (await listPosts()).length;
    const body = postBody(channelA.id, 'Valid entry');
    body.posts.push({ integration: { id: 'no-such-channel' }, value: [{ content: 'x', image: [] }], settings: { __type: 'bluesky' } });
    const response = await herald.rest('POST', '/posts', body);
    expectError(response, 400, 'invalid_input');
    expect(response.body.details).toEqual([{ integrationId: 'no-such-channel', channel: 'no-such-channel', message: expect.stringContaining('channel not found') }]);
    expect((await listPosts()).length).toBe(before);
  });

  it('validation: strong and u may not nest', async () => {
    const response = await herald.rest('POST', '/posts', postBody(channelA.id, '<p><strong><u>x</u></strong></p>'));
    expectError(response, 400, 'invalid_input');
    expect(response.body.details).toHaveLength(1);
    expect(response.body.details[0].integrationId).toBe(channelA.id);
    const flat = await herald.rest('POST', '/posts', postBody(channelA.id, '<p><strong>x</strong> <u>y</u></p>'));
    expect(flat.status).toBe(200);
  });

  it('shortLink true (what the postiz CLI sends by default) is accepted, saying the link will be shortened and that a loopback PUBLIC_URL cannot serve it', async () => {
    const response = await herald.rest('POST', '/posts', postBody(channelA.id, 'See https://example.com', { shortLink: true }));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body[0].warnings).toEqual([
      `The link will be shortened to ${herald.url}/l/<code> when the post is published; clicks appear as the "clicks" metric of the post's analytics.`,
      `PUBLIC_URL is ${herald.url}, which people on the internet cannot open: set PUBLIC_URL to this Herald's public address, or the short links will not work.`,
    ]);
    const plain = await herald.rest('POST', '/posts', postBody(channelA.id, 'No link here', { shortLink: true }));
    expect(plain.body[0].warnings).toBeUndefined();
  });

  it('tags are stored and listed with the post; a malformed tag is refused with its path', async () => {
    const body = { ...postBody(channelA.id, 'Tagged'), tags: [{ value: 'launch', label: 'Launch' }, 'q4'] };
    const created = await herald.rest('POST', '/posts', body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const listed = await herald.rest('GET', `/posts?startDate=${encodeURIComponent(new Date(Date.now() - 86400_000).toISOString())}&endDate=${encodeURIComponent(new Date(Date.now() + 30 * 86400_000).toISOString())}`);
    const post = listed.body.posts.find((item: { id: string }) => item.id === created.body[0].postId);
    expect(post.tags).toEqual([{ value: 'launch', label: 'Launch' }, 'q4']);
    const bad = await herald.rest('POST', '/posts', { ...postBody(channelA.id, 'Bad tag'), tags: [{ value: 1 }] });
    expectError(bad, 400, 'invalid_input');
    expect(bad.body.message).toContain('tags.0');
  });

  it('settings: unknown keys are ignored, a non-object is refused', async () => {
    const body = postBody(channelA.id, 'With extra settings');
    body.posts[0].settings = { __type: 'bluesky', who_can_reply_post: 'everyone' } as any;
    expect((await herald.rest('POST', '/posts', body)).status).toBe(200);
    const bad = postBody(channelA.id, 'Bad settings');
    (bad.posts[0] as any).settings = 'bluesky';
    const response = await herald.rest('POST', '/posts', bad);
    expectError(response, 400, 'invalid_input');
    expect(response.body.details.map((detail: any) => detail.path)).toContain('posts.0.settings');
  });

  it('wrong types and missing fields are 400 with details', async () => {
    const type = await herald.rest('POST', '/posts', postBody(channelA.id, 'x', { type: 'later' }));
    expectError(type, 400, 'invalid_input');
    expect(type.body.details.map((detail: any) => detail.path)).toEqual(['type']);
    const posts = await herald.rest('POST', '/posts', { type: 'draft', date: inDays(1), posts: 'nope' });
    expectError(posts, 400, 'invalid_input');
    expect(posts.body.details.map((detail: any) => detail.path)).toEqual(['posts']);
    const content = await herald.rest('POST', '/posts', { ...postBody(channelA.id), posts: [{ integration: { id: channelA.id }, value: [{ content: 42 }] }] });
    expectError(content, 400, 'invalid_input');
    expect(content.body.details.map((detail: any) => detail.path)).toEqual(['posts.0.value.0.content']);
    // A scheduled post needs its date; a draft may go without one (issue 36: it takes no slot).
    const noDate = await herald.rest('POST', '/posts', postBody(channelA.id, 'x', { type: 'schedule', date: undefined }));
    expectError(noDate, 400, 'invalid_input');
    const array = await herald.rest('POST', '/posts', [1, 2]);
    expectError(array, 400, 'invalid_input');
  });

  it('GET /posts/{id}/missing is [] for a normal post; unknown post 404', async () => {
    const id = await createDraft();
    const response = await herald.rest('GET', `/posts/${id}/missing`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
    expectError(await herald.rest('GET', '/posts/nope/missing'), 404, 'not_found');
  });

  it('PUT /posts/{id}/release-id: 409 unless releaseId is "missing", then stored', async () => {
    const id = await createDraft();
    const refused = await herald.rest('PUT', `/posts/${id}/release-id`, { releaseId: 'at://did:plc:x/app.bsky.feed.post/1' });
    expectError(refused, 409, 'conflict');

    await herald.services.orm.em.fork().nativeUpdate(PostSchema, { id }, { releaseId: 'missing' });
    expectError(await herald.rest('PUT', `/posts/${id}/release-id`, {}), 400, 'invalid_input');
    const linked = await herald.rest('PUT', `/posts/${id}/release-id`, { releaseId: 'at://did:plc:x/app.bsky.feed.post/1' });
    expect(linked.status).toBe(200);
    expect(linked.body).toEqual({ id, releaseId: 'at://did:plc:x/app.bsky.feed.post/1' });
    expect((await listPosts()).find((post) => post.id === id).releaseId).toBe('at://did:plc:x/app.bsky.feed.post/1');
    expectError(await herald.rest('PUT', `/posts/${id}/release-id`, { releaseId: 'other' }), 409, 'conflict');
    expectError(await herald.rest('PUT', '/posts/nope/release-id', { releaseId: 'other' }), 404, 'not_found');
  });

  it('PUT /posts/{id}/status moves DRAFT <-> QUEUE; invalid status and unknown post are 400', async () => {
    const id = await createDraft();
    const scheduled = await herald.rest('PUT', `/posts/${id}/status`, { status: 'schedule' });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toEqual({ id, state: 'QUEUE' });
    expect((await listPosts()).find((post) => post.id === id).state).toBe('QUEUE');
    const drafted = await herald.rest('PUT', `/posts/${id}/status`, { status: 'draft' });
    expect(drafted.status).toBe(200);
    expect(drafted.body).toEqual({ id, state: 'DRAFT' });
    expect((await listPosts()).find((post) => post.id === id).state).toBe('DRAFT');

    const invalid = await herald.rest('PUT', `/posts/${id}/status`, { status: 'published' });
    expectError(invalid, 400, 'invalid_input');
    expect(invalid.body.details).toEqual([{ path: 'status', message: 'must be "draft" or "schedule"' }]);
    const unknown = await herald.rest('PUT', '/posts/nope/status', { status: 'draft' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ statusCode: 400, requestId: expect.any(String) });
  });
});

describe('analytics and notifications', () => {
  it('GET /analytics/{id}?date=7 answers the fake PDS metrics', async () => {
    fakeA.profile.followersCount = 1234;
    fakeA.profile.followsCount = 56;
    const response = await herald.rest('GET', `/analytics/${channelA.id}?date=7`);
    expect(response.status).toBe(200);
    const point = (total: string) => ({ label: expect.any(String), data: [{ total, date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) }], percentageChange: 0 });
    expect(response.body.slice(0, 3)).toEqual([
      { ...point('1234'), label: 'Followers' },
      { ...point('56'), label: 'Following' },
      { ...point(String(fakeA.records.length)), label: 'Posts' },
    ]);
    // Then the period's posts and what they received, one point a day.
    expect(response.body.slice(3).map((metric: { label: string; data: unknown[] }) => [metric.label, metric.data.length])).toEqual([
      ['Posts published', 7], ['Likes', 7], ['Reposts', 7], ['Replies', 7], ['Quotes', 7],
    ]);
  });

  it('analytics errors: platform identifier 400, unknown id 404, missing or bad date 400', async () => {
    const identifier = await herald.rest('GET', '/analytics/bluesky?date=7');
    expectError(identifier, 400, 'invalid_input');
    expect(identifier.body.message).toBe('Invalid integration');
    const unknown = await herald.rest('GET', '/analytics/does-not-exist?date=7');
    expectError(unknown, 404, 'not_found');
    expect(unknown.body.message).toBe('Channel not found');
    const noDate = await herald.rest('GET', `/analytics/${channelA.id}`);
    expectError(noDate, 400, 'invalid_input');
    expect(noDate.body.details.map((detail: any) => detail.path)).toEqual(['date']);
    expectError(await herald.rest('GET', `/analytics/${channelA.id}?date=abc`), 400, 'invalid_input');
  });

  it('GET /analytics/post/{id} is [] for a draft; unknown post 404', async () => {
    const id = await createDraft();
    const response = await herald.rest('GET', `/analytics/post/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
    expectError(await herald.rest('GET', '/analytics/post/nope'), 404, 'not_found');
  });

  it('GET /notifications has the paged shape', async () => {
    const response = await herald.rest('GET', '/notifications');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ notifications: [], total: 0, page: 0, limit: 100, hasMore: false });
    const page = await herald.rest('GET', '/notifications?page=2');
    expect(page.body).toMatchObject({ page: 2, hasMore: false });
    expectError(await herald.rest('GET', '/notifications?page=-1'), 400, 'invalid_input');
  });
});

describe('authentication and organizations', () => {
  it('missing, wrong and regenerated keys all answer the same 401', async () => {
    const missing = await fetch(`${herald.restUrl}/integrations`);
    const missingBody = await missing.json();
    const wrong = await herald.rest('GET', '/integrations', undefined, { authorization: 'hrld_not-a-real-key-at-all' });

    const other = await herald.newOrganization('Key rotation');
    const before = await herald.rest('GET', '/is-connected', undefined, { authorization: other.apiKey });
    expect(before.status).toBe(200);
    const fresh = await mintApiKey(herald.services.orm.em.fork(), other.organizationId);
    const old = await herald.rest('GET', '/is-connected', undefined, { authorization: other.apiKey });
    const renewed = await herald.rest('GET', '/is-connected', undefined, { authorization: fresh });
    expect(renewed.status).toBe(200);

    for (const response of [{ status: missing.status, body: missingBody }, wrong, old]) {
      expectError(response, 401, 'unauthenticated');
      expect({ ...response.body, requestId: '' }).toEqual({ ...missingBody, requestId: '' });
    }
    // A key on a POST is refused before the body is looked at.
    const post = await herald.rest('POST', '/posts', '{not json', { authorization: 'wrong-key-123' });
    expectError(post, 401, 'unauthenticated');
  });

  it('ids of another organization answer 404', async () => {
    const other = await herald.newOrganization('Someone else');
    const as = { authorization: other.apiKey };
    const postId = await createDraft();
    expectError(await herald.rest('GET', `/integration-settings/${channelA.id}`, undefined, as), 404, 'not_found');
    expectError(await herald.rest('GET', `/find-slot/${channelA.id}`, undefined, as), 404, 'not_found');
    expectError(await herald.rest('DELETE', `/integrations/${channelA.id}`, undefined, as), 404, 'not_found');
    expectError(await herald.rest('DELETE', `/posts/${postId}`, undefined, as), 404, 'not_found');
    expectError(await herald.rest('GET', `/analytics/${channelA.id}?date=7`, undefined, as), 404, 'not_found');
    const list = await herald.rest('GET', '/integrations', undefined, as);
    expect(list.body).toEqual([]);
    // Nothing happened to the owner's data.
    expect((await listPosts()).some((post) => post.id === postId)).toBe(true);
    expect((await herald.rest('GET', `/integration-settings/${channelA.id}`)).status).toBe(200);
  });
});

describe('client errors never 500', () => {
  it('malformed JSON is 400 invalid_input', async () => {
    const response = await herald.rest('POST', '/posts', '{"type": "draft",');
    expectError(response, 400, 'invalid_input');
    expect(response.body.message).toContain('not valid JSON');
  });

  it('a text/plain body on POST /posts is 415', async () => {
    const response = await herald.rest('POST', '/posts', 'type=draft', { 'content-type': 'text/plain' });
    expectError(response, 415, 'invalid_input');
    expect(response.body.hint).toContain('application/json');
  });

  it('an unknown route is a JSON 404', async () => {
    const response = await herald.rest('GET', '/no-such-route');
    expectError(response, 404, 'not_found');
    const method = await herald.rest('PATCH', '/posts', {});
    expectError(method, 404, 'not_found');
  });

  it('a JSON body over 1 MB on PUT /posts/{id}/status is 413 with an upload hint', async () => {
    const id = await createDraft();
    const response = await herald.rest('PUT', `/posts/${id}/status`, { status: 'schedule', padding: 'x'.repeat(1_100_000) });
    expectError(response, 413, 'payload_too_large');
    expect(response.body.hint).toMatch(/upload/i);
    expect((await listPosts()).find((post) => post.id === id).state).toBe('DRAFT');
  });

  // Known bug (src/lib/content.ts contentLength 'graphemes'): Intl.Segmenter counting is quadratic here, 100k chars
  // take ~3 s (the server shares this process, so the test waits for it) and 2 MB takes many minutes of CPU; an over-length post must be refused quickly.
  it('an over-length 100k-character post is refused with 400 within 2 s', async () => {
    const tooLong = await herald.rest('POST', '/posts', postBody(channelA.id, 'y'.repeat(100_000)));
    expectError(tooLong, 400, 'invalid_input');
    expect(tooLong.body.details[0].message).toContain('The maximum characters is 300');
  }, 2_000);

  it('a 2 MB body on POST /posts is parsed (400 or 200 on content), never 413', async () => {
    const padded = await herald.rest('POST', '/posts', { ...postBody(channelA.id, 'Padded request'), padding: 'z'.repeat(2_000_000) });
    expect(padded.status).toBe(200);
    expect(padded.body).toEqual([{ postId: expect.any(String), integration: channelA.id }]);
  });
});

describe('DELETE /integrations/{id}', () => {
  it('deletes the channel and its queued posts; unknown id 404', async () => {
    const scheduled = await herald.rest('POST', '/posts', { ...postBody(channelB.id, 'Queued on B'), type: 'schedule' });
    expect(scheduled.status).toBe(200);
    const draftOnA = await createDraft(channelA.id, 'Stays on A');
    const postId = scheduled.body[0].postId;
    expect((await listPosts()).some((post) => post.id === postId)).toBe(true);

    const response = await herald.rest('DELETE', `/integrations/${channelB.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: channelB.id });

    const row = await herald.services.orm.em.fork().findOne(PostSchema, { id: postId });
    expect(row?.deletedAt).toBeInstanceOf(Date);
    const posts = await listPosts();
    expect(posts.some((post) => post.id === postId)).toBe(false);
    expect(posts.some((post) => post.id === draftOnA)).toBe(true);
    expect((await herald.rest('GET', '/integrations')).body.map((item: any) => item.id)).toEqual([channelA.id]);

    expectError(await herald.rest('DELETE', `/integrations/${channelB.id}`), 404, 'not_found');
    expectError(await herald.rest('DELETE', '/integrations/does-not-exist'), 404, 'not_found');
    expectError(await herald.rest('GET', `/integration-settings/${channelB.id}`), 404, 'not_found');
  });
});
