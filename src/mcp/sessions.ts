// The one session layer of /api/mcp, /api/mcp/<key> and /api/mcp-oauth: sessions have ids, are bound to the credential
// that opened them, and end on DELETE or after idle time.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Caller, Services } from '../../tools/types.js';
import { createMcpServer } from './server.js';

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  caller: Caller;
  lastSeen: number;
}

function jsonRpcError(response: Response, status: number, message: string): void {
  response.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly services: Services) {
    this.sweeper = setInterval(() => void this.closeIdle(), 60_000);
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request, response: Response, caller: Caller): Promise<void> {
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      // A session opened by another credential is answered exactly like an unknown one.
      if (!session || session.caller.credentialId !== caller.credentialId) {
        return jsonRpcError(response, 404, 'Session not found: initialize a new session.');
      }
      session.lastSeen = Date.now();
      await session.transport.handleRequest(request, response, request.body);
      return;
    }
    if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
      return jsonRpcError(response, 400, 'Bad request: send an initialize request first, then the Mcp-Session-Id header it returns.');
    }
    const server = createMcpServer(this.services, caller);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, caller, lastSeen: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  }

  /** Ends every session of a credential (revoked key or token). */
  async closeForCredential(credentialId: string): Promise<void> {
    for (const [id, session] of this.sessions) if (session.caller.credentialId === credentialId) await this.close(id);
  }

  async closeIdle(now = Date.now()): Promise<void> {
    const idleMs = this.services.config.mcpSessionIdleMinutes * 60_000;
    for (const [id, session] of this.sessions) if (now - session.lastSeen > idleMs) await this.close(id);
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    await session?.transport.close().catch(() => undefined);
    await session?.server.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    for (const id of [...this.sessions.keys()]) await this.close(id);
  }
}
