import { Migration } from '@mikro-orm/migrations';

/**
 * Setup links: an invitation made by the operator (the first-start banner, `npm run herald -- setup-link`,
 * `org:create`) has no user behind it, so `created_by` may be null; such a link makes its first user an owner.
 */
export class Migration20261126100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table invitation alter column created_by drop not null;');
  }

  override async down(): Promise<void> {
    this.addSql('delete from invitation where created_by is null;');
    this.addSql('alter table invitation alter column created_by set not null;');
  }
}
