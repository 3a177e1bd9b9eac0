// The audit trail (issue 23): who did what (a person, a key by name, an OAuth app, Herald), when, how and from where
// (address, User-Agent or MCP clientInfo), over REST and MCP; paged and filtered; a key limited to channels sees only its
// channels' events (none of the organization's key changes), its channels' notifications and media; old events pruned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { acceptedSamples, uploaded } from './helpers/media-samples.js';
import { auditTasks, PRUNE_AUDIT_TASK } from '../src/jobs/audit.js';

let herald: Herald;
let fakeA: BlueskyFake;
let fakeB: BlueskyFake;
let channelA: string;
let channelB: string;
let agent: { id: string; secret: string };
let limited: { id: string; secret: string };

const DAY = 86400_000;
const WHEN = () => new Date(Date.now() + 2 * DAY).toISOString();
let counter = 0;
const unique = (label: string) => `<p>${label} ${Date.now()} ${counter++}</p>`;
const as = (credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => herald.rest(method, path, body, { authorization: credential, ...headers });
const postBody = (integration: string, content: string, image: { id: string; path: string }[] = []) => ({
  type: 'schedule',
  date: WHEN(),
  shortLink: false,
  tags: [],
  posts: [{ integration: { id: integration }, value: [{ content, image }], settings: {} }],
});

async function newKey(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const created = await herald.rest('POST', '/keys', body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.key.id, secret: created.body.secret };
}

async function mcpWith(key: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '2.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return client;
}

beforeAll(async () => {
  herald = await startHerald();
  fakeA = await startBlueskyFake();
  fakeB = await startBlueskyFake({ handle: 'bob.bsky.social', password: 'bbbb-cccc-dddd-eeee' });
  channelA = (await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeA.url, identifier: fakeA.handle, appPassword: fakeA.password })).body.id;
  channelB = (await herald.rest('POST', '/integrations/bluesky/connect', { service: fakeB.url, identifier: fakeB.handle, appPassword: fakeB.password })).body.id;
  agent = await newKey({ name: 'Claude Desktop – Acme' });
  limited = await newKey({ name: 'Channel A agent', channels: [channelA], scopes: ['read', 'posts:write'] });
});

afterAll(async () => {
  await herald?.stop();
  await fakeA?.close();
  await fakeB?.close();
});

