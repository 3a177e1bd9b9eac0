// S3-compatible storage against a real local S3 server (s3rver, started here): upload (single and multipart), public URL,
// reading back for publishing, delete. The same tools run as on local disk; only STORAGE and S3_* differ.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import S3rver from 's3rver';
import { loadConfig, ConfigError } from '../src/config.js';
import { loadLibraryMedia } from '../tools/internal/media.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { goodMp4, upload } from './helpers/media-samples.js';
import { tinyPng } from './helpers/provider-context.js';

let s3: S3rver;
let s3Directory: string;
let endpoint: string;
let herald: Herald;
const bucket = 'herald-media';

beforeAll(async () => {
  s3Directory = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-s3-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Directory, configureBuckets: [{ name: bucket }] });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
  herald = await startHerald({
    STORAGE: 's3',
    S3_ENDPOINT: endpoint,
    S3_REGION: 'us-east-1',
    S3_BUCKET: bucket,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_PUBLIC_URL: `${endpoint}/${bucket}`,
    UPLOAD_MAX_IMAGE_BYTES: String(12 * 1024 * 1024),
  });
});

afterAll(async () => {
  await herald?.stop();
  await s3?.close();
  fs.rmSync(s3Directory, { recursive: true, force: true });
});

describe('STORAGE=s3', () => {
  it('stores an upload in the bucket; path is the public bucket URL and serves the same bytes', async () => {
    const png = tinyPng();
    const response = await upload(herald.restUrl, herald.apiKey, png, 'dot.png');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.path).toMatch(new RegExp(`^${endpoint}/${bucket}/\\d{4}/\\d{2}/\\d{2}/[0-9a-f]{32}\\.png$`));
    const served = await fetch(response.body.path);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    // Nothing under the local uploads directory, nothing staged left behind.
    expect(fs.existsSync(path.join(herald.dataDir, 'uploads'))).toBe(false);
    expect(fs.readdirSync(path.join(herald.dataDir, 'tmp'))).toEqual([]);
    // /uploads is not served when media live in a bucket.
    expect((await fetch(`${herald.url}/uploads/${response.body.path.slice(`${endpoint}/${bucket}/`.length)}`)).status).toBe(404);
  });

  it('streams a file larger than one part as a multipart upload', async () => {
    const big = Buffer.concat([tinyPng(), Buffer.alloc(7 * 1024 * 1024, 7)]);
    const response = await upload(herald.restUrl, herald.apiKey, big, 'big.png');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const served = Buffer.from(await (await fetch(response.body.path)).arrayBuffer());
    expect(served.length).toBe(big.length);
    expect(served.equals(big)).toBe(true);
  });

  it('reads a stored video back for publishing, and deleting removes the object', async () => {
    const video = goodMp4();
    const { body } = await upload(herald.restUrl, herald.apiKey, video, 'clip.mp4');
    expect(body).toMatchObject({ type: 'video/mp4', width: 320, height: 240 });
    const loaded = await loadLibraryMedia(herald.services, herald.organizationId, body.id);
    expect(loaded.mimeType).toBe('video/mp4');
    expect(loaded.bytes.equals(video)).toBe(true);
    expect((await herald.rest('DELETE', `/media/${body.id}`)).status).toBe(200);
    expect((await fetch(body.path)).status).toBe(404);
  });
});

describe('S3 settings', () => {
  it('STORAGE=s3 needs a bucket and a public URL, and both keys or neither', () => {
    const error = (() => {
      try {
        loadConfig({ STORAGE: 's3', S3_ACCESS_KEY_ID: 'only-one' });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toContain('S3_BUCKET: required when STORAGE=s3');
    expect(problems).toContain('S3_PUBLIC_URL: required');
    expect(problems).toContain('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
  });

  it('defaults to local storage, 10 MB images, 1 GB videos and the guard on', () => {
    const config = loadConfig({});
    expect(config.storage).toEqual({ kind: 'local' });
    expect(config.uploads).toMatchObject({ maxImageBytes: 10 * 1024 * 1024, maxVideoBytes: 1024 * 1024 * 1024, allowedHosts: [] });
    expect(config.ssrfProtection).toBe(true);
    expect(loadConfig({ DISABLE_SSRF_PROTECTION: 'true' }).ssrfProtection).toBe(false);
    expect(loadConfig({ UPLOAD_URL_ALLOWED_HOSTS: 'CDN.example.com, *.img.example.com' }).uploads.allowedHosts).toEqual(['cdn.example.com', '*.img.example.com']);
  });
});
