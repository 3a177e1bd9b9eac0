// A create in two statements after the credential check (issue 26: round trips): one read of everything the checks need
// (the channels, the library files named, the duplicate guard's lookups, and the post-creation limit counted in the same
// statement), then one write of everything that makes the posts (every item, the publishing job of each queued post with
// its NOTIFY, and the audit trail's `post.created`), which commits as a whole or not at all. The ORM would spend a round
// trip per query, BEGIN, one INSERT per table and COMMIT.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, MediaSchema, type Integration, type Media, type Post } from '../../src/db/entities.js';
import { sqlOf, statement, type Statement } from '../../src/db/sql.js';
import { AUDIT_COLUMNS, auditRecord, type AuditEvent } from './audit.js';
import type { PostCreationLimit } from './creation-limit.js';
import { duplicateLookupSql, duplicateLookupsJson, earlierPostOf, type DuplicateLookup, type EarlierPost, type EarlierPostRow } from './duplicates.js';
import { publishJobAt, publishJobKey, PUBLISH_TASK } from './queue.js';
import { libraryLookup } from './media.js';
import { SIGNATURES_SQL, signaturesOf, type SignatureRow, type Signatures } from './signature.js';

export interface CreateReads {
  integrations: Integration[];
  library: Media[];
  /** What each duplicate lookup found, by entry index. */
  earlier: Map<number, EarlierPost>;
  /** The organization's default signature and those of the channels read. */
  signatures: Signatures;
}

const readStatements = new Map<string, Statement>();

/** The read statement, with the limit's CTEs when it counts one (one prepared statement per shape). */
function readStatement(limit?: { ctes: string; columns: string }): Statement {
  const key = limit?.ctes ?? '';
  let found = readStatements.get(key);
  if (!found) {
    found = statement(
      `create_read_${readStatements.size}`,
      `${limit ? `with ${limit.ctes}` : ''}
       select
         (select coalesce(json_agg(i), '[]') from integration i where i.id = any($2::text[]) and i.organization_id = $1 and i.deleted_at is null) as channels,
         (select coalesce(json_agg(m), '[]') from media m
            where m.organization_id = $1 and m.deleted_at is null and (m.id = any($3::text[]) or m.path = any($4::text[]))) as library,
         (select coalesce(json_agg(d), '[]') from jsonb_to_recordset($5::jsonb) as q(index int, integration_id text, key text, since timestamptz, until timestamptz)
            cross join lateral (${duplicateLookupSql('$1', "'{}'::text[]")}) d) as earlier,
         ${SIGNATURES_SQL}
         ${limit ? `, ${limit.columns}` : ''}`,
    );
    readStatements.set(key, found);
  }
  return found;
}

/**
 * Reads what a create checks, in one round trip, and counts `limit` in it (throwing `rate_limited` when it refuses). `ids`:
 * the channels (those the caller may see), `media`: the library files the items name, `lookups`: the duplicate guard's.
 */
export async function readForCreate(
  em: EntityManager,
  organizationId: string,
  ids: string[],
  media: { id: string; path: string }[],
  lookups: DuplicateLookup[],
  limit?: PostCreationLimit,
): Promise<CreateReads> {
  const folded = limit?.fold(5);
  const parameters = [
    organizationId,
    ids,
    ...libraryLookup(media),
    duplicateLookupsJson(lookups),
    ...(folded?.parameters ?? []),
  ];
  type Row = { channels: Record<string, unknown>[]; library: Record<string, unknown>[]; earlier: (EarlierPostRow & { index: number })[]; signatures: SignatureRow[] } & Record<string, unknown>;
  const [row] = await sqlOf(em).rows<Row>(readStatement(folded), parameters);
  if (limit) await limit.settle(row);
  return {
    integrations: row.channels.map((channel) => em.map(IntegrationSchema, channel)),
    library: row.library.map((file) => em.map(MediaSchema, file)),
    earlier: new Map(row.earlier.map((found) => [found.index, earlierPostOf(found)])),
    signatures: signaturesOf(row.signatures),
  };
}

