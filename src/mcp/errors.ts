// JSON-RPC errors of the MCP server. An McpError's message starts "MCP error <code>: ", and the SDK's client puts the same
// prefix before the message it receives, so an agent read "MCP error -32602: MCP error -32602: …". These errors carry the
// sentence alone; the SDK answers their `code`, `message` and `data` as they are.
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

export function invalidParams(message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams, ...(data === undefined ? {} : { data }) });
}
