import { Migration } from '@mikro-orm/migrations';

/**
 * Comments and replies (issue 24):
 * - comment: each comment someone left on a post Herald published, once per channel (`platform_id` unique per integration),
 *   with its state (new, answered, hidden, deleted) and Herald's reply post, if any.
 * - comment_poll: when each published post is next read for comments, the newest comment's time seen, and failures in a row.
 * - post.reply_to: a post that answers a comment (its root only): the comment, and the platform refs `comment` needs.
 * - a trigger that tells the MCP sessions subscribed to herald://comments, or to herald://posts/{id}/comments of the post,
 *   that the resource changed, in the transaction that stored or changed the comment (the poll runs in the worker; the
 *   session's stream may be held by any web process), as the notification trigger does for log messages.
 * - the notification trigger sends comment_created at level info (a new comment is news, not a warning).
 */
export class Migration20261127200000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table comment (
      id text primary key,
      organization_id text not null,
      integration_id text not null,
      post_id text not null,
      platform_id text not null,
      parent_platform_id text null,
      author jsonb not null,
      text text not null,
      url text null,
      meta jsonb null,
      state text not null check (state in ('new', 'answered', 'hidden', 'deleted')),
      reply_post_id text null,
      created_at timestamptz not null,
      fetched_at timestamptz not null,
      updated_at timestamptz not null default now()
    );`);
    this.addSql('create unique index comment_platform_idx on comment (integration_id, platform_id);');
    this.addSql('create index comment_organization_idx on comment (organization_id, created_at desc, id desc);');
    this.addSql('create index comment_post_idx on comment (post_id, created_at);');
    this.addSql(`create table comment_poll (
      post_id text primary key,
      organization_id text not null,
      integration_id text not null,
      next_poll_at timestamptz not null,
      since timestamptz null,
      failures integer not null default 0,
      last_error text null,
      last_polled_at timestamptz null
    );`);
    this.addSql('create index comment_poll_due_idx on comment_poll (next_poll_at);');
    this.addSql('alter table post add column reply_to jsonb null;');
    // Subscriptions live in mcp_session.state->'subscriptions' as {uri: target}: `comments:*` for herald://comments,
    // `comments:<root post id>` for herald://posts/{id}/comments (src/mcp/resources.ts).
    this.addSql(`create function herald_comment_to_sessions() returns trigger language plpgsql as $$
      declare
        stream text;
      begin
        for stream in
          insert into mcp_event (session_id, stream_id, message)
          select s.id, s.id || '.get', jsonb_build_object('jsonrpc', '2.0', 'method', 'notifications/resources/updated', 'params', jsonb_build_object('uri', sub.key))
          from mcp_session s, jsonb_each_text(coalesce(s.state->'subscriptions', '{}'::jsonb)) sub
          where s.organization_id = new.organization_id and sub.value in ('comments:*', 'comments:' || new.post_id)
          returning stream_id
        loop
          perform pg_notify('herald_mcp_stream', stream);
        end loop;
        return new;
      end $$;`);
    this.addSql(`create trigger comment_to_sessions after insert or update of state, reply_post_id on comment for each row execute function herald_comment_to_sessions();`);
    this.addSql(notificationTrigger(`case when new.type in ('post_published', 'comment_created') then 'info' else 'warning' end`));
  }

  override async down(): Promise<void> {
    this.addSql(notificationTrigger(`case when new.type = 'post_published' then 'info' else 'warning' end`));
    this.addSql('drop trigger if exists comment_to_sessions on comment;');
    this.addSql('drop function if exists herald_comment_to_sessions();');
    this.addSql('alter table post drop column if exists reply_to;');
    this.addSql('drop table if exists comment, comment_poll;');
  }
}

/** The notification trigger of Migration20261124100000 with `level` as given (only the level changes). */
function notificationTrigger(level: string): string {
  return `create or replace function herald_notification_to_sessions() returns trigger language plpgsql as $$
      declare
        levels constant text[] := array['debug','info','notice','warning','error','critical','alert','emergency'];
        level constant text := ${level};
        stream text;
      begin
        for stream in
          insert into mcp_event (session_id, stream_id, message)
          select s.id, s.id || '.get', jsonb_build_object('jsonrpc', '2.0', 'method', 'notifications/message', 'params',
            jsonb_build_object('level', level, 'logger', 'herald', 'data',
              jsonb_strip_nulls(jsonb_build_object('type', new.type, 'message', new.content, 'link', new.link))))
          from mcp_session s
          where s.organization_id = new.organization_id
            and array_position(levels, s.state->>'logLevel') <= array_position(levels, level)
          returning stream_id
        loop
          perform pg_notify('herald_mcp_stream', stream);
        end loop;
        return new;
      end $$;`;
}
