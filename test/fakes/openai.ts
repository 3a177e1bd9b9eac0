// A fake OpenAI API for the generators, built on startFakeServer (real HTTP on 127.0.0.1). Point OPENAI_BASE_URL at
// `fake.baseUrl`. It answers the documented shapes with real media and refuses what the real API refuses.
//
//   POST /v1/images/generations   {model, prompt, n?, size?, quality?}: `data[0].b64_json` is a real PNG of the requested size
//                                 (made with sharp). 400 for a missing prompt, an unknown size, n != 1, or `response_format`
//                                 (GPT image models always answer base64); 400 `moderation_blocked` when the prompt contains
//                                 "REFUSE" (the safety system); `delayMs` delays the answer (time-out tests).
//   POST /v1/chat/completions     {model, messages, response_format: {type: "json_schema", json_schema: {name, strict: true,
//                                 schema}}}: the answer's content is `fake.nextPlans.shift()` or `fake.plan`, as JSON.
//   POST /v1/audio/speech         {model, input (1–4096 characters), voice (a built-in voice or voice_...), response_format}:
//                                 real MP3 audio made with ffmpeg, 1.0 s for up to 40 characters, 1.5 s above.
// Every route answers 401 `invalid_api_key` unless `Authorization: Bearer <apiKey>`.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import sharp from 'sharp';
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';

export interface SlidePlan {
  slides: { imagePrompt: string; voiceText: string }[];
}

export interface OpenAiFake {
  server: FakeServer;
  /** OPENAI_BASE_URL. */
  baseUrl: string;
  apiKey: string;
  /** The plan answered by chat completions when `nextPlans` is empty (an object, or raw text to answer as is). */
  plan: SlidePlan | string;
  nextPlans: (SlidePlan | string)[];
  /** Milliseconds every images call waits before answering. */
  delayMs: number;
  /** Bodies of the image, chat and speech requests received, in order. */
  images: any[];
  chats: any[];
  speeches: any[];
  /** The PNG bytes answered by each images call, in order. */
  pngs: Buffer[];
  close(): Promise<void>;
}

const VOICES = ['alloy', 'ash', 'ballad', 'cedar', 'coral', 'echo', 'fable', 'marin', 'nova', 'onyx', 'sage', 'shimmer', 'verse'];
const SIZES: Record<string, [number, number]> = { '1024x1024': [1024, 1024], '1024x1536': [1024, 1536], '1536x1024': [1536, 1024] };

export const defaultPlan: SlidePlan = {
  slides: [
    { imagePrompt: 'A sunrise over a calm sea', voiceText: 'Every launch starts early.' },
    { imagePrompt: 'A team around a table with laptops', voiceText: 'Our team worked all year on the new release, and it shows.' },
    { imagePrompt: 'A rocket lifting off', voiceText: 'Herald 2 is out today!' },
  ],
};

const openAiError = (status: number, message: string, code: string | null, type = 'invalid_request_error', param: string | null = null): FakeReply => ({
  status,
  json: { error: { message, type, param, code } },
});

const audioDirectory = path.join(os.tmpdir(), 'herald-test-samples-v2');

/** A real MP3 of `seconds` of tone, made once per length. */
export function mp3Of(seconds: number): Buffer {
  const file = path.join(audioDirectory, `tone-${seconds}.mp3`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(audioDirectory, { recursive: true });
    const partial = path.join(audioDirectory, `${process.pid}-tone-${seconds}.mp3`);
    execFileSync(ffmpegInstaller.path, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-c:a', 'libmp3lame', '-b:a', '64k', partial], {
      timeout: 60_000,
    });
    fs.renameSync(partial, file);
  }
  return fs.readFileSync(file);
}

/** A solid PNG of the given size whose colour depends on the prompt. */
async function pngFor(prompt: string, width: number, height: number): Promise<Buffer> {
  const hash = createHash('sha256').update(prompt).digest();
  return sharp({ create: { width, height, channels: 3, background: { r: hash[0], g: hash[1], b: hash[2] } } }).png().toBuffer();
}

