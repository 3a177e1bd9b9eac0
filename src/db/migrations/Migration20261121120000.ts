import { Migration } from '@mikro-orm/migrations';

/** Accounts (users, memberships, invitations, browser sessions) and third-party OAuth apps with their codes and tokens. */
export class Migration20261121120000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table app_user (
      id text primary key,
      email text not null,
      name text not null default '',
      password_hash text not null,
      created_at timestamptz not null default now()
    );`);
    this.addSql(`create unique index app_user_email_unique on app_user (lower(email));`);
    this.addSql(`create table membership (
      user_id text not null references app_user(id) on delete cascade,
      organization_id text not null references organization(id) on delete cascade,
      role text not null check (role in ('owner','member')),
      created_at timestamptz not null default now(),
      primary key (user_id, organization_id)
    );`);
    this.addSql(`create index membership_organization_idx on membership (organization_id);`);
    this.addSql(`create table invitation (
      id text primary key,
      organization_id text not null references organization(id) on delete cascade,
      token_hash text not null unique,
      role text not null check (role in ('owner','member')),
      created_by text not null references app_user(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz null,
      used_by text null references app_user(id) on delete set null
    );`);
    this.addSql(`create table web_session (
      id text primary key,
      token_hash text not null unique,
      user_id text not null references app_user(id) on delete cascade,
      organization_id text null references organization(id) on delete set null,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null
    );`);
    this.addSql(`create index web_session_user_idx on web_session (user_id);`);
    this.addSql(`create table oauth_app (
      id text primary key,
      organization_id text null references organization(id) on delete cascade,
      name text not null,
      description text null,
      picture_url text null,
      redirect_uris jsonb not null,
      client_id text not null unique,
      client_secret_hash text null,
      token_endpoint_auth_method text not null check (token_endpoint_auth_method in ('client_secret_post','client_secret_basic','none')),
      dynamic boolean not null default false,
      created_at timestamptz not null default now(),
      secret_rotated_at timestamptz null,
      deleted_at timestamptz null
    );`);
    this.addSql(`create index oauth_app_organization_idx on oauth_app (organization_id) where deleted_at is null;`);
    this.addSql(`create table oauth_token (
      id text primary key,
      app_id text not null references oauth_app(id) on delete cascade,
      user_id text not null references app_user(id) on delete cascade,
      organization_id text not null references organization(id) on delete cascade,
      token_hash text not null unique,
      scopes jsonb not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz null,
      revoked_at timestamptz null
    );`);
    this.addSql(`create index oauth_token_grant_idx on oauth_token (organization_id, user_id, app_id) where revoked_at is null;`);
    this.addSql(`create table oauth_code (
      id text primary key,
      code_hash text not null unique,
      app_id text not null references oauth_app(id) on delete cascade,
      user_id text not null references app_user(id) on delete cascade,
      organization_id text not null references organization(id) on delete cascade,
      scopes jsonb not null,
      redirect_uri text not null,
      redirect_uri_given boolean not null,
      code_challenge text null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz null,
      token_id text null references oauth_token(id) on delete set null
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists oauth_code, oauth_token, oauth_app, web_session, invitation, membership, app_user cascade;');
  }
}
