// The MCP server of one request of a session, built from the tool registry and bound to the caller that opened the session:
// tools, resources (with subscriptions), prompts, completions and logging. Sessions live in Postgres (src/mcp/sessions.ts),
// so what a session keeps between requests (log level, subscriptions, pending confirmations) is in its `state`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type ContentBlock,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { asDomainError, DomainError, toToolErrorText } from '../errors.js';
import { tools } from '../../tools/index.js';
import { canCall, runTool } from '../../tools/runner.js';
import type { Caller, ConfirmationAnswer, ConfirmationRequest, Services } from '../../tools/types.js';
import { newId } from '../lib/crypto.js';
import { jsonSchema } from '../http/openapi.js';
import { KEY_PATTERN } from '../../tools/internal/idempotency.js';
import { SessionLog, SetLevelRequest } from './logging.js';
import { invalidParams } from './errors.js';
import { ResourceSubscriptions } from './resources.js';
import { registerPrompts } from './prompts.js';
import { registerCompletions } from './completions.js';
import { InputRequired, SessionConfirmations } from './confirmations.js';
import type { SessionContext } from './sessions.js';
import { timedToolCall } from '../lib/metrics.js';
import { serverInfo, type Handle, type HandledMethod, type HandlerExtra } from './surface.js';
import { withApps } from './apps.js';
import { createdTask, TASK_TOOLS } from './tasks.js';

const mcpTools = tools.filter((tool) => tool.mcp);
const mcpToolNames = new Set(mcpTools.map((tool) => tool.name));

type ObjectSchema = { type: 'object'; properties?: Record<string, object>; required?: string[] };

/**
 * Every tool's output schema as tools/list shows it: an object. Every byte of tools/list is sent with every turn of every
 * conversation (DESIGN §11): the full shapes cost 20 KB, their fields' names with their types 3 KB more, and names
 * alone are schemas that constrain nothing, which clients cannot port (MCP Inspector's --strict warns of each). Each
 * description says what comes back; the structured content conforms.
 */
const OUTPUT_OUTLINE: ObjectSchema = { type: 'object' };

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/**
 * An input schema as tools/list shows it, without what says nothing to an agent: the 400-character pattern zod writes
 * beside `format: date-time`, the idempotency key's pattern (its description asks for a UUID), the safe-integer bounds of
 * every integer, `minLength: 1` and strings' `maxLength`, `propertyNames: {type: string}`, and the string form of a
 * boolean REST reads from a query string (`"true"`/`"false"`: a JSON client sends the boolean). The runner still parses
 * every call with the tool's own schema. A schema that constrains nothing (any JSON value, a free-form object's `{}`) is
 * said as what it may be.
 */
function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compact);
  if (!node || typeof node !== 'object') return node;
  const schema = node as Record<string, unknown>;
  // Any JSON value (zod's unknown): said as the types it may be, since a schema without a validation keyword is one a
  // client cannot port.
  if (Object.keys(schema).every((key) => key === 'description' || key === 'default')) return { ...schema, anyOf: ANY_JSON };
  if (isQueryBoolean(schema.anyOf)) {
    const { anyOf: _forms, ...rest } = schema;
    return compact({ ...rest, type: 'boolean' });
  }
  const kept = Object.entries(schema).filter(([key, value]) => {
    if (key === 'pattern' && (schema.format === 'date-time' || value === KEY_PATTERN.source)) return false;
    if ((key === 'maximum' && value === SAFE_INTEGER) || (key === 'minimum' && value === -SAFE_INTEGER) || (key === 'minLength' && value === 1)) return false;
    if (key === 'maxLength' && schema.type === 'string') return false; // a bound only a runaway value meets; the refusal names it
    // A free-form object: `additionalProperties: {}` says nothing an object does not (and is not portable).
    if (key === 'additionalProperties' && value && typeof value === 'object' && Object.keys(value).length === 0) return false;
    return !(key === 'propertyNames' && (value as Record<string, unknown>)?.type === 'string');
  });
  return Object.fromEntries(kept.map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, property]) => [name, compact(property)])) : compact(value)]));
}

const ANY_JSON = [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }, { type: 'array' }];

/** `anyOf: [{type: boolean}, {type: string, enum: ["true", "false"]}]`: a boolean also accepted as query-string text. */
function isQueryBoolean(forms: unknown): boolean {
  if (!Array.isArray(forms) || forms.length !== 2) return false;
  const [first, second] = forms as Record<string, unknown>[];
  return first?.type === 'boolean' && second?.type === 'string' && JSON.stringify(second.enum) === '["true","false"]' && Object.keys(second).length === 2;
}

/** MCP's defaults of the hints (readOnly false, destructive true, idempotent false, openWorld true): a hint equal to its default says nothing. */
const HINT_DEFAULTS: Record<string, boolean> = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const listedAnnotations = (annotations: object) => Object.fromEntries(Object.entries(annotations).filter(([hint, value]) => HINT_DEFAULTS[hint] !== value));