describe('the audit trail', () => {
  it('names the agent key that created a post over MCP and the owner key that approved it over REST, with how and from where', async () => {
    expect((await herald.rest('PUT', '/approval-settings', { agents: true })).status).toBe(200);
    const mcp = await mcpWith(agent.secret, 'audit-test');
    try {
      const created: any = await mcp.callTool({
        name: 'schedulePostTool',
        arguments: { socialPost: [{ integrationId: channelA, isPremium: false, date: WHEN(), shortLink: false, type: 'schedule', postsAndComments: [{ content: unique('agent post'), attachments: [] }], settings: [] }] },
      });
      const postId = created.structuredContent.output[0].postId;
      expect(created.structuredContent.output[0].approval.status).toBe('pending');
      const approved = await herald.rest('POST', `/posts/${postId}/approve`, undefined, { 'user-agent': 'owner-script/1.0' });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);

      const trail = await herald.rest('GET', `/audit?targetKind=post&targetId=${postId}`);
      expect(trail.status).toBe(200);
      const [approval, creation] = trail.body.events;
      expect(creation).toMatchObject({ action: 'post.created', actor: { kind: 'api_key', id: agent.id, name: 'Claude Desktop – Acme' }, via: 'mcp', client: 'audit-test 2.1.0 (MCP)', integrationId: channelA });
      expect(approval).toMatchObject({ action: 'post.approved', actor: { kind: 'api_key', name: 'Organization key (owner)' }, via: 'rest', client: 'owner-script/1.0', integrationId: channelA });
      expect(approval.summary).toBe(`Organization key (owner) approved post ${postId}.`);
      for (const event of [approval, creation]) expect(event.address).toMatch(/127\.0\.0\.1|::1/);

      // The same trail as an MCP resource, paged.
      const read: any = await mcp.readResource({ uri: 'herald://audit' });
      const resource = JSON.parse(read.contents[0].text);
      expect(resource.events.slice(0, 2).map((event: any) => event.action)).toEqual(['post.approved', 'post.created']);
      expect(resource).toHaveProperty('next');
      expect((await mcp.listResources()).resources.map((item) => item.uri)).toContain('herald://audit');
    } finally {
      await mcp.close();
      await herald.rest('PUT', '/approval-settings', { agents: false });
    }
  });

  it('records edits (the fields, not the text) and deletions, filtered by action, actor, channel and date', async () => {
    const created = await herald.rest('POST', '/posts', postBody(channelB, unique('to edit')));
    const postId = created.body[0].postId;
    const later = new Date(Date.now() + 3 * DAY).toISOString();
    const edited = await herald.rest('PUT', `/posts/${postId}`, { date: later });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect((await herald.rest('DELETE', `/posts/${postId}`)).status).toBe(200);

    const trail = (await herald.rest('GET', `/audit?targetId=${postId}`)).body.events;
    expect(trail.map((event: any) => event.action)).toEqual(['post.deleted', 'post.edited', 'post.created']);
    expect(trail[1].changes).toMatchObject({ fields: ['date'], date: { to: later } });
    expect(trail[0].changes).toMatchObject({ deleteOnPlatform: false });

    const deletions = (await herald.rest('GET', '/audit?action=post.deleted')).body.events;
    expect(deletions.every((event: any) => event.action === 'post.deleted')).toBe(true);
    expect(deletions.map((event: any) => event.target.id)).toContain(postId);
    const keyEvents = (await herald.rest('GET', '/audit?action=key')).body.events;
    // The two named keys of this file, and the organization key the harness made (a renewed organization key is audited too).
    expect(keyEvents.map((event: any) => event.action)).toEqual(['key.created', 'key.created', 'key.created']);
    expect(keyEvents.at(-1).changes).toMatchObject({ name: 'Organization key (owner)' });
    expect((await herald.rest('GET', `/audit?actor=${agent.id}`)).body.events.every((event: any) => event.actor.id === agent.id)).toBe(true);
    const ofB = (await herald.rest('GET', `/audit?integrationId=${channelB}`)).body.events;
    expect(ofB.length).toBeGreaterThan(0);
    expect(ofB.every((event: any) => event.integrationId === channelB)).toBe(true);
    expect((await herald.rest('GET', `/audit?from=${encodeURIComponent(new Date(Date.now() + DAY).toISOString())}`)).body.events).toEqual([]);
    const bad = await herald.rest('GET', '/audit?from=yesterday');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('from');
  });

  it('shows a key limited to channels only its channels\' events, never the organization\'s key changes, over REST and MCP', async () => {
    await herald.rest('POST', '/posts', postBody(channelB, unique('channel B only')));
    await as(limited.secret, 'POST', '/posts', postBody(channelA, unique('limited key post')));
    const seen = (await as(limited.secret, 'GET', '/audit?limit=200')).body.events;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((event: any) => event.integrationId === channelA)).toBe(true);
    expect(seen.some((event: any) => event.action.startsWith('key.'))).toBe(false);
    expect((await as(limited.secret, 'GET', `/audit?integrationId=${channelB}`)).body.events).toEqual([]);
    const mcp = await mcpWith(limited.secret, 'limited-test');
    try {
      const read: any = await mcp.readResource({ uri: 'herald://audit' });
      const events = JSON.parse(read.contents[0].text).events;
      expect(events.length).toBeGreaterThan(0);
      expect(events.every((event: any) => event.integrationId === channelA)).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it('records the key changes of an owner and never a secret', async () => {
    const rotated = await herald.rest('POST', `/keys/${limited.id}/rotate`);
    expect(rotated.status).toBe(200);
    limited = { id: limited.id, secret: rotated.body.secret };
    const events = (await herald.rest('GET', `/audit?targetKind=api_key&targetId=${limited.id}`)).body.events;
    expect(events.map((event: any) => event.action)).toEqual(['key.rotated', 'key.created']);
    expect(JSON.stringify(events)).not.toContain(rotated.body.secret);
    expect(events[1].changes).toMatchObject({ name: 'Channel A agent', channels: [channelA] });
  });
});

describe('what a key limited to channels sees', () => {
  it('sees the notifications about its channels and not the others\'', async () => {
    // An agent's posts wait for approval so an owner can reject them: each rejection is a notification about its channel.
    await herald.rest('PUT', '/approval-settings', { agents: true });
    const waitingA = (await as(agent.secret, 'POST', '/posts', postBody(channelA, unique('agent A')))).body[0].postId;
    const waitingB = (await as(agent.secret, 'POST', '/posts', postBody(channelB, unique('agent B')))).body[0].postId;
    await herald.rest('PUT', '/approval-settings', { agents: false });
    expect((await herald.rest('POST', `/posts/${waitingA}/reject`, { reason: 'not for channel A' })).status).toBe(200);
    expect((await herald.rest('POST', `/posts/${waitingB}/reject`, { reason: 'not for channel B' })).status).toBe(200);
    const seen = (await as(limited.secret, 'GET', '/notifications')).body.notifications.map((item: any) => item.content as string);
    expect(seen.some((content: string) => content.includes(waitingA) && content.includes('not for channel A'))).toBe(true);
    expect(seen.some((content: string) => content.includes(waitingB) || content.includes('not for channel B'))).toBe(false);
    // The owner sees both.
    const all = (await herald.rest('GET', '/notifications')).body.notifications.map((item: any) => item.content as string);
    expect(all.some((content: string) => content.includes('not for channel B'))).toBe(true);
  });

  it('sees the media it uploaded and the media used by its channels\' posts, not the rest of the library', async () => {
    const png = acceptedSamples().find((sample) => sample.type === 'image/png')!.bytes;
    const usedOnA = await uploaded(herald, png, 'used-on-a.png', 'image/png');
    const usedOnB = await uploaded(herald, png, 'used-on-b.png', 'image/png');
    const unused = await uploaded(herald, png, 'unused.png', 'image/png');
    expect((await herald.rest('POST', '/posts', postBody(channelA, unique('with media A'), [usedOnA]))).status).toBe(200);
    expect((await herald.rest('POST', '/posts', postBody(channelB, unique('with media B'), [usedOnB]))).status).toBe(200);
    const listed = (await as(limited.secret, 'GET', '/media')).body;
    const ids = JSON.stringify(listed);
    expect(ids).toContain(usedOnA.id);
    expect(ids).not.toContain(usedOnB.id);
    expect(ids).not.toContain(unused.id);
  });
});

describe('retention', () => {
  it('the daily prune deletes events older than AUDIT_RETENTION_DAYS (400 by default) and keeps the rest', async () => {
    expect(herald.services.config.auditRetentionDays).toBe(400);
    const before = (await herald.rest('GET', '/audit?limit=200')).body.events.length;
    expect(before).toBeGreaterThan(0);
    herald.setNow(new Date(Date.now() + 399 * DAY));
    await (auditTasks(herald.services)[PRUNE_AUDIT_TASK] as () => Promise<void>)();
    expect((await herald.rest('GET', '/audit?limit=200')).body.events.length).toBe(before);
    herald.setNow(new Date(Date.now() + 401 * DAY));
    await (auditTasks(herald.services)[PRUNE_AUDIT_TASK] as () => Promise<void>)();
    herald.setNow(undefined);
    expect((await herald.rest('GET', '/audit?limit=200')).body.events).toEqual([]);
  });
});
