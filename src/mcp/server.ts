// The MCP server of one session, built from the tool registry and bound to the caller that opened the session.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { asDomainError, DomainError, toToolErrorText } from '../errors.js';
import { tools } from '../../tools/index.js';
import { canCall, runTool } from '../../tools/runner.js';
import type { Caller, Services } from '../../tools/types.js';
import { newId } from '../lib/crypto.js';

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

export function createMcpServer(services: Services, caller: Caller): Server {
  const server = new Server({ name: 'Herald', version: '0.1.0' }, { capabilities: { tools: { listChanged: false } } });
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
