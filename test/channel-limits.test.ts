// A key limited to channels sees nothing of the others (issue 23): every REST route and every MCP tool of the registry is
// called with a channel-limited agent key and ids of another channel, its post, its group and the owner's media; no answer
// may carry them (they are answered as if they did not exist: 404 not_found), and what the key may see still works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { acceptedSamples, uploaded } from './helpers/media-samples.js';
import { tools } from '../tools/index.js';

let herald: Herald;
let fakeA: BlueskyFake;
let fakeB: BlueskyFake;
let channelA: string;
let channelB: string;
let postA: string;
let postB: string;
let groupB: string;
let mediaB: { id: string; path: string };
let limited: string;
let mcp: Client;

const SECRET_TEXT = 'only-for-channel-b';
const DAY = 86400_000;
const range = `startDate=${encodeURIComponent(new Date(Date.now() - 7 * DAY).toISOString())}&endDate=${encodeURIComponent(new Date(Date.now() + 30 * DAY).toISOString())}`;

const WHEN = new Date(Date.now() + 2 * DAY).toISOString();
function postBody(integration: string, content: string) {
  return { type: 'schedule', date: WHEN, shortLink: false, tags: [], posts: [{ integration: { id: integration }, value: [{ content, image: [] }], settings: {} }] };
}

/** Nothing of channel B (its id, its post, its group, the owner's file, its text) in an answer. */
function expectNothingOfB(where: string, answer: unknown): void {
  const text = JSON.stringify(answer ?? null);
  for (const secret of [channelB, postB, groupB, mediaB.id, mediaB.path, SECRET_TEXT]) expect(text, `${where} leaks ${secret}`).not.toContain(secret);
}

/** Channel B's ids, and made-up ids of the same length that exist nowhere. */
interface Ids {
  channel: string;
  post: string;
  group: string;
  media: string;
}
const ofB = (): Ids => ({ channel: channelB, post: postB, group: groupB, media: mediaB.id });
const missing = (): Ids => ({ channel: 'x'.repeat(channelB.length), post: 'y'.repeat(postB.length), group: 'z'.repeat(groupB.length), media: 'w'.repeat(mediaB.id.length) });

/** The id a path parameter names. */
function valueFor(path: string, param: string, ids: Ids): string {
  if (param === 'postId' || (param === 'id' && path.startsWith('/posts'))) return ids.post;
  if (param === 'group') return ids.group;
  if (param === 'id' && path.startsWith('/media')) return ids.media;
  if (param === 'identifier') return 'bluesky';
  return ids.channel;
}

/** An answer with the ids it was asked about replaced by placeholders, and without its request id. */
function normalized(answer: unknown, ids: Ids): string {
  let text = JSON.stringify(answer ?? null).replace(/"requestId":"[^"]*"/g, '"requestId":""');
  for (const [name, value] of Object.entries(ids)) text = text.split(value).join(`<${name}>`);
  return text;
}

beforeAll(async () => {
  herald = await startHerald();
  fakeA = await startBlueskyFake();
  fakeB = await startBlueskyFake({ handle: 'bob.bsky.social', password: 'bbbb-cccc-dddd-eeee' });
  channelA = (await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeA.url, identifier: fakeA.handle, appPassword: fakeA.password })).body.id;
  channelB = (await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeB.url, identifier: fakeB.handle, appPassword: fakeB.password })).body.id;
  const b = await herald.rest('POST', '/posts', postBody(channelB, `<p>${SECRET_TEXT}</p>`));
  postB = b.body[0].postId;
  postA = (await herald.rest('POST', '/posts', postBody(channelA, '<p>for channel A</p>'))).body[0].postId;
  const listed = await herald.rest('GET', `/posts?${range}`);
  groupB = listed.body.posts.find((post: any) => post.id === postB).group;
  mediaB = await uploaded(herald, acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes, 'owner.png', 'image/png');
  const key = await herald.rest('POST', '/keys', { name: 'Channel A agent', channels: [channelA] });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  limited = key.body.secret;
  mcp = new Client({ name: 'limits-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${limited}` } } }));
}, 120_000);

afterAll(async () => {
  await mcp?.close().catch(() => undefined);
  await herald?.stop();
  await fakeA?.close();
  await fakeB?.close();
});

