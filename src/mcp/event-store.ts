// The SSE events of MCP streams, kept in Postgres for a short while (the unlogged mcp_event table, pruned after
// EVENT_RETENTION_MS) so that a stream cut on one process resumes with Last-Event-ID on any other. An event id is
// `<stream id>/<sequence>`: the stream is known from the id alone, and sequences order the events of a stream (a GET
// stream's events are numbered by the table's id sequence; a request stream's, 1, 2, 3... by the one process answering
// the request, the only one writing to it).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { sqlOf, statement } from '../db/sql.js';

export const EVENT_RETENTION_MS = 15 * 60_000;
/** The NOTIFY channel that tells the process holding a stream that events were stored for it. */
export const STREAM_CHANNEL = 'herald_mcp_stream';

const STORE_AND_ANNOUNCE = statement(
  'mcp_event_store_announce',
  `with stored as (insert into mcp_event (session_id, stream_id, message) values ($1, $2, $3) returning id)
   select id, pg_notify('${STREAM_CHANNEL}', $2) from stored`,
);
/** Request-stream events, numbered by their writer: $4 sequences and $5 messages, then announced. */
const STORE_NUMBERED = statement(
  'mcp_event_store_numbered',
  `with stored as (insert into mcp_event (session_id, stream_id, sequence, message)
     select $1, $2, sequence, message from unnest($3::bigint[], $4::jsonb[]) as event(sequence, message) returning id)
   select pg_notify('${STREAM_CHANNEL}', $2) from stored limit 1`,
);
const AFTER = statement(
  'mcp_event_after',
  `select coalesce(sequence, id) as sequence, message from mcp_event where stream_id = $1 and session_id = $2 and coalesce(sequence, id) > $3
   order by coalesce(sequence, id) limit 500`,
);

export const standaloneStreamOf = (sessionId: string) => `${sessionId}.get`;
const eventId = (streamId: string, sequence: string | number) => `${streamId}/${sequence}`;

/** The stream and sequence of an event id, or undefined when it is not one of ours. */
export function parseEventId(id: string): { streamId: string; sequence: string } | undefined {
  const slash = id.lastIndexOf('/');
  const sequence = id.slice(slash + 1);
  if (slash <= 0 || !/^\d{1,19}$/.test(sequence)) return undefined;
  return { streamId: id.slice(0, slash), sequence };
}

export interface StoredEvent {
  id: string;
  sequence: string;
  message: JSONRPCMessage;
}

/** Stores an event of a session's stream and tells the process holding the stream (another one) to send it. */
export async function storeEvent(em: EntityManager, sessionId: string, streamId: string, message: JSONRPCMessage): Promise<void> {
  await sqlOf(em).rows(STORE_AND_ANNOUNCE, [sessionId, streamId, JSON.stringify(message)]);
}

const LATEST = statement('mcp_event_latest', 'select coalesce(max(coalesce(sequence, id)), 0) as id from mcp_event where stream_id = $1');

/** The sequence of a stream's last stored event ('0' when none): a new GET stream starts after it. */
export async function latestSequence(em: EntityManager, streamId: string): Promise<string> {
  const [row] = await sqlOf(em).rows<{ id: string }>(LATEST, [streamId]);
  return String(row?.id ?? 0);
}

/** The events of a stream after `sequence`, oldest first. */
export async function eventsAfter(em: EntityManager, sessionId: string, streamId: string, sequence: string): Promise<StoredEvent[]> {
  const rows = await sqlOf(em).rows<{ sequence: string; message: JSONRPCMessage }>(AFTER, [streamId, sessionId, sequence]);
  return rows.map((row) => ({ id: eventId(streamId, row.sequence), sequence: String(row.sequence), message: row.message }));
}

/**
 * The SDK transport's event store for the request streams of one POST of one session, writing behind: while the client
 * is connected its events are only numbered and kept here (a response delivered on a live stream is never read again, and
 * storing it would cost every MCP call an INSERT); once the client has gone before the end (`clientGone`), what was kept
 * and every later event are stored and announced, so the client can resume the stream with Last-Event-ID on any process.
 * Priming events (empty, sent so a client holds an id before anything else) are never stored: their id is the stream's 0.
 */
export class PostgresEventStore implements EventStore {
  private readonly kept: { streamId: string; sequence: number; message: JSONRPCMessage }[] = [];
  private readonly counters = new Map<string, number>();
  /** Writes in order: a resume must never see event 3 before event 2. */
  private writing: Promise<void> = Promise.resolve();
  private flushed = false;

  constructor(
    private readonly em: () => EntityManager,
    private readonly sessionId: string,
  ) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if (Object.keys(message).length === 0) return eventId(streamId, 0);
    const sequence = (this.counters.get(streamId) ?? 0) + 1;
    this.counters.set(streamId, sequence);
    this.kept.push({ streamId, sequence, message });
    if (this.flushed) await this.flush();
    return eventId(streamId, sequence);
  }

  /** The client went away before the end: stores what was kept, and from now on every event as it comes. */
  clientGone(): Promise<void> {
    this.flushed = true;
    return this.flush();
  }

  private flush(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const events = this.kept.splice(0);
      const byStream = new Map<string, typeof events>();
      for (const event of events) byStream.set(event.streamId, [...(byStream.get(event.streamId) ?? []), event]);
      for (const [streamId, stream] of byStream) {
        await sqlOf(this.em()).rows(STORE_NUMBERED, [this.sessionId, streamId, stream.map((event) => event.sequence), stream.map((event) => JSON.stringify(event.message))]);
      }
    });
    return this.writing;
  }

  async getStreamIdForEventId(id: string): Promise<string | undefined> {
    return parseEventId(id)?.streamId;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const parsed = parseEventId(lastEventId);
    if (!parsed) throw new Error('unknown event id');
    for (const event of await eventsAfter(this.em(), this.sessionId, parsed.streamId, parsed.sequence)) await send(event.id, event.message);
    return parsed.streamId;
  }
}
