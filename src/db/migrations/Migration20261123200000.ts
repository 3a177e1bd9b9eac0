import { Migration } from '@mikro-orm/migrations';

/**
 * The agent-grade API: idempotency keys of creating requests, webhooks (endpoints, the events notifications raise, one
 * delivery per endpoint and event, every attempt), short links with their daily click counts, and channel health (why a
 * channel needs reconnecting, which token expiry was already warned about).
 */
export class Migration20261123200000 extends Migration {
  override async up(): Promise<void> {
    // Insert-first: the primary key decides which of two concurrent requests with one key runs; the other waits or is told.
    this.addSql(`create table idempotency_key (
      organization_id text not null references organization(id) on delete cascade,
      key text not null,
      operation text not null,
      request_hash text null,
      state text not null check (state in ('running','done')),
      output text null,
      created_at timestamptz not null,
      completed_at timestamptz null,
      primary key (organization_id, key)
    );`);
    this.addSql(`create index idempotency_key_created_idx on idempotency_key (created_at);`);

    this.addSql(`create table webhook (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      url text not null,
      events jsonb not null,
      description text not null default '',
      secret text not null,
      previous_secret text null,
      previous_secret_expires_at timestamptz null,
      created_at timestamptz not null default now(),
      deleted_at timestamptz null
    );`);
    this.addSql(`create index webhook_organization_idx on webhook (organization_id) where deleted_at is null;`);
    this.addSql(`create table webhook_event (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      type text not null,
      data jsonb not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql(`create index webhook_event_created_idx on webhook_event (created_at);`);
    this.addSql(`create table webhook_delivery (
      id text primary key,
      webhook_id text not null references webhook(id) on delete cascade,
      organization_id text not null references organization(id) on delete cascade,
      event_id text null references webhook_event(id) on delete set null,
      event_type text not null,
      body text not null,
      state text not null check (state in ('pending','delivered','failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz null,
      last_status integer null,
      last_error text null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (event_id, webhook_id)
    );`);
    this.addSql(`create index webhook_delivery_webhook_idx on webhook_delivery (webhook_id, created_at desc, id desc);`);
    this.addSql(`create table webhook_attempt (
      id text primary key,
      delivery_id text not null references webhook_delivery(id) on delete cascade,
      attempted_at timestamptz not null,
      trigger text not null check (trigger in ('automatic','replay')),
      status integer null,
      error text null,
      duration_ms integer not null,
      response_excerpt text null
    );`);
    this.addSql(`create index webhook_attempt_delivery_idx on webhook_attempt (delivery_id, attempted_at);`);
    // An event commits with the notification that raised it (notify() only stages rows); this trigger enqueues its fan-out in
    // the same transaction, and only when the organization has an endpoint listening to that event.
    this.addSql(`create or replace function herald_enqueue_webhook_event() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from webhook where organization_id = new.organization_id and deleted_at is null and events ? new.type) then
          perform graphile_worker.add_job('emit_webhook_event', json_build_object('eventId', new.id), max_attempts := 10);
        end if;
        return new;
      end $$;`);
    this.addSql(`create trigger webhook_event_enqueue after insert on webhook_event for each row execute function herald_enqueue_webhook_event();`);

    this.addSql(`create table short_link (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      post_id text not null,
      root_post_id text not null,
      target_url text not null,
      shortener text not null check (shortener in ('herald','dub')),
      code text null unique,
      short_url text null,
      external_id text null,
      created_at timestamptz not null default now(),
      unique (post_id, target_url)
    );`);
    this.addSql(`create index short_link_root_idx on short_link (root_post_id);`);
    // The only trace of a click: a count per link and UTC day.
    this.addSql(`create table short_link_click (
      short_link_id text not null references short_link(id) on delete cascade,
      day date not null,
      clicks integer not null,
      primary key (short_link_id, day)
    );`);

    this.addSql(`create table channel_health (
      integration_id text primary key references integration(id) on delete cascade,
      reconnect_reason text null,
      reconnect_since timestamptz null,
      expiry_warned_for timestamptz null
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists channel_health;');
    this.addSql('drop table if exists short_link_click;');
    this.addSql('drop table if exists short_link;');
    this.addSql('drop trigger if exists webhook_event_enqueue on webhook_event;');
    this.addSql('drop function if exists herald_enqueue_webhook_event();');
    this.addSql('drop table if exists webhook_attempt;');
    this.addSql('drop table if exists webhook_delivery;');
    this.addSql('drop table if exists webhook_event;');
    this.addSql('drop table if exists webhook;');
    this.addSql('drop table if exists idempotency_key;');
  }
}
