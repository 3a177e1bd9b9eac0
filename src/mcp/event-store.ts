// The SSE events of MCP streams, kept in Postgres for a short while (the unlogged mcp_event table, pruned after
// EVENT_RETENTION_MS) so that a stream cut on one process resumes with Last-Event-ID on any other. An event id is
// `<stream id>/<row id>`: the stream is known from the id alone, and row ids order the events of a stream.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { sqlOf, statement } from '../db/sql.js';

export const EVENT_RETENTION_MS = 15 * 60_000;
/** The NOTIFY channel that tells the process holding a stream that events were stored for it. */
export const STREAM_CHANNEL = 'herald_mcp_stream';

const STORE = statement('mcp_event_store', 'insert into mcp_event (session_id, stream_id, message) values ($1, $2, $3) returning id');
const STORE_AND_ANNOUNCE = statement(
  'mcp_event_store_announce',
  `with stored as (insert into mcp_event (session_id, stream_id, message) values ($1, $2, $3) returning id)
   select id, pg_notify('${STREAM_CHANNEL}', $2) from stored`,
);
const AFTER = statement('mcp_event_after', 'select id, message from mcp_event where stream_id = $1 and session_id = $2 and id > $3 order by id limit 500');

export const standaloneStreamOf = (sessionId: string) => `${sessionId}.get`;
export const eventId = (streamId: string, sequence: string | number) => `${streamId}/${sequence}`;

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

/** Stores an event of a session's stream; `announce` also tells the process holding the stream (another one) to send it. */
export async function storeEvent(em: EntityManager, sessionId: string, streamId: string, message: JSONRPCMessage, announce: boolean): Promise<string> {
  const [row] = await sqlOf(em).rows<{ id: string }>(announce ? STORE_AND_ANNOUNCE : STORE, [sessionId, streamId, JSON.stringify(message)]);
  return eventId(streamId, row.id);
}

const LATEST = statement('mcp_event_latest', 'select coalesce(max(id), 0) as id from mcp_event where stream_id = $1');

/** The sequence of a stream's last stored event ('0' when none): a new GET stream starts after it. */
export async function latestSequence(em: EntityManager, streamId: string): Promise<string> {
  const [row] = await sqlOf(em).rows<{ id: string }>(LATEST, [streamId]);
  return String(row?.id ?? 0);
}

/** The events of a stream after `sequence`, oldest first. */
export async function eventsAfter(em: EntityManager, sessionId: string, streamId: string, sequence: string): Promise<StoredEvent[]> {
  const rows = await sqlOf(em).rows<{ id: string; message: JSONRPCMessage }>(AFTER, [streamId, sessionId, sequence]);
  return rows.map((row) => ({ id: eventId(streamId, row.id), sequence: String(row.id), message: row.message }));
}

/**
 * The SDK transport's event store for the request streams of one POST of one session. Priming events (empty, sent so a
 * client holds an id before anything else) are not stored: their id points before the stream's first event. Events are
 * announced to other processes only once this process's client has gone (`clientGone`), i.e. when a resume elsewhere may
 * be waiting for them; a process that resumed a stream also re-reads it every second in case an announcement was missed.
 */
export class PostgresEventStore implements EventStore {
  constructor(
    private readonly em: () => EntityManager,
    private readonly sessionId: string,
    private readonly clientGone: () => boolean,
  ) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if (Object.keys(message).length === 0) return eventId(streamId, 0);
    return storeEvent(this.em(), this.sessionId, streamId, message, this.clientGone());
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
