// What one web process holds of the MCP sessions it serves: the SSE streams open on it (GET streams, and request streams
// resumed here with Last-Event-ID) and the transports waiting for a client's answer to a server request (an elicitation).
// One LISTEN connection per process hears the other processes through Postgres NOTIFY:
// - herald_mcp_stream <stream id>: events were stored for a stream; the process holding it sends them;
//   (a notification made by the worker reaches the sessions that way: a trigger stores it as an event of their GET streams,
//   see Migration20261124100000);
// - herald_mcp_reply {sessionId, messages}: a client answered a server request on another process; the process whose
//   transport asked receives the answer. A client's cancel (notifications/cancelled) goes the same way to every process,
//   so the call it names stops wherever it runs.
import type { ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../lib/logger.js';
import { Listener } from '../db/listener.js';
import { eventsAfter, standaloneStreamOf, STREAM_CHANNEL, type StoredEvent } from './event-store.js';

const REPLY_CHANNEL = 'herald_mcp_reply';
const KEEPALIVE_MS = 25_000;
/** A resumed request stream re-reads its events this often, in case an announcement was missed. */
const RESUMED_POLL_MS = 1000;

interface LiveStream {
  sessionId: string;
  organizationId: string;
  streamId: string;
  /** A request stream ends once its response is sent; the GET stream stays open. */
  requestStream: boolean;
  lastSequence: string;
  /** The SSE response written to, or, for a 2026-07-28 subscriptions/listen stream, the URI of each resource update. */
  response?: ServerResponse;
  deliver?: (uri: string) => void;
  pumping: Promise<void>;
  timers: NodeJS.Timeout[];
}

/** A response (result or error) to a request. */
export const isAnswer = (message: JSONRPCMessage) => isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);

/** A client's cancel of one of its requests (notifications/cancelled). */
export const isCancellation = (message: JSONRPCMessage) => (message as { method?: unknown }).method === 'notifications/cancelled' && !('id' in message);

export class SessionHub {
  private readonly streams = new Map<string, LiveStream>();
  private readonly waiting = new Map<string, Set<(message: JSONRPCMessage) => void>>();
  private readonly listener: Listener;

  constructor(private readonly options: { connectionString: string; em: () => EntityManager; logger: Logger }) {
    this.listener = new Listener({
      connectionString: options.connectionString,
      channels: [STREAM_CHANNEL, REPLY_CHANNEL],
      onNotification: (channel, payload) => this.heard(channel, payload),
      // Events stored while the connection was down are sent now.
      onConnected: () => {
        for (const stream of this.streams.values()) this.pump(stream);
      },
      logger: options.logger,
      purpose: 'MCP LISTEN',
    });
  }

  /** Opens the LISTEN connection (again after a loss, every 2 seconds until it works). */
  start(): void {
    this.listener.start();
  }

  async stop(): Promise<void> {
    for (const stream of [...this.streams.values()]) this.end(stream);
    await this.listener.stop();
  }

  /**
   * Serves an SSE stream on `response`: the events after `afterSequence` (a resume), then each new one as it is stored, with
   * a keep-alive comment every 25 seconds, until the client goes, or, for a request stream, its response has been sent.
   */
  openStream(response: ServerResponse, stream: { sessionId: string; organizationId: string; streamId: string; requestStream: boolean; afterSequence: string }): void {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', 'mcp-session-id': stream.sessionId });
    // A comment at once, so a proxy that holds the headers until the first bytes of the body passes them on now.
    response.write(': stream open\n\n');
    // A second stream with the same id (a client reconnecting before the old connection ended) replaces the first.
    const previous = this.streams.get(stream.streamId);
    if (previous) this.end(previous);
    const live: LiveStream = { ...stream, lastSequence: stream.afterSequence, response, pumping: Promise.resolve(), timers: [] };
    this.streams.set(stream.streamId, live);
    live.timers.push(setInterval(() => response.write(': keepalive\n\n'), KEEPALIVE_MS));
    if (stream.requestStream) live.timers.push(setInterval(() => this.pump(live), RESUMED_POLL_MS));
    response.on('close', () => this.end(live));
    this.pump(live);
  }

