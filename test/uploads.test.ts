// POST /upload end to end: real multipart over HTTP, type read from the bytes, caps while streaming, the stored file served
// at /uploads with its headers and ranges, and the media library (GET /media, DELETE /media/{id}).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaSchema } from '../src/db/entities.js';
import { startHerald, type Herald } from './helpers/harness.js';
import {
  acceptedSamples,
  brokenMp4,
  htmlBytes,
  moovAtEndMp4,
  outOfSpecMp4,
  pdfBytes,
  quickTimeMov,
  svgBytes,
  tinyAvif,
  upload,
  goodMp4,
} from './helpers/media-samples.js';
import { tinyPng } from './helpers/provider-context.js';

let herald: Herald;

beforeAll(async () => {
  herald = await startHerald();
});

afterAll(async () => {
  await herald?.stop();
});

const send = (bytes: Buffer, filename: string, clientType?: string) => upload(herald.restUrl, herald.apiKey, bytes, filename, clientType);

/** Every file under a directory (recursively), relative paths. */
function filesUnder(directory: string): string[] {
  if (!fs.existsSync(directory)) return [];
  return fs.readdirSync(directory, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

describe('POST /upload: accepted types', () => {
  it.each(acceptedSamples().map((sample) => [sample.type, sample] as const))('stores %s under a random name and serves it back with its detected type', async (type, sample) => {
    // The client's name and type say nothing true: only the bytes count.
    const response = await send(sample.bytes, `holiday photo (1).bin`, 'application/octet-stream');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const body = response.body;
    expect(body).toMatchObject({ type, size: sample.bytes.length, name: `holiday-photo-1.${sample.extension}` });
    expect(typeof body.id).toBe('string');
    expect(body.path).toMatch(new RegExp(`^${herald.url}/uploads/\\d{4}/\\d{2}/\\d{2}/[0-9a-f]{32}\\.${sample.extension}$`));
    expect(Date.parse(body.createdAt)).not.toBeNaN();

    const served = await fetch(body.path);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe(type);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('content-security-policy')).toBe('sandbox');
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await served.arrayBuffer()).equals(sample.bytes)).toBe(true);
  });

  it('reads dimensions of pictures and duration, dimensions and codecs of an MP4; a video within the limits has no video warnings', async () => {
    const png = await send(tinyPng(), 'dot.png');
    expect(png.body).toMatchObject({ width: 1, height: 1 });
    const video = await send(goodMp4(), 'clip.mp4', 'video/mp4');
    expect(video.status).toBe(200);
    expect(video.body).toMatchObject({ type: 'video/mp4', width: 320, height: 240 });
    expect(video.body.duration).toBeGreaterThan(0.9);
    expect(video.body.duration).toBeLessThan(1.2);
    // Only the reachability warning: this test Herald's PUBLIC_URL is 127.0.0.1.
    expect(video.body.warnings).toEqual([expect.stringContaining('which platforms cannot reach')]);
  });

  it('finds the movie header at the end of the file', async () => {
    const video = await send(moovAtEndMp4(), 'late-moov.mp4');
    expect(video.status, JSON.stringify(video.body)).toBe(200);
    expect(video.body).toMatchObject({ width: 160, height: 120 });
    expect(video.body.duration).toBeGreaterThan(1.9);
  });

  it('reports a video outside the recommended limits as warnings, not a refusal', async () => {
    const video = await send(outOfSpecMp4(), 'big.mp4');
    expect(video.status, JSON.stringify(video.body)).toBe(200);
    const warnings: string[] = video.body.warnings;
    expect(warnings, JSON.stringify(warnings)).toHaveLength(4);
    expect(warnings.some((warning) => warning.includes('H.264 profile is high'))).toBe(true);
    expect(warnings.some((warning) => warning.includes('60 fps'))).toBe(true);
    expect(warnings.some((warning) => warning.includes('2000x1000'))).toBe(true);
  });
});

