import { Migration } from '@mikro-orm/migrations';

/**
 * Recurring posts (issue 35): `recurring_post` (the rule: channel, texts, every N days or weeks on weekdays at a wall-clock
 * time of a zone, its end, what to do with missed occurrences, and the cursor of the next one to make) and
 * `recurring_occurrence` (each date it made: unique per rule and instant, claimed before its post is made).
 */
export class Migration20261202100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table recurring_post (
      id text primary key,
      organization_id text not null,
      integration_id text not null,
      texts jsonb not null,
      settings jsonb not null default '{}',
      media jsonb not null default '[]',
      unit text not null,
      interval_count integer not null,
      weekdays jsonb not null default '[]',
      minute_of_day integer not null,
      time_zone text not null,
      start_date text not null,
      end_date text null,
      count integer null,
      missed text not null default 'skip',
      paused boolean not null default false,
      made integer not null default 0,
      next_at timestamptz null,
      created_by text not null,
      creation_method text not null,
      approval jsonb null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );`);
    this.addSql('create index recurring_post_organization_idx on recurring_post (organization_id);');
    this.addSql('create index recurring_post_due_idx on recurring_post (next_at) where not paused;');
    this.addSql(`create table recurring_occurrence (
      id text primary key,
      rule_id text not null references recurring_post(id) on delete cascade,
      organization_id text not null,
      sequence integer not null,
      scheduled_for timestamptz not null,
      post_id text null,
      outcome text not null,
      content_key text null,
      error text null,
      created_at timestamptz not null,
      unique (rule_id, scheduled_for)
    );`);
    this.addSql('create index recurring_occurrence_post_idx on recurring_occurrence (post_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists recurring_occurrence;');
    this.addSql('drop table if exists recurring_post;');
  }
}
