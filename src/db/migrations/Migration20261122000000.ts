import { Migration } from '@mikro-orm/migrations';

/** The media library (uploads). */
export class Migration20261122000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table media (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      name text not null,
      storage_key text not null,
      path text not null,
      type text not null,
      size bigint not null,
      width integer null,
      height integer null,
      duration double precision null,
      created_at timestamptz not null default now(),
      deleted_at timestamptz null
    );`);
    this.addSql(`create index media_org_created_idx on media (organization_id, created_at desc, id desc) where deleted_at is null;`);
    this.addSql(`create index media_org_path_idx on media (organization_id, path) where deleted_at is null;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists media;');
  }
}