describe('POST /upload: refused files', () => {
  const accepted = 'image/jpeg, image/png, image/gif, image/webp, image/avif, image/bmp, image/tiff, video/mp4';

  it.each([
    ['a PDF named .png', pdfBytes(), 'report.png', 'image/png', 'the file is application/pdf'],
    ['an SVG named .png', svgBytes(), 'logo.png', 'image/png', 'the file is application/xml'],
    ['an SVG with its own name and type', svgBytes(), 'logo.svg', 'image/svg+xml', 'the file is application/xml'],
    ['an HTML page named .jpg', htmlBytes(), 'page.jpg', 'image/jpeg', 'not a recognised image or video'],
    ['a QuickTime movie named .mp4', quickTimeMov(), 'clip.mp4', 'video/mp4', 'the file is video/quicktime'],
  ])('%s: 400 invalid_input naming the detected type and the accepted list', async (_label, bytes, filename, clientType, detected) => {
    const response = await send(bytes, filename, clientType);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_input');
    expect(response.body.message).toContain(detected);
    expect(response.body.message).toContain(`Accepted: ${accepted}.`);
  });

  it('accepts a real JPEG even when it is named .pdf (the name never decides)', async () => {
    const jpeg = acceptedSamples()[0].bytes;
    const response = await send(jpeg, 'invoice.pdf', 'application/pdf');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ type: 'image/jpeg', name: 'invoice.jpg' });
  });

  it('an MP4 whose metadata cannot be read: 400 "Failed to load video metadata"', async () => {
    const response = await send(brokenMp4(), 'broken.mp4', 'video/mp4');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_input', message: 'Failed to load video metadata' });
    expect(response.body.hint).toContain('could not be read');
  });

  it('an empty file, a missing field and a JSON body are 400/415, never 500', async () => {
    expect((await send(Buffer.alloc(0), 'empty.png')).body).toMatchObject({ statusCode: 400, message: 'The file is empty.' });
    const wrongField = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png', 'image/png', 'picture');
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.message).toContain('No file provided');
    const json = await herald.rest('POST', '/upload', { file: 'aGVsbG8=' });
    expect(json.status).toBe(415);
  });

  it('needs the API key like every other route', async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(tinyPng())]), 'dot.png');
    const response = await fetch(`${herald.restUrl}/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(401);
  });

  it('leaves nothing on disk and no row after refusals', async () => {
    const before = await herald.services.orm.em.fork().count(MediaSchema, {});
    await send(pdfBytes(), 'x.png');
    await send(brokenMp4(), 'x.mp4');
    expect(await herald.services.orm.em.fork().count(MediaSchema, {})).toBe(before);
    expect(filesUnder(path.join(herald.dataDir, 'tmp'))).toEqual([]);
  });
});

describe('size caps, enforced while streaming', () => {
  let small: Herald;

  beforeAll(async () => {
    small = await startHerald({ UPLOAD_MAX_IMAGE_BYTES: '20000', UPLOAD_MAX_VIDEO_BYTES: '60000' });
  });

  afterAll(async () => {
    await small?.stop();
  });

  /** Streams `total` bytes of `head` + padding in 16 KB chunks, waiting for each to drain; stops as soon as the answer arrives. */
  function streamUpload(head: Buffer, total: number): Promise<{ status: number; body: any; sent: number }> {
    const boundary = 'herald-test-boundary';
    const prefix = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`);
    const url = new URL(`${small.restUrl}/upload`);
    return new Promise((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const request = http.request(url, { method: 'POST', headers: { authorization: small.apiKey, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } });
      request.on('response', (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          request.destroy();
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), sent });
        });
      });
      request.on('error', (error) => (answered ? undefined : reject(error)));
      void (async () => {
        request.write(prefix);
        request.write(head);
        sent = head.length;
        const chunk = Buffer.alloc(16 * 1024, 0x61);
        while (sent < total && !answered && !request.destroyed) {
          sent += chunk.length;
          if (!request.write(chunk)) await new Promise((resume) => request.once('drain', resume));
          await new Promise((resume) => setImmediate(resume));
        }
        if (!answered && !request.destroyed) request.end(`\r\n--${boundary}--\r\n`);
      })().catch(() => undefined);
    });
  }

  it('refuses an image over the image cap with 413 before the client has finished sending, and keeps nothing', async () => {
    const total = 8 * 1024 * 1024;
    const result = await streamUpload(tinyPng(), total);
    expect(result.status).toBe(413);
    expect(result.body).toMatchObject({ code: 'payload_too_large' });
    expect(result.body.message).toContain('image');
    expect(result.sent).toBeLessThan(total);
    // The refused upload's staged file is removed as the stream ends, which may come a moment after the 413 answer.
    await expect.poll(() => filesUnder(path.join(small.dataDir, 'tmp')), { timeout: 5000 }).toEqual([]);
    expect(filesUnder(path.join(small.dataDir, 'uploads'))).toEqual([]);
    expect(await small.services.orm.em.fork().count(MediaSchema, {})).toBe(0);
  });

  it('gives videos their own, larger cap', async () => {
    const video = goodMp4();
    expect(video.length).toBeGreaterThan(20000);
    expect(video.length).toBeLessThan(60000);
    const accepted = await upload(small.restUrl, small.apiKey, video, 'ok.mp4');
    expect(accepted.status).toBe(200);
    const tooBig = await upload(small.restUrl, small.apiKey, Buffer.concat([video, Buffer.alloc(60000)]), 'big.mp4');
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.message).toContain('video');
    // The refused upload's staged file is removed as the stream ends, which may come a moment after the 413 answer.
    await expect.poll(() => filesUnder(path.join(small.dataDir, 'tmp')), { timeout: 5000 }).toEqual([]);
    expect(filesUnder(path.join(small.dataDir, 'uploads'))).toHaveLength(1);
  });

  it('an image just under the cap passes', async () => {
    const image = Buffer.concat([tinyAvif(), Buffer.alloc(20000 - tinyAvif().length)]);
    expect((await upload(small.restUrl, small.apiKey, image, 'edge.avif')).status).toBe(200);
  });
});