/** Emitted once: the schemas never change at run time. */
const mcpToolList = mcpTools.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: compact(jsonSchema(tool.listedInput ?? tool.input, 'input')) as ObjectSchema,
  outputSchema: OUTPUT_OUTLINE,
  annotations: listedAnnotations(tool.annotations),
}));

/** The tools/list answer of a caller: a credential sees only the tools it may call (a read-only token, an agent key). */
export const listedTools = (caller: Caller) => mcpToolList.filter((_, index) => canCall(caller, mcpTools[index]));

/** The tools whose answer names posts it created or changed: each gets a resource_link to herald://posts/{id}. */
const POST_ANSWERS: Record<string, (output: Record<string, unknown>) => unknown[]> = {
  schedulePostTool: (output) => (Array.isArray(output.output) ? output.output.map((item: { postId?: unknown }) => item.postId) : []),
  updatePost: (output) => [output.id],
};

/** resource_link blocks to the posts a create or an update answered, so a client can open or subscribe to them. */
function postLinks(tool: string, output: Record<string, unknown>): ContentBlock[] {
  const ids = (POST_ANSWERS[tool]?.(output) ?? []).filter((id): id is string => typeof id === 'string');
  return ids.map((id) => ({ type: 'resource_link', uri: `herald://posts/${id}`, name: `post-${id}`, title: 'Post', mimeType: 'application/json' }));
}

export const INSTRUCTIONS =
  'Herald publishes to the organization\'s social channels. Start with the resource herald://integrations (or integrationList), read herald://platforms/{identifier} ' +
  'for each platform\'s rules and limits before writing, timeZoneTool for the user\'s local times, validatePostTool to show the user the post, then schedulePostTool with an idempotencyKey. Prompts plan-week, article-to-thread, weekly-analytics-report and recover-failed-posts ' +
  'walk through common jobs. Posts by agents may wait for an owner\'s approval (approval.status "pending"): subscribe to herald://posts/{id} to learn the decision.';

/**
 * A looser tools/call schema than the SDK's, so a call whose `arguments` is not an object (null, a string, an array, a
 * number) reaches the handler and is answered -32602 with a sentence, not with the SDK schema's error dump. `Server`
 * wraps every tools/call handler in its own validation against the strict schema, so the handler is installed with
 * `Protocol`'s registration (the SDK's public base class), which parses with this schema only.
 */
const CallToolRequest = z.object({
  method: z.literal('tools/call'),
  params: z
    .object({ name: z.unknown(), arguments: z.unknown().optional(), _meta: z.object({ progressToken: z.union([z.string(), z.number()]).optional() }).loose().optional() })
    .loose(),
});

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/** The call's arguments, or -32602 naming what is wrong with them. */
function argumentsOf(params: z.infer<typeof CallToolRequest>['params']): { name: string; arguments: Record<string, unknown> } {
  if (typeof params.name !== 'string') throw invalidParams(`params.name must be the tool's name (a string); got ${kindOf(params.name)}.`);
  const given = params.arguments;
  if (given === undefined) return { name: params.name, arguments: {} };
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw invalidParams(`params.arguments must be a JSON object of ${params.name}'s input fields ({} for none); got ${kindOf(given)}.`);
  }
  return { name: params.name, arguments: given as Record<string, unknown> };
}

/** One validator for every server: the SDK builds a new Ajv per server otherwise, and a server is built per request. */
let validator: AjvJsonSchemaValidator | undefined;

/** The SDK 1.x request schemas of the methods Herald handles (tools/call and logging/setLevel: looser ones of our own). */
const LEGACY_SCHEMAS: Record<HandledMethod, z.ZodType> = {
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequest,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'resources/subscribe': SubscribeRequestSchema,
  'resources/unsubscribe': UnsubscribeRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'completion/complete': CompleteRequestSchema,
  'logging/setLevel': SetLevelRequest,
};

/**
 * Registers a handler on an SDK 1.x server. `Server` wraps a tools/call handler in its own validation against the strict
 * schema, so every handler is installed with `Protocol`'s registration (the SDK's public base class), which parses with the
 * schema given only.
 */
const legacyHandle =
  (server: Server): Handle =>
  (method, handler) =>
    Protocol.prototype.setRequestHandler.call(server, LEGACY_SCHEMAS[method] as never, ((request: { params?: unknown }, extra: RequestHandlerExtra<never, never>) =>
      handler(request.params ?? {}, { era: 'legacy', requestId: extra.requestId, notify: (notification) => extra.sendNotification(notification as never), signal: extra.signal })) as never);

/** What a request's server answers, in either era: a `Handle` registers each feature's handlers on its SDK's server. */
export interface SurfaceOptions {
  services: Services;
  session: SessionContext;
  handle: Handle;
  /** How a destructive call is confirmed in this era (an elicitation, an input_required result or the two-call rule). */
  confirmations: (extra: HandlerExtra) => (request: ConfirmationRequest) => Promise<ConfirmationAnswer>;
  /** 2025-11-25 only: resources/subscribe (2026-07-28 clients use subscriptions/listen, which the SDK serves). */
  subscriptions?: boolean;
}

