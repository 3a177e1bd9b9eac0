// The "done when", in one process with the real worker: a comment left on the fake Mastodon is picked up by the
// poll job, an MCP client subscribed to herald://comments (and to the post's comments) hears of it, a webhook receiver gets
// a signed comment.created, the agent answers with replyToComment, and the reply is published once under the comment.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startFakeServer, type FakeServer } from './helpers/fake-server.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { waitFor, waitForPublished } from './helpers/posts.js';
import type { Worker } from '../src/jobs/index.js';

let herald: Herald;
let mastodon: MastodonFake;
let receiver: FakeServer;
let client: Client;
let worker: Worker | undefined;

beforeAll(async () => {
  [mastodon, receiver] = await Promise.all([startMastodonFake(), startFakeServer()]);
  receiver.on('POST', '/hook', () => ({ status: 204 }));
  herald = await startHerald({ COMMENT_POLL_SECONDS: '5', WEBHOOKS_ALLOW_PRIVATE: 'true' });
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  client = new Client({ name: 'comments-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await worker?.stop();
  await herald?.stop();
  await mastodon?.close();
  await receiver?.close();
});

it('a comment reaches an MCP subscriber and a signed webhook; the agent answers it once', async () => {
  const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token });
  expect(connected.status).toBe(200);
  const hook = await herald.rest('POST', '/webhooks', { url: `${receiver.url}/hook`, events: ['comment.created'] });
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);

  const created = await herald.rest('POST', '/posts', {
    type: 'now', date: new Date().toISOString(), shortLink: false, tags: [],
    posts: [{ integration: { id: connected.body.id }, value: [{ content: 'Tell me what you think', image: [] }], settings: {} }],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const postId = created.body[0].postId as string;

  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updated.push(notification.params.uri));
  await client.subscribeResource({ uri: 'herald://comments' });
  await client.subscribeResource({ uri: `herald://posts/${postId}/comments` });

  worker = await herald.startWorker();
  const [published] = await waitForPublished(herald, postId);
  const comment = mastodon.addReply('Does it do Bluesky too?', { inReplyToId: published.releaseId! });

  // The poll job reads the post a few seconds after it was published.
  await waitFor(async () => (updated.includes('herald://comments') && updated.includes(`herald://posts/${postId}/comments`) ? true : undefined), 30_000);
  const resource = JSON.parse(((await client.readResource({ uri: `herald://posts/${postId}/comments` })).contents[0] as { text: string }).text);
  expect(resource.comments).toHaveLength(1);
  expect(resource.comments[0]).toMatchObject({ platformId: comment.id, text: 'Does it do Bluesky too?', state: 'new' });
  const commentId = resource.comments[0].id as string;

  // The signed webhook (Standard Webhooks: HMAC-SHA256 of "id.timestamp.body" with the secret's base64 part).
  const delivery = await waitFor(async () => receiver.requests.find((request) => request.path === '/hook'), 30_000);
  const body = delivery.body.toString('utf8');
  const key = Buffer.from((hook.body.secret as string).slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${body}`).digest('base64');
  expect(String(delivery.headers['webhook-signature']).split(' ')).toContain(`v1,${signature}`);
  expect(JSON.parse(body)).toMatchObject({ type: 'comment.created', data: { commentId, postId, platform: 'mastodon', text: 'Does it do Bluesky too?' } });

  const listed: any = await client.callTool({ name: 'commentListTool', arguments: { unanswered: true } });
  expect(listed.structuredContent.comments.map((item: any) => item.id)).toEqual([commentId]);

  const answer: any = await client.callTool({ name: 'replyToComment', arguments: { id: commentId, content: 'Yes, Bluesky too.' } });
  expect(answer.isError, JSON.stringify(answer.content)).toBeFalsy();
  const again: any = await client.callTool({ name: 'replyToComment', arguments: { id: commentId, content: 'Yes!' } });
  expect(again.isError).toBe(true);

  await waitForPublished(herald, answer.structuredContent.postId, 30_000);
  await waitFor(async () => {
    const read = JSON.parse(((await client.readResource({ uri: 'herald://comments' })).contents[0] as { text: string }).text);
    return read.comments[0]?.state === 'answered' ? true : undefined;
  });
  expect(mastodon.statuses.filter((status) => status.in_reply_to_id === comment.id).map((status) => status.status)).toEqual(['Yes, Bluesky too.']);
});
