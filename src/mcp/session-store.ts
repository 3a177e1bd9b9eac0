// MCP sessions in Postgres, so every web process serves every session: one row per session with the credential that opened
// it, what the client said at initialization, and `state`, the per-session state the MCP features keep (see SessionState).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { coalescedPerDatabase, sqlOf, statement } from '../db/sql.js';
import { KEY_COLUMNS, LIVE_KEY, keyCaller, type KeyRow } from '../../tools/internal/credentials.js';
import type { Caller } from '../../tools/types.js';

/**
 * Per-session state, kept in the row's `state` column (JSON) and readable by whichever process serves the next request.
 * A feature that keeps something per session (resource subscriptions, a pending confirmation...) adds its key here and
 * writes it with `SessionContext.updateState`; keep each value small (it is read on every request of the session).
 */
export interface SessionState {
  /** The level set with logging/setLevel: notifications/message at or above it are sent to the session. */
  logLevel?: LoggingLevel;
  [feature: string]: unknown;
}

export interface SessionRow {
  id: string;
  credentialId: string;
  organizationId: string;
  protocolVersion: string;
  clientInfo: { name: string; version: string; [key: string]: unknown };
  clientCapabilities: Record<string, unknown>;
  state: SessionState;
  lastSeenAt: Date;
}

const INSERT = statement(
  'mcp_session_insert',
  `insert into mcp_session (id, credential_id, organization_id, protocol_version, client_info, client_capabilities, created_at, last_seen_at)
   values ($1, $2, $3, $4, $5, $6, $7, $7)`,
);
const FIND = statement(
  'mcp_session_find',
  'select id, credential_id, organization_id, protocol_version, client_info, client_capabilities, state, last_seen_at from mcp_session where id = $1',
);
// For a batch of requests ($1 their keys' hashes, $2 their session ids, in order): one row per request whose key is live.
const FIND_WITH_API_KEYS = statement(
  'mcp_sessions_find_with_api_keys',
  `select asked.n, ${KEY_COLUMNS}, s.id, s.credential_id, s.organization_id, s.protocol_version,
     s.client_info, s.client_capabilities, s.state, s.last_seen_at
   from unnest($1::text[], $2::text[]) with ordinality as asked(hash, session_id, n)
   join api_key k on ${LIVE_KEY.replace('$1', 'asked.hash')}
   left join mcp_session s on s.id = asked.session_id and s.credential_id = k.id`,
);
/**
 * The key-and-session lookups of requests that come while one is in flight go together in the next statement, sent after
 * every one of them arrived (it sees every revocation and session end committed before): one round trip for all of them.
 */
const findWithApiKeys = coalescedPerDatabase(async (sql, asked: { keyHash: string; id: string }[]) => {
  const rows = await sql.rows<Record<string, any>>(FIND_WITH_API_KEYS, [asked.map((one) => one.keyHash), asked.map((one) => one.id)]);
  const byIndex = new Map(rows.map((row) => [Number(row.n) - 1, row]));
  return asked.map((_one, index) => byIndex.get(index));
});
// A row without a session's client: what a 2026-07-28 credential keeps between its stateless requests (the two-call rule).
const UPSERT_STATE = statement(
  'mcp_session_upsert_state',
  `insert into mcp_session (id, credential_id, organization_id, protocol_version, state, created_at, last_seen_at) values ($1, $2, $3, $4, $5::jsonb, now(), now())
   on conflict (id) do update set state = mcp_session.state || $5::jsonb, last_seen_at = now() where mcp_session.credential_id = $2 returning state`,
);
const TOUCH = statement('mcp_session_touch', 'update mcp_session set last_seen_at = $2 where id = $1');
const UPDATE_STATE = statement('mcp_session_state', `update mcp_session set state = state || $2::jsonb where id = $1 returning state`);
const DELETE = statement('mcp_session_delete', 'with gone as (delete from mcp_session where id = $1 returning id) delete from mcp_event where session_id in (select id from gone)');
const DELETE_FOR_CREDENTIAL = statement('mcp_session_delete_credential', 'delete from mcp_session where credential_id = $1 returning id');
const DELETE_IDLE = statement('mcp_session_delete_idle', 'delete from mcp_session where last_seen_at < $1 returning id');
const DELETE_OLD_EVENTS = statement('mcp_event_prune', 'delete from mcp_event where created_at < $1 or session_id not in (select id from mcp_session)');

