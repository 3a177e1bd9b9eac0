// Destructive MCP tools ask the user: an elicitation when the client supports it (accepted, declined, cancelled), else a
// first call that answers what would be deleted and a second one with confirm: true. REST deletes stay one call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';

let herald: Herald;
let fake: BlueskyFake;
let channelId: string;
const clients: Client[] = [];

/** A client that supports elicitation and answers with `answer` (recording what it was asked), or one that does not. */
async function connect(answer?: (request: ElicitRequest['params']) => ElicitResult): Promise<{ client: Client; asked: ElicitRequest['params'][] }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  const client = new Client({ name: 'confirm-test', version: '1.0.0' }, { capabilities: answer ? { elicitation: {} } : {} });
  const asked: ElicitRequest['params'][] = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  }
  await client.connect(transport);
  clients.push(client);
  return { client, asked };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result: any = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent;
}

/** A scheduled post in a group of its own; answers its id and group. */
async function newPost(text: string): Promise<{ id: string; group: string }> {
  const created = await herald.rest('POST', '/posts', {
    type: 'schedule',
    date: new Date(Date.now() + 3 * 86400_000).toISOString(),
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channelId }, value: [{ content: `<p>${text}</p>`, image: [] }], settings: {} }],
  });
  expect(created.status).toBe(200);
  const id = created.body[0].postId;
  const listed = await herald.rest('GET', `/posts?startDate=${encodeURIComponent(new Date(Date.now() - 86400_000).toISOString())}&endDate=${encodeURIComponent(new Date(Date.now() + 30 * 86400_000).toISOString())}`);
  return { id, group: listed.body.posts.find((post: any) => post.id === id).group };
}

const exists = async (id: string) => {
  const listed = await herald.rest('GET', `/posts?startDate=${encodeURIComponent(new Date(Date.now() - 86400_000).toISOString())}&endDate=${encodeURIComponent(new Date(Date.now() + 30 * 86400_000).toISOString())}`);
  return listed.body.posts.some((post: any) => post.id === id);
};

const fakes: BlueskyFake[] = [];

/** A channel of its own account (connecting the same account again would update the existing channel). */
async function connectChannel(account?: BlueskyFake): Promise<string> {
  const pds = account ?? (await startBlueskyFake({ handle: `doomed${fakes.length}.bsky.social` }));
  if (!account) fakes.push(pds);
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: pds.url, identifier: pds.handle, appPassword: pds.password });
  expect(connected.status).toBe(200);
  return connected.body.id;
}

beforeAll(async () => {
  herald = await startHerald();
  fake = await startBlueskyFake();
  channelId = await connectChannel(fake);
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await herald?.stop();
  await fake?.close();
  for (const other of fakes) await other.close();
});

describe('deleting over MCP with a client that supports elicitation', () => {
  it('asks the user what would be deleted and deletes the group when they accept', async () => {
    const { client, asked } = await connect(() => ({ action: 'accept', content: { confirm: true } }));
    const post = await newPost(`Group to delete ${Date.now()}`);
    const answer = await call(client, 'deletePost', { id: post.id });
    expect(answer).toEqual({ id: post.id, deleted: true });
    expect(asked).toHaveLength(1);
    expect(asked[0].message).toMatch(new RegExp(`^Delete 1 post \\(group ${post.group}\\): Alice \\(bluesky\\), queue for .*: "Group to delete`));
    expect((asked[0] as { requestedSchema: unknown }).requestedSchema).toMatchObject({ type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] });
    expect(await exists(post.id)).toBe(false);
  });

  it.each([
    ['declines', { action: 'decline' } as ElicitResult],
    ['cancels', { action: 'cancel' } as ElicitResult],
    ['accepts without ticking the box', { action: 'accept', content: { confirm: false } } as ElicitResult],
  ])('deletes nothing when the user %s, even with confirm: true from the agent', async (_case, result) => {
    const { client, asked } = await connect(() => result);
    const post = await newPost(`Keep me ${Date.now()} ${Math.random()}`);
    const answer = await call(client, 'deletePost', { id: post.id, confirm: true });
    expect(answer).toEqual({ id: post.id, deleted: false, message: 'The user did not confirm: nothing was deleted.' });
    expect(asked).toHaveLength(1);
    expect(await exists(post.id)).toBe(true);
  });

  it('asks before deleting a channel, naming its unpublished posts; accepted, the channel and its posts are gone', async () => {
    const doomed = await connectChannel();
    await herald.rest('POST', '/posts', {
      type: 'draft',
      date: new Date(Date.now() + 86400_000).toISOString(),
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: doomed }, value: [{ content: '<p>draft on the doomed channel</p>', image: [] }], settings: {} }],
    });
    const { client, asked } = await connect(() => ({ action: 'accept', content: { confirm: true } }));
    expect(await call(client, 'deleteIntegration', { id: doomed })).toEqual({ id: doomed, deleted: true });
    expect(asked[0].message).toMatch(/^Delete the channel "Alice" \(Bluesky, .*\)\? Its 1 post not published yet \(1 draft\) will be deleted with it\. Published posts stay on Bluesky\. This cannot be undone\.$/);
    const channels = await herald.rest('GET', '/integrations');
    expect(channels.body.map((channel: any) => channel.id)).not.toContain(doomed);
  });
});