  /**
   * A 2026-07-28 subscriptions/listen stream (its subscriptions in the row `rowId`, like a session's): each resource update
   * stored for it is handed to `deliver`, on this process, until the returned function is called.
   */
  listen(rowId: string, organizationId: string, deliver: (uri: string) => void): () => void {
    const live: LiveStream = { sessionId: rowId, organizationId, streamId: standaloneStreamOf(rowId), requestStream: false, lastSequence: '0', deliver, pumping: Promise.resolve(), timers: [] };
    this.streams.set(live.streamId, live);
    this.pump(live);
    return () => this.end(live);
  }

  /** Sends the stored events of a stream held here that it has not sent yet (one pump at a time per stream, in order). */
  private pump(stream: LiveStream): void {
    stream.pumping = stream.pumping.then(async () => {
      if (this.streams.get(stream.streamId) !== stream) return;
      const events = await eventsAfter(this.options.em(), stream.sessionId, stream.streamId, stream.lastSequence);
      for (const event of events) this.write(stream, event);
    }).catch((error: Error) => this.options.logger.warn({ err: error.message, streamId: stream.streamId }, 'MCP stream events could not be read'));
  }

  private write(stream: LiveStream, event: StoredEvent): void {
    if (this.streams.get(stream.streamId) !== stream || BigInt(event.sequence) <= BigInt(stream.lastSequence)) return;
    stream.lastSequence = event.sequence;
    if (stream.deliver) {
      const uri = (event.message as { params?: { uri?: unknown } }).params?.uri;
      if (typeof uri === 'string') stream.deliver(uri);
      return;
    }
    stream.response?.write(`event: message\nid: ${event.id}\ndata: ${JSON.stringify(event.message)}\n\n`);
    if (stream.requestStream && isAnswer(event.message)) this.end(stream);
  }

  private end(stream: LiveStream): void {
    for (const timer of stream.timers) clearInterval(timer);
    if (this.streams.get(stream.streamId) === stream) this.streams.delete(stream.streamId);
    if (stream.response && !stream.response.writableEnded) stream.response.end();
  }

  /** Ends the streams of sessions that ended (DELETE, revoked credential, idle) and are held here. */
  endSessions(ids: Iterable<string>): void {
    const ended = new Set(ids);
    for (const stream of [...this.streams.values()]) if (ended.has(stream.sessionId)) this.end(stream);
  }

  /** While `deliver` is registered, answers to server requests of `sessionId` reaching any process are handed to it. */
  awaitReplies(sessionId: string, deliver: (message: JSONRPCMessage) => void): () => void {
    const set = this.waiting.get(sessionId) ?? new Set();
    set.add(deliver);
    this.waiting.set(sessionId, set);
    return () => {
      set.delete(deliver);
      if (set.size === 0 && this.waiting.get(sessionId) === set) this.waiting.delete(sessionId);
    };
  }

  /** A client's answers to server requests: delivered here when the asking transport is here, else announced to the others. */
  async reply(sessionId: string, messages: JSONRPCMessage[]): Promise<void> {
    const local = this.waiting.get(sessionId);
    if (local?.size) return this.deliver(local, messages);
    await this.options.em().getConnection().execute('select pg_notify(?, ?)', [REPLY_CHANNEL, JSON.stringify({ sessionId, messages })]);
  }

  /**
   * A client's cancels: announced to every process (this one hears it too), whose transports of the session hand them to
   * their server; the one running the named call aborts it (its tool's `signal`), the others ignore an id they do not run.
   */
  async cancel(sessionId: string, messages: JSONRPCMessage[]): Promise<void> {
    await this.options.em().getConnection().execute('select pg_notify(?, ?)', [REPLY_CHANNEL, JSON.stringify({ sessionId, messages })]);
  }

  private heard(channel: string, payload: string): void {
    if (channel === STREAM_CHANNEL) {
      const stream = this.streams.get(payload);
      if (stream) this.pump(stream);
      return;
    }
    if (channel === REPLY_CHANNEL) {
      const { sessionId, messages } = JSON.parse(payload) as { sessionId: string; messages: JSONRPCMessage[] };
      this.deliver(this.waiting.get(sessionId), messages);
      return;
    }
  }

  /** Hands a client's answers to the transports of its session waiting here. */
  private deliver(waiting: Set<(message: JSONRPCMessage) => void> | undefined, messages: JSONRPCMessage[]): void {
    for (const message of messages) for (const deliver of waiting ?? []) deliver(message);
  }
}