/** How often last_seen_at is written: enough for an idle timeout counted in minutes, without a write per request. */
const TOUCH_EVERY_MS = 60_000;

function toRow(row: Record<string, any>): SessionRow {
  return {
    id: row.id,
    credentialId: row.credential_id,
    organizationId: row.organization_id,
    protocolVersion: row.protocol_version,
    clientInfo: row.client_info,
    clientCapabilities: row.client_capabilities,
    state: row.state ?? {},
    lastSeenAt: new Date(row.last_seen_at),
  };
}

export class SessionStore {
  constructor(private readonly em: () => EntityManager) {}

  private get sql() {
    return sqlOf(this.em());
  }

  async create(session: Omit<SessionRow, 'state' | 'lastSeenAt'>, now: Date): Promise<void> {
    await this.sql.rows(INSERT, [session.id, session.credentialId, session.organizationId, session.protocolVersion, session.clientInfo, session.clientCapabilities, now]);
  }

  async find(id: string): Promise<SessionRow | undefined> {
    const [row] = await this.sql.rows<Record<string, any>>(FIND, [id]);
    return row ? toRow(row) : undefined;
  }

  /**
   * An API key (its SHA-256) and its session in one round trip: undefined for an unknown or revoked key; `session` undefined
   * when the key is good but the session is unknown or was opened by another credential.
   */
  async findWithApiKey(keyHash: string, id: string): Promise<{ caller: Caller; session?: SessionRow } | undefined> {
    const row = await findWithApiKeys(this.em(), { keyHash, id });
    if (!row) return undefined;
    return { caller: keyCaller(row as KeyRow), session: row.id ? toRow(row) : undefined };
  }

  /** Records that the session was used (at most once a minute). */
  async touch(session: SessionRow, now: Date): Promise<void> {
    if (now.getTime() - session.lastSeenAt.getTime() < TOUCH_EVERY_MS) return;
    await this.sql.rows(TOUCH, [session.id, now]);
  }

  /** Merges `patch` into the session's state (top-level keys; a key set to null is kept as null). */
  async updateState(id: string, patch: SessionState): Promise<SessionState> {
    const [row] = await this.sql.rows<{ state: SessionState }>(UPDATE_STATE, [id, JSON.stringify(patch)]);
    return row?.state ?? {};
  }

  /** The state kept for a credential between stateless requests (2026-07-28), merged with `patch` (created on first use). */
  async credentialState(caller: Caller, protocolVersion: string, patch: SessionState = {}): Promise<SessionState> {
    const [row] = await this.sql.rows<{ state: SessionState }>(UPSERT_STATE, [`credential:${caller.credentialId}`, caller.credentialId, caller.organizationId, protocolVersion, JSON.stringify(patch)]);
    return row?.state ?? {};
  }

  async delete(id: string): Promise<void> {
    await this.sql.rows(DELETE, [id]);
  }

  async deleteForCredential(credentialId: string): Promise<string[]> {
    return (await this.sql.rows<{ id: string }>(DELETE_FOR_CREDENTIAL, [credentialId])).map((row) => row.id);
  }

  /** Ends the sessions idle since before `idleSince` and forgets events older than `eventsSince`. */
  async prune(idleSince: Date, eventsSince: Date): Promise<string[]> {
    const ended = (await this.sql.rows<{ id: string }>(DELETE_IDLE, [idleSince])).map((row) => row.id);
    await this.sql.rows(DELETE_OLD_EVENTS, [eventsSince]);
    return ended;
  }
}
