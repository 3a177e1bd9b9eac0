import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table organization (
      id text primary key,
      name text not null,
      billing_customer text null,
      created_at timestamptz not null default now()
    );`);
    this.addSql(`create table api_key (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      key_hash text not null unique,
      last_four text not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz null
    );`);
    this.addSql(`create index api_key_organization_idx on api_key (organization_id);`);
    this.addSql(`create table customer (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      name text not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql(`create table integration (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      provider_identifier text not null,
      internal_id text not null,
      name text not null,
      picture text null,
      profile text not null,
      credentials text not null,
      token_expires_at timestamptz null,
      disabled boolean not null default false,
      refresh_needed boolean not null default false,
      in_between_steps boolean not null default false,
      customer_id text null references customer(id) on delete set null,
      posting_times jsonb not null default '[120,400,700]',
      additional_settings jsonb not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz null
    );`);
    this.addSql(`create unique index integration_account_unique on integration (organization_id, provider_identifier, internal_id) where deleted_at is null;`);
    this.addSql(`create table post (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      integration_id text not null references integration(id) on delete cascade,
      group_id text not null,
      parent_post_id text null references post(id) on delete set null,
      position integer not null,
      content text not null,
      settings jsonb not null default '{}',
      media jsonb not null default '[]',
      delay integer not null default 0,
      state text not null check (state in ('DRAFT','QUEUE','PUBLISHED','ERROR')),
      publish_date timestamptz not null,
      release_id text null,
      release_url text null,
      release_meta jsonb null,
      error text null,
      attempt_started_at timestamptz null,
      published_at timestamptz null,
      creation_method text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz null
    );`);
    this.addSql(`create index post_org_date_idx on post (organization_id, publish_date) where deleted_at is null;`);
    this.addSql(`create index post_group_idx on post (organization_id, group_id);`);
    this.addSql(`create index post_due_idx on post (publish_date) where deleted_at is null and state = 'QUEUE' and position = 0;`);
    this.addSql(`create table notification (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      type text not null,
      content text not null,
      link text null,
      created_at timestamptz not null default now()
    );`);
    this.addSql(`create index notification_org_idx on notification (organization_id, created_at desc);`);
    this.addSql(`create table rate_limit_counter (
      organization_id text not null,
      name text not null,
      window_start timestamptz not null,
      count integer not null,
      primary key (organization_id, name, window_start)
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists rate_limit_counter, notification, post, integration, customer, api_key, organization cascade;');
  }
}
