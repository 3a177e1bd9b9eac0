// The one session layer of /api/mcp, /api/mcp/<key> and /api/mcp-oauth. A session is a row in Postgres (mcp_session), bound to
// the credential that opened it, ended by DELETE, by its credential's revocation or after MCP_SESSION_IDLE_MINUTES; so any
// number of web processes behind a load balancer serve it, each request on whichever process it reaches:
// - POST: the server and the SDK transport are built for the request (the transport without sessions of its own: the
//   session was checked here), answer on the request's SSE stream, storing its events in Postgres for a short while;
// - GET: the session's SSE stream, served here (hub.ts), resumable with Last-Event-ID on any process, including a request
//   stream cut mid-answer on another process;
// - answers to server requests (an elicitation) reach the transport that asked, on whichever process it is.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  InitializeRequestSchema,
  isInitializeRequest,
  isJSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Caller, Services } from '../../tools/types.js';
import { apiKeyHash } from '../../tools/internal/credentials.js';
import { createMcpServer } from './server.js';
import { EVENT_RETENTION_MS, latestSequence, parseEventId, PostgresEventStore, standaloneStreamOf, storeEvent } from './event-store.js';
import { isAnswer, isCancellation, SessionHub } from './hub.js';
import { SessionStore, type SessionRow, type SessionState } from './session-store.js';
import { ModernMcp } from './modern.js';

/** What a request's server knows of its session (see createMcpServer). */
export interface SessionContext extends Pick<SessionRow, 'id' | 'protocolVersion' | 'clientInfo' | 'clientCapabilities'> {
  caller: Caller;
  /** The session's state as it was when this request arrived. */
  state: SessionState;
  /** Merges `patch` into the session's state in Postgres (and into `state`). */
  updateState(patch: SessionState): Promise<SessionState>;
}

