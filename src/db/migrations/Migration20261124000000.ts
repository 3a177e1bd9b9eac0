import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit windows are written by every REST request: unlogged, the write costs no WAL and no disk flush. A crash of
 * Postgres empties the table (the limits start counting afresh), and a standby does not see it; both are acceptable for a
 * sliding window of at most an hour.
 */
export class Migration20261124000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table rate_limit_window set unlogged;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table rate_limit_window set logged;');
  }
}
