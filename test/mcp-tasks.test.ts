// The 2026-07-28 tasks extension (SEP-2663) for AI generations, on the wire as a modern client sends it: a request that
// declares `io.modelcontextprotocol/tasks` gets a generation answered at once as a task (CreateTaskResult), reads it with
// tasks/get until the tool's own answer is inlined, and stops it with tasks/cancel before the next paid model call. A
// request without the extension waits as before, and its tasks/get is refused with -32021.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Herald } from './helpers/harness.js';
import { startGenerationHerald } from './helpers/generation-herald.js';
import { waitFor } from './helpers/posts.js';
import type { OpenAiFake } from './fakes/openai.js';

let herald: Herald;
let openai: OpenAiFake;
let id = 0;
const TASKS = 'io.modelcontextprotocol/tasks';

beforeAll(async () => {
  ({ herald, openai } = await startGenerationHerald(1500));
});
afterAll(async () => {
  await herald?.stop();
  await openai?.close();
});

/** One 2026-07-28 request (the envelope in `_meta`, the standard headers), answered as JSON or as an SSE stream. */
async function modern(method: string, params: Record<string, unknown>, options: { tasks?: boolean; key?: string } = {}): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const body = {
    jsonrpc: '2.0',
    id: ++id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': options.tasks === false ? {} : { extensions: { [TASKS]: {} } },
      },
    },
  };
  const name = (params.name ?? params.taskId ?? params.uri) as string | undefined;
  const response = await fetch(`${herald.url}/api/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${options.key ?? herald.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data:')).map((line) => JSON.parse(line.slice(5))).find((message) => message.id === body.id)
    : JSON.parse(text);
  return json;
}

const image = (prompt: string, tasks = true) => modern('tools/call', { name: 'generateImageTool', arguments: { prompt } }, { tasks });
const settled = (taskId: string) => waitFor(async () => {
  const { result } = await modern('tasks/get', { taskId });
  return result?.status === 'working' ? undefined : result;
}, 30_000);

describe('a client that declares the tasks extension', () => {
  it('is told the server offers it', async () => {
    const { result } = await modern('server/discover', {});
    expect(result.capabilities.extensions[TASKS]).toEqual({});
    expect(result.capabilities.tasks).toBeUndefined();
  });

  it('gets a generation as a task at once, reads it working, then completed with the tool\'s own answer inlined', async () => {
    const started = Date.now();
    const { result: created } = await image(`A lighthouse at dawn ${Math.random()}`);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created.taskId).toMatch(/\S/);
    for (const field of ['result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval', 'task']) expect(created, field).not.toHaveProperty(field);
    expect(Number.isInteger(created.ttlMs) && created.ttlMs > 0).toBe(true);
    expect(Number.isInteger(created.pollIntervalMs) && created.pollIntervalMs > 0).toBe(true);
    expect(Date.parse(created.createdAt)).not.toBeNaN();
    expect(Date.parse(created.lastUpdatedAt)).not.toBeNaN();

    const { result: working } = await modern('tasks/get', { taskId: created.taskId });
    expect(working).toMatchObject({ taskId: created.taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');

    const done = await settled(created.taskId);
    expect(done.status).toBe('completed');
    expect(done).not.toHaveProperty('requestState');
    expect(done.result.isError).toBeFalsy();
    expect(done.result.structuredContent).toMatchObject({ generationId: created.taskId, state: 'succeeded', id: expect.any(String), path: expect.any(String) });
    expect(JSON.parse(done.result.content[0].text)).toEqual(done.result.structuredContent);
    // The picture is in the library, as the tool's answer says.
    const media = (await herald.rest('GET', '/media?page=0')).body.media as { id: string }[];
    expect(media.map((item) => item.id)).toContain(done.result.structuredContent.id);
    // Still readable afterwards, and a cancel of a finished task is the same empty acknowledgement.
    expect((await modern('tasks/cancel', { taskId: created.taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await modern('tasks/get', { taskId: created.taskId })).result.status).toBe('completed');
  }, 60_000);

  it('stops a slideshow with tasks/cancel before the next paid call: cancelled, nothing more asked of the model, nothing stored', async () => {
    const images = openai.images.length;
    const media = ((await herald.rest('GET', '/media?page=0')).body.media as unknown[]).length;
    const { result: created } = await modern('tools/call', {
      name: 'generateVideoTool',
      arguments: { identifier: 'image-text-slides', output: 'vertical', customParams: [{ key: 'prompt', value: `Stop me ${Math.random()}` }, { key: 'voice', value: 'coral' }] },
    });
    expect(created.resultType).toBe('task');
    await waitFor(async () => (openai.images.length >= images + 2 ? true : undefined));
    const ack = (await modern('tasks/cancel', { taskId: created.taskId })).result;
    expect(ack.resultType).toBe('complete');
    for (const field of ['taskId', 'status', 'result', 'error']) expect(ack, field).not.toHaveProperty(field);
    expect((await modern('tasks/get', { taskId: created.taskId })).result.status).toBe('cancelled');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(openai.images.length).toBe(images + 2);
    expect((await modern('tasks/get', { taskId: created.taskId })).result.status).toBe('cancelled');
    expect(((await herald.rest('GET', '/media?page=0')).body.media as unknown[]).length).toBe(media);
  }, 60_000);

  it('answers -32602 for a task it does not know, or that the credential may not see', async () => {
    expect((await modern('tasks/get', { taskId: 'no-such-task' })).error?.code).toBe(-32602);
    const { result: created } = await image(`Seen by the owner only ${Math.random()}`);
    const reader = await herald.rest('POST', '/keys', { name: 'read only', scopes: ['read'] });
    expect((await modern('tasks/get', { taskId: created.taskId }, { key: reader.body.secret })).error?.code).toBe(-32602);
    expect((await modern('tasks/cancel', { taskId: created.taskId }, { key: reader.body.secret })).error?.code).toBe(-32602);
    expect((await settled(created.taskId)).status).toBe('completed');
  }, 60_000);
});

describe('a client that does not declare it', () => {
  it('waits for the generation as before (no task), and is refused tasks/get and tasks/cancel with -32021', async () => {
    const { result } = await image(`No task for me ${Math.random()}`, false);
    expect(result.resultType).toBe('complete');
    expect(result).not.toHaveProperty('taskId');
    expect(result.structuredContent).toMatchObject({ state: 'succeeded', id: expect.any(String) });
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const refused = await modern(method, { taskId: result.structuredContent.generationId }, { tasks: false });
      expect(refused.error?.code, method).toBe(-32021);
    }
  }, 60_000);
});