function jsonRpcError(response: Response, status: number, message: string): void {
  response.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/**
 * Sends a notification to a session's GET stream from any process, the worker's included: stored, then announced to the
 * process holding the stream (none: the client gets it when it resumes with Last-Event-ID).
 */
export async function notifySession(em: EntityManager, sessionId: string, message: JSONRPCNotification): Promise<void> {
  await storeEvent(em, sessionId, standaloneStreamOf(sessionId), message);
}

export class McpSessions {
  readonly store: SessionStore;
  readonly hub: SessionHub;
  /** The 2026-07-28 requests, told apart from the sessions' by the request itself (the version in its envelope). */
  readonly modern: ModernMcp;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly services: Services) {
    const em = () => services.orm.em.fork();
    // The store runs plain SQL on the pool only: no entity manager forked for it (a fork per statement cost 1-2% of a call).
    this.store = new SessionStore(() => services.orm.em);
    this.hub = new SessionHub({ connectionString: services.orm.config.get('clientUrl') ?? '', em, logger: services.logger });
    this.hub.start();
    this.modern = new ModernMcp(services, this.store, this.hub);
    this.sweeper = setInterval(() => void this.closeIdle().catch((error: Error) => services.logger.warn({ err: error.message }, 'MCP session sweep failed')), 60_000);
    this.sweeper.unref();
  }

  /**
   * The caller of an API key and the session named by a request, in one query (most MCP requests): undefined for an unknown
   * or revoked key; `session` null when the session is unknown or another credential's.
   */
  async resolveWithApiKey(key: string, sessionId: string): Promise<{ caller: Caller; session: SessionRow | null } | undefined> {
    const hash = apiKeyHash(key);
    if (!hash) return undefined;
    const found = await this.store.findWithApiKey(hash, sessionId);
    return found && { caller: found.caller, session: found.session ?? null };
  }

  /** `loaded`: the request's session when the caller was resolved with it (resolveWithApiKey). */
  async handle(request: Request, response: Response, caller: Caller, loaded?: SessionRow | null): Promise<void> {
    if (!(await this.modern.isLegacy(request))) return this.modern.handle(request, response, caller);
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId !== 'string') {
      if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
        return jsonRpcError(response, 400, 'Bad request: send an initialize request first, then the Mcp-Session-Id header it returns.');
      }
      return this.initialize(request, response, caller);
    }
    const session = loaded === undefined ? await this.store.find(sessionId) : loaded;
    // A session opened by another credential is answered exactly like an unknown one.
    // A row of a credential's stateless state or of a listen stream is no session either.
    if (!session || session.credentialId !== caller.credentialId || session.id.includes(':')) return jsonRpcError(response, 404, 'Session not found: initialize a new session.');
    await this.store.touch(session, this.services.now());
    if (request.method === 'DELETE') {
      await this.store.delete(session.id);
      this.hub.endSessions([session.id]);
      response.status(200).end();
      return;
    }
    if (request.method === 'GET') return this.stream(request, response, session);
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'GET, POST, DELETE');
      return jsonRpcError(response, 405, 'Method not allowed.');
    }
    const messages: JSONRPCMessage[] = Array.isArray(request.body) ? request.body : [request.body];
    // Answers to our own requests (an elicitation) go to the transport that asked, wherever it is; a client's cancel goes to
    // the transport running the call it names, on whichever process (a server built for this POST would not know the call).
    if (messages.length > 0 && messages.every((message) => message && typeof message === 'object' && (isAnswer(message) || isCancellation(message)))) {
      const answers = messages.filter(isAnswer);
      if (answers.length > 0) await this.hub.reply(session.id, answers);
      if (answers.length < messages.length) await this.hub.cancel(session.id, messages.filter(isCancellation));
      response.status(202).end();
      return;
    }
    await this.serve(request, response, this.context(session, caller, request), messages);
  }

  private async initialize(request: Request, response: Response, caller: Caller): Promise<void> {
    // Parsed as the SDK parses it, so the stored capabilities are the ones its server would hold (an empty `elicitation`
    // object means form elicitation).
    const parsed = InitializeRequestSchema.safeParse(request.body);
    const params = (parsed.success ? parsed.data.params : (request.body as { params: unknown }).params) as {
      protocolVersion: string;
      clientInfo: SessionRow['clientInfo'];
      capabilities?: Record<string, unknown>;
    };
    const session: SessionRow = {
      id: randomUUID(),
      credentialId: caller.credentialId,
      organizationId: caller.organizationId,
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : LATEST_PROTOCOL_VERSION,
      clientInfo: params.clientInfo,
      clientCapabilities: params.capabilities ?? {},
      state: {},
      lastSeenAt: this.services.now(),
    };
    // Stored before the answer: the client's next request may reach another process at once.
    await this.store.create(session, session.lastSeenAt);
    await this.serve(request, response, this.context(session, caller, request), [request.body]);
  }

  private context(session: SessionRow, caller: Caller, request: Request): SessionContext {
    // Where the request came from and with which MCP client (its clientInfo), for the audit trail.
    const info = session.clientInfo as { name?: unknown; version?: unknown } | undefined;
    const client = typeof info?.name === 'string' ? `${info.name}${typeof info.version === 'string' ? ` ${info.version}` : ''} (MCP)` : (request.get('user-agent') ?? null);
    const context: SessionContext = {
      id: session.id,
      protocolVersion: session.protocolVersion,
      clientInfo: session.clientInfo,
      clientCapabilities: session.clientCapabilities,
      caller: { ...caller, origin: { via: 'mcp', address: request.ip ?? null, client } },
      state: session.state,
      updateState: async (patch) => {
        context.state = await this.store.updateState(session.id, patch);
        return context.state;
      },
    };
    return context;
  }

  /**
   * One POST of a session (`messages`: its body, as a list): a server and a transport for it, released once every request
   * in it has been answered.
   */
  private async serve(request: Request, response: Response, session: SessionContext, messages: JSONRPCMessage[]): Promise<void> {
    const server = createMcpServer(this.services, session);
    const events = new PostgresEventStore(() => this.services.orm.em.fork(), session.id);
    response.on('close', () => {
      // Cut before the end: the answer still to come is kept for a resume with Last-Event-ID (on any process).
      if (!response.writableFinished) void events.clientGone().catch((error: Error) => this.services.logger.warn({ err: error.message }, 'MCP stream events could not be stored'));
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, eventStore: events });
    const pending = new Set(messages.filter((message) => isJSONRPCRequest(message)).map((message) => message.id));
    let stopWaiting = () => undefined as void;
    // Nothing to close once answered: the transport's streams ended with the response, and the server holds no timer (closing
    // them costs an Error with its stack per request, measured 3-4% of an MCP call); both are left to the garbage collector.
    const release = () => stopWaiting();
    // The transport is released after its last answer: a tool still running when the client went away keeps storing its
    // events for a resume elsewhere.
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      await send(message, options);
      if (isAnswer(message) && message.id !== undefined && pending.delete(message.id) && pending.size === 0) release();
    };
    await server.connect(transport);
    stopWaiting = this.hub.awaitReplies(session.id, (message) => transport.onmessage?.(message));
    response.setHeader('mcp-session-id', session.id);
    await transport.handleRequest(request, response, request.body);
    if (pending.size === 0) release();
  }

  /** The GET stream of a session, or the resume of any of its streams with Last-Event-ID. */
  private async stream(request: Request, response: Response, session: SessionRow): Promise<void> {
    if (!String(request.headers.accept ?? '').includes('text/event-stream')) return jsonRpcError(response, 406, 'Not Acceptable: Client must accept text/event-stream');
    const standalone = standaloneStreamOf(session.id);
    const lastEventId = request.headers['last-event-id'];
    const resumed = typeof lastEventId === 'string' ? parseEventId(lastEventId) : undefined;
    if (typeof lastEventId === 'string' && !resumed) return jsonRpcError(response, 400, 'Invalid Last-Event-ID.');
    const streamId = resumed?.streamId ?? standalone;
    // Without Last-Event-ID the stream starts now: what was stored before is for a client resuming an earlier stream.
    const afterSequence = resumed?.sequence ?? (await latestSequence(this.services.orm.em.fork(), streamId));
    this.hub.openStream(response, { sessionId: session.id, organizationId: session.organizationId, streamId, requestStream: streamId !== standalone, afterSequence });
  }

  /** Ends every session of a credential (revoked key or token), on every process. */
  async closeForCredential(credentialId: string): Promise<void> {
    this.hub.endSessions(await this.store.deleteForCredential(credentialId));
  }

  /** Ends the sessions idle for MCP_SESSION_IDLE_MINUTES at `now`, and forgets old stream events. */
  async closeIdle(now = Date.now()): Promise<void> {
    const idleMs = this.services.config.mcpSessionIdleMinutes * 60_000;
    this.hub.endSessions(await this.store.prune(new Date(now - idleMs), new Date(now - EVENT_RETENTION_MS)));
  }

  /** Stops this process's part (its streams and its LISTEN connection); the sessions stay for the other processes. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await this.hub.stop();
  }
}
