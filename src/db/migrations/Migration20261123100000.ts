import { Migration } from '@mikro-orm/migrations';

/**
 * AI generations: who asked for what (generator, models, prompt, parameters), the state of the work, the paid steps already
 * taken (so a restarted job never pays for one twice), the calls made, and the stored result.
 */
export class Migration20261123100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table generation (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      requested_by text not null,
      generator text not null,
      kind text not null,
      output text not null,
      params jsonb not null,
      params_key text not null,
      prompt text not null,
      models jsonb not null,
      state text not null,
      progress double precision not null default 0,
      progress_message text null,
      steps jsonb not null default '{}'::jsonb,
      usage jsonb not null default '{}'::jsonb,
      media_id text null,
      error_code text null,
      error_status integer null,
      error text null,
      error_hint text null,
      warnings jsonb not null default '[]'::jsonb,
      next_check_at timestamptz null,
      created_at timestamptz not null default now(),
      started_at timestamptz null,
      finished_at timestamptz null
    );`);
    this.addSql(`create index generation_org_created_idx on generation (organization_id, created_at desc, id desc);`);
    this.addSql(`create index generation_org_key_idx on generation (organization_id, params_key, created_at desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists generation;');
  }
}