/** The properties a create writes, each with its column; the other columns take their defaults (nothing published yet). */
const POST_COLUMN_OF = {
  id: 'id',
  organizationId: 'organization_id',
  integrationId: 'integration_id',
  group: 'group_id',
  parentPostId: 'parent_post_id',
  rootPostId: 'root_post_id',
  position: 'position',
  content: 'content',
  settings: 'settings',
  media: 'media',
  tags: 'tags',
  shortLink: 'short_link',
  delay: 'delay',
  state: 'state',
  publishDate: 'publish_date',
  creationMethod: 'creation_method',
  approval: 'approval',
  createdBy: 'created_by',
  duplicateKey: 'duplicate_key',
  allowDuplicate: 'allow_duplicate',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Partial<Record<keyof Post, string>>;
const POST_COLUMNS = Object.values(POST_COLUMN_OF).join(', ');

export type NewPost = Pick<Post, keyof typeof POST_COLUMN_OF>;

/**
 * The write statement. Guarded (the duplicate guard's lookups as $4, the organization as $5), it first looks for an earlier
 * post each lookup matches and writes nothing when one is found, answering what it found: run after the lookups' advisory
 * locks were taken (`duplicateLocks`), so its snapshot holds every post a concurrent create committed before.
 */
function writeStatement(guarded: boolean): Statement {
  const unless = guarded ? 'where not exists (select 1 from earlier)' : '';
  return statement(
    guarded ? 'create_write_guarded' : 'create_write',
    `with ${guarded ? `earlier as (
       select d.* from jsonb_to_recordset($4::jsonb) as q(index int, integration_id text, key text, since timestamptz, until timestamptz)
         cross join lateral (${duplicateLookupSql('$5', "'{}'::text[]")}) d),` : ''}
     posts as (
       insert into post (${POST_COLUMNS}) select ${POST_COLUMNS} from jsonb_populate_recordset(null::post, $1::jsonb) ${unless} returning id),
     jobs as (
       select graphile_worker.add_job('${PUBLISH_TASK}', json_build_object('postId', job.post_id), run_at := job.run_at, max_attempts := 8,
                job_key := job.job_key, job_key_mode := 'replace') as added,
              pg_notify('herald_job_scheduled', job.due)
       from jsonb_to_recordset($2::jsonb) as job(post_id text, run_at timestamptz, job_key text, due text) ${unless}),
     audit as (
       insert into audit_event (${AUDIT_COLUMNS}) select ${AUDIT_COLUMNS} from jsonb_populate_recordset(null::audit_event, $3::jsonb) ${unless} returning id)
     select (select count(*) from posts) as posts, (select count(*) from jobs) as jobs, (select count(*) from audit) as audits
       ${guarded ? ", (select coalesce(json_agg(e), '[]') from earlier e) as earlier" : ''}`,
  );
}

const WRITE = writeStatement(false);
const GUARDED_WRITE = writeStatement(true);

/**
 * The advisory locks (transaction-scoped) of the guard's lookups: one per channel and duplicate key, so two creates of the
 * same text on the same channel take turns between their check and their write while any others go on at once. Numbers
 * derived from the key (no text reaches the SQL), taken in ascending order so two creates never wait on each other.
 */
function duplicateLocks(lookups: DuplicateLookup[]): string {
  const ids = [...new Set(lookups.map((lookup) => createHash('sha256').update(`herald:duplicate:${lookup.integrationId}:${lookup.key}`).digest().readBigInt64BE(0)))];
  ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `select ${ids.map((id) => `pg_advisory_xact_lock(${id.toString()})`).join(', ')}`;
}

/**
 * Writes the items, a publishing job for each root in `due` (one per post: `publishJobKey`, at `publishJobAt`, as queue.ts
 * `schedulePublish` adds it; the NOTIFY tells the worker processes its time) and `audit`, in one statement.
 */
export async function writeCreated(
  em: EntityManager,
  posts: NewPost[],
  due: { rootPostId: string; publishDate: Date }[],
  audit: AuditEvent[],
  guard?: { organizationId: string; lookups: DuplicateLookup[] },
): Promise<Map<number, EarlierPost>> {
  const rows = posts.map((post) => Object.fromEntries(Object.entries(POST_COLUMN_OF).map(([property, column]) => [column, post[property as keyof NewPost]])));
  const jobs = due.map((job) => {
    const runAt = publishJobAt(job.publishDate);
    return { post_id: job.rootPostId, run_at: runAt, job_key: publishJobKey(job.rootPostId), due: String(runAt.getTime()) };
  });
  const values = [JSON.stringify(rows), JSON.stringify(jobs), JSON.stringify(audit.map((event) => auditRecord(event)))];
  if (!guard || guard.lookups.length === 0) {
    await sqlOf(em).rows(WRITE, values);
    return new Map();
  }
  const { lookups, organizationId } = guard;
  const [row] = await sqlOf(em).rowsAfter<{ earlier: (EarlierPostRow & { index: number })[] }>(duplicateLocks(lookups), GUARDED_WRITE, [...values, duplicateLookupsJson(lookups), organizationId]);
  return new Map(row.earlier.map((found) => [found.index, earlierPostOf(found)]));
}
