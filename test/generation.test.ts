// AI generation end to end against fake OpenAI and fal servers: images stored in the media library and published, the
// narrated slideshow composed by ffmpeg (checked with the media probe), Veo 3 with library pictures, safety refusals,
// model time-outs, identical requests joining one generation, and MCP progress notifications.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import { probeMp4, type VideoInfo } from '../src/lib/media-probe.js';
import { PostSchema } from '../src/db/entities.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { createPost, waitFor } from './helpers/posts.js';
import { upload } from './helpers/media-samples.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { defaultPlan, mp3Of, startOpenAiFake, type OpenAiFake } from './fakes/openai.js';
import { startFalFake, type FalFake } from './fakes/fal.js';

let herald: Herald;
let openai: OpenAiFake;
let fal: FalFake;
let mastodon: MastodonFake;
let client: Client;

beforeAll(async () => {
  [openai, fal, mastodon] = await Promise.all([startOpenAiFake(), startFalFake(), startMastodonFake()]);
  herald = await startHerald(
    {
      OPENAI_API_KEY: openai.apiKey,
      OPENAI_BASE_URL: openai.baseUrl,
      FAL_KEY: fal.key,
      FAL_PROXY_URL: fal.proxyUrl,
      GENERATION_TIMEOUT_SECONDS: '60',
      GENERATION_MODEL_TIMEOUT_SECONDS: '2',
      GENERATION_CHECK_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  await herald.startWorker();
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  client = new Client({ name: 'generation-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await Promise.all([openai?.close(), fal?.close(), mastodon?.close()]);
});

const textOf = (result: any) => String(result.content?.[0]?.text ?? '');

/** The stored file behind a media path, fetched from Herald's public /uploads like a platform would. */
async function fetchStored(mediaPath: string): Promise<string> {
  const response = await fetch(mediaPath);
  expect(response.status).toBe(200);
  const file = path.join(os.tmpdir(), `herald-generated-${process.pid}-${Date.now()}.mp4`);
  fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  return file;
}

async function probeStored(mediaPath: string): Promise<VideoInfo> {
  const file = await fetchStored(mediaPath);
  try {
    return await probeMp4(file);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Grey levels of a band of one frame (top and height as fractions of the picture), decoded by ffmpeg. */
function band(file: string, seconds: number, top: number, height: number): Buffer {
  return execFileSync(ffmpegInstaller.path, [
    '-hide_banner', '-loglevel', 'error', '-ss', String(seconds), '-i', file, '-frames:v', '1',
    '-vf', `crop=iw:ih*${height}:0:ih*${top},scale=120:40`, '-f', 'rawvideo', '-pix_fmt', 'gray', '-',
  ]);
}

const spread = (pixels: Buffer) => Math.max(...pixels) - Math.min(...pixels);

async function mediaCount(): Promise<number> {
  return (await herald.rest('GET', '/media?page=0&pageSize=1')).body.total;
}

describe('generateImageTool', () => {
  let image: { id: string; path: string };

  it('stores an OpenAI image in the media library, reporting progress over MCP', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result: any = await client.callTool({ name: 'generateImageTool', arguments: { prompt: 'A lighthouse at dawn, watercolour' } }, undefined, {
      onprogress: (update) => progress.push(update),
      resetTimeoutOnProgress: true,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    image = result.structuredContent;
    expect(image).toMatchObject({ id: expect.any(String), path: expect.stringContaining('/uploads/'), state: 'succeeded' });
    expect(openai.images).toEqual([{ model: 'gpt-image-2', prompt: 'A lighthouse at dawn, watercolour', n: 1, size: '1024x1024' }]);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((update, index) => index === 0 || update.progress > progress[index - 1].progress)).toBe(true);

    const library = await herald.rest('GET', '/media?page=0&pageSize=5');
    expect(library.body.media[0]).toMatchObject({ id: image.id, path: image.path, type: 'image/png', width: 1024, height: 1024, size: openai.pngs[0].length });
    const served = Buffer.from(await (await fetch(image.path)).arrayBuffer());
    expect(served.equals(openai.pngs[0])).toBe(true);

    const record = await herald.rest('GET', `/generations/${result.structuredContent.generationId}`);
    expect(record.body).toMatchObject({
      type: 'image',
      kind: 'image',
      prompt: 'A lighthouse at dawn, watercolour',
      models: ['openai:gpt-image-2'],
      state: 'succeeded',
      usage: { openai_image: 1 },
      url: image.path,
      requestedBy: expect.stringMatching(/^api_key:/),
    });
    expect(record.body.durationSeconds).toBeGreaterThanOrEqual(0);
  });

  it('is usable at once as an attachment: published to Mastodon with the generated bytes', async () => {
    const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    const rootId = await createPost(herald, connected.body.id, [{ content: '<p>Made by Herald</p>', image: [{ id: image.id, path: image.path }] }], { type: 'now' });
    const published = await waitFor(async () => {
      const post = await herald.services.orm.em.fork().findOne(PostSchema, { id: rootId });
      return post?.state === 'PUBLISHED' ? post : post?.state === 'ERROR' ? Promise.reject(new Error(post.error ?? 'failed')) : undefined;
    });
    expect(published.releaseId).toBe(mastodon.statuses.at(-1)!.id);
    expect(mastodon.media.at(-1)!.bytes.equals(openai.pngs[0])).toBe(true);
    expect(mastodon.statuses.at(-1)!.media_ids).toEqual([mastodon.media.at(-1)!.id]);
  });

  it('answers the same image to the same prompt instead of paying again', async () => {
    const result: any = await client.callTool({ name: 'generateImageTool', arguments: { prompt: 'A lighthouse at dawn, watercolour' } });
    expect(result.structuredContent).toMatchObject({ id: image.id, path: image.path });
    expect(openai.images).toHaveLength(1);
  });

  it('answers a safety refusal as a 422-style invalid_input with the model\'s reason, storing nothing', async () => {
    const before = await mediaCount();
    const result: any = await client.callTool({ name: 'generateImageTool', arguments: { prompt: 'REFUSE this please' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_input: OpenAI refused to generate this: Your request was rejected by the safety system\. safety_violations=\[violence\]\./);
    expect(textOf(result)).toContain('Rephrase the prompt');
    expect(await mediaCount()).toBe(before);
    const list = await herald.rest('GET', '/generations?page=0&pageSize=1');
    expect(list.body.generations[0]).toMatchObject({ prompt: 'REFUSE this please', state: 'failed', error: { code: 'invalid_input' } });
    expect(fs.existsSync(path.join(herald.dataDir, 'generations', list.body.generations[0].id))).toBe(false);
  });

  it('answers a model time-out as provider_error with what to try, storing nothing, and never calls twice', async () => {
    const before = await mediaCount();
    const calls = openai.images.length;
    openai.delayMs = 3000;
    try {
      const result: any = await client.callTool({ name: 'generateImageTool', arguments: { prompt: 'A slow painting' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^provider_error: OpenAI did not finish the image within 2 s\. Try again in a few minutes; if it keeps timing out, raise GENERATION_MODEL_TIMEOUT_SECONDS\./);
    } finally {
      openai.delayMs = 0;
    }
    expect(openai.images.length).toBe(calls + 1);
    expect(await mediaCount()).toBe(before);
  });
});

describe('generateVideoOptions and videoFunctionTool', () => {
  it('lists both generators as available, with their parameters, helper functions and costs', async () => {
    const result: any = await client.callTool({ name: 'generateVideoOptions', arguments: {} });
    expect(result.isError).toBeFalsy();
    const [slides, veo] = result.structuredContent.video;
    expect(slides).toMatchObject({ type: 'image-text-slides', output: 'vertical|horizontal', available: true, requires: [], tools: [{ functionName: 'loadVoices' }] });
    expect(Object.keys(slides.customParams.properties).sort()).toEqual(['prompt', 'voice']);
    expect(slides.customParams.required.sort()).toEqual(['prompt', 'voice']);
    expect(veo).toMatchObject({ type: 'veo3', output: 'vertical|horizontal', available: true, tools: [] });
    expect(Object.keys(veo.customParams.properties).sort()).toEqual(['images', 'prompt']);
    expect(veo.customParams.required).toEqual(['prompt']);
    expect(veo.customParams.properties.images.maxItems).toBe(3);
    expect(veo.costs).toContain('1 fal Veo 3 request');
  });

  it('loadVoices answers the voices, the same over MCP and REST', async () => {
    const viaMcp: any = await client.callTool({ name: 'videoFunctionTool', arguments: { identifier: 'image-text-slides', functionName: 'loadVoices' } });
    expect(viaMcp.structuredContent.voices).toContainEqual({ id: 'coral', name: 'Coral' });
    const viaRest = await herald.rest('POST', '/video/function', { identifier: 'image-text-slides', functionName: 'loadVoices', params: {} });
    expect(viaRest.status).toBe(200);
    expect(viaRest.body).toEqual(viaMcp.structuredContent);
  });

  it('an unknown function is not_found naming the functions that exist; an unknown generator names the generators', async () => {
    const unknown = await herald.rest('POST', '/video/function', { identifier: 'image-text-slides', functionName: 'constructor' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'not_found', message: 'Function "constructor" not found on the image-text-slides video generator.', hint: 'Its functions: loadVoices.' });
    const generator = await herald.rest('POST', '/generate-video', { type: 'sora', output: 'vertical', customParams: { prompt: 'x' } });
    expect(generator.status).toBe(404);
    expect(generator.body.hint).toContain('image-text-slides, veo3');
  });

  it('refuses invalid customParams before anything is paid', async () => {
    const submits = fal.submits.length;
    const tooMany = await herald.rest('POST', '/generate-video', { type: 'veo3', output: 'vertical', customParams: { prompt: 'x', images: ['a', 'b', 'c', 'd'] } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toBe('Invalid customParams for veo3: images: at most 3 images.');
    const notMine = await herald.rest('POST', '/generate-video', { type: 'veo3', output: 'vertical', customParams: { prompt: 'x', images: [{ id: 'someone-else', path: 'https://example.com/a.png' }] } });
    expect(notMine.status).toBe(400);
    expect(notMine.body.message).toContain("is not in this organization's media library");
    const voice = await herald.rest('POST', '/generate-video', { type: 'image-text-slides', output: 'vertical', customParams: { prompt: 'x', voice: 'darth' } });
    expect(voice.status).toBe(400);
    expect(voice.body.message).toContain('voice: must be a voice id from videoFunctionTool loadVoices');
    expect(fal.submits.length).toBe(submits);
    expect(openai.chats).toHaveLength(0);
  });
});

describe('image-text-slides', () => {
  const expectedSeconds = defaultPlan.slides.reduce((sum, slide) => sum + (slide.voiceText.length > 40 ? 1.5 : 1) + 1, 0);

  it('composes a vertical 1080x1920 H.264/AAC MP4 from planned slides, pictures and voice-overs (REST)', async () => {
    const response = await herald.rest('POST', '/generate-video', { type: 'image-text-slides', output: 'vertical', customParams: { prompt: 'Announce Herald 2', voice: 'coral' } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ type: 'video/mp4', width: 1080, height: 1920, path: expect.stringContaining('/uploads/') });
    expect(response.body.duration).toBeGreaterThan(expectedSeconds - 0.3);
    expect(response.body.duration).toBeLessThan(expectedSeconds + 0.4);

    const file = await fetchStored(response.body.path);
    try {
      const info = await probeMp4(file);
      expect(info).toMatchObject({ width: 1080, height: 1920, audioCodec: 'mp4a.40.2' });
      expect(info.videoCodec).toMatch(/^avc1\.4d/); // H.264 main profile
      expect(info.framesPerSecond).toBeLessThanOrEqual(30);
      // Mid first slide: the picture (a solid colour from the fake) at the top, the burned-in caption near the bottom.
      expect(spread(band(file, 1.2, 0.1, 0.3))).toBeLessThan(16);
      expect(spread(band(file, 1.2, 0.7, 0.2))).toBeGreaterThan(100);
    } finally {
      fs.rmSync(file, { force: true });
    }

    const [chat] = openai.chats;
    expect(chat.model).toBe('gpt-5.4-mini');
    expect(chat.messages.at(-1)).toEqual({ role: 'user', content: 'Announce Herald 2' });
    expect(chat.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'slides', strict: true } });
    const slideImages = openai.images.slice(-3);
    expect(slideImages.map((body) => body.size)).toEqual(['1024x1536', '1024x1536', '1024x1536']);
    expect(slideImages.map((body) => body.prompt).sort()).toEqual(defaultPlan.slides.map((slide) => slide.imagePrompt).sort());
    expect(openai.speeches.map((body) => ({ voice: body.voice, input: body.input, model: body.model, response_format: body.response_format })).sort((a, b) => a.input.localeCompare(b.input))).toEqual(
      defaultPlan.slides
        .map((slide) => ({ voice: 'coral', input: slide.voiceText, model: 'gpt-4o-mini-tts', response_format: 'mp3' }))
        .sort((a, b) => a.input.localeCompare(b.input)),
    );
    const list = await herald.rest('GET', '/generations?page=0&pageSize=1');
    expect(list.body.generations[0]).toMatchObject({
      type: 'image-text-slides',
      output: 'vertical',
      state: 'succeeded',
      usage: { openai_chat: 1, openai_image: 3, openai_speech: 3 },
      models: ['openai:gpt-5.4-mini', 'openai:gpt-image-2', 'openai:gpt-4o-mini-tts'],
    });
  });

  it('composes a horizontal 1920x1080 video over MCP, asking again when the first plan is unusable', async () => {
    const chats = openai.chats.length;
    openai.nextPlans.push({ slides: [{ imagePrompt: 'only one', voiceText: 'Too short.' }] });
    const result: any = await client.callTool({
      name: 'generateVideoTool',
      arguments: { identifier: 'image-text-slides', output: 'horizontal', customParams: [{ key: 'prompt', value: 'Announce Herald 2 on YouTube' }, { key: 'voice', value: 'onyx' }] },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ url: expect.stringContaining('/uploads/'), media: { type: 'video/mp4', width: 1920, height: 1080 }, state: 'succeeded' });
    expect(openai.chats.length).toBe(chats + 2);
    expect(openai.images.slice(-3).map((body) => body.size)).toEqual(['1536x1024', '1536x1024', '1536x1024']);
    const info = await probeStored(result.structuredContent.url);
    expect(info).toMatchObject({ width: 1920, height: 1080, audioCodec: 'mp4a.40.2' });
    expect(info.duration).toBeGreaterThan(expectedSeconds - 0.3);
  });
});

describe('veo3', () => {
  let pictures: { id: string; path: string; bytes: Buffer }[];

  beforeAll(async () => {
    pictures = [];
    for (const [index, color] of ['#d04040', '#40d040'].entries()) {
      const bytes = await (await import('sharp')).default({ create: { width: 64, height: 64, channels: 3, background: color } }).png().toBuffer();
      const uploaded = await upload(herald.restUrl, herald.apiKey, bytes, `picture-${index}.png`);
      expect(uploaded.status).toBe(200);
      pictures.push({ id: uploaded.body.id, path: uploaded.body.path, bytes });
    }
  });

  it('animates one library picture (image-to-video, 9:16), uploading it to fal storage since Herald is not public', async () => {
    const response = await herald.rest('POST', '/generate-video', { type: 'veo3', output: 'vertical', customParams: { prompt: 'The red square spins', images: [{ id: pictures[0].id, path: pictures[0].path }] } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ type: 'video/mp4', width: 360, height: 640 });
    const submit = fal.submits.at(-1)!;
    expect(submit.model).toBe('fal-ai/veo3/image-to-video');
    expect(Object.keys(submit.input).sort()).toEqual(['aspect_ratio', 'image_url', 'prompt']);
    expect(submit.input).toMatchObject({ prompt: 'The red square spins', aspect_ratio: '9:16' });
    const uploaded = fal.uploads.get(submit.input.image_url.split('/').pop());
    expect(uploaded?.bytes.equals(pictures[0].bytes)).toBe(true);
    expect(uploaded?.contentType).toBe('image/png');
    expect(fal.fetchedInputs.at(-1)).toEqual({ url: submit.input.image_url, type: 'image/png' });
    const info = await probeStored(response.body.path);
    expect(info).toMatchObject({ width: 360, height: 640, audioCodec: 'mp4a.40.2' });
  });

  it('uses two pictures (by id and by path) as references, 16:9, over MCP; an identical call made meanwhile joins it', async () => {
    const submits = fal.submits.length;
    fal.checksBeforeDone = 3;
    const call = () =>
      client.callTool({
        name: 'generateVideoTool',
        arguments: { identifier: 'veo3', output: 'horizontal', customParams: [{ key: 'prompt', value: 'Two squares dance' }, { key: 'images', value: [pictures[0].id, pictures[1].path] }] },
      });
    try {
      const [first, second]: any[] = await Promise.all([call(), call()]);
      expect(first.isError, textOf(first)).toBeFalsy();
      expect(second.structuredContent).toEqual(first.structuredContent);
      expect(first.structuredContent.media).toMatchObject({ type: 'video/mp4', width: 640, height: 360 });
    } finally {
      fal.checksBeforeDone = 1;
    }
    expect(fal.submits.length).toBe(submits + 1);
    const submit = fal.submits.at(-1)!;
    expect(submit.model).toBe('fal-ai/veo3.1/reference-to-video');
    expect(submit.input).toMatchObject({ prompt: 'Two squares dance', aspect_ratio: '16:9' });
    expect(submit.input.image_urls).toHaveLength(2);
    expect(fal.uploads.get(submit.input.image_urls[1].split('/').pop())?.bytes.equals(pictures[1].bytes)).toBe(true);
  });

  it('makes a video from text alone with fal-ai/veo3; a fal content refusal is invalid_input with fal\'s reason', async () => {
    const response = await herald.rest('POST', '/generate-video', { type: 'veo3', output: 'horizontal', customParams: { prompt: 'A calm lake' } });
    expect(response.status).toBe(200);
    expect(fal.submits.at(-1)).toMatchObject({ model: 'fal-ai/veo3', input: { prompt: 'A calm lake', aspect_ratio: '16:9' } });
    const before = await mediaCount();
    const refused = await herald.rest('POST', '/generate-video', { type: 'veo3', output: 'horizontal', customParams: { prompt: 'REFUSE a lake' } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'invalid_input', message: 'fal refused to generate this: The prompt was flagged by the content checker.' });
    expect(await mediaCount()).toBe(before);
  });
});

describe('the fake OpenAI', () => {
  it('answers real MP3 audio', () => {
    expect(mp3Of(1).subarray(0, 3).toString('latin1')).toMatch(/^(ID3|\xff\xfb)/);
  });
});
