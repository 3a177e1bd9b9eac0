// A recurring post as the tools answer it (tools/recurring-posts.ts, the console's Recurring pages) with its occurrences,
// and the lookups of the rules a caller may see. The rules' work is tools/internal/recurrence.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { StoredMedia } from '../../src/db/entities.js';
import { RecurringPostSchema, type MissedPolicy, type OccurrenceOutcome, type RecurrenceUnit, type RecurringPost } from '../../src/db/recurrence-entities.js';
import { notFound } from '../../src/errors.js';
import { isoWithOffset } from '../../src/lib/time-zone.js';
import { canSeeChannel } from './visibility.js';
import { timeText, weekdayNames } from './recurrence-schedule.js';

/** A rule the caller may see (its organization's, on a channel it sees); 404 otherwise. */
export async function findRule(em: EntityManager, organizationId: string, id: string): Promise<RecurringPost> {
  const rule = await em.findOne(RecurringPostSchema, { id, organizationId });
  if (!rule || !canSeeChannel(rule.integrationId)) throw notFound(`Recurring post ${id} not found.`, { hint: 'GET /recurring-posts lists the recurring posts of this organization.' });
  return rule;
}

export async function listRules(em: EntityManager, organizationId: string): Promise<RecurringPost[]> {
  const rules = await em.find(RecurringPostSchema, { organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return rules.filter((rule) => canSeeChannel(rule.integrationId));
}

export interface OccurrenceRecord {
  sequence: number;
  scheduledFor: string;
  localDate: string;
  outcome: OccurrenceOutcome;
  postId: string | null;
  /** The post's state now (null when it was deleted or never made). */
  state: string | null;
  error: string | null;
}

export interface RuleRecord {
  id: string;
  channel: string;
  content: string;
  variations: string[];
  settings: Record<string, unknown>;
  media: StoredMedia[];
  every: RecurrenceUnit;
  interval: number;
  weekdays: string[];
  time: string;
  timeZone: string;
  startDate: string;
  endDate: string | null;
  count: number | null;
  missed: MissedPolicy;
  status: 'active' | 'paused' | 'ended';
  made: number;
  nextAt: string | null;
  nextLocal: string | null;
  createdAt: string;
  occurrences?: OccurrenceRecord[];
}

export const ruleStatus = (rule: RecurringPost) => (rule.nextAt === null ? 'ended' : rule.paused ? 'paused' : 'active');

export function toRuleRecord(rule: RecurringPost, occurrences?: OccurrenceRecord[]): RuleRecord {
  return {
    id: rule.id,
    channel: rule.integrationId,
    content: rule.texts[0],
    variations: rule.texts.slice(1),
    settings: rule.settings,
    media: rule.media,
    every: rule.unit,
    interval: rule.interval,
    weekdays: weekdayNames(rule.weekdays),
    time: timeText(rule.minuteOfDay),
    timeZone: rule.timeZone,
    startDate: rule.startDate,
    endDate: rule.endDate ?? null,
    count: rule.count ?? null,
    missed: rule.missed,
    status: ruleStatus(rule),
    made: rule.made,
    nextAt: rule.nextAt?.toISOString() ?? null,
    nextLocal: rule.nextAt ? isoWithOffset(rule.nextAt, rule.timeZone) : null,
    createdAt: rule.createdAt.toISOString(),
    ...(occurrences ? { occurrences } : {}),
  };
}

/** The rule's occurrences, latest first (at most `limit`), with their posts' states. */
export async function occurrencesOf(em: EntityManager, rule: RecurringPost, limit = 50): Promise<OccurrenceRecord[]> {
  const rows = await em.getConnection().execute<{ sequence: number; scheduled_for: Date; outcome: OccurrenceOutcome; post_id: string | null; error: string | null; state: string | null }[]>(
    `select o.sequence, o.scheduled_for, o.outcome, o.post_id, o.error, p.state from recurring_occurrence o
       left join post p on p.id = o.post_id and p.deleted_at is null
      where o.rule_id = ? order by o.scheduled_for desc limit ?`,
    [rule.id, limit],
  );
  return rows.map((row) => {
    const at = new Date(row.scheduled_for);
    return { sequence: row.sequence, scheduledFor: at.toISOString(), localDate: isoWithOffset(at, rule.timeZone), outcome: row.outcome, postId: row.post_id, state: row.state, error: row.error };
  });
}
