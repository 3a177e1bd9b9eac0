import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth tokens that behave like OAuth tokens (issue 32): an access token may expire (`oauth_token.expires_at`; null for the
 * long-lived `pos_` tokens issued before, and for the spec's app flow, which keep working until revoked) and be bound to
 * one of Herald's resources (RFC 8707 `resource`, on the code and the token); rotating refresh tokens of a grant (one row
 * each, marked used when exchanged, so a reuse is recognised and revokes the grant); and clients identified by their
 * metadata document (CIMD), whose cached document is fetched again after `oauth_app.metadata_expires_at`.
 */
export class Migration20261202000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table oauth_token add column expires_at timestamptz null, add column resource text null;');
    this.addSql('alter table oauth_code add column resource text null;');
    this.addSql('alter table oauth_app add column metadata_expires_at timestamptz null;');
    this.addSql(`create table oauth_refresh_token (
      token_hash text primary key,
      token_id text not null references oauth_token(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz null
    );`);
    this.addSql('create index oauth_refresh_token_token_idx on oauth_refresh_token (token_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists oauth_refresh_token;');
    this.addSql('alter table oauth_app drop column metadata_expires_at;');
    this.addSql('alter table oauth_code drop column resource;');
    this.addSql('alter table oauth_token drop column expires_at, drop column resource;');
  }
}
