// Baseline of the MCP figure: a bare MCP SDK server over streamable HTTP with sessions in memory (one transport per session,
// as the SDK's own example) and one trivial tool. Plain JavaScript, no authentication, no database.
//   node bench/baselines/mcp-sdk.mjs   → prints "listening on <url>" (the MCP endpoint)
import { randomUUID } from 'node:crypto';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const transports = new Map();
const app = express();
app.use(express.json());
app.all('/mcp', async (request, response) => {
  const sessionId = request.headers['mcp-session-id'];
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport) {
    if (sessionId || !isInitializeRequest(request.body)) {
      response.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      return;
    }
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool('integrationList', { description: 'A trivial tool' }, async () => ({ content: [{ type: 'text', text: '{"output":[]}' }], structuredContent: { output: [] } }));
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => transports.set(id, transport) });
    transport.onclose = () => transports.delete(transport.sessionId);
    await server.connect(transport);
  }
  await transport.handleRequest(request, response, request.body);
});
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