export function registerSurface({ services, session, handle, confirmations, subscriptions }: SurfaceOptions): void {
  handle = withApps(handle, services, session); // MCP Apps: the views' links, resources and drawn answers (apps.ts)
  const { caller } = session;
  const log = new SessionLog(session);
  log.register(handle);
  new ResourceSubscriptions(services, caller, session).register(handle, subscriptions === true);
  registerPrompts(handle, services.now);
  registerCompletions(handle, services, caller);
  // Filtered when asked (most requests of a session are a tools/call of a tool the caller may call).
  let listed: ReturnType<typeof listedTools> | undefined;
  const visible = () => (listed ??= listedTools(caller));
  handle('tools/list', async () => ({ tools: visible() }));
  const call = timedToolCall(mcpToolNames, async ({ params }: { params: z.infer<typeof CallToolRequest>['params'] }, extra: HandlerExtra): Promise<CallToolResult> => {
    const requestId = newId();
    const call = argumentsOf(params);
    const tool = mcpTools.find((candidate) => candidate.name === call.name);
    const logs = log.forRequest((notification) => extra.notify(notification), `herald.${call.name}`);
    try {
      if (!tool) {
        throw new DomainError('not_found', `Unknown tool "${call.name}".`, { hint: `Available tools: ${visible().map((item) => item.name).join(', ')}.` });
      }
      // The client asked for progress notifications of this call: long tools (uploads, generation) report through it.
      const progressToken = params._meta?.progressToken;
      const progress =
        progressToken === undefined
          ? undefined
          : (value: number, total?: number, message?: string) => extra.notify({ method: 'notifications/progress', params: { progressToken, progress: value, total, message } });
      const asTask = extra.tasks === true && TASK_TOOLS.has(tool.name);
      logs.log('debug', `Running ${tool.name} with ${Object.keys(call.arguments).join(', ') || 'no arguments'}.`, { requestId });
      const output = (await runTool(tool, call.arguments, caller, services, requestId, {
        progress,
        via: 'mcp',
        log: logs.log,
        confirm: confirmations(extra),
        signal: extra.signal,
        asTask,
      })) as Record<string, unknown>;
      await logs.flush();
      // Work still under way, for a client following it as a task: its CreateTaskResult (tasks/get reads the outcome).
      const task = asTask ? await createdTask(services, output) : undefined;
      if (task) return task as unknown as CallToolResult;
      // A refusal answered as data (schedulePostTool's {errors}) is still an error to an agent that checks isError.
      const refused = tool.refused?.(output as never) === true;
      return { content: [{ type: 'text', text: JSON.stringify(output) }, ...postLinks(tool.name, output)], structuredContent: output, ...(refused ? { isError: true } : {}) };
    } catch (raw) {
      if (raw instanceof InputRequired) throw raw;
      const error = asDomainError(raw);
      if (error.code === 'internal') services.logger.error({ err: raw, requestId, tool: call.name }, 'tool failed');
      logs.log('error', toToolErrorText(error), { requestId });
      await logs.flush();
      return { isError: true, content: [{ type: 'text', text: toToolErrorText(error) }] };
    }
  });
  handle('tools/call', (params, extra) => call({ params }, extra));
}

/**
 * The server of one request of a 2025-11-25 session (sessions live in Postgres, so a server is built for each request, on
 * whichever process it reaches). `session` is what the session keeps: the client's capabilities and info from its
 * initialization, and `state`, the per-session state read here and changed with `session.updateState` (log level, resource
 * subscriptions, pending confirmations). The initialize request gets one too: its session is stored before the server answers it.
 */
export function createMcpServer(services: Services, session: SessionContext): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server(serverInfo(services.config.publicUrl), {
    capabilities: { tools: { listChanged: false }, resources: { subscribe: true, listChanged: false }, prompts: { listChanged: false }, completions: {}, logging: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
  });
  restoreClient(server, session);
  const confirmations = new SessionConfirmations(server, session);
  registerSurface({ services, session, handle: legacyHandle(server), confirmations: (extra) => confirmations.forRequest(extra.requestId), subscriptions: true });
  return server;
}

/**
 * Gives a server built for a later request of a session what the client said at initialization. SDK 1.x keeps these in
 * private fields set only by the initialize handler and has no public way to resume a session on a new server instance;
 * tested (test/cluster.test.ts: an elicitation-capable client's capabilities reach a server on another process).
 */
function restoreClient(server: Server, session: SessionContext): void {
  const fields = server as unknown as { _clientCapabilities?: unknown; _clientVersion?: unknown };
  fields._clientCapabilities = session.clientCapabilities;
  fields._clientVersion = session.clientInfo;
}
