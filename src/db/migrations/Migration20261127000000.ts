import { Migration } from '@mikro-orm/migrations';

/**
 * Least privilege (issue 23): many named API keys per organization, each with scopes, an optional set of channels or
 * customers, an expiry, its own rate limits, a per-key approval gate and its last use; the key that existed becomes the
 * organization (owner) key with every scope. Who created each post and uploaded each file, which channel a notification
 * is about (so a key limited to channels sees only its own), and the audit trail.
 */
export class Migration20261127000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table api_key
      add column name text not null default 'Organization key (owner)',
      add column organization_key boolean not null default false,
      add column scopes jsonb not null default '["read","posts:write","approve","channels:manage","organization:manage"]',
      add column channel_ids jsonb null,
      add column customer_ids jsonb null,
      add column expires_at timestamptz null,
      add column requests_per_minute int null,
      add column posts_per_hour int null,
      add column approval_required boolean null,
      add column created_by text null,
      add column rotated_at timestamptz null,
      add column last_used_at timestamptz null,
      add column last_used_address text null,
      add column last_used_client text null;`);
    // Every key made before is the organization's one key: it keeps every power it had.
    this.addSql('update api_key set organization_key = true;');
    this.addSql('alter table api_key alter column name drop default, alter column scopes drop default;');

    this.addSql('alter table post add column created_by text null;');
    this.addSql('alter table media add column uploaded_by text null;');
    this.addSql('alter table notification add column integration_id text null;');

    this.addSql(`create table audit_event (
      id text primary key,
      organization_id text not null,
      at timestamptz not null,
      actor_kind text not null,
      actor_id text null,
      actor_name text not null,
      via text not null,
      address text null,
      client text null,
      action text not null,
      target_kind text not null,
      target_id text null,
      integration_id text null,
      summary text not null,
      changes jsonb not null default '{}'
    );`);
    this.addSql('create index audit_event_organization_idx on audit_event (organization_id, at desc, id desc);');
    this.addSql('create index audit_event_target_idx on audit_event (organization_id, target_kind, target_id, at desc, id desc);');
    this.addSql('create index audit_event_at_idx on audit_event (at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists audit_event;');
    this.addSql('alter table notification drop column if exists integration_id;');
    this.addSql('alter table media drop column if exists uploaded_by;');
    this.addSql('alter table post drop column if exists created_by;');
    // Only the organization keys existed before: the others would gain every power without their limits.
    this.addSql('delete from api_key where not organization_key;');
    this.addSql(`alter table api_key drop column if exists name, drop column if exists organization_key, drop column if exists scopes,
      drop column if exists channel_ids, drop column if exists customer_ids, drop column if exists expires_at, drop column if exists requests_per_minute,
      drop column if exists posts_per_hour, drop column if exists approval_required, drop column if exists created_by, drop column if exists rotated_at,
      drop column if exists last_used_at, drop column if exists last_used_address, drop column if exists last_used_client;`);
  }
}
