import { Migration } from '@mikro-orm/migrations';

/**
 * A chain is identified by its root post (one request may hold several entries for one channel), and publishing keeps
 * per-item progress: recorded platform steps, the attempt count, the last error and when the next attempt is due.
 */
export class Migration20261123000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table post add column root_post_id text null;`);
    // Existing chains: follow parent links from each root (rows written before this migration were chained per entry).
    this.addSql(`with recursive chain as (
        select id, id as root from post where parent_post_id is null
        union all
        select child.id, chain.root from post child join chain on child.parent_post_id = chain.id
      )
      update post set root_post_id = chain.root from chain where post.id = chain.id;`);
    this.addSql(`update post set root_post_id = id where root_post_id is null;`);
    this.addSql(`alter table post alter column root_post_id set not null;`);
    this.addSql(`create index post_root_idx on post (root_post_id, position);`);
    this.addSql(`alter table post add column publish_progress jsonb null;`);
    this.addSql(`alter table post add column attempts integer not null default 0;`);
    this.addSql(`alter table post add column last_error text null;`);
    this.addSql(`alter table post add column tags jsonb not null default '[]';`);
    this.addSql(`alter table post add column short_link boolean not null default false;`);
    this.addSql(`alter table post add column next_attempt_at timestamptz null;`);
    // Device authorization grant (RFC 8628).
    this.addSql(`create table oauth_device_code (
      id text primary key,
      device_code_hash text not null unique,
      user_code text not null,
      app_id text not null references oauth_app(id) on delete cascade,
      scopes jsonb not null,
      client_user_agent text null,
      client_address text null,
      interval_seconds integer not null,
      status text not null check (status in ('pending','approved','denied','used')),
      user_id text null,
      organization_id text null references organization(id) on delete cascade,
      token_id text null,
      last_polled_at timestamptz null,
      decided_at timestamptz null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );`);
    // A user code is unique among the undecided ones, which are the only ones that can be typed.
    this.addSql(`create unique index oauth_device_code_user_code on oauth_device_code (user_code) where status = 'pending';`);
    // Sliding-window rate limits: one row per subject and limit (the fixed clock-hour counters let twice a limit through).
    this.addSql(`drop table if exists rate_limit_counter;`);
    this.addSql(`create table rate_limit_window (
      subject text not null,
      name text not null,
      window_start timestamptz not null,
      count integer not null,
      previous_count integer not null,
      granted boolean not null,
      primary key (subject, name)
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists rate_limit_window, oauth_device_code;');
    this.addSql('drop index if exists post_root_idx;');
    this.addSql('alter table post drop column root_post_id, drop column publish_progress, drop column attempts, drop column last_error, drop column tags, drop column short_link, drop column next_attempt_at;');
  }
}
