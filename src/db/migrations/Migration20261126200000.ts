import { Migration } from '@mikro-orm/migrations';

/**
 * Time zones (IANA names): an organization's default zone, a person's own (null: the browser's), a channel's (null: the
 * organization's). Posting times become wall-clock times with their zone, so 09:00 stays 09:00 across daylight-saving
 * changes. The minutes stored so far were minutes after midnight UTC: they keep their value with the zone "UTC", which
 * is exactly what they meant.
 */
export class Migration20261126200000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table organization add column time_zone text not null default 'UTC';`);
    this.addSql('alter table app_user add column time_zone text null;');
    this.addSql('alter table integration add column time_zone text null;');
    this.addSql(`alter table integration add column posting_times_zone text not null default 'UTC';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table integration drop column if exists posting_times_zone;');
    this.addSql('alter table integration drop column if exists time_zone;');
    this.addSql('alter table app_user drop column if exists time_zone;');
    this.addSql('alter table organization drop column if exists time_zone;');
  }
}
