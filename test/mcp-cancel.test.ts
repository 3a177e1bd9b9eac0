// A client cancelling a long MCP call: the cancel reaches the call wherever it runs (a 2025-11-25 session's
// notifications/cancelled, a separate POST, goes through Postgres NOTIFY to the transport running it), and a generation it
// started stops before its next paid model call; a 2026-07-28 client's closing of the call's request does the same.
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Herald } from './helpers/harness.js';
import { startGenerationHerald } from './helpers/generation-herald.js';
import { waitFor } from './helpers/posts.js';
import type { OpenAiFake } from './fakes/openai.js';

let herald: Herald;
let openai: OpenAiFake;
const closing: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  // Every picture takes 2 s: the slideshow draws two at a time, so the third slide's picture and voice-over come later.
  ({ herald, openai } = await startGenerationHerald(2000));
});
afterAll(async () => {
  for (const client of closing) await client.close().catch(() => undefined);
  await herald?.stop();
  await openai?.close();
});

async function legacy(): Promise<Client> {
  const client = new Client({ name: 'cancel-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
  closing.push(client);
  return client;
}

const latestGeneration = async () => (await herald.rest('GET', '/generations?page=0&pageSize=1')).body.generations[0];
const stored = async () => ((await herald.rest('GET', '/media?page=0')).body.media as { id: string }[]).map((item) => item.id);

/** The cancelled slideshow: failed as cancelled; the two pictures under way finish at the model, nothing after them is asked for, no video is stored. */
async function stoppedBeforeNextPaidCall(before: { images: number; speeches: number; media: string[] }): Promise<void> {
  const generation = await waitFor(async () => {
    const latest = await latestGeneration();
    return latest?.state === 'failed' ? latest : undefined;
  });
  expect(generation.error).toMatchObject({ message: expect.stringMatching(/^Cancelled by the client/) });
  await new Promise((resolve) => setTimeout(resolve, 3500));
  expect(openai.images.length).toBe(before.images + 2);
  expect(openai.speeches.length).toBeLessThanOrEqual(before.speeches + 2);
  expect((await latestGeneration()).state).toBe('failed');
  expect(await stored()).toEqual(before.media);
}

// A 2026-07-28 client cancels by closing the call's request: the last test. (It failed until the socket's 'end' was
// listened to: Node keeps a socket the client ended half-open, so its 'close' came only with the answer.)
it.each([['a 2025-11-25 session', legacy]])('%s cancelling a slideshow stops it before the next paid call: no further picture or voice-over, nothing stored', async (_era, connect) => {
  const client = await connect();
  const images = openai.images.length;
  const speeches = openai.speeches.length;
  const media = await stored();
  const abort = new AbortController();
  const params = { name: 'generateVideoTool', arguments: { identifier: 'image-text-slides', output: 'vertical', customParams: [{ key: 'prompt', value: `Cancel me ${Math.random()}` }, { key: 'voice', value: 'coral' }] } };
  const options = { signal: abort.signal, timeout: 60_000 };
  const call = client.callTool(params, undefined, options);
  const settled = call.then(
    () => 'answered',
    () => 'rejected',
  );
  // The first two pictures are being drawn (paid, under way): the person cancels.
  await waitFor(async () => (openai.images.length >= images + 2 ? true : undefined));
  abort.abort('The person pressed stop');
  expect(await settled).toBe('rejected');
  await stoppedBeforeNextPaidCall({ images, speeches, media });
}, 60_000);

it('a 2026-07-28 client closing the call\'s request stops the slideshow before the next paid call, nothing stored', async () => {
  const images = openai.images.length;
  const speeches = openai.speeches.length;
  const media = await stored();
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'generateVideoTool',
      arguments: { identifier: 'image-text-slides', output: 'vertical', customParams: [{ key: 'prompt', value: `Close me ${Math.random()}` }, { key: 'voice', value: 'coral' }] },
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'closer', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  const url = new URL(`${herald.url}/api/mcp`);
  const request = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${herald.apiKey}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'generateVideoTool',
    },
  });
  request.on('error', () => undefined);
  request.on('response', (response) => response.resume());
  request.end(body);
  await waitFor(async () => (openai.images.length >= images + 2 ? true : undefined));
  // The person pressed stop: the client closes the request, the revision's way to cancel it.
  request.destroy();
  await stoppedBeforeNextPaidCall({ images, speeches, media });
}, 60_000);
