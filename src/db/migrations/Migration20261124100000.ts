import { Migration } from '@mikro-orm/migrations';

/**
 * Several Herald processes on one Postgres:
 * - mcp_session: an MCP session lives here, not in one process's memory, so any web process serves its requests. `state`
 *   holds per-session state (the log level set with logging/setLevel, and whatever else a feature keeps per session).
 * - mcp_event: the SSE events of the sessions' streams for a short while (unlogged: a crash of Postgres forgets them, as it
 *   would end the streams), so a stream cut on one process is resumed with Last-Event-ID on another. `sequence` orders a
 *   request stream's events (numbered by the process answering); a GET stream's are ordered by `id`.
 * - a trigger that turns each new notification row (published, failed, needs reconnection) into an event of the MCP
 *   sessions that asked for log messages, announced with NOTIFY to the web process holding the session's stream, so a
 *   session hears what the worker did, in whichever process the worker runs.
 * - herald_worker: which process each graphile-worker worker belongs to, so a worker process that starts releases the jobs
 *   locked by processes that died, never those of live ones.
 */
export class Migration20261124100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table mcp_session (
      id text primary key,
      credential_id text not null,
      organization_id text not null,
      protocol_version text not null,
      client_info jsonb not null default '{}',
      client_capabilities jsonb not null default '{}',
      state jsonb not null default '{}',
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now()
    );`);
    this.addSql('create index mcp_session_credential_idx on mcp_session (credential_id);');
    this.addSql('create index mcp_session_organization_idx on mcp_session (organization_id);');
    this.addSql('create index mcp_session_last_seen_idx on mcp_session (last_seen_at);');
    this.addSql(`create unlogged table mcp_event (
      id bigserial primary key,
      session_id text not null,
      stream_id text not null,
      sequence bigint null,
      message jsonb not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql('create index mcp_event_stream_idx on mcp_event (stream_id, id);');
    this.addSql('create index mcp_event_created_idx on mcp_event (created_at);');
    // A notification (published, failed, partial, needs reconnection, token expiring) reaches the MCP sessions of its
    // organization that asked for log messages (logging/setLevel) at its level or below: stored as an event of each
    // session's GET stream, in the transaction that made the notification (the worker's, wherever it runs), and announced
    // to the process holding the stream. A session with no stream open gets it when it resumes with Last-Event-ID.
    this.addSql(`create function herald_notification_to_sessions() returns trigger language plpgsql as $$
      declare
        levels constant text[] := array['debug','info','notice','warning','error','critical','alert','emergency'];
        level constant text := case when new.type = 'post_published' then 'info' else 'warning' end;
        stream text;
      begin
        for stream in
          insert into mcp_event (session_id, stream_id, message)
          select s.id, s.id || '.get', jsonb_build_object('jsonrpc', '2.0', 'method', 'notifications/message', 'params',
            jsonb_build_object('level', level, 'logger', 'herald', 'data',
              jsonb_strip_nulls(jsonb_build_object('type', new.type, 'message', new.content, 'link', new.link))))
          from mcp_session s
          where s.organization_id = new.organization_id
            and array_position(levels, s.state->>'logLevel') <= array_position(levels, level)
          returning stream_id
        loop
          perform pg_notify('herald_mcp_stream', stream);
        end loop;
        return new;
      end $$;`);
    this.addSql(`create trigger notification_to_sessions after insert on notification for each row execute function herald_notification_to_sessions();`);
    this.addSql(`create table herald_worker (
      worker_id text primary key,
      process_id text not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql('create index herald_worker_process_idx on herald_worker (process_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger if exists notification_to_sessions on notification;');
    this.addSql('drop function if exists herald_notification_to_sessions();');
    this.addSql('drop table if exists mcp_event, mcp_session, herald_worker;');
  }
}
