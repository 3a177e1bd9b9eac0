import { Migration } from '@mikro-orm/migrations';

/**
 * The duplicate guard compares texts more strictly (entities decoded, invisible characters removed, look-alike letters
 * folded): the keys stored before are of the old comparison, so they are dropped and those posts compared the slow way
 * (as posts made before keys existed). A root remembers that it was created with `allowDuplicate: true`.
 */
export class Migration20261126010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table post add column allow_duplicate boolean not null default false;');
    this.addSql('update post set duplicate_key = null where duplicate_key is not null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table post drop column if exists allow_duplicate;');
  }
}
