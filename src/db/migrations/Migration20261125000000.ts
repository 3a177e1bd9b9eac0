import { Migration } from '@mikro-orm/migrations';

/**
 * The duplicate guard's key on each root item (a hash of its text as the guard compares it, tools/internal/duplicates.ts),
 * so a new post is compared with the channel's posts by one indexed lookup instead of reading and converting up to 500 of
 * them. Posts made before this have no key; the guard still compares those the slow way (a partial index finds them).
 */
export class Migration20261125000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table post add column duplicate_key text null;');
    this.addSql(
      'create index post_duplicate_key_idx on post (integration_id, duplicate_key, publish_date) where position = 0 and deleted_at is null and duplicate_key is not null;',
    );
    this.addSql('create index post_without_duplicate_key_idx on post (integration_id, publish_date) where position = 0 and deleted_at is null and duplicate_key is null;');
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists post_without_duplicate_key_idx;');
    this.addSql('drop index if exists post_duplicate_key_idx;');
    this.addSql('alter table post drop column if exists duplicate_key;');
  }
}
