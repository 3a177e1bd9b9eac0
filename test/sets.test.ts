// Saved sets (issue 35): presets of channels, text, media and settings per platform, over REST (create, list, show,
// change, delete) and MCP (listSets, whose socialPost schedulePostTool takes as it is); a set whose channel was
// disconnected says so and leaves it out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Herald } from './helpers/harness.js';
import { startWithTwoBlueskyChannels, type TwoChannels } from './helpers/two-bluesky-channels.js';

let setup: TwoChannels;
let herald: Herald;
let aliceChannel: string;
let bobChannel: string;
let client: Client;

beforeAll(async () => {
  setup = await startWithTwoBlueskyChannels('sets-test');
  ({ herald, aliceChannel, bobChannel, client } = setup);
}, 120_000);

afterAll(async () => {
  await setup?.stop();
});

describe('sets over REST', () => {
  it('round trip: create, list, show, change, delete', async () => {
    const created = await herald.rest('POST', '/sets', {
      name: 'Weekly tip',
      channels: [aliceChannel],
      content: '<p>Tip of the week:</p>',
      media: ['https://example.com/tip.png'],
      settings: { bluesky: { __type: 'bluesky' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      name: 'Weekly tip',
      channels: [{ id: aliceChannel, platform: 'bluesky', state: 'connected' }],
      content: '<p>Tip of the week:</p>',
      media: [{ path: 'https://example.com/tip.png' }],
      settings: { bluesky: {} },
      socialPost: [{ integrationId: aliceChannel, type: 'draft', postsAndComments: [{ content: '<p>Tip of the week:</p>', attachments: [{ path: 'https://example.com/tip.png' }] }], settings: [] }],
      warnings: [],
    });
    expect((await herald.rest('GET', '/sets')).body.map((set: { id: string }) => set.id)).toContain(id);
    expect((await herald.rest('GET', `/sets/${id}`)).body.name).toBe('Weekly tip');
    const changed = await herald.rest('PUT', `/sets/${id}`, { channels: [aliceChannel, bobChannel], name: 'Weekly tip (both)' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ name: 'Weekly tip (both)', content: '<p>Tip of the week:</p>' });
    expect(changed.body.socialPost.map((item: { integrationId: string }) => item.integrationId)).toEqual([aliceChannel, bobChannel]);
    expect((await herald.rest('DELETE', `/sets/${id}`)).body).toEqual({ id, deleted: true });
    expect((await herald.rest('GET', `/sets/${id}`)).status).toBe(404);
  });

  it('refuses a channel that is not the organization\'s, an unknown platform and an empty set, with a 4xx', async () => {
    expect((await herald.rest('POST', '/sets', { name: 'Bad', channels: ['nope'] })).status).toBe(404);
    expect((await herald.rest('POST', '/sets', { name: 'Bad', content: 'x', settings: { myspace: {} } })).body.message).toMatch(/myspace: not a platform identifier/);
    expect((await herald.rest('POST', '/sets', { name: 'Empty' })).body.message).toMatch(/The set is empty/);
    expect((await herald.rest('POST', '/sets', { content: 'x' })).status).toBe(400);
    const other = await herald.newOrganization('Other sets');
    const mine = await herald.rest('POST', '/sets', { name: 'Private', content: '<p>Ours</p>' });
    const foreign = await fetch(`${herald.restUrl}/sets/${mine.body.id}`, { headers: { authorization: other.apiKey } });
    expect(foreign.status).toBe(404);
  });
});

describe('sets over MCP', () => {
  it('listSets answers each set\'s socialPost, which schedulePostTool takes as it is', async () => {
    const created = await herald.rest('POST', '/sets', { name: 'Agent start', channels: [bobChannel], content: '<p>Started from a set</p>' });
    const listed = (await client.callTool({ name: 'listSets', arguments: {} })).structuredContent as { sets: { id: string; socialPost: unknown[] }[] };
    const set = listed.sets.find((item) => item.id === created.body.id)!;
    const scheduled = await client.callTool({ name: 'schedulePostTool', arguments: { socialPost: set.socialPost } });
    expect(scheduled.isError, JSON.stringify(scheduled.content)).toBeFalsy();
    const [post] = (scheduled.structuredContent as { output: { postId: string; integration: string }[] }).output;
    expect(post.integration).toBe(bobChannel);
    const rows = await herald.services.orm.em.fork().getConnection().execute<{ content: string; state: string }[]>('select content, state from post where id = ?', [post.postId]);
    expect(rows[0]).toEqual({ content: '<p>Started from a set</p>', state: 'DRAFT' });
  });

  it('postSetTool saves, changes and deletes a set with REST\'s checks, and what it saves is what REST shows', async () => {
    const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'postSetTool', arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text: string }[] };
    const made = await call({ action: 'create', set: { name: 'Saved by an agent', channels: [aliceChannel], content: '<p>Weekly tip</p>', settings: { bluesky: {} } } });
    expect(made.isError, made.content[0]?.text).toBeFalsy();
    const id = made.structuredContent.set.id as string;
    expect((await herald.rest('GET', `/sets/${id}`)).body).toMatchObject({ name: 'Saved by an agent', content: '<p>Weekly tip</p>', channels: [expect.objectContaining({ id: aliceChannel })] });
    const changed = await call({ action: 'change', id, set: { name: 'Renamed by an agent' } });
    expect(changed.structuredContent.set).toMatchObject({ name: 'Renamed by an agent', content: '<p>Weekly tip</p>' });
    const noName = await call({ action: 'create', set: { content: 'x' } });
    expect(noName.isError).toBe(true);
    expect(noName.content[0].text).toContain('name');
    const unknown = await call({ action: 'create', set: { name: 'x', channels: ['no-such-channel'] } });
    expect(unknown.isError).toBe(true);
    expect((await call({ action: 'delete' })).content[0].text).toContain("delete needs the set's id");
    expect((await call({ action: 'delete', id })).structuredContent).toEqual({ deleted: true });
    expect((await herald.rest('GET', `/sets/${id}`)).status).toBe(404);
  });

  it('a set whose channel was disconnected says so and leaves the channel out of socialPost', async () => {
    const bluesky = await import('./fakes/bluesky.js');
    const carol = await bluesky.startBlueskyFake({ handle: 'carol.bsky.social' });
    const carolChannel = (await herald.rest('POST', '/integrations/bluesky/connect', { service: carol.url, identifier: carol.handle, appPassword: carol.password })).body.id as string;
    const created = await herald.rest('POST', '/sets', { name: 'With Carol', channels: [aliceChannel, carolChannel], content: '<p>Hello both</p>' });
    expect((await herald.rest('DELETE', `/integrations/${carolChannel}`)).status).toBe(200);
    await carol.close();
    const shown = (await herald.rest('GET', `/sets/${created.body.id}`)).body;
    expect(shown.channels).toEqual([expect.objectContaining({ id: aliceChannel, state: 'connected' }), expect.objectContaining({ id: carolChannel, state: 'disconnected' })]);
    expect(shown.socialPost.map((item: { integrationId: string }) => item.integrationId)).toEqual([aliceChannel]);
    expect(shown.warnings).toEqual([expect.stringMatching(new RegExp(`id ${carolChannel}\\) was disconnected: it is left out of socialPost`))]);
    const listed = (await client.callTool({ name: 'listSets', arguments: {} })).structuredContent as { sets: { id: string; warnings: string[] }[] };
    expect(listed.sets.find((item) => item.id === created.body.id)!.warnings[0]).toMatch(/was disconnected/);
  });
});
