// The HTTP server's socket behaviour (src/http/server.ts): what a client gets back whatever it does with its own end.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';

let herald: Herald;
beforeAll(async () => {
  herald = await startHerald();
});
afterAll(async () => {
  await herald?.stop();
});

/** Sends `request` raw, half-closes the socket at once (FIN after the request, as `curl --data @- <<<` or a shell pipe does), and answers all it reads. */
function halfClosed(request: string): Promise<string> {
  const { hostname, port } = new URL(herald.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true }, () => socket.end(request));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error('no answer within 10 s')));
  });
}

describe('a client that half-closes its socket after sending', () => {
  it('still gets its error answer', async () => {
    const body = '{"not": "a post"';
    const answer = await halfClosed(
      `POST /api/public/v1/posts HTTP/1.1\r\nHost: herald.test\r\nAuthorization: ${herald.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"invalid_input"');
  });

  it('still gets an answer that takes the database a moment', async () => {
    const answer = await halfClosed(`GET /api/public/v1/integrations HTTP/1.1\r\nHost: herald.test\r\nAuthorization: ${herald.apiKey}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('[]');
  });
});
