// The 2026-07-28 revision on the same URLs as the 2025-11-25 sessions: no initialize and no session, a `server/discover`
// and the protocol version on each request, input_required results (MRTR) instead of requests to the client,
// `subscriptions/listen` instead of resources/subscribe, caching hints. Served by the official SDK v2 (`createMcpHandler`
// strict on this era: it validates the envelope and the headers and answers the modern error codes), with a server built
// per request from the same surface as the sessions' (surface.ts), so both eras answer alike.
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  inputRequired,
  isLegacyRequest,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  Server,
  type ServerContext,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import type { Caller, Services } from '../../tools/types.js';
import { INSTRUCTIONS, registerSurface } from './server.js';
import { CONFIRM_SCHEMA, InputRequired, modernConfirmations, type Previews } from './confirmations.js';
import { serverInfo, type Handle, type HandledMethod } from './surface.js';
import type { SessionContext } from './sessions.js';
import type { SessionStore } from './session-store.js';
import type { SessionHub } from './hub.js';
import { subscriptionKey } from './resources.js';
import { declaresTasks, registerTasks, TASKS_EXTENSION } from './tasks.js';

/** What the sessions' server answers that this era does not have (logging/setLevel is the SDK's; subscriptions are listen's). */
const LEGACY_ONLY = new Set<HandledMethod>(['logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

/**
 * Cache hints of the cacheable answers: what is the same for everyone (prompts, templates, the server's description) may be
 * kept an hour by anyone; the tools a credential sees, by that client a few minutes; what changes with the data, not at all.
 */
const CACHE_HINTS = {
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' as const },
  'prompts/list': { ttlMs: 3_600_000, cacheScope: 'public' as const },
  'resources/templates/list': { ttlMs: 3_600_000, cacheScope: 'public' as const },
  'tools/list': { ttlMs: 300_000, cacheScope: 'private' as const },
  'resources/list': { ttlMs: 0, cacheScope: 'private' as const },
  'resources/read': { ttlMs: 0, cacheScope: 'private' as const },
};

type Envelope = { [key: string]: unknown };

/**
 * Registers a feature's handler on an SDK 2.x server; a confirmation still to ask is answered as input_required. `closed`:
 * aborted when the client closes the request, the revision's cancel, which then reaches the handler's `signal`. `tasks`:
 * the request declared the tasks extension.
 */
const modernHandle =
  (server: Server, closed: AbortSignal, tasks: boolean): Handle =>
  (method, handler) => {
    if (LEGACY_ONLY.has(method)) return;
    server.setRequestHandler(method as 'tools/call', (async (request: { params?: unknown }, ctx: ServerContext) => {
      try {
        return await handler(request.params ?? {}, {
          era: 'modern',
          requestId: ctx.mcpReq.id,
          notify: (notification) => ctx.mcpReq.notify(notification as never),
          signal: AbortSignal.any([ctx.mcpReq.signal, closed]),
          inputResponses: ctx.mcpReq.inputResponses,
          requestState: ctx.mcpReq.requestState<string>(),
          tasks,
        });
      } catch (error) {
        if (!(error instanceof InputRequired)) throw error;
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ mode: 'form', message: error.request.message, requestedSchema: CONFIRM_SCHEMA }) },
          requestState: error.request.action,
        });
      }
    }) as never);
  };

/** The JSON-RPC envelope of a request's params (`_meta`), or {} */
function envelopeOf(body: unknown): Envelope {
  const meta = (body as { params?: { _meta?: unknown } } | undefined)?.params?._meta;
  return meta && typeof meta === 'object' ? (meta as Envelope) : {};
}

export class ModernMcp {
  constructor(
    private readonly services: Services,
    private readonly store: SessionStore,
    private readonly hub: SessionHub,
  ) {}

  /** Whether the request is of the 2025-11-25 era (its sessions), as the SDK's own routing tells them apart. */
  async isLegacy(request: Request): Promise<boolean> {
    // What the SDK reads of a request whose body is parsed already: its method and three headers; without a JSON body, or
    // other than a POST, a request is of the sessions' era (as isLegacyRequest answers), and no web Request is built for it.
    if (request.method !== 'POST' || request.body === undefined) return true;
    const headers = { get: (name: string) => headerOf(request, name) };
    return isLegacyRequest({ method: request.method, headers } as unknown as globalThis.Request, request.body);
  }