export async function startOpenAiFake(options: { apiKey?: string } = {}): Promise<OpenAiFake> {
  const server = await startFakeServer();
  const apiKey = options.apiKey ?? 'sk-test-openai';
  const fake: OpenAiFake = {
    server,
    baseUrl: `${server.url}/v1`,
    apiKey,
    plan: defaultPlan,
    nextPlans: [],
    delayMs: 0,
    images: [],
    chats: [],
    speeches: [],
    pngs: [],
    close: () => server.close(),
  };
  const missing = (field: string) => openAiError(400, `Missing required parameter: '${field}'.`, 'missing_required_parameter', 'invalid_request_error', field);
  /** The checks every route makes first: the key, a JSON object body (recorded in `into`), a model. Answers the refusal or the body. */
  const accept = (request: RecordedRequest, into: any[]): { refusal: FakeReply } | { body: any } => {
    if (request.headers.authorization !== `Bearer ${apiKey}`) return { refusal: openAiError(401, 'Incorrect API key provided.', 'invalid_api_key') };
    const body = request.json && typeof request.json === 'object' && !Array.isArray(request.json) ? request.json : undefined;
    if (!body) return { refusal: openAiError(400, 'We could not parse the JSON body of your request.', null) };
    into.push(body);
    if (typeof body.model !== 'string' || !body.model) return { refusal: missing('model') };
    return { body };
  };

  server.on('POST', '/v1/images/generations', async (request) => {
    const accepted = accept(request, fake.images);
    if ('refusal' in accepted) return accepted.refusal;
    const body = accepted.body;
    if (typeof body.prompt !== 'string' || !body.prompt.trim()) return missing('prompt');
    if (body.prompt.length > 32000) return openAiError(400, 'Prompt is too long.', 'string_above_max_length', 'invalid_request_error', 'prompt');
    if ('response_format' in body) return openAiError(400, "Unknown parameter: 'response_format'.", 'unknown_parameter', 'invalid_request_error', 'response_format');
    if (body.n !== undefined && body.n !== 1) return openAiError(400, 'This fake only makes one image per request.', 'invalid_value', 'invalid_request_error', 'n');
    const size = body.size ?? '1024x1024';
    if (!SIZES[size]) return openAiError(400, `Invalid value: '${size}'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.`, 'invalid_value', 'invalid_request_error', 'size');
    if (body.quality !== undefined && !['low', 'medium', 'high', 'auto'].includes(body.quality)) return openAiError(400, `Invalid value: '${body.quality}'.`, 'invalid_value', 'invalid_request_error', 'quality');
    if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
    if (body.prompt.includes('REFUSE')) {
      return openAiError(400, 'Your request was rejected by the safety system. safety_violations=[violence].', 'moderation_blocked', 'image_generation_user_error', '');
    }
    const [width, height] = SIZES[size];
    const png = await pngFor(body.prompt, width, height);
    fake.pngs.push(png);
    return {
      json: {
        created: Math.floor(Date.now() / 1000),
        background: 'opaque',
        data: [{ b64_json: png.toString('base64') }],
        output_format: 'png',
        quality: body.quality ?? 'medium',
        size,
        usage: { input_tokens: 20, input_tokens_details: { image_tokens: 0, text_tokens: 20 }, output_tokens: 1056, total_tokens: 1076 },
      },
    };
  });

  server.on('POST', '/v1/chat/completions', (request) => {
    const accepted = accept(request, fake.chats);
    if ('refusal' in accepted) return accepted.refusal;
    const body = accepted.body;
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0 || !messages.every((message: any) => ['system', 'developer', 'user', 'assistant'].includes(message?.role))) {
      return openAiError(400, "Invalid 'messages': expected an array of messages with a role.", 'invalid_value', 'invalid_request_error', 'messages');
    }
    if (!messages.some((message: any) => message.role === 'user' && typeof message.content === 'string' && message.content.trim())) {
      return openAiError(400, "Invalid 'messages': a user message with content is required.", 'invalid_value', 'invalid_request_error', 'messages');
    }
    const format = body.response_format;
    if (format !== undefined) {
      const schema = format?.json_schema;
      if (format.type !== 'json_schema' || typeof schema?.name !== 'string' || typeof schema?.schema !== 'object') {
        return openAiError(400, "Invalid 'response_format': expected {type: 'json_schema', json_schema: {name, schema}}.", 'invalid_value', 'invalid_request_error', 'response_format');
      }
      // Strict mode needs every object closed and every property required.
      const strictProblem = (node: any): boolean =>
        node?.type === 'object'
          ? node.additionalProperties !== false || Object.keys(node.properties ?? {}).some((key) => !node.required?.includes(key)) || Object.values(node.properties ?? {}).some(strictProblem)
          : node?.type === 'array'
            ? strictProblem(node.items)
            : false;
      if (schema.strict === true && strictProblem(schema.schema)) {
        return openAiError(400, "Invalid schema for response_format 'slides': all fields must be required and additionalProperties must be false.", 'invalid_json_schema', 'invalid_request_error', 'response_format');
      }
    }
    const plan = fake.nextPlans.length > 0 ? fake.nextPlans.shift()! : fake.plan;
    return {
      json: {
        id: `chatcmpl-${fake.chats.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: typeof plan === 'string' ? plan : JSON.stringify(plan), refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 120, completion_tokens: 140, total_tokens: 260 },
      },
    };
  });

  server.on('POST', '/v1/audio/speech', (request) => {
    const accepted = accept(request, fake.speeches);
    if ('refusal' in accepted) return accepted.refusal;
    const body = accepted.body;
    if (typeof body.input !== 'string' || !body.input.trim()) return missing('input');
    if (body.input.length > 4096) return openAiError(400, "Invalid 'input': string too long. Expected a string with maximum length 4096.", 'string_above_max_length', 'invalid_request_error', 'input');
    if (typeof body.voice !== 'string' || !(VOICES.includes(body.voice) || /^voice_/.test(body.voice))) {
      return openAiError(400, `Invalid value: '${body.voice}'. Supported values are: ${VOICES.map((voice) => `'${voice}'`).join(', ')}.`, 'invalid_value', 'invalid_request_error', 'voice');
    }
    if (body.response_format !== undefined && body.response_format !== 'mp3') return openAiError(400, 'This fake only answers mp3.', 'invalid_value', 'invalid_request_error', 'response_format');
    return { headers: { 'content-type': 'audio/mpeg' }, body: mp3Of(body.input.length > 40 ? 1.5 : 1) };
  });

  return fake;
}
