// listmonk against its fake server: API-user connect, an HTML campaign (preheader, pictures by public URL, template) created
// and started, the list and templates helpers, campaign statistics as post analytics, a missing permission reaching ERROR,
// and a start that failed retried without creating the campaign twice.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import listmonk from '../../providers/listmonk.js';
import { PostSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { ARTICLE_HTML, connect, notifications, publishThroughWorker, scheduleWith, uploadPictures, type Pictures } from '../fakes/articles.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { startListmonkFake, type ListmonkFake } from '../fakes/listmonk.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from '../helpers/posts.js';

let fake: ListmonkFake;
let herald: Herald;
let pictures: Pictures;
let channelId: string;
let rootId: string;

beforeAll(async () => {
  fake = await startListmonkFake();
  herald = await startHerald({ PUBLISH_RECHECK_MAX_SECONDS: '1' }, { guard: { allowLoopback: true } });
  pictures = await uploadPictures(herald);
});

// Every request Herald sent fits listmonk's published contract (test/contracts/listmonk/openapi.json).
afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'listmonk', subject: 'Why we moved to Herald', list: '3', ...extra });
const figure = (url: string) => `<figure class="wp-block-image"><img src="${url}" alt=""/></figure>`;
const creates = () => fake.server.requestsTo('POST', '/api/campaigns');
const starts = () => fake.server.requestsTo('PUT', '/api/campaigns/*/status');