  /** One 2026-07-28 request (`caller`: its credential, checked before). */
  async handle(request: Request, response: Response, caller: Caller): Promise<void> {
    const envelope = envelopeOf(request.body);
    const clientInfo = envelope[CLIENT_INFO_META_KEY] as { name?: unknown; version?: unknown } | undefined;
    const client = typeof clientInfo?.name === 'string' ? `${clientInfo.name}${typeof clientInfo.version === 'string' ? ` ${clientInfo.version}` : ''} (MCP)` : (request.get('user-agent') ?? null);
    const who: Caller = { ...caller, origin: { via: 'mcp', address: request.ip ?? null, client } };
    const capabilities = (envelope[CLIENT_CAPABILITIES_META_KEY] ?? {}) as { elicitation?: { form?: unknown } };
    const tasks = declaresTasks(envelope);
    let listen: { id: string; bus: ServerEventBus } | undefined;
    const abort = new AbortController();
    // The client closing the call's request is this revision's cancel. Node's HTTP server keeps a socket half-open when
    // the client ends it (allowHalfOpen), so its 'close' comes only once the answer is written: the socket's 'end' is the
    // client going away while the call runs.
    const socket = request.socket;
    const gone = () => abort.abort();
    socket.once('end', gone);
    response.on('close', () => {
      socket.off('end', gone);
      abort.abort();
    });
    if ((request.body as { method?: unknown })?.method === 'subscriptions/listen') listen = await this.listenRow(who, request.body as never);

    const factory = () => {
      const server = new Server(serverInfo(this.services.config.publicUrl), {
        capabilities: {
          tools: { listChanged: false },
          resources: { subscribe: true, listChanged: false },
          prompts: { listChanged: false },
          completions: {},
          logging: {},
          extensions: { [TASKS_EXTENSION]: {} },
        },
        instructions: INSTRUCTIONS,
        cacheHints: CACHE_HINTS,
      });
      registerTasks(server, this.services, who, tasks);
      const state = { logLevel: envelope[LOG_LEVEL_META_KEY] ?? 'emergency' } as SessionContext['state'];
      const session: SessionContext = {
        id: '',
        protocolVersion: String(envelope[PROTOCOL_VERSION_META_KEY] ?? ''),
        clientInfo: (clientInfo ?? {}) as SessionContext['clientInfo'],
        clientCapabilities: capabilities,
        caller: who,
        state,
        updateState: async (patch) => Object.assign(state, patch),
      };
      // An empty `elicitation` object means form elicitation.
      const elicitation = capabilities.elicitation !== undefined && (Object.keys(capabilities.elicitation).length === 0 || capabilities.elicitation.form !== undefined);
      const previews = {
        read: async () => ((await this.store.credentialState(who, session.protocolVersion)).confirmations as Previews | undefined) ?? {},
        write: async (confirmations: Previews) => void (await this.store.credentialState(who, session.protocolVersion, { confirmations })),
      };
      registerSurface({ services: this.services, session, handle: modernHandle(server, abort.signal, tasks), confirmations: modernConfirmations(elicitation, previews) });
      return server;
    };
    const handler = createMcpHandler(factory, {
      legacy: 'reject',
      ...(listen ? { bus: listen.bus } : {}),
      onerror: (error) => this.services.logger.debug({ err: error.message }, 'MCP 2026-07-28 request refused'),
    });
    try {
      const answer = await handler.fetch(webRequest(request, abort.signal), { parsedBody: request.body });
      await send(answer, response);
    } finally {
      if (listen) await this.store.delete(listen.id).catch(() => undefined);
    }
  }

  /**
   * A subscriptions/listen stream's row: its resource subscriptions kept like a session's (state.subscriptions), so every
   * change that reaches subscribed sessions (a publication by the worker, an approval, a new comment) is stored for it
   * too; the hub hands those events to the stream's bus on whichever process holds it. A URI the caller cannot read is
   * left out (it answers not found on resources/read).
   */
  private async listenRow(caller: Caller, body: { params?: { filter?: { resourceSubscriptions?: unknown } } }): Promise<{ id: string; bus: ServerEventBus }> {
    const uris = body.params?.filter?.resourceSubscriptions;
    const subscriptions: Record<string, string> = {};
    for (const uri of Array.isArray(uris) ? uris : []) {
      if (typeof uri !== 'string') continue;
      const key = await subscriptionKey(this.services, caller, uri).catch(() => undefined);
      if (key) subscriptions[uri] = key;
    }
    const id = `listen:${randomUUID()}`;
    await this.store.create({ id, credentialId: caller.credentialId, organizationId: caller.organizationId, protocolVersion: '2026-07-28', clientInfo: { name: 'listen', version: '' }, clientCapabilities: {} }, this.services.now());
    await this.store.updateState(id, { subscriptions });
    const hub = this.hub;
    return {
      id,
      bus: {
        publish: () => undefined,
        subscribe: (listener) => hub.listen(id, caller.organizationId, (uri) => listener({ kind: 'resource_updated', uri })),
      },
    };
  }
}

/** A header as web-standard Headers answers it (any case of its name; repeated values joined), or null. */
function headerOf(request: Request, name: string): string | null {
  const value = request.headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/** The express request as the web-standard Request the SDK reads (the body already parsed, given again as JSON). */
function webRequest(request: Request, signal?: AbortSignal): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'connection') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const url = `${request.protocol}://${request.get('host') ?? 'localhost'}${request.originalUrl}`;
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== undefined;
  return new globalThis.Request(url, { method: request.method, headers, body: hasBody ? JSON.stringify(request.body) : undefined, signal });
}

/** How long a client waits before reconnecting an SSE stream that was cut (the `retry:` field at the stream's start). */
export const SSE_RETRY_MS = 3000;

/** Writes the SDK's answer on the express response, streaming an SSE body as it comes (with a `retry:` field first). */
async function send(answer: globalThis.Response, response: Response): Promise<void> {
  response.status(answer.status);
  answer.headers.forEach((value, name) => response.setHeader(name, value));
  if (!answer.body) return void response.end();
  if (String(answer.headers.get('content-type')).startsWith('text/event-stream')) {
    response.flushHeaders();
    response.write(`retry: ${SSE_RETRY_MS}\n\n`);
  }
  await new Promise<void>((resolve) => {
    const body = Readable.fromWeb(answer.body as never);
    body.on('error', () => resolve());
    response.on('close', () => {
      body.destroy();
      resolve();
    });
    body.pipe(response).on('finish', resolve);
  });
}
