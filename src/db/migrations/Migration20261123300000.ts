import { Migration } from '@mikro-orm/migrations';

/**
 * The approval gate: posts created by agents may wait in AWAITING_APPROVAL until an owner decides; the decision (who,
 * when, why) is kept on the root item. The organization's rule and per-OAuth-app overrides live in approval_setting.
 */
export class Migration20261123300000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table post drop constraint if exists post_state_check;`);
    this.addSql(`alter table post add constraint post_state_check check (state in ('DRAFT','QUEUE','PUBLISHED','ERROR','AWAITING_APPROVAL'));`);
    this.addSql(`alter table post add column approval jsonb null;`);
    // The approval queue and the duplicate guard read a channel's recent roots by state and date.
    this.addSql(`create index post_channel_state_date_idx on post (integration_id, state, publish_date) where position = 0 and deleted_at is null;`);
    this.addSql(`create table approval_setting (
      organization_id text not null references organization(id) on delete cascade,
      app_id text not null,
      required boolean not null,
      updated_at timestamptz not null default now(),
      primary key (organization_id, app_id)
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists approval_setting;');
    this.addSql('drop index if exists post_channel_state_date_idx;');
    this.addSql(`update post set state = 'DRAFT' where state = 'AWAITING_APPROVAL';`);
    this.addSql('alter table post drop column approval;');
    this.addSql(`alter table post drop constraint if exists post_state_check;`);
    this.addSql(`alter table post add constraint post_state_check check (state in ('DRAFT','QUEUE','PUBLISHED','ERROR'));`);
  }
}
