// The OpenAPI 3.1 document of REST v1, generated from the tool registry: each tool's REST binding gives the path and method,
// its zod input (or the binding's body schema) the parameters and request body, its zod output (or the binding's response
// schema) the answer. No hand-written copy of any schema.
import { API_SCOPES, API_SCOPE_DESCRIPTIONS, toolScope } from '../../tools/internal/scopes.js';
import { z } from 'zod';
import { errorStatus } from '../errors.js';
import { tools } from '../../tools/index.js';
import type { ToolDefinition } from '../../tools/types.js';

type Json = Record<string, unknown>;

export const OPENAPI_PATH = '/openapi.json';

export const errorBodySchema = z.object({
  statusCode: z.number().int(),
  code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus, ...(keyof typeof errorStatus)[]]).describe('Stable snake_case code to branch on'),
  message: z.string().describe('What is wrong'),
  hint: z.string().optional().describe('What to do next'),
  details: z.unknown().optional(),
  requestId: z.string().describe('Quote it when reporting a problem'),
});

/** A zod schema as JSON Schema, without `$schema` (REST's OpenAPI document and the MCP tool list). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const emitted = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  delete emitted.$schema;
  return emitted;
}

/** `/posts/:id/status` → `/posts/{id}/status`. */
export const openApiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, '{$1}');
const pathParams = (expressPath: string) => [...expressPath.matchAll(/:(\w+)/g)].map((match) => match[1]);

/** Whether `toResponse` only unwraps `{output}` (then the answer is the output schema's `output`). */
function unwraps(tool: ToolDefinition): boolean {
  const toResponse = tool.rest?.toResponse;
  if (!toResponse) return false;
  const marker = { marker: true };
  try {
    return toResponse({ output: marker } as never) === marker;
  } catch {
    return false;
  }
}

function responseSchema(tool: ToolDefinition): Json {
  const binding = tool.rest!;
  if (binding.response) return jsonSchema(binding.response, 'output');
  if (unwraps(tool)) return jsonSchema((tool.output as z.ZodObject).shape.output as z.ZodType, 'output');
  return jsonSchema(tool.output, 'output');
}

function withoutProperties(schema: Json, names: string[]): Json {
  const properties = { ...((schema.properties as Json | undefined) ?? {}) };
  for (const name of names) delete properties[name];
  const { required: _required, ...rest } = schema;
  const required = ((_required as string[] | undefined) ?? []).filter((name) => !names.includes(name));
  return { ...rest, properties, ...(required.length ? { required } : {}) };
}

function operation(tool: ToolDefinition): Json {
  const binding = tool.rest!;
  const inputSchema = jsonSchema(tool.input, 'input');
  const inputProperties = (inputSchema.properties as Record<string, Json> | undefined) ?? {};
  const required = (inputSchema.required as string[] | undefined) ?? [];
  const inPath = pathParams(binding.path);
  const parameters: Json[] = inPath.map((name) => ({ name, in: 'path', required: true, schema: inputProperties[name] ?? { type: 'string' } }));
  const bodyless = binding.method === 'GET' || binding.method === 'DELETE';
  if (bodyless) {
    for (const [name, schema] of Object.entries(inputProperties)) {
      if (!inPath.includes(name)) parameters.push({ name, in: 'query', required: required.includes(name), schema, ...(schema.description ? { description: schema.description } : {}) });
    }
  }
  if (tool.acceptsIdempotencyKey) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  const success = typeof binding.status === 'number' ? binding.status : 200;
  const answer = binding.file
    ? { description: 'Success: a file to download', content: { [binding.file.contentType]: { schema: { type: 'string' } } } }
    : { description: 'Success', content: { 'application/json': { schema: responseSchema(tool) } } };
  const responses: Json = { [String(success)]: answer };
  if (typeof binding.status === 'function') responses['202'] = { description: 'Accepted: still running; the body says how to fetch the result', content: answer.content };
  const errors = ['400', '401', '403', ...(inPath.length ? ['404'] : []), ...(tool.acceptsIdempotencyKey ? ['409', '422'] : []), ...(binding.largeBody || binding.multipartFile ? ['413'] : []), ...(bodyless ? [] : ['415']), '429', '500', '503'];
  for (const status of errors) responses[status] = { $ref: '#/components/responses/Error' };
  const result: Json = {
    operationId: tool.name,
    summary: tool.title,
    description: `${tool.description}\n\nRequired scope: \`${toolScope(tool)}\`.`,
    'x-required-scope': toolScope(tool),
    tags: [binding.path.split('/')[1] || 'root'],
    ...(parameters.length ? { parameters } : {}),
    responses,
  };
  if (binding.multipartFile) {
    result.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: { type: 'object', properties: { [binding.multipartFile]: { type: 'string', contentMediaType: 'application/octet-stream' } }, required: [binding.multipartFile] },
        },
      },
    };
  } else if (!bodyless) {
    const body = binding.body ? jsonSchema(binding.body, 'input') : withoutProperties(inputSchema, [...inPath, 'idempotencyKey']);
    result.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  }
  return result;
}

function buildDocument(publicUrl: string): Json {
  const paths: Record<string, Json> = {
    [OPENAPI_PATH]: {
      get: {
        operationId: 'openApiDocument',
        summary: 'This document',
        tags: ['meta'],
        security: [],
        responses: { '200': { description: 'The OpenAPI 3.1 document of REST v1', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  };
  for (const tool of tools) {
    if (!tool.rest) continue;
    const path = openApiPath(tool.rest.path);
    paths[path] = { ...paths[path], [tool.rest.method.toLowerCase()]: operation(tool) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Herald REST API',
      version: '1.0.0',
      description:
        'Self-hosted social publishing for AI agents: channels, posts (threads and comments), media, analytics, webhooks. ' +
        'Every error is JSON {statusCode, code, message, hint?, details?, requestId}. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset headers; ' +
        'over a limit the answer is 429 rate_limited with Retry-After. The same API is served at /public/v1.',
    },
    servers: [{ url: `${publicUrl}/api/public/v1` }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description:
            'The API key itself (or an OAuth access token pos_…), with no scheme prefix. Each key has scopes; each operation names the one it needs ' +
            `(x-required-scope): ${API_SCOPES.map((scope) => `${scope}: ${API_SCOPE_DESCRIPTIONS[scope]}`).join('; ')}. ` +
            'Agent keys (read, posts:write) are held at the approval gate when it is on; the organization key (owner) has every scope. ' +
            'OAuth tokens: mcp:read = read; mcp:write = read, posts:write, channels:manage. A key limited to channels gets 404 for any other channel.',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'A unique key per request (a UUID). Within 24 hours the same key with the same body answers the first answer again (header Idempotent-Replayed: true) and creates nothing; with another body 422 idempotency_conflict; while the first is still running 409 request_in_progress.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        },
      },
      schemas: { Error: jsonSchema(errorBodySchema, 'output') },
      responses: { Error: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
}

const documents = new Map<string, Json>();

/** Built once per public URL: the tools never change at run time. */
export function openApiDocument(publicUrl: string): Json {
  let document = documents.get(publicUrl);
  if (!document) {
    document = buildDocument(publicUrl);
    documents.set(publicUrl, document);
  }
  return document;
}