describe('a key limited to channel A', () => {
  it('sees channel A and its post, and nothing of channel B', async () => {
    const channels = await herald.rest('GET', '/integrations', undefined, { authorization: limited });
    expect(channels.body.map((item: any) => item.id)).toEqual([channelA]);
    const posts = await herald.rest('GET', `/posts?${range}`, undefined, { authorization: limited });
    expect(posts.body.posts.map((item: any) => item.id)).toEqual([postA]);
    const other = await herald.rest('GET', `/posts/${postB}/missing`, undefined, { authorization: limited });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('not_found');
    const created = await herald.rest('POST', '/posts', postBody(channelB, '<p>sneaky</p>'), { authorization: limited });
    expect(created.status).toBe(400);
    expect(created.body.message).toMatch(new RegExp(`${channelB}.*not found|not found.*${channelB}`));
    expect((await herald.rest('GET', '/media', undefined, { authorization: limited })).body.media).toEqual([]);
    expect((await herald.rest('DELETE', `/media/${mediaB.id}`, undefined, { authorization: limited })).status).toBe(404);
  });

  it('every REST route of the registry, called with channel B\'s ids, answers nothing of channel B', async () => {
    let walked = 0;
    const call = (tool: (typeof tools)[number], ids: Ids) => {
      const rest = tool.rest!;
      const path = rest.path.replace(/:([A-Za-z]+)/g, (_match, param: string) => encodeURIComponent(valueFor(rest.path, param, ids)));
      const query = rest.method === 'GET' ? `?${range}&customer=&integration=${ids.channel}&id=${ids.channel}` : '';
      const body = rest.method === 'GET' || rest.method === 'DELETE' ? undefined : { ...postBody(ids.channel, '<p>walk</p>'), id: ids.post, integrationId: ids.channel, channels: [ids.channel], group: ids.group };
      return herald.rest(rest.method, `${path}${query}`, body, { authorization: limited });
    };
    for (const tool of tools) {
      if (!tool.rest) continue;
      const where = `${tool.name} (${tool.rest.method} ${tool.rest.path})`;
      const answer = await call(tool, ofB());
      expect(answer.status, `${where}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
      // Answered exactly as if channel B (its post, group, file) did not exist.
      const none = await call(tool, missing());
      expect({ status: answer.status, body: normalized(answer.body, ofB()) }, where).toEqual({ status: none.status, body: normalized(none.body, missing()) });
      expectNothingOfB(where, JSON.parse(normalized(answer.body, ofB())));
      walked++;
    }
    expect(walked).toBeGreaterThan(40);
    // Channel B's post is still there for the owner.
    expect((await herald.rest('GET', `/posts/${postB}/missing`)).status).toBe(200);
  });

  it('every MCP tool it may call, with channel B\'s ids, answers nothing of channel B', async () => {
    const listed = (await mcp.listTools()).tools;
    expect(listed.length).toBeGreaterThan(10);
    const call = (name: string, ids: Ids) =>
      mcp
        .callTool({ name, arguments: { id: ids.post, postId: ids.post, integrationId: ids.channel, integration: ids.channel, group: ids.group, channels: [ids.channel], confirm: true } })
        .catch((error: Error) => ({ error: error.message }));
    for (const tool of listed) {
      const answer = normalized(await call(tool.name, ofB()), ofB());
      expect(answer, `MCP ${tool.name}`).toBe(normalized(await call(tool.name, missing()), missing()));
      expectNothingOfB(`MCP ${tool.name}`, JSON.parse(answer));
    }
    // Tools registered for MCP but hidden from this key (scopes) are refused, not run.
    const hidden = tools.filter((tool) => tool.mcp && !listed.some((item) => item.name === tool.name));
    for (const tool of hidden) {
      const result: any = await mcp.callTool({ name: tool.name, arguments: { id: channelB, confirm: true } }).catch((error: Error) => ({ error: error.message }));
      expectNothingOfB(`MCP hidden ${tool.name}`, result);
    }
  });

  it('MCP resources and subscriptions: channel B and its post do not exist for it', async () => {
    const resources = await mcp.listResources();
    expectNothingOfB('resources/list', resources);
    expect(resources.resources.some((resource) => resource.uri === `herald://integrations/${channelA}`)).toBe(true);
    expectNothingOfB('herald://integrations', await mcp.readResource({ uri: 'herald://integrations' }));
    expectNothingOfB('herald://media', await mcp.readResource({ uri: 'herald://media' }));
    for (const uri of [`herald://integrations/${channelB}`, `herald://posts/${postB}`]) {
      await expect(mcp.readResource({ uri }), uri).rejects.toThrow(/not found/i);
      await expect(mcp.subscribeResource({ uri }), uri).rejects.toThrow(/not found/i);
    }
    const own: any = await mcp.readResource({ uri: `herald://posts/${postA}` });
    expect(JSON.parse(own.contents[0].text).id).toBe(postA);
  });

  it('a key limited to a customer sees the channels of that customer, including one added later', async () => {
    const em = herald.services.orm.em.fork();
    await em.getConnection().execute("insert into customer (id, organization_id, name, created_at) values ('cust-b', ?, 'Client B', now())", [herald.organizationId]);
    const key = await herald.rest('POST', '/keys', { name: 'Client B agent', customers: ['cust-b'] });
    const before = await herald.rest('GET', '/integrations', undefined, { authorization: key.body.secret });
    expect(before.body).toEqual([]);
    await em.getConnection().execute("update integration set customer_id = 'cust-b' where id = ?", [channelB]);
    const after = await herald.rest('GET', '/integrations', undefined, { authorization: key.body.secret });
    expect(after.body.map((item: any) => item.id)).toEqual([channelB]);
    expect((await herald.rest('POST', '/keys', { name: 'x', channels: [channelA], scopes: ['read', 'organization:manage'] })).body.message).toMatch(/cannot have the organization:manage scope/);
  });
});
