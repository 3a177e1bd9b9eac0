import { Migration } from '@mikro-orm/migrations';

/**
 * Saved sets and signatures (issue 35). `post_set`: a preset a new post starts from (channels, HTML text, media, settings
 * per platform). `signature`: plain text added at the end or start of a post when it is created, the organization's
 * default (`integration_id` '') or a channel's own; read with the create's other rows (create-statements.ts).
 */
export class Migration20261202120000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table post_set (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      name text not null,
      channels jsonb not null default '[]',
      content text not null default '',
      media jsonb not null default '[]',
      settings jsonb not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );`);
    this.addSql('create index post_set_organization_idx on post_set (organization_id, name);');
    this.addSql(`create table signature (
      organization_id text not null references organization(id) on delete cascade,
      integration_id text not null default '',
      text text not null,
      position text not null check (position in ('end', 'start')),
      updated_at timestamptz not null default now(),
      primary key (organization_id, integration_id)
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists signature;');
    this.addSql('drop table if exists post_set;');
  }
}
