import { Migration } from '@mikro-orm/migrations';

/**
 * Changing what went out: an edit or deletion asked on a published item's platform (tools/internal/platform-changes.ts) is
 * kept on the item (`platform_change`) while the `platform_change` job makes it, with its recorded steps and its outcome.
 */
export class Migration20261127300000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table post add column platform_change jsonb null;');
    // The job's sweep and the approval queue look for items with a change still to make or to decide.
    this.addSql("create index post_platform_change_state_idx on post ((platform_change->>'state')) where platform_change is not null and deleted_at is null;");
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists post_platform_change_state_idx;');
    this.addSql('alter table post drop column platform_change;');
  }
}