describe('served media', () => {
  it('answers range requests (206 with Content-Range), as platforms fetching video need', async () => {
    const video = goodMp4();
    const { body } = await send(video, 'clip.mp4');
    const partial = await fetch(body.path, { headers: { range: 'bytes=100-199' } });
    expect(partial.status).toBe(206);
    expect(partial.headers.get('content-range')).toBe(`bytes 100-199/${video.length}`);
    expect(partial.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await partial.arrayBuffer()).equals(video.subarray(100, 200))).toBe(true);
    const tail = await fetch(body.path, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(video.subarray(video.length - 10))).toBe(true);
    const outside = await fetch(body.path, { headers: { range: `bytes=${video.length + 10}-` } });
    expect(outside.status).toBe(416);
  });

  it('an unknown file is a JSON 404', async () => {
    const response = await fetch(`${herald.url}/uploads/2026/01/01/${'0'.repeat(32)}.png`);
    expect(response.status).toBe(404);
    expect((await response.json()).code).toBe('not_found');
  });
});

describe('media library', () => {
  it('lists the organization\'s media newest first, paged, and deletes one (file and listing)', async () => {
    const other = await herald.newOrganization('Other');
    const first = (await send(tinyPng(), 'first.png')).body;
    const second = (await send(acceptedSamples()[0].bytes, 'second.jpg')).body;
    const page = await herald.rest('GET', '/media?page=0&pageSize=2');
    expect(page.status).toBe(200);
    expect(page.body.media.map((item: any) => item.id)).toEqual([second.id, first.id]);
    expect(page.body).toMatchObject({ page: 0, pageSize: 2, hasMore: true });
    expect(page.body.total).toBeGreaterThan(2);
    const { warnings: _warnings, ...record } = second;
    expect(page.body.media[0]).toEqual(record);

    // Another organization sees none of it and cannot delete it.
    const otherList = await fetch(`${herald.restUrl}/media`, { headers: { authorization: other.apiKey } });
    expect((await otherList.json()).media).toEqual([]);
    const otherDelete = await fetch(`${herald.restUrl}/media/${second.id}`, { method: 'DELETE', headers: { authorization: other.apiKey } });
    expect(otherDelete.status).toBe(404);

    const deleted = await herald.rest('DELETE', `/media/${second.id}`);
    expect(deleted).toMatchObject({ status: 200, body: { id: second.id } });
    expect((await fetch(second.path)).status).toBe(404);
    const after = await herald.rest('GET', '/media?pageSize=100');
    expect(after.body.media.some((item: any) => item.id === second.id)).toBe(false);
    expect((await herald.rest('DELETE', `/media/${second.id}`)).status).toBe(404);
  });
});
