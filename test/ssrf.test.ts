// The SSRF guard (src/lib/ssrf.ts) on its own, then POST /upload-from-url through it. Nothing here reaches the internet: blocked
// addresses are refused before any connection, and the allowed cases run against local servers with the guard relaxed for
// loopback only (every other blocked range stays blocked, as the tests check).
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedRange, createUrlGuard, FetchFailedError, type ResolvedAddress, type UrlGuardOptions } from '../src/lib/ssrf.js';
import { MediaSchema } from '../src/db/entities.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { tinyPng } from './helpers/provider-context.js';
import { startMastodonFake } from './fakes/mastodon.js';

const guardOf = (options: Partial<UrlGuardOptions> = {}) => createUrlGuard({ userAgent: 'Herald-test', connectTimeoutMs: 2000, timeoutMs: 5000, ...options });

async function failure(promise: Promise<unknown>): Promise<FetchFailedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, 'expected the fetch to fail').toBeInstanceOf(FetchFailedError);
  return error as FetchFailedError;
}

/** A resolver that records its calls and answers from a table (one answer list per call, the last one repeating). */
function fakeResolver(table: Record<string, string[][]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const answers = table[hostname];
    if (!answers) throw new Error('ENOTFOUND');
    const count = calls.filter((name) => name === hostname).length;
    const answer = answers[Math.min(count, answers.length) - 1];
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

// A local server with a few behaviours, chosen by path.
let server: http.Server;
let port: number;
let origin: string;
const png = tinyPng();

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const to = url.searchParams.get('to');
    if (url.pathname === '/picture.png') {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      response.end(png);
    } else if (url.pathname === '/redirect' && to) {
      response.writeHead(302, { location: to });
      response.end();
    } else if (url.pathname.startsWith('/hops/')) {
      const left = Number(url.pathname.split('/')[2]);
      response.writeHead(left > 0 ? 301 : 200, left > 0 ? { location: `/hops/${left - 1}` } : { 'content-type': 'image/png' });
      response.end(left > 0 ? undefined : png);
    } else if (url.pathname === '/slow-headers') {
      setTimeout(() => response.end('late'), 3000).unref();
    } else if (url.pathname === '/slow-body') {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.write(png.subarray(0, 8));
      const timer = setInterval(() => response.write(Buffer.alloc(1)), 100);
      response.on('close', () => clearInterval(timer));
    } else if (url.pathname === '/big.png') {
      // A PNG signature, then padding: chunked (no length) unless ?length is asked.
      const size = Number(url.searchParams.get('size') ?? 100000);
      response.writeHead(200, { 'content-type': 'image/png', ...(url.searchParams.has('length') ? { 'content-length': size } : {}) });
      response.end(Buffer.concat([png, Buffer.alloc(size - png.length)]));
    } else if (url.pathname === '/page.html') {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.end('<!doctype html><html><body>not a picture</body></html>');
    } else if (url.pathname === '/private') {
      response.writeHead(401);
      response.end();
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('blocked address corpus (default guard: nothing is connected to)', () => {
  const literal: [string, string][] = [
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.255.255.254/', 'loopback'],
    ['http://10.0.0.1/', 'private network'],
    ['http://172.16.5.4/', 'private network'],
    ['http://172.31.255.255/', 'private network'],
    ['http://192.168.0.1/', 'private network'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://100.127.255.255/', 'carrier-grade NAT'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://224.0.0.251/', 'multicast'],
    ['http://239.255.255.250/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://198.18.0.1/', 'reserved'],
    ['http://[::1]/', 'loopback'],
    ['http://[::]/', 'unspecified'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fc00::1]/', 'unique-local IPv6'],
    ['http://[fd00:ec2::254]/', 'unique-local IPv6'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:10.0.0.1]/', 'private network'],
    ['http://[::ffff:a9fe:a9fe]/', 'link-local'],
    ['http://[64:ff9b::7f00:1]/', 'loopback'],
    ['http://[2002:c0a8:1::1]/', 'private network'],
  ];
  it.each(literal)('%s is refused (%s)', async (url, range) => {
    const resolver = fakeResolver({});
    const error = await failure(guardOf({ resolve: resolver.resolve }).fetch(url));
    expect(error.message).toMatch(new RegExp(`^fetch failed: .+ is a blocked address \\(${range}\\)$`));
    expect(error.code).toBe('invalid_input');
    expect(resolver.calls).toEqual([]);
  });

  const notations: [string, string][] = [
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://3232235521/', '192.168.0.1'],
    ['http://0xa9fea9fe/', '169.254.169.254'],
    ['http://0251.0376.0251.0376/', '169.254.169.254'],
  ];
  it.each(notations)('%s (another notation of %s) is refused', async (url, address) => {
    const error = await failure(guardOf().fetch(url));
    expect(error.message).toContain(`fetch failed: ${address} is a blocked address`);
  });

  it('public unicast addresses pass the check', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(blockedRange(address), address).toBeUndefined();
    expect(blockedRange('not-an-ip')).toBe('not a valid IP address');
  });

  it('a hostname that resolves to loopback is refused (system resolver: localhost)', async () => {
    const error = await failure(guardOf().fetch(`http://localhost:${port}/picture.png`));
    expect(error.message).toMatch(/^fetch failed: localhost resolves to (127\.0\.0\.1|::1), a blocked address \(loopback\)$/);
  });

  it('a hostname with one private address among public ones is refused', async () => {
    const resolver = fakeResolver({ 'mixed.example': [['93.184.216.34', '10.0.0.5']] });
    const error = await failure(guardOf({ resolve: resolver.resolve }).fetch('https://mixed.example/a.png'));
    expect(error.message).toBe('fetch failed: mixed.example resolves to 10.0.0.5, a blocked address (private network)');
  });

  it('only http and https, without credentials', async () => {
    expect((await failure(guardOf().fetch('file:///etc/passwd'))).message).toBe('fetch failed: only http and https URLs can be fetched, not file');
    expect((await failure(guardOf().fetch('ftp://example.com/a.png'))).message).toContain('not ftp');
    expect((await failure(guardOf().fetch('gopher://example.com/'))).message).toContain('not gopher');
    expect((await failure(guardOf().fetch('https://user:secret@example.com/a.png'))).message).toContain('user name or password');
    expect((await failure(guardOf().fetch('not a url'))).message).toBe('fetch failed: not an absolute URL');
  });

  it('relaxing loopback for tests keeps every other range blocked', async () => {
    const relaxed = guardOf({ allowLoopback: true });
    for (const url of ['http://10.0.0.1/', 'http://169.254.169.254/', 'http://[fd00::1]/', 'http://[::ffff:192.168.1.1]/', 'http://100.64.0.1/']) {
      expect((await failure(relaxed.fetch(url))).message, url).toContain('is a blocked address');
    }
  });
});

describe('fetching through the guard (loopback relaxed for the local server)', () => {
  const relaxed = (options: Partial<UrlGuardOptions> = {}) => guardOf({ allowLoopback: true, ...options });

  async function bodyOf(response: { body: NodeJS.ReadableStream }): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  it('fetches an allowed URL', async () => {
    const response = await relaxed().fetch(`${origin}/picture.png`);
    expect(response).toMatchObject({ status: 200, contentType: 'image/png', contentLength: png.length });
    expect((await bodyOf(response)).equals(png)).toBe(true);
  });

  it('follows redirects by hand and checks every hop: an allowed host redirecting to a private one is refused', async () => {
    for (const [target, message] of [
      ['http://169.254.169.254/latest/meta-data/', 'fetch failed: 169.254.169.254 is a blocked address (link-local)'],
      ['http://10.1.2.3/internal', 'fetch failed: 10.1.2.3 is a blocked address (private network)'],
      ['http://[::ffff:192.168.0.10]/', 'fetch failed: ::ffff:c0a8:a is a blocked address (private network)'],
      ['file:///etc/passwd', 'fetch failed: only http and https URLs can be fetched, not file'],
    ]) {
      const error = await failure(relaxed().fetch(`${origin}/redirect?to=${encodeURIComponent(target)}`));
      expect(error.message, target).toBe(message);
    }
  });

  it('follows at most 5 redirects', async () => {
    const ok = await relaxed().fetch(`${origin}/hops/5`);
    expect((await bodyOf(ok)).equals(png)).toBe(true);
    expect((await failure(relaxed().fetch(`${origin}/hops/6`))).message).toBe('fetch failed: more than 5 redirects');
  });

  it('connects to the checked address: DNS answering differently on the second lookup changes nothing', async () => {
    // "rebind.test" exists only in this resolver: the fetch can only succeed if the connection used the checked answer.
    const resolver = fakeResolver({ 'rebind.test': [['127.0.0.1'], ['10.0.0.1']] });
    const response = await relaxed({ resolve: resolver.resolve }).fetch(`http://rebind.test:${port}/picture.png`);
    expect((await bodyOf(response)).equals(png)).toBe(true);
    expect(resolver.calls).toEqual(['rebind.test']);
    // Checked answer private: refused even though a second lookup would answer loopback.
    const flipped = fakeResolver({ 'rebind.test': [['10.0.0.1'], ['127.0.0.1']] });
    const error = await failure(relaxed({ resolve: flipped.resolve }).fetch(`http://rebind.test:${port}/picture.png`));
    expect(error.message).toBe('fetch failed: rebind.test resolves to 10.0.0.1, a blocked address (private network)');
    expect(flipped.calls).toEqual(['rebind.test']);
  });

  it('each redirect hop is resolved and checked again', async () => {
    const resolver = fakeResolver({ 'start.test': [['127.0.0.1']], 'next.test': [['127.0.0.1'], ['192.168.1.1']] });
    const guard = relaxed({ resolve: resolver.resolve });
    const first = await guard.fetch(`http://start.test:${port}/redirect?to=${encodeURIComponent(`http://next.test:${port}/picture.png`)}`);
    expect((await bodyOf(first)).equals(png)).toBe(true);
    expect(resolver.calls).toEqual(['start.test', 'next.test']);
    const second = await failure(guard.fetch(`http://start.test:${port}/redirect?to=${encodeURIComponent(`http://next.test:${port}/picture.png`)}`));
    expect(second.message).toBe('fetch failed: next.test resolves to 192.168.1.1, a blocked address (private network)');
  });

  it('the hostname allowlist applies to the first URL and to every redirect', async () => {
    const resolver = fakeResolver({ 'cdn.example.com': [['127.0.0.1']], 'img.cdn.example.com': [['127.0.0.1']], 'elsewhere.example': [['127.0.0.1']] });
    const guard = relaxed({ resolve: resolver.resolve, allowedHosts: ['cdn.example.com', '*.cdn.example.com'] });
    const direct = await guard.fetch(`http://img.cdn.example.com:${port}/picture.png`);
    expect((await bodyOf(direct)).equals(png)).toBe(true);
    expect((await failure(guard.fetch(`http://elsewhere.example:${port}/picture.png`))).message).toBe('fetch failed: elsewhere.example is not an allowed upload host');
    const redirected = await failure(guard.fetch(`http://cdn.example.com:${port}/redirect?to=${encodeURIComponent(`http://elsewhere.example:${port}/picture.png`)}`));
    expect(redirected.message).toBe('fetch failed: elsewhere.example is not an allowed upload host');
    expect(redirected.hint).toContain('cdn.example.com, *.cdn.example.com');
  });

  it('times out a server that is slow to answer, and one that trickles its body', async () => {
    const guard = relaxed({ timeoutMs: 400 });
    const started = Date.now();
    expect((await failure(guard.fetch(`${origin}/slow-headers`))).message).toBe('fetch failed: timed out after 0.4 s');
    const trickling = await guard.fetch(`${origin}/slow-body`);
    const error = await bodyOf(trickling).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FetchFailedError);
    expect((error as Error).message).toBe('fetch failed: timed out after 0.4 s');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('times out a connection that never completes its TLS handshake (connect time-out)', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket)); // accepts TCP, never answers the ClientHello
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const silentPort = (silent.address() as AddressInfo).port;
      const error = await failure(relaxed({ connectTimeoutMs: 300 }).fetch(`https://127.0.0.1:${silentPort}/picture.png`));
      expect(error.message).toBe('fetch failed: 127.0.0.1 did not accept a connection within 0.3 s');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a refused connection and an error status are "fetch failed" with the reason', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect((await failure(relaxed().fetch(`http://127.0.0.1:${closedPort}/`))).message).toBe('fetch failed: 127.0.0.1: connection refused');
    expect((await failure(relaxed().fetch(`${origin}/private`))).message).toBe('fetch failed: the server answered 401');
  });

  it('DISABLE_SSRF_PROTECTION (protection: false) lets private addresses through', async () => {
    const response = await guardOf({ protection: false }).fetch(`${origin}/picture.png`);
    expect((await bodyOf(response)).equals(png)).toBe(true);
  });
});

describe('POST /upload-from-url', () => {
  let herald: Herald;

  beforeAll(async () => {
    herald = await startHerald({ UPLOAD_MAX_IMAGE_BYTES: '50000' }, { guard: { allowLoopback: true } });
  });

  afterAll(async () => {
    await herald?.stop();
  });

  it('fetches a picture into the media library and answers {id, path, ...}', async () => {
    const response = await herald.rest('POST', '/upload-from-url', { url: `${origin}/redirect?to=${encodeURIComponent('/picture.png')}` });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ type: 'image/png', size: png.length, name: 'picture.png', width: 1, height: 1 });
    expect(response.body.path).toMatch(new RegExp(`^${herald.url}/uploads/\\d{4}/\\d{2}/\\d{2}/[0-9a-f]{32}\\.png$`));
    const served = await fetch(response.body.path);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
  });

  it('refuses a redirect to a private address with 400 "fetch failed: ..."', async () => {
    const response = await herald.rest('POST', '/upload-from-url', { url: `${origin}/redirect?to=${encodeURIComponent('http://192.168.1.1/router.png')}` });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_input', message: 'fetch failed: 192.168.1.1 is a blocked address (private network)' });
  });

  it('applies the type check and the caps while streaming, keeping nothing', async () => {
    const before = await herald.services.orm.em.fork().count(MediaSchema, {});
    const html = await herald.rest('POST', '/upload-from-url', { url: `${origin}/page.html` });
    expect(html.status).toBe(400);
    expect(html.body.message).toContain('Unsupported file type');
    const chunked = await herald.rest('POST', '/upload-from-url', { url: `${origin}/big.png?size=200000` });
    expect(chunked.status).toBe(413);
    const announced = await herald.rest('POST', '/upload-from-url', { url: `${origin}/big.png?size=200000&length` });
    expect(announced.status).toBe(413);
    expect(await herald.services.orm.em.fork().count(MediaSchema, {})).toBe(before);
  });

  it('a body that is not {url} is 400', async () => {
    expect((await herald.rest('POST', '/upload-from-url', {})).status).toBe(400);
    expect((await herald.rest('POST', '/upload-from-url', { url: 42 })).status).toBe(400);
  });

  it('with the default guard a loopback URL is refused', async () => {
    const strict = await startHerald();
    try {
      const response = await strict.rest('POST', '/upload-from-url', { url: `${origin}/picture.png` });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('fetch failed: 127.0.0.1 is a blocked address (loopback)');
    } finally {
      await strict.stop();
    }
  });

  it('UPLOAD_URL_ALLOWED_HOSTS and FETCH_TIMEOUT_SECONDS come from the settings', async () => {
    const limited = await startHerald({ UPLOAD_URL_ALLOWED_HOSTS: 'cdn.example.com', FETCH_TIMEOUT_SECONDS: '1' }, { guard: { allowLoopback: true } });
    try {
      const outside = await limited.rest('POST', '/upload-from-url', { url: `${origin}/picture.png` });
      expect(outside.body.message).toBe('fetch failed: 127.0.0.1 is not an allowed upload host');
    } finally {
      await limited.stop();
    }
    const slow = await startHerald({ FETCH_TIMEOUT_SECONDS: '1' }, { guard: { allowLoopback: true } });
    try {
      const response = await slow.rest('POST', '/upload-from-url', { url: `${origin}/slow-body` });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('fetch failed: timed out after 1 s');
    } finally {
      await slow.stop();
    }
  });

  it('DISABLE_SSRF_PROTECTION=true turns the private-address guard off for the whole deployment', async () => {
    const open = await startHerald({ DISABLE_SSRF_PROTECTION: 'true' });
    try {
      const response = await open.rest('POST', '/upload-from-url', { url: `${origin}/picture.png` });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    } finally {
      await open.stop();
    }
  });
});

describe('platform hosts a user types', () => {
  it('a connect form pointing at a private address is refused before any call; the platform\'s configured hosts are not checked', async () => {
    const fake = await startMastodonFake();
    // Production rules for typed hosts; the deployment's own endpoint (SOCIAL_ENDPOINTS) may be anywhere.
    const herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ mastodon: { instance: fake.url } }) }, { platformGuard: {} });
    try {
      const typed = await herald.rest('POST', '/integrations/mastodon/connect', { instance: 'http://127.0.0.1:9', accessToken: fake.token });
      expect(typed.status).toBe(400);
      expect(typed.body.message).toContain('127.0.0.1 is a blocked address (loopback)');
      const metadata = await herald.rest('POST', '/integrations/mastodon/connect', { instance: 'http://169.254.169.254', accessToken: 'x' });
      expect(metadata.body.message).toContain('169.254.169.254 is a blocked address');
      const configured = await herald.rest('POST', '/integrations/mastodon/connect', { accessToken: fake.token });
      expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    } finally {
      await herald.stop();
      await fake.close();
    }
  });
});
