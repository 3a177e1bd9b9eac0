import { Migration } from '@mikro-orm/migrations';

/**
 * Posting times a channel was given by default are wall-clock times of the channel's zone (issue 36): a new channel
 * starts in its organization's zone, so a Berlin organization's defaults are Berlin times, not UTC ones.
 *
 * Existing channels: posting times nobody chose (no `channel.posting_times_changed` in the audit trail, still in "UTC")
 * were the defaults copied in as UTC minutes; they are re-read as the same wall-clock times of the channel's zone (its
 * own, else its organization's), exactly what a channel connected today gets. Times a person or an agent set keep their
 * zone and so keep meaning what they meant: they were chosen with that zone (explicitly, or as UTC before zones existed),
 * and converting them by today's offset would move them by an hour at the next daylight-saving change.
 */
export class Migration20261202150000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update integration i set posting_times_zone = coalesce(i.time_zone, o.time_zone)
      from organization o
      where o.id = i.organization_id and i.posting_times_zone = 'UTC' and coalesce(i.time_zone, o.time_zone) <> 'UTC'
        and not exists (select 1 from audit_event a where a.organization_id = i.organization_id and a.integration_id = i.id
          and a.action = 'channel.posting_times_changed');`);
  }

  override async down(): Promise<void> {
    // The zones set here cannot be told from zones set later; the times stay valid wall-clock times either way.
  }
}