describe('connecting listmonk', () => {
  it("refuses a wrong token with listmonk's reason, then connects the API user", async () => {
    const wrong = await connect(herald, 'listmonk', { ...fake.fields(), password: 'not-the-token' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'listmonk refused the connection: the API user or its token was refused (invalid API credentials (HTTP 403)): create an API user in Admin, Users (listmonk 4 or later) and use its name and token',
    );
    const right = await connect(herald, 'listmonk', { ...fake.fields(), url: `${fake.url}/` });
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    channelId = right.body.id;
    expect(right.body).toMatchObject({ identifier: 'listmonk', name: 'Herald API', profile: 'herald-api' });
    expect(fake.server.requestsTo('GET', '/api/profile').at(-1)!.headers.authorization).toBe(`token herald-api:${fake.token}`);
  });
});

describe('sending a campaign', () => {
  it('creates the campaign through the worker with the preheader, the pictures by public URL and the template, then starts it', async () => {
    const root = await publishThroughWorker(herald, channelId, ARTICLE_HTML, [pictures.png, pictures.jpeg], settings({ preview: 'What changed & why', template: '2' }));
    rootId = root.id;
    const [campaign] = fake.campaigns;
    expect(creates()[0].json).toEqual({
      name: 'Why we moved to Herald',
      subject: 'Why we moved to Herald',
      lists: [3],
      type: 'regular',
      content_type: 'html',
      messenger: 'email',
      body: `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">What changed &amp; why</div>${figure(pictures.png.path)}${ARTICLE_HTML}${figure(pictures.jpeg.path)}`,
      template_id: 2,
      tags: [`herald-${root.id}`],
    });
    expect(starts().map((request) => [request.path, request.json])).toEqual([[`/api/campaigns/${campaign.id}/status`, { status: 'running' }]]);
    expect(campaign.status).toBe('running');
    expect([root.releaseId, root.releaseUrl]).toEqual([String(campaign.id), `${fake.url}/admin/campaigns/${campaign.id}`]);
  });

  it('sends text as Markdown made HTML, without a preheader when there is no preview; {{ }} stays text, never a template', async () => {
    const plain = await createPost(herald, channelId, ['Hello {{ .Subscriber.FirstName }},\nnew issue & *more*'], { settings: settings({ subject: 'Plain {{ .Subscriber.Email }}' }) });
    expect((await publishUntilSettled(herald, plain)).outcome.kind).toBe('published');
    const sent = fake.campaigns.at(-1)!.body;
    expect(sent.body).toBe('<p>Hello &#123;&#123; .Subscriber.FirstName }},<br />new issue &amp; <em>more</em></p>');
    expect(sent.subject).toBe('Plain {{"{{"}} .Subscriber.Email }}');
    expect(sent.name).toBe('Plain {{ .Subscriber.Email }}');
  });

  it('refuses a campaign without a subject or with a list that is not an id when it is created', async () => {
    const schedule = (value: Record<string, unknown>) => scheduleWith(herald, channelId, value);
    expect((await schedule({ __type: 'listmonk', list: '3' })).body.message).toMatch(/settings\.subject/);
    expect((await schedule(settings({ list: 'Newsletter' }))).body.message).toContain('list is an id from the list tool');
    expect(listmonk.validate!([{ text: 'x', media: [{ kind: 'video', url: 'https://media.example/v.mp4' }] }], {})).toMatch(/video/);
  });

  it('is refused by the fake as by listmonk: wrong credentials, no subject, an unknown list', async () => {
    const post = (authorization: string, body: unknown) =>
      fetch(`${fake.url}/api/campaigns`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => [response.status, await response.json()]);
    const good = `token ${fake.username}:${fake.token}`;
    expect(await post(`Basic ${Buffer.from(`${fake.username}:wrong`).toString('base64')}`, {})).toEqual([403, { message: 'invalid API credentials' }]);
    expect(await post(good, { name: 'n', lists: [3] })).toEqual([400, { message: 'Invalid length for subject.' }]);
    expect(await post(good, { name: 'n', subject: 's', lists: [99] })).toEqual([400, { message: 'Invalid list IDs.' }]);
  });

  it("refuses what listmonk's published contract refuses: order in lower case, templates without no_body, ids as strings, an unknown status", async () => {
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${fake.url}/api${path}`, { method, headers: { authorization: `token ${fake.username}:${fake.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((response) => response.status);
    const campaignsBefore = fake.campaigns.length;
    expect(await send('GET', '/campaigns?order=desc')).toBe(400);
    expect(await send('GET', '/templates')).toBe(400);
    expect(await send('POST', '/campaigns', { name: 'n', subject: 's', lists: ['3'], template_id: '1' })).toBe(400);
    expect(await send('PUT', '/campaigns/1/status', { status: 'started' })).toBe(400);
    expect(fake.contractViolations).toEqual([
      'GET /api/campaigns: query parameter order must be equal to one of the allowed values',
      'GET /api/templates: query parameter no_body is required',
      'POST /api/campaigns: body/lists/0 must be number',
      'POST /api/campaigns: body/template_id must be number',
      'PUT /api/campaigns/1/status: body/status must be equal to one of the allowed values',
    ]);
    expect(fake.campaigns).toHaveLength(campaignsBefore);
    fake.contractViolations.length = 0;
  });

  it('retries a start that failed without creating the campaign again', async () => {
    fake.server.failNext('PUT', '/api/campaigns/*/status', { status: 503, json: { message: 'Service unavailable' } });
    const rootId2 = await createPost(herald, channelId, ['<p>Retry the start</p>'], { settings: settings({ subject: 'Retry the start' }) });
    const created = creates().length;
    expect((await publishChain(herald.services, rootId2)).kind).toBe('waiting');
    expect((await publishUntilSettled(herald, rootId2)).outcome.kind).toBe('published');
    expect(creates()).toHaveLength(created + 1);
    expect(starts().slice(-2).map((request) => request.path)).toEqual([`/api/campaigns/${fake.campaigns.at(-1)!.id}/status`, `/api/campaigns/${fake.campaigns.at(-1)!.id}/status`]);
    expect(fake.campaigns.at(-1)!.status).toBe('running');
  });

  it('finds the draft of a campaign whose create answer was lost by its marker, and starts it', async () => {
    const lost = await createPost(herald, channelId, ['<p>Lost create</p>'], { settings: settings({ subject: 'Lost create' }) });
    const created = creates().length;
    const restore = loseAnswerOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/campaigns'));
    try {
      expect((await publishUntilSettled(herald, lost)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(creates()).toHaveLength(created + 1);
    const campaign = fake.campaigns.at(-1)!;
    expect(campaign.body.tags).toEqual([`herald-${lost}`]);
    expect(campaign.status).toBe('running');
    expect((await chainOf(herald, lost))[0].releaseId).toBe(String(campaign.id));
    expect(Object.fromEntries(fake.server.requestsTo('GET', '/api/campaigns').at(-1)!.query)).toEqual({ query: 'Lost create', order_by: 'created_at', per_page: '20', no_body: 'true' });
  });

  it('never takes an older campaign of the same subject for the new one: a create lost before it arrived is made again, once (issue 21)', async () => {
    const older = { id: fake.campaigns.length + 1, body: { name: 'Weekly digest', subject: 'Weekly digest', lists: [3] }, status: 'draft', sent: 0, to_send: 0, views: 0, clicks: 0, bounces: 0, created_at: new Date(Date.now() - 7 * 86_400_000).toISOString() };
    fake.campaigns.push(older);
    const digest = await createPost(herald, channelId, ['<p>This week</p>'], { settings: settings({ subject: 'Weekly digest' }) });
    const created = creates().length;
    const restore = loseRequestOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/campaigns'));
    try {
      expect((await publishUntilSettled(herald, digest)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    expect(creates()).toHaveLength(created + 1);
    expect(older.status).toBe('draft');
    const made = fake.campaigns.at(-1)!;
    expect([made.status, (await chainOf(herald, digest))[0].releaseId]).toEqual(['running', String(made.id)]);
  });

  it('does not start a campaign again when the lost start had gone through', async () => {
    const lost = await createPost(herald, channelId, ['<p>Lost start</p>'], { settings: settings({ subject: 'Lost start' }) });
    const running = { id: fake.campaigns.length + 1, body: { name: 'Lost start', subject: 'Lost start', lists: [3] }, status: 'running', sent: 0, to_send: 0, views: 0, clicks: 0, bounces: 0, created_at: new Date().toISOString() };
    fake.campaigns.push(running);
    const steps = { campaign: { state: 'done', result: running.id }, start: { state: 'started' } };
    await herald.services.orm.em.fork().nativeUpdate(PostSchema, { id: lost }, { publishProgress: { steps }, attemptStartedAt: new Date() });
    const before = [creates().length, starts().length];
    expect((await publishUntilSettled(herald, lost)).outcome.kind).toBe('published');
    expect([creates().length, starts().length]).toEqual(before);
  });
});

describe('listmonk helpers and analytics', () => {
  it('lists subscriber lists and campaign templates through POST /integration-trigger', async () => {
    const lists = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'list' });
    expect(lists.body).toEqual({
      output: [
        { id: '1', name: 'Default list', subscribers: 2, type: 'private', optin: 'single' },
        { id: '3', name: 'Newsletter', subscribers: 1250, type: 'public', optin: 'double' },
      ],
    });
    expect(fake.server.requestsTo('GET', '/api/lists').at(-1)!.query.get('per_page')).toBe('all');
    const templates = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'templates' });
    expect(templates.body).toEqual({ output: [{ id: '1', name: 'Default campaign template', default: true }, { id: '2', name: 'Default archive template', default: false }] });
    expect(fake.server.requestsTo('GET', '/api/templates').at(-1)!.query.get('no_body')).toBe('true');
  });

  it('reports sent, views, clicks and bounces of the campaign', async () => {
    Object.assign(fake.campaigns[0], { sent: 1250, views: 610, clicks: 95, bounces: 7 });
    const response = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(response.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Sent', '1250'],
      ['Views', '610'],
      ['Clicks', '95'],
      ['Bounces', '7'],
    ]);
  });

  it("puts a campaign the API user may not start in ERROR, naming the permission, and leaves it a draft", async () => {
    fake.permissions.delete('campaigns:send');
    const refused = await createPost(herald, channelId, ['<p>No permission</p>'], { settings: settings({ subject: 'No permission' }) });
    expect((await publishUntilSettled(herald, refused)).outcome).toEqual({
      kind: 'failed',
      error: 'listmonk refused the post: the API user\'s role lacks the "campaigns:send" permission: add it to the role in Admin, User roles',
    });
    expect(fake.campaigns.at(-1)!).toMatchObject({ status: 'draft', body: { subject: 'No permission' } });
    expect((await notifications(herald, 'post_failed'))[0]).toContain('campaigns:send');
    expect((await chainOf(herald, refused))[0].state).toBe('ERROR');
  });
});
