import { Migration } from '@mikro-orm/migrations';

/**
 * What a notification names, as data (issue 36): `at`, the instant its text names (a post's date, a token's expiry), so
 * the console writes it in the reader's zone; `target_kind`/`target_id`, the thing it is about (a post, a channel, a
 * feed, a recurring post, a preview link; the audit trail's target shape), so the console links to its page.
 */
export class Migration20261203100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table notification add column if not exists at timestamptz null, add column if not exists target_kind text null, add column if not exists target_id text null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table notification drop column if exists at, drop column if exists target_kind, drop column if exists target_id;');
  }
}
