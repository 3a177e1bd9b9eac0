import { Migration } from '@mikro-orm/migrations';

/** What the platform did other than asked when an item was published (a video kept private), shown with the item. */
export class Migration20261126000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table post add column release_warnings jsonb null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table post drop column if exists release_warnings;');
  }
}