describe('deleting over MCP with a client that cannot elicit', () => {
  it('answers what would be deleted first, and deletes only on the second call with confirm: true', async () => {
    const { client } = await connect();
    const doomed = await connectChannel();
    const first = await call(client, 'deleteIntegration', { id: doomed });
    expect(first).toMatchObject({ id: doomed, deleted: false, wouldDelete: { channel: { id: doomed, platform: 'bluesky' }, unpublishedPosts: 0 } });
    expect(first.message).toMatch(/^Nothing was deleted yet\. Delete the channel "Alice".*call deleteIntegration again with the same id and confirm: true/);
    expect((await herald.rest('GET', '/integrations')).body.map((channel: any) => channel.id)).toContain(doomed);
    expect(await call(client, 'deleteIntegration', { id: doomed, confirm: true })).toEqual({ id: doomed, deleted: true });
    expect((await herald.rest('GET', '/integrations')).body.map((channel: any) => channel.id)).not.toContain(doomed);
  });

  it('a confirm: true with no preview before it (or for another target) deletes nothing and answers the preview', async () => {
    const { client } = await connect();
    const post = await newPost(`Not without a preview ${Date.now()}`);
    const other = await newPost(`Another one ${Date.now()}`);
    const blind = await call(client, 'deletePost', { id: post.id, confirm: true });
    expect(blind).toMatchObject({ deleted: false, wouldDelete: { group: post.group } });
    expect(await exists(post.id)).toBe(true);
    // A preview of one group does not confirm another.
    await call(client, 'deletePost', { id: other.id });
    expect(await call(client, 'deletePost', { id: post.id, confirm: true })).toEqual({ id: post.id, deleted: true });
    expect(await exists(other.id)).toBe(true);
    // A preview is good once: the next deletion of the other group needs its own confirm.
    expect(await call(client, 'deletePost', { id: other.id, confirm: true })).toEqual({ id: other.id, deleted: true });
  });

  it('the preview belongs to its session: another session must preview again', async () => {
    const post = await newPost(`Session bound ${Date.now()}`);
    const { client: first } = await connect();
    await call(first, 'deletePost', { id: post.id });
    const { client: second } = await connect();
    expect(await call(second, 'deletePost', { id: post.id, confirm: true })).toMatchObject({ deleted: false });
    expect(await exists(post.id)).toBe(true);
  });
});

describe('deleting over REST', () => {
  it('stays one explicit call for the spec\'s routes, answering {id}', async () => {
    const post = await newPost(`REST delete ${Date.now()}`);
    const deleted = await herald.rest('DELETE', `/posts/group/${post.group}`);
    expect(deleted).toMatchObject({ status: 200, body: { id: post.group } });
    expect(await exists(post.id)).toBe(false);
    const doomed = await connectChannel();
    expect(await herald.rest('DELETE', `/integrations/${doomed}`)).toMatchObject({ status: 200, body: { id: doomed } });
  });
});
