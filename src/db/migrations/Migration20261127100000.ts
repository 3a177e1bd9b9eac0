import { Migration } from '@mikro-orm/migrations';

/**
 * Analytics history (issue 24). Platforms answer today's numbers, some a short daily window: Herald keeps what they said.
 * - channel_metric_day: one row per channel, metric and day (UTC). `kind` 'daily' is a value the platform gave for that
 *   day (a daily series); 'total' is a counter the platform gave as "now", stored under the day it was read.
 * - post_metric_snapshot: one row per post, metric and snapshot time: a post's counters as they grew since publication.
 * - metrics_schedule: when each channel and post is read next, and how the last attempt went (retries back off; a
 *   platform without an analytics API or a permanent failure is recorded and shown).
 * Plain id columns, as everywhere: every query is scoped by organization.
 */
export class Migration20261127100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table channel_metric_day (
      integration_id text not null, organization_id text not null, metric text not null, day date not null,
      label text not null, value double precision not null, kind text not null check (kind in ('total', 'daily')),
      recorded_at timestamptz not null, primary key (integration_id, metric, day));`);
    this.addSql('create index channel_metric_day_organization on channel_metric_day (organization_id, day);');
    this.addSql(`create table post_metric_snapshot (
      post_id text not null, organization_id text not null, integration_id text not null, metric text not null,
      taken_at timestamptz not null, label text not null, value double precision not null,
      kind text not null check (kind in ('total', 'daily')), primary key (post_id, metric, taken_at));`);
    this.addSql('create index post_metric_snapshot_channel on post_metric_snapshot (integration_id, taken_at);');
    this.addSql('create index post_metric_snapshot_taken on post_metric_snapshot (taken_at);');
    this.addSql(`create table metrics_schedule (
      target_kind text not null check (target_kind in ('channel', 'post')), target_id text not null,
      organization_id text not null, integration_id text not null, next_at timestamptz,
      status text not null default 'pending', attempts integer not null default 0, last_error text,
      last_attempt_at timestamptz, last_success_at timestamptz, snapshots integer not null default 0,
      primary key (target_kind, target_id));`);
    this.addSql('create index metrics_schedule_due on metrics_schedule (next_at) where next_at is not null;');
    this.addSql('create index metrics_schedule_channel on metrics_schedule (integration_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists metrics_schedule;');
    this.addSql('drop table if exists post_metric_snapshot;');
    this.addSql('drop table if exists channel_metric_day;');
  }
}
