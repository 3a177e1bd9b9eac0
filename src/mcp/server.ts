// The MCP server of one session, built from the tool registry and bound to the caller that opened the session.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { asDomainError, DomainError, toToolErrorText } from '../errors.js';
import { tools } from '../../tools/index.js';
import { canCall, runTool } from '../../tools/runner.js';
import type { Caller, Services } from '../../tools/types.js';
import { newId } from '../lib/crypto.js';
import type { SessionContext } from './sessions.js';

export const mcpTools = tools.filter((tool) => tool.mcp);

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const emitted = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete emitted.$schema;
  return emitted;
}

/** Emitted once: the schemas never change at run time. */
export const mcpToolList = mcpTools.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: jsonSchema(tool.input, 'input') as { type: 'object'; properties?: Record<string, object> },
  outputSchema: jsonSchema(tool.output, 'output') as { type: 'object'; properties?: Record<string, object> },
  annotations: { title: tool.title, ...tool.annotations },
}));

/** One validator for every server: the SDK builds a new Ajv per server otherwise, and a server is built per request. */
let validator: AjvJsonSchemaValidator | undefined;

/**
 * The server of one request of a session (sessions live in Postgres, so a server is built for each request, on whichever
 * process it reaches). `session` is what the session keeps: the client's capabilities and info from its initialization,
 * and `state`, the per-session state a feature reads here and changes with `session.updateState` (the log level below is
 * one). Absent for the initialize request itself, which the SDK answers from the request.
 */
export function createMcpServer(services: Services, caller: Caller, session?: SessionContext): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server({ name: 'Herald', version: '0.1.0' }, { capabilities: { tools: { listChanged: false }, logging: {} }, jsonSchemaValidator: validator });
  if (session) restoreClient(server, session);
  // The level lives in the session's row, read by the process that holds the session's stream when the worker notifies.
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    await session?.updateState({ logLevel: request.params.level });
    return {};
  });
  // A read-only token sees only the tools it may call.
  const visible = mcpToolList.filter((_, index) => canCall(caller, mcpTools[index]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: visible }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const requestId = newId();
    const tool = mcpTools.find((candidate) => candidate.name === request.params.name);
    try {
      if (!tool) {
        throw new DomainError('not_found', `Unknown tool "${request.params.name}".`, { hint: `Available tools: ${mcpTools.map((item) => item.name).join(', ')}.` });
      }
      // The client asked for progress notifications of this call: long tools (generation) report through it.
      const progressToken = request.params._meta?.progressToken;
      const progress =
        progressToken === undefined
          ? undefined
          : (value: number, total?: number, message?: string) =>
              extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: value, total, message } });
      const output = (await runTool(tool, request.params.arguments ?? {}, caller, services, requestId, { progress })) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
    } catch (raw) {
      const error = asDomainError(raw);
      if (error.code === 'internal') services.logger.error({ err: raw, requestId, tool: request.params.name }, 'tool failed');
      return { isError: true, content: [{ type: 'text', text: toToolErrorText(error) }] };
    }
  });
  return server;
}

/**
 * Gives a server built for a later request of a session what the client said at initialization. SDK 1.x keeps these in
 * private fields set only by the initialize handler and has no public way to resume a session on a new server instance;
 * tested (test/mcp-cluster.test.ts: an elicitation-capable client's capabilities reach a server on another process).
 */
function restoreClient(server: Server, session: SessionContext): void {
  const fields = server as unknown as { _clientCapabilities?: unknown; _clientVersion?: unknown };
  fields._clientCapabilities = session.clientCapabilities;
  fields._clientVersion = session.clientInfo;
}
