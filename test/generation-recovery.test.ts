// Generation on a Herald with only FAL_KEY: what is unavailable and why, images through fal, a wait that ends before the
// video does (202 and the generation id), a restart during a video generation (resumed from the recorded fal request, never
// submitted twice), a crash in the middle of the paid call (reported, never repeated), and the per-organization limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config.js';
import { GenerationSchema } from '../src/db/entities.js';
import { imageGenerator, videoGenerators } from '../generators/index.js';
import type { Worker } from '../src/jobs/index.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { waitFor } from './helpers/posts.js';
import { startFalFake, type FalFake } from './fakes/fal.js';

let herald: Herald;
let fal: FalFake;
let client: Client;
let worker: Worker | undefined;

beforeAll(async () => {
  fal = await startFalFake();
  herald = await startHerald(
    {
      FAL_KEY: fal.key,
      FAL_PROXY_URL: fal.proxyUrl,
      GENERATION_TIMEOUT_SECONDS: '1',
      GENERATION_CHECK_SECONDS: '1',
      GENERATION_LIMIT_PER_HOUR: '3',
    },
    { guard: { allowLoopback: true } },
  );
  worker = await herald.startWorker();
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  client = new Client({ name: 'generation-recovery-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await fal?.close();
});

const textOf = (result: any) => String(result.content?.[0]?.text ?? '');
const generation = (id: string) => herald.services.orm.em.fork().findOneOrFail(GenerationSchema, { id });
const veo = (prompt: string) => ({ type: 'veo3', output: 'vertical', customParams: { prompt } });

describe('settings', () => {
  it('names the setting each generator needs', () => {
    const none = loadConfig({}).generation;
    expect(imageGenerator.missingSettings(none)).toEqual(['OPENAI_API_KEY']);
    expect(videoGenerators.map((generator) => [generator.identifier, generator.missingSettings(none)])).toEqual([
      ['image-text-slides', ['OPENAI_API_KEY']],
      ['veo3', ['FAL_KEY']],
    ]);
    const falOnly = loadConfig({ IMAGE_GENERATOR: 'fal', OPENAI_API_KEY: 'sk-x' }).generation;
    expect(imageGenerator.missingSettings(falOnly)).toEqual(['FAL_KEY']);
    expect(videoGenerators[0].missingSettings(falOnly)).toEqual(['FAL_KEY']);
    expect(() => loadConfig({ OPENAI_BASE_URL: 'ftp://example.com', GENERATION_TIMEOUT_SECONDS: '0' })).toThrow(/GENERATION_TIMEOUT_SECONDS/);
  });
});

describe('with FAL_KEY only', () => {
  it('lists image-text-slides as unavailable with the setting that enables it, and veo3 as available', async () => {
    const result: any = await client.callTool({ name: 'generateVideoOptions', arguments: {} });
    const [slides, veo3] = result.structuredContent.video;
    expect(slides).toMatchObject({
      type: 'image-text-slides',
      available: false,
      requires: ['OPENAI_API_KEY'],
      unavailableReason: 'The image-text-slides generator needs OPENAI_API_KEY to be set on this Herald.',
    });
    expect(veo3).toMatchObject({ type: 'veo3', available: true, requires: [] });
  });

  it('answers not_supported naming the setting for the unavailable generator and its functions, creating nothing', async () => {
    const voices: any = await client.callTool({ name: 'videoFunctionTool', arguments: { identifier: 'image-text-slides', functionName: 'loadVoices' } });
    expect(voices.isError).toBe(true);
    expect(textOf(voices)).toMatch(/^not_supported: The image-text-slides generator needs OPENAI_API_KEY to be set on this Herald\. Ask the operator to set OPENAI_API_KEY/);
    const video = await herald.rest('POST', '/generate-video', { type: 'image-text-slides', output: 'vertical', customParams: { prompt: 'x', voice: 'coral' } });
    expect(video.status).toBe(400);
    expect(video.body).toMatchObject({ code: 'not_supported', message: 'The image-text-slides generator needs OPENAI_API_KEY to be set on this Herald.' });
    expect((await herald.rest('GET', '/generations')).body.total).toBe(0);
  });

  it('draws images with the fal image model (IMAGE_GENERATOR defaults to fal when only FAL_KEY is set)', async () => {
    const result: any = await client.callTool({ name: 'generateImageTool', arguments: { prompt: 'A blue square' } }, undefined, { timeout: 30_000 });
    let id = result.structuredContent.id as string | undefined;
    if (!id) {
      // The 1 s wait of this Herald may end first: the same call joins the running generation and answers it once done.
      expect(result.structuredContent).toMatchObject({ state: expect.stringMatching(/queued|running/), message: expect.stringContaining('call generateImageTool again with the same prompt') });
      const done = await waitFor(async () => ((await generation(result.structuredContent.generationId)).state === 'succeeded' ? true : undefined));
      expect(done).toBe(true);
      id = ((await client.callTool({ name: 'generateImageTool', arguments: { prompt: 'A blue square' } })) as any).structuredContent.id;
    }
    expect(fal.submits.filter((submit) => submit.model === 'fal-ai/flux/dev')).toEqual([
      expect.objectContaining({ input: { prompt: 'A blue square', image_size: 'square_hd', num_images: 1, output_format: 'png', enable_safety_checker: true } }),
    ]);
    const media = (await herald.rest('GET', '/media?page=0&pageSize=1')).body.media[0];
    expect(media).toMatchObject({ id, type: 'image/png', width: 1024, height: 1024 });
  });
});

describe('a video generation across a restart', () => {
  let generationId: string;

  it('answers 202 with the generation id and how to fetch the result when the wait ends first', async () => {
    fal.hold = true;
    const response = await herald.rest('POST', '/generate-video', veo('A storm over the sea'));
    expect(response.status).toBe(202);
    generationId = response.body.generationId;
    expect(response.body).toMatchObject({ state: expect.stringMatching(/queued|running/) });
    expect(response.body.message).toContain('call generateVideoTool again with the same parameters');
    expect(response.body.message).toContain(`${herald.url}/api/public/v1/generations/${generationId}`);
    // The job submitted once, recorded the request, and re-scheduled itself to check again.
    const running = await waitFor(async () => {
      const row = await generation(generationId);
      return row.nextCheckAt && row.steps.submit?.state === 'done' ? row : undefined;
    });
    expect(running.usage).toEqual({ fal_video: 1 });
    expect(fal.submits.filter((submit) => submit.model === 'fal-ai/veo3')).toHaveLength(1);
    const status = await herald.rest('GET', `/generations/${generationId}`);
    expect(status.body).toMatchObject({ id: generationId, state: 'running', models: ['fal:fal-ai/veo3'] });
  });

  it('resumes after a restart from the recorded fal request, never submitting again', async () => {
    await worker!.stop();
    worker = undefined;
    const submits = fal.submits.length;
    fal.hold = false;
    worker = await herald.startWorker();
    const done = await waitFor(async () => {
      const row = await generation(generationId);
      return row.state === 'succeeded' || row.state === 'failed' ? row : undefined;
    });
    expect(done.state).toBe('succeeded');
    expect(fal.submits.length).toBe(submits);
    const status = await herald.rest('GET', `/generations/${generationId}`);
    expect(status.body).toMatchObject({ state: 'succeeded', usage: { fal_video: 1 }, media: { type: 'video/mp4', width: 360, height: 640 } });
    // Asking again with the same parameters answers the stored video: nothing is paid twice.
    const again = await herald.rest('POST', '/generate-video', veo('A storm over the sea'));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(status.body.media);
    expect(fal.submits.length).toBe(submits);
  });

  it('reports a paid call interrupted by a crash as "could not confirm" and never repeats it', async () => {
    await worker!.stop();
    worker = undefined;
    const response = await herald.rest('POST', '/generate-video', veo('A crash in the middle'));
    expect(response.status).toBe(202);
    const id = response.body.generationId;
    // What a crash in the middle of the submit leaves: the step marked started, no result.
    await herald.services.orm.em
      .fork()
      .getConnection()
      .execute(`update generation set state = 'running', steps = '{"submit":{"state":"started","at":"2026-01-01T00:00:00.000Z"}}'::jsonb where id = ?`, [id]);
    const submits = fal.submits.length;
    worker = await herald.startWorker();
    const failed = await waitFor(async () => {
      const row = await generation(id);
      return row.state === 'failed' ? row : undefined;
    });
    expect(failed.errorCode).toBe('provider_error');
    expect(failed.error).toBe('Could not confirm whether the "submit" model call finished: Herald stopped while it was running. It may have been billed, so it is not repeated.');
    expect(fal.submits.length).toBe(submits);
    const status = await herald.rest('GET', `/generations/${id}`);
    expect(status.body.error).toMatchObject({ code: 'provider_error', hint: 'Start the generation again if you still want it.' });
  });
});

describe('the per-organization generation limit', () => {
  it('refuses new generations over GENERATION_LIMIT_PER_HOUR with 429 and Retry-After; a repeat joins and does not count', async () => {
    const other = await herald.newOrganization('Limited');
    const post = (body: unknown) => herald.rest('POST', '/generate-video', body, { authorization: other.apiKey });
    for (const prompt of ['one', 'two', 'three']) expect([200, 202]).toContain((await post(veo(prompt))).status);
    const repeat = await post(veo('one'));
    expect([200, 202]).toContain(repeat.status);
    const over = await post(veo('four'));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'rate_limited', message: 'Generation limit reached: 3 new generations per hour for this organization.' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await herald.rest('GET', '/generations', undefined, { authorization: other.apiKey })).body.total).toBe(3);
  });
});
