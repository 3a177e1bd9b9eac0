import { Migration } from '@mikro-orm/migrations';

/**
 * Customer preview links (issue 35): `preview_link` (the token as its SHA-256, the channels or the customer it shows, the
 * date range, the expiry, the approve power, revocation) and `preview_feedback` (each comment, approval and request for
 * changes made through a link, by post).
 */
export class Migration20261202130000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table preview_link (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      name text not null,
      token_hash text not null unique,
      channel_ids jsonb null,
      customer_id text null,
      range_start timestamptz not null,
      range_end timestamptz not null,
      expires_at timestamptz not null,
      can_approve boolean not null default false,
      created_by text not null,
      created_by_name text not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz null,
      revoked_at timestamptz null
    );`);
    this.addSql('create index preview_link_organization_idx on preview_link (organization_id, created_at);');
    this.addSql(`create table preview_feedback (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      link_id text not null references preview_link(id) on delete cascade,
      post_id text not null,
      integration_id text not null,
      kind text not null,
      text text not null,
      outcome text null,
      created_at timestamptz not null default now()
    );`);
    this.addSql('create index preview_feedback_link_idx on preview_feedback (link_id, created_at);');
    this.addSql('create index preview_feedback_post_idx on preview_feedback (organization_id, post_id, created_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists preview_feedback;');
    this.addSql('drop table if exists preview_link;');
  }
}
