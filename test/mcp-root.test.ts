// The three MCP endpoints answer at the root too (some clients rewrite a URL to `<host>/mcp`), and a POST to a path that
// is neither an API route nor a console form gets the JSON 404 with a hint, not the console's "form expired" page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';

let herald: Herald;

beforeAll(async () => {
  herald = await startHerald();
});

afterAll(async () => {
  await herald?.stop();
});

async function listToolsAt(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = new Client({ name: 'root-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

describe('MCP at the root', () => {
  it('serves /mcp with a Bearer key and /mcp/<key>, like /api/mcp', async () => {
    const underApi = await listToolsAt(`${herald.url}/api/mcp`, { Authorization: `Bearer ${herald.apiKey}` });
    expect(await listToolsAt(`${herald.url}/mcp`, { Authorization: `Bearer ${herald.apiKey}` })).toEqual(underApi);
    expect(await listToolsAt(`${herald.url}/mcp/${herald.apiKey}`)).toEqual(underApi);
  });

  it('/mcp-oauth challenges with the discovery document of its own path', async () => {
    const response = await fetch(`${herald.url}/mcp-oauth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBe(`${herald.url}/.well-known/oauth-protected-resource/mcp-oauth`);
    const metadata = (await (await fetch(metadataUrl!)).json()) as { resource: string; authorization_servers: string[] };
    expect(metadata.resource).toBe(`${herald.url}/mcp-oauth`);
    expect(metadata.authorization_servers).toEqual([herald.url]);
  });

  it('a JSON POST to an unknown path answers the JSON 404 with a hint; a console form POST still gets the console', async () => {
    const unknown = await fetch(`${herald.url}/mcpx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unknown.status).toBe(404);
    const body = (await unknown.json()) as { code: string; hint: string };
    expect(body.code).toBe('not_found');
    expect(body.hint).toMatch(/\/api\/public\/v1.*\/api\/mcp/);
    const form = await fetch(`${herald.url}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=a%40b.c&password=x' });
    expect(form.headers.get('content-type')).toContain('text/html');
  });
});
