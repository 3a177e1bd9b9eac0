// The console calendar's posts: only what a cell shows (issue 25: a month of 1,000 posts renders in under 200 ms). The post
// list (posts.ts listPosts) hydrates every root and item as an entity and builds the whole record (items, media,
// settings, platform changes); a cell needs the channel, the publishing status over the chain, the date, the start of
// the text, how it was created and the approving app. One plain statement answers that for the whole range: the chain's
// later items come aggregated per root (a lateral join on post_root_idx), so the query count does not grow with the
// number of posts (test/console-calendar-queries.test.ts).
//
// Visibility (DESIGN §9) is the caller's: the channels are those `listIntegrations` answers for the current caller
// (visibility.ts), and only posts of those channels are read.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post } from '../../src/db/entities.js';
import { sqlOf, statement } from '../../src/db/sql.js';
import { chainStatus, type PublishStatus } from './posts.js';

/** Characters of content read per post: enough for a one-line excerpt of almost any post (longer ones: `fullContents`). */
export const CONTENT_PREFIX = 1000;

export interface CalendarPost {
  id: string;
  integrationId: string;
  publishDate: Date;
  publishStatus: PublishStatus;
  /** As the post list says it (posts.ts toPostRecord): the chain's summary when it stopped half way, else the error. */
  error: string | null;
  /** The first CONTENT_PREFIX characters of the content; `cut` when there was more. */
  content: string;
  cut: boolean;
  /** For a cut content: whether the whole content is HTML (has a tag, as content.ts hasHtmlTag), else null. */
  html: boolean | null;
  creationMethod: string;
  appId: string | null;
  appName: string | null;
}

// content.ts's TAG_PATTERN (`<` then a letter) as a Postgres regular expression: one tag anywhere makes the content HTML.
const TAG_PATTERN = '</?[a-zA-Z][a-zA-Z0-9-]*(\\s[^<>]*)?/?>';

interface Row {
  id: string;
  integration_id: string;
  publish_ms: number;
  state: Post['state'];
  error: string | null;
  attempts: number;
  creation_method: string;
  app_id: string | null;
  app_name: string | null;
  content: string;
  cut: boolean;
  html: boolean | null;
  items: { state: Post['state']; position: number; error: string | null; attempts: number }[] | null;
}

// A draft saved without a date (dated when it was saved: isUndated) has no day in the calendar: left out.
const CALENDAR_POSTS = statement(
  'calendar_posts',
  `select p.id, p.integration_id, (extract(epoch from p.publish_date) * 1000)::float8 as publish_ms, p.state, p.error, p.attempts,
     p.creation_method, p.approval->>'appId' as app_id, p.approval->>'appName' as app_name,
     left(p.content, ${CONTENT_PREFIX}) as content, length(p.content) > ${CONTENT_PREFIX} as cut,
     case when length(p.content) > ${CONTENT_PREFIX} then p.content ~ '${TAG_PATTERN}' end as html, later.items
   from post p
   left join lateral (
     select json_agg(json_build_object('state', i.state, 'position', i.position, 'error', i.error, 'attempts', i.attempts) order by i.position) as items
     from post i where i.root_post_id = p.id and i.position > 0 and i.deleted_at is null
   ) later on true
   where p.organization_id = $1 and p.deleted_at is null and p.position = 0 and p.integration_id = any($2::text[])
     and p.publish_date >= $3 and p.publish_date < $4
     and not (p.state = 'DRAFT' and p.publish_date = p.created_at)
   order by p.publish_date, p.id`,
);

/** The root posts of `channelIds` (already limited to what the caller may see) from `start` (included) to `end` (excluded). */
export async function calendarPosts(em: EntityManager, organizationId: string, channelIds: string[], range: { start: Date; end: Date }): Promise<CalendarPost[]> {
  if (channelIds.length === 0) return [];
  const rows = await sqlOf(em).rows<Row>(CALENDAR_POSTS, [organizationId, channelIds, range.start.toISOString(), range.end.toISOString()]);
  return rows.map((row) => {
    const root = { state: row.state, position: 0, error: row.error, attempts: row.attempts };
    // chainStatus reads only these four fields of each item: the same status and summary as the post list.
    const { status, summary, current } = chainStatus([root, ...(row.items ?? [])] as Post[]);
    return {
      id: row.id,
      integrationId: row.integration_id,
      publishDate: new Date(row.publish_ms),
      publishStatus: status,
      error: summary ?? row.error ?? (current.state === 'ERROR' ? current.error : null) ?? null,
      content: row.content,
      cut: row.cut,
      html: row.html,
      creationMethod: row.creation_method,
      appId: row.app_id,
      appName: row.app_name,
    };
  });
}

const FULL_CONTENTS = statement('calendar_full_contents', 'select id, content from post where organization_id = $1 and id = any($2::text[])');

/** The whole content of a few posts (those whose excerpt the prefix could not settle), in one query. */
export async function fullContents(em: EntityManager, organizationId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sqlOf(em).rows<{ id: string; content: string }>(FULL_CONTENTS, [organizationId, ids]);
  return new Map(rows.map((row) => [row.id, row.content]));
}
