// A fake fal.ai for the generators, built on startFakeServer (real HTTP on 127.0.0.1), reached through fal's proxy
// protocol: set FAL_PROXY_URL to `fake.proxyUrl`; every client request arrives there with the real URL in
// `x-fal-target-url` and `Authorization: Key <key>`.
//
//   POST https://queue.fal.run/<model>                          submit: {request_id, response_url, status_url, cancel_url,
//                                                               queue_position}; 422 {detail: [{loc, msg, type}]} for
//                                                               input the model refuses; 404 for an unknown model
//   GET  https://queue.fal.run/<owner>/<alias>/requests/<id>/status   IN_QUEUE, IN_PROGRESS (`checksBeforeDone` times,
//                                                               forever while `hold` is on), then COMPLETED
//   GET  https://queue.fal.run/<owner>/<alias>/requests/<id>          the result once COMPLETED (400 before): veo3 models
//                                                               {video: {url, content_type, file_name, file_size}} with a
//                                                               real small MP4; fal-ai/flux/dev {images: [...]}; 422
//                                                               content_policy_violation when the prompt contains "REFUSE"
//   POST https://rest.fal.ai/storage/upload/initiate             {content_type, file_name} -> {upload_url, file_url}
//   PUT  /upload/<token> (direct)                               the bytes; GET /files/<name> serves them and the results
// Image inputs (image_url, image_urls) are really fetched, and must be images.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';

export interface FalRequest {
  id: string;
  model: string;
  input: Record<string, any>;
  statusChecks: number;
  completed: boolean;
}

export interface FalFake {
  server: FakeServer;
  proxyUrl: string;
  key: string;
  /** Every accepted submit, in order. */
  submits: FalRequest[];
  /** Bytes uploaded to the fake's storage, by file name. */
  uploads: Map<string, { bytes: Buffer; contentType: string }>;
  /** The image inputs the fake fetched (URL and detected type). */
  fetchedInputs: { url: string; type: string | undefined }[];
  /** IN_PROGRESS answers before COMPLETED. */
  checksBeforeDone: number;
  /** While true, every request stays IN_PROGRESS. */
  hold: boolean;
  close(): Promise<void>;
}

const VIDEO_MODELS = ['fal-ai/veo3', 'fal-ai/veo3/image-to-video', 'fal-ai/veo3.1/reference-to-video'];
const IMAGE_SIZES = ['square_hd', 'square', 'portrait_4_3', 'portrait_16_9', 'landscape_4_3', 'landscape_16_9'];

const validation = (field: string, msg: string, type = 'value_error'): FakeReply => ({
  status: 422,
  json: { detail: [{ loc: ['body', field], msg, type }] },
});

const samples = path.join(os.tmpdir(), 'herald-test-samples-v2');

/** A real one-second H.264/AAC MP4 of the given size, made once. */
function falMp4(width: number, height: number): Buffer {
  const file = path.join(samples, `fal-${width}x${height}.mp4`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(samples, { recursive: true });
    const partial = path.join(samples, `${process.pid}-fal-${width}x${height}.mp4`);
    execFileSync(
      ffmpegInstaller.path,
      [
        '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=24`, '-f', 'lavfi', '-i', 'sine=frequency=330',
        '-t', '1', '-c:v', 'libx264', '-profile:v', 'main', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', partial,
      ],
      { timeout: 60_000 },
    );
    fs.renameSync(partial, file);
  }
  return fs.readFileSync(file);
}

