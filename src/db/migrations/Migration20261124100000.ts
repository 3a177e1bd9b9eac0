import { Migration } from '@mikro-orm/migrations';

/**
 * Several Herald processes on one Postgres:
 * - mcp_session: an MCP session lives here, not in one process's memory, so any web process serves its requests. `state`
 *   holds per-session state (the log level set with logging/setLevel, and whatever else a feature keeps per session).
 * - mcp_event: the SSE events of the sessions' streams for a short while (unlogged: a crash of Postgres forgets them, as it
 *   would end the streams), so a stream cut on one process is resumed with Last-Event-ID on another.
 * - a NOTIFY on each new notification row (published, failed, needs reconnection), so the web process holding an MCP
 *   session's stream hears what the worker did, in whichever process the worker runs.
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
      message jsonb not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql('create index mcp_event_stream_idx on mcp_event (stream_id, id);');
    this.addSql('create index mcp_event_created_idx on mcp_event (created_at);');
    this.addSql(`create function herald_announce_notification() returns trigger language plpgsql as $$
      begin
        perform pg_notify('herald_notification', json_build_object('organizationId', new.organization_id, 'type', new.type,
          'content', left(new.content, 6000), 'link', new.link)::text);
        return new;
      end $$;`);
    this.addSql(`create trigger notification_announce after insert on notification for each row execute function herald_announce_notification();`);
    this.addSql(`create table herald_worker (
      worker_id text primary key,
      process_id text not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql('create index herald_worker_process_idx on herald_worker (process_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger if exists notification_announce on notification;');
    this.addSql('drop function if exists herald_announce_notification();');
    this.addSql('drop table if exists mcp_event, mcp_session, herald_worker;');
  }
}
