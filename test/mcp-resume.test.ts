// An MCP request stream cut before its answer resumes with Last-Event-ID on another Herald process: here a second app with
// its own session layer on the same database (as a second web process would be). The tool keeps running where it started,
// stores its answer once the client has gone, and the other process sends it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/http/app.js';
import { McpSessions } from '../src/mcp/sessions.js';
import { startHerald, type Herald } from './helpers/harness.js';

let herald: Herald;
let other: { url: string; sessions: McpSessions; server: http.Server };
let slow: http.Server;
let slowUrl: string;
let release: () => void;

beforeAll(async () => {
  herald = await startHerald({}, { guard: { allowLoopback: true } });
  const sessions = new McpSessions(herald.services);
  const server = await new Promise<http.Server>((resolve) => {
    const listening = createApp(herald.services, sessions).listen(0, '127.0.0.1', () => resolve(listening));
  });
  other = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sessions, server };
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } }).png().toBuffer();
  const released = new Promise<void>((resolve) => (release = resolve));
  // A picture that arrives only when the test says so: the tool call is still running when the client goes.
  slow = http.createServer((_request, response) => {
    void released.then(() => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': String(png.length) });
      response.end(png);
    });
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow.png`;
});

afterAll(async () => {
  await other?.sessions.closeAll();
  other?.server.closeAllConnections();
  other?.server.close();
  slow?.closeAllConnections();
  slow?.close();
  await herald?.stop();
});

/** An HTTP request whose Host is the public one (the MCP host guard's), to either process; answers the response stream. */
function send(base: string, method: string, headers: Record<string, string>, body?: unknown): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}/api/mcp`, {
      method,
      headers: {
        host: new URL(herald.url).host,
        authorization: `Bearer ${herald.apiKey}`,
        accept: 'application/json, text/event-stream',
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
    });
    request.on('response', resolve);
    request.on('error', reject);
    request.end(body ? JSON.stringify(body) : undefined);
  });
}

/** SSE events of a response until `enough`; the connection is then dropped. */
function events(response: http.IncomingMessage, enough: (seen: { id?: string; data: string }[]) => boolean): Promise<{ id?: string; data: string }[]> {
  return new Promise((resolve) => {
    const seen: { id?: string; data: string }[] = [];
    let buffer = '';
    const done = () => {
      response.destroy();
      resolve(seen);
    };
    response.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: ?(.*)$/m.exec(block)?.[1];
        if (data !== undefined) seen.push({ id: /^id: (.*)$/m.exec(block)?.[1], data });
      }
      if (enough(seen)) done();
    });
    response.on('end', () => resolve(seen));
  });
}

describe('an MCP request stream cut before its answer', () => {
  it('resumes with Last-Event-ID on another process and gets the answer the first process finished', async () => {
    const initialized = await send(herald.url, 'POST', {}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'resume', version: '1' } } });
    const sessionId = initialized.headers['mcp-session-id'] as string;
    initialized.resume();
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    const call = await send(herald.url, 'POST', headers, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'uploadFromUrlTool', arguments: { url: slowUrl } } });
    // The priming event gives the client an id; then it goes away before the answer.
    const [priming] = await events(call, (seen) => seen.length >= 1);
    expect(priming.id).toMatch(/\/0$/);
    expect(priming.data).toBe('');
    release();
    const resumed = await send(other.url, 'GET', { ...headers, 'last-event-id': priming.id! });
    expect(resumed.headers['content-type']).toBe('text/event-stream');
    const replayed = await events(resumed, (seen) => seen.some((event) => event.data.includes('"result"')));
    const answer = JSON.parse(replayed.find((event) => event.data.includes('"result"'))!.data);
    expect(answer.id).toBe(2);
    expect(answer.result.isError).toBeFalsy();
    expect(answer.result.structuredContent).toMatchObject({ path: expect.stringContaining('/uploads/') });
  });
});