export async function startFalFake(options: { key?: string } = {}): Promise<FalFake> {
  const server = await startFakeServer();
  const key = options.key ?? 'fal-test-key:secret';
  const files = new Map<string, { bytes: Buffer; contentType: string }>();
  const fake: FalFake = {
    server,
    proxyUrl: `${server.url}/proxy`,
    key,
    submits: [],
    uploads: new Map(),
    fetchedInputs: [],
    checksBeforeDone: 1,
    hold: false,
    close: () => server.close(),
  };
  const requests = new Map<string, FalRequest>();

  const fetchImage = async (url: unknown): Promise<string | undefined> => {
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return 'must be a URL';
    const response = await fetch(url).catch(() => undefined);
    if (!response?.ok) return `could not be downloaded (${response?.status ?? 'network error'})`;
    const type = (await fileTypeFromBuffer(new Uint8Array(await response.arrayBuffer())))?.mime;
    fake.fetchedInputs.push({ url, type });
    return type?.startsWith('image/') ? undefined : `is not an image (${type ?? 'unknown'})`;
  };

  /** The input problem of a submit, or undefined. */
  async function refuse(model: string, input: Record<string, any>): Promise<FakeReply | undefined> {
    if (typeof input.prompt !== 'string' || !input.prompt.trim()) return validation('prompt', 'field required', 'missing');
    if (model === 'fal-ai/flux/dev') {
      if (input.image_size !== undefined && !IMAGE_SIZES.includes(input.image_size)) return validation('image_size', `unexpected value; permitted: ${IMAGE_SIZES.join(', ')}`);
      if (input.num_images !== undefined && input.num_images !== 1) return validation('num_images', 'this fake makes one image');
      if (input.output_format !== undefined && !['jpeg', 'png'].includes(input.output_format)) return validation('output_format', "unexpected value; permitted: 'jpeg', 'png'");
      return undefined;
    }
    const ratios = model === 'fal-ai/veo3/image-to-video' ? ['auto', '16:9', '9:16'] : ['16:9', '9:16'];
    if (input.aspect_ratio !== undefined && !ratios.includes(input.aspect_ratio)) return validation('aspect_ratio', `unexpected value; permitted: ${ratios.join(', ')}`);
    if (model === 'fal-ai/veo3') {
      if ('image_url' in input || 'image_urls' in input) return validation('image_url', 'fal-ai/veo3 is text to video: it takes no image');
      return undefined;
    }
    if (model === 'fal-ai/veo3/image-to-video') {
      if ('image_urls' in input) return validation('image_urls', 'extra field: image-to-video takes one image_url');
      const problem = await fetchImage(input.image_url);
      return problem ? validation('image_url', `image_url ${problem}`) : undefined;
    }
    const urls = input.image_urls;
    if (!Array.isArray(urls) || urls.length < 1 || urls.length > 3) return validation('image_urls', 'between 1 and 3 reference image URLs are required');
    for (const url of urls) {
      const problem = await fetchImage(url);
      if (problem) return validation('image_urls', `image_urls item ${problem}`);
    }
    return undefined;
  }

  const queueUrls = (app: string, id: string) => ({
    response_url: `https://queue.fal.run/${app}/requests/${id}`,
    status_url: `https://queue.fal.run/${app}/requests/${id}/status`,
    cancel_url: `https://queue.fal.run/${app}/requests/${id}/cancel`,
  });
  const appOf = (model: string) => model.split('/').slice(0, 2).join('/');

  async function result(request: FalRequest): Promise<FakeReply> {
    if (request.input.prompt.includes('REFUSE')) {
      return { status: 422, json: { detail: [{ loc: ['body', 'prompt'], msg: 'The prompt was flagged by the content checker.', type: 'content_policy_violation', url: 'https://docs.fal.ai/errors#content_policy_violation' }] } };
    }
    if (request.model === 'fal-ai/flux/dev') {
      const [width, height] = request.input.image_size === 'portrait_16_9' ? [576, 1024] : request.input.image_size === 'landscape_16_9' ? [1024, 576] : [1024, 1024];
      const png = await sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } }).png().toBuffer();
      files.set(`${request.id}.png`, { bytes: png, contentType: 'image/png' });
      return { json: { images: [{ url: `${server.url}/files/${request.id}.png`, width, height, content_type: 'image/png' }], has_nsfw_concepts: [false], prompt: request.input.prompt, seed: 1, timings: {} } };
    }
    const vertical = request.input.aspect_ratio === '9:16';
    const mp4 = falMp4(vertical ? 360 : 640, vertical ? 640 : 360);
    files.set(`${request.id}.mp4`, { bytes: mp4, contentType: 'video/mp4' });
    return { json: { video: { url: `${server.url}/files/${request.id}.mp4`, content_type: 'video/mp4', file_name: 'output.mp4', file_size: mp4.length } } };
  }

  async function proxied(request: RecordedRequest): Promise<FakeReply> {
    if (request.headers.authorization !== `Key ${key}`) return { status: 401, json: { detail: 'Invalid Key authorization header format' } };
    const target = request.headers['x-fal-target-url'];
    let url: URL;
    try {
      url = new URL(String(target));
    } catch {
      return { status: 400, json: { detail: 'Missing or invalid x-fal-target-url header' } };
    }
    const parts = url.pathname.split('/').filter(Boolean);
    if (url.host === 'rest.fal.ai' && request.method === 'POST' && url.pathname === '/storage/upload/initiate') {
      const body = request.json ?? {};
      if (typeof body.content_type !== 'string' || typeof body.file_name !== 'string') return validation('content_type', 'content_type and file_name are required');
      const name = `${randomBytes(6).toString('hex')}-${body.file_name.replace(/[^\w.-]/g, '')}`;
      return { json: { upload_url: `${server.url}/upload/${name}?type=${encodeURIComponent(body.content_type)}`, file_url: `${server.url}/files/${name}` } };
    }
    if (url.host !== 'queue.fal.run') return { status: 404, json: { detail: `fake fal has no ${url.host}` } };
    if (request.method === 'POST') {
      const model = parts.join('/');
      if (![...VIDEO_MODELS, 'fal-ai/flux/dev'].includes(model)) return { status: 404, json: { detail: `Application '${model}' not found` } };
      if (!request.json || typeof request.json !== 'object') return validation('body', 'a JSON object is required');
      const refused = await refuse(model, request.json);
      if (refused) return refused;
      const id = `req-${randomBytes(6).toString('hex')}`;
      const queued: FalRequest = { id, model, input: request.json, statusChecks: 0, completed: false };
      requests.set(id, queued);
      fake.submits.push(queued);
      return { json: { request_id: id, ...queueUrls(appOf(model), id), queue_position: 0 } };
    }
    // <owner>/<alias>/requests/<id>[/status]
    const id = parts[3];
    const queued = requests.get(id);
    if (parts[2] !== 'requests' || !queued) return { status: 404, json: { detail: 'Request not found' } };
    if (`${parts[0]}/${parts[1]}` !== appOf(queued.model)) return { status: 404, json: { detail: 'Request not found for this application' } };
    if (parts[4] === 'status') {
      queued.statusChecks += 1;
      if (!fake.hold && queued.statusChecks > fake.checksBeforeDone) queued.completed = true;
      if (queued.completed) return { json: { status: 'COMPLETED', request_id: id, ...queueUrls(appOf(queued.model), id), logs: [], metrics: { inference_time: 42 } } };
      if (queued.statusChecks === 1 && !fake.hold) return { json: { status: 'IN_QUEUE', request_id: id, ...queueUrls(appOf(queued.model), id), queue_position: 0 } };
      return { json: { status: 'IN_PROGRESS', request_id: id, ...queueUrls(appOf(queued.model), id), logs: [] } };
    }
    if (parts.length !== 4) return { status: 404, json: { detail: 'Not found' } };
    if (!queued.completed) return { status: 400, json: { detail: 'Request is still in progress' } };
    return result(queued);
  }

  server.on('POST', '/proxy', proxied);
  server.on('GET', '/proxy', proxied);
  server.on('PUT', '/upload/*', (request) => {
    const name = request.path.split('/').pop()!;
    const contentType = String(request.headers['content-type'] ?? '');
    if (request.body.length === 0) return { status: 400, json: { detail: 'empty upload' } };
    if (contentType !== request.query.get('type')) return { status: 400, json: { detail: `content type ${contentType} differs from the initiated ${request.query.get('type')}` } };
    files.set(name, { bytes: request.body, contentType });
    fake.uploads.set(name, { bytes: request.body, contentType });
    return { status: 200, body: '' };
  });
  server.on('GET', '/files/*', (request) => {
    const file = files.get(request.path.split('/').pop()!);
    return file ? { headers: { 'content-type': file.contentType }, body: file.bytes } : { status: 404, json: { detail: 'File not found' } };
  });
  return fake;
}
