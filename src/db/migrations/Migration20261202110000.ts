import { Migration } from '@mikro-orm/migrations';

/**
 * Feeds to posts (issue 35): `feed` (an RSS or Atom URL, the channels, template and mode, and the state of polling it:
 * conditional-request validators, the next poll, the failures in a row and since when it fails) and `feed_entry` (every
 * entry seen, unique per feed by its GUID/id or link, so an entry seen again, edited or reordered is never used twice).
 */
export class Migration20261202110000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table feed (
      id text primary key,
      organization_id text not null,
      name text not null,
      url text not null,
      integration_ids jsonb not null,
      template text not null,
      mode text not null,
      attach_picture boolean not null default true,
      interval_minutes integer not null,
      paused boolean not null default false,
      created_by text not null,
      approval jsonb null,
      feed_title text null,
      etag text null,
      last_modified text null,
      next_poll_at timestamptz not null,
      last_polled_at timestamptz null,
      last_success_at timestamptz null,
      failures integer not null default 0,
      last_error text null,
      failing_since timestamptz null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );`);
    this.addSql('create index feed_organization_idx on feed (organization_id);');
    this.addSql('create index feed_due_idx on feed (next_poll_at) where not paused;');
    this.addSql(`create table feed_entry (
      id text primary key,
      feed_id text not null references feed(id) on delete cascade,
      organization_id text not null,
      entry_key text not null,
      title text not null,
      link text null,
      published_at timestamptz null,
      state text not null,
      posts jsonb not null default '[]',
      seen_at timestamptz not null,
      unique (feed_id, entry_key)
    );`);
    this.addSql('create index feed_entry_recent_idx on feed_entry (feed_id, seen_at desc);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists feed_entry;');
    this.addSql('drop table if exists feed;');
  }
}
