// Recurring posts (issue 35): a rule repeats a post on one channel every N days or weeks, on chosen weekdays, at a
// wall-clock time of the channel's zone (recurrence-schedule.ts), ending at a date or after a count, rotating through
// variations of its text. Each occurrence is an ordinary post (the calendar shows it; it is edited or deleted alone, and
// the rule goes on), made ahead for a bounded horizon (HORIZON_DAYS, at most MAX_AHEAD waiting) by the recurrence job,
// which extends it. Occurrences are intended repetitions: the duplicate guard lets them through (allowDuplicate). What
// happens to occurrences whose time passed while Herald was down is recurrence-missed.ts.
//
// Changing a rule (its text, schedule, end, or pausing it) removes the occurrences made ahead that nobody touched and makes
// them again from the changed rule; one a person edited or moved keeps their edit. Deleting a rule removes its waiting
// occurrences too, unless asked to keep them; what went out stays.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Integration, StoredMedia } from '../../src/db/entities.js';
import { RecurringPostSchema, type MissedPolicy, type OccurrenceOutcome, type RecurrenceUnit, type RecurringPost } from '../../src/db/recurrence-entities.js';
import { DomainError, invalidInput } from '../../src/errors.js';
import { newId, sha256 } from '../../src/lib/crypto.js';
import { wallClockOf, dateKey } from '../../src/lib/time-zone.js';
import type { Services, ToolContext } from '../types.js';
import { approvalRequest, credentialRef } from './approval.js';
import { recordChange } from './audit.js';
import { checkPlan, planOptions, PostValidationError, type PlanEntry } from './create-posts.js';
import { createStandingPost, oneItemEntry } from './standing-posts.js';
import { findDuplicates } from './duplicates.js';
import { findIntegration } from './integrations.js';
import { deleteGroup } from './posts.js';
import { channelZone, organizationZone, zoneInput } from './time-zones.js';
import { occurrencesOf, type OccurrenceRecord } from './recurrence-records.js';
import { dateInput, nextOccurrence, timeInput, timeText, weekdayNames, weekdaysInput, type Schedule } from './recurrence-schedule.js';
import { MISSED_AFTER_MS, notifyMissed, ruleLabel } from './recurrence-missed.js';

/** Occurrences are made this far ahead, and at most MAX_AHEAD of a rule wait at once. */
export const HORIZON_DAYS = 14;
export const MAX_AHEAD = 10;
export const MAX_VARIATIONS = 20;

export interface RuleInput {
  channel?: string;
  content?: string;
  variations?: string[];
  settings?: Record<string, unknown>;
  media?: { id: string; path: string; alt?: string }[];
  every?: RecurrenceUnit;
  interval?: number;
  weekdays?: string[];
  time?: string;
  timeZone?: string;
  startDate?: string;
  endDate?: string | null;
  count?: number | null;
  missed?: MissedPolicy;
  paused?: boolean;
  allowDuplicate?: boolean;
}

export const scheduleOf = (rule: Pick<RecurringPost, 'unit' | 'interval' | 'weekdays' | 'minuteOfDay' | 'timeZone' | 'startDate' | 'endDate'>): Schedule => ({
  unit: rule.unit,
  interval: rule.interval,
  weekdays: rule.weekdays,
  minuteOfDay: rule.minuteOfDay,
  timeZone: rule.timeZone,
  startDate: rule.startDate,
  endDate: rule.endDate ?? null,
});

/** A rule's plan entry of occurrence `sequence` at `date`. */
const entryOf = (rule: Pick<RecurringPost, 'integrationId' | 'texts' | 'settings' | 'media'>, sequence: number, date: Date): PlanEntry =>
  oneItemEntry({
    integrationId: rule.integrationId,
    type: 'schedule',
    date,
    groupKey: sequence,
    settings: { ...rule.settings },
    content: rule.texts[sequence % rule.texts.length],
    media: rule.media.map((media) => ({ ...media })),
  });

type RuleFields = Pick<RecurringPost, 'integrationId' | 'texts' | 'settings' | 'media' | 'unit' | 'interval' | 'weekdays' | 'minuteOfDay' | 'timeZone' | 'startDate' | 'endDate' | 'count' | 'missed'>;

/** The rule's fields from an input over the fields it had (none, for a create): every bad value is a clear 400. */
async function ruleFields(em: EntityManager, organizationId: string, input: RuleInput, before: RuleFields | undefined, now: Date): Promise<{ fields: RuleFields; integration: Integration }> {
  const channelId = input.channel ?? before?.integrationId;
  if (!channelId) throw invalidInput('channel: which channel the post repeats on is missing.', { hint: 'Give the channel\'s id (integrationList, GET /integrations).' });
  const integration = await findIntegration(em, organizationId, channelId);
  const content = input.content ?? before?.texts[0];
  if (!content?.trim()) throw invalidInput('content: the text of the post is missing.', { hint: 'Give the text (plain text or the HTML of posts); variations, if any, rotate with it.' });
  const variations = input.variations ?? before?.texts.slice(1) ?? [];
  if (variations.some((text) => !text.trim())) throw invalidInput('variations: a variation is empty.', { hint: 'Give each variation its text, or leave it out.' });
  const zone = input.timeZone !== undefined ? zoneInput(input.timeZone) : (before?.timeZone ?? channelZone(integration, await organizationZone(em, organizationId)));
  const unit = input.every ?? before?.unit;
  if (!unit) throw invalidInput('every: how often it repeats is missing.', { hint: 'every "day" or "week", with interval (every 2 weeks: interval 2) and, for weeks, weekdays.' });
  const interval = input.interval ?? before?.interval ?? 1;
  const startDate = input.startDate !== undefined ? dateInput(input.startDate, 'startDate') : (before?.startDate ?? dateKey(wallClockOf(now, zone)));
  let weekdays = input.weekdays !== undefined ? weekdaysInput(input.weekdays) : (before?.weekdays ?? []);
  // Weekly without weekdays: the weekday of its start.
  if (unit === 'week' && weekdays.length === 0) weekdays = [(new Date(`${startDate}T00:00:00Z`).getUTCDay() + 6) % 7];
  const endDate = input.endDate !== undefined ? (input.endDate === null ? null : dateInput(input.endDate, 'endDate')) : (before?.endDate ?? null);
  if (endDate && endDate < startDate) throw invalidInput(`endDate: ${endDate} is before startDate ${startDate}.`, { hint: 'Give an end date on or after the start date (both days of the rule\'s time zone), or a count instead.' });
  const count = input.count !== undefined ? input.count : (before?.count ?? null);
  if (input.time === undefined && !before) throw invalidInput('time: the time of day is missing.', { hint: 'Write it as HH:MM on a 24-hour clock of the channel\'s time zone, such as "09:00".' });
  return {
    integration,
    fields: {
      integrationId: integration.id,
      texts: [content, ...variations],
      settings: (({ __type: _type, ...rest }) => rest)(input.settings ?? before?.settings ?? {}),
      media: (input.media as StoredMedia[] | undefined) ?? before?.media ?? [],
      unit,
      interval,
      weekdays,
      minuteOfDay: input.time !== undefined ? timeInput(input.time) : before!.minuteOfDay,
      timeZone: zone,
      startDate,
      endDate,
      count,
      missed: input.missed ?? before?.missed ?? 'skip',
    },
  };
}

/**
 * Every text of the rule is checked as a create checks a post (length in the platform's counting, media, settings), and its
 * first occurrence against the duplicate guard (a rule that repeats a recent post), unless allowDuplicate. Media are
 * resolved in place.
 */
async function checkRule(context: ToolContext, fields: RuleFields, integration: Integration, first: Date | null, allowDuplicate: boolean): Promise<void> {
  const { em, caller, services } = context;
  const entries = fields.texts.map((_, index) => entryOf(fields, index, first ?? services.now()));
  const { entryProblems } = await checkPlan(em, caller.organizationId, { creationMethod: 'API', entries }, planOptions(services));
  const problems = entryProblems.flatMap((problem, index) => (problem ? [{ ...problem, message: entries.length > 1 ? `${index === 0 ? 'content' : `variation ${index}`}: ${problem.message}` : problem.message }] : []));
  if (problems.length > 0) throw new PostValidationError(problems);
  fields.media = entries[0].items[0].media;
  if (allowDuplicate || !first) return;
  const duplicates = await findDuplicates(em, caller.organizationId, [entries[0]], new Map([[integration.id, integration]]), { now: services.now(), windowDays: services.config.duplicateWindowDays });
  if (duplicates.size > 0) throw new PostValidationError([...duplicates.values()]);
}

/** The first occurrence after `after` that the rule has left (none once `count` occurrences were made). */
const nextFor = (rule: RuleFields & { made: number }, after: Date) => (rule.count != null && rule.made >= rule.count ? null : nextOccurrence(scheduleOf(rule), after));

export async function createRule(context: ToolContext, input: RuleInput): Promise<{ rule: RecurringPost; occurrences: OccurrenceRecord[] }> {
  const { em, caller, services } = context;
  const now = services.now();
  const { fields, integration } = await ruleFields(em, caller.organizationId, input, undefined, now);
  const first = nextFor({ ...fields, made: 0 }, now);
  if (!first) throw invalidInput('The rule has no occurrence after now: its dates all lie in the past.', { hint: 'Give a later endDate, or a startDate from today on.' });
  await checkRule(context, fields, integration, first, input.allowDuplicate === true);
  const rule = em.create(RecurringPostSchema, {
    id: newId(),
    organizationId: caller.organizationId,
    ...fields,
    paused: input.paused === true,
    made: 0,
    nextAt: first,
    createdBy: credentialRef(caller),
    creationMethod: context.via === 'mcp' ? 'MCP' : 'API',
    approval: (await approvalRequest(em, context)) ?? null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  await recordChange(em, caller.organizationId, {
    action: 'recurring_post.created',
    target: { kind: 'recurring_post', id: rule.id },
    integrationId: rule.integrationId,
    did: `made the recurring post ${ruleLabel(rule)} (every ${rule.interval} ${rule.unit}${rule.interval > 1 ? 's' : ''} at ${timeText(rule.minuteOfDay)} ${rule.timeZone})`,
    changes: { every: rule.unit, interval: rule.interval, weekdays: weekdayNames(rule.weekdays), time: timeText(rule.minuteOfDay), timeZone: rule.timeZone },
  });
  if (!rule.paused) await extendRule(services, em, rule);
  return { rule, occurrences: await occurrencesOf(em, rule) };
}

/**
 * Removes the rule's occurrences made ahead that are still waiting (not out, not started): only those nobody edited or
 * moved (`all`: every waiting one). Answers how many went.
 */
async function removeWaiting(services: Services, em: EntityManager, rule: RecurringPost, all: boolean): Promise<number> {
  const rows = await em.getConnection().execute<{ id: string; post_id: string; group_id: string; content: string; publish_date: Date; scheduled_for: Date; content_key: string | null }[]>(
    `select o.id, o.post_id, p.group_id, p.content, p.publish_date, o.scheduled_for, o.content_key from recurring_occurrence o
       join post p on p.id = o.post_id and p.deleted_at is null
      where o.rule_id = ? and o.outcome = 'created' and p.state in ('QUEUE', 'AWAITING_APPROVAL', 'DRAFT') and p.published_at is null
        and p.attempt_started_at is null and p.attempts = 0 and p.publish_date > ?`,
    [rule.id, services.now()],
  );
  const waiting = rows.filter((row) => all || (new Date(row.publish_date).getTime() === new Date(row.scheduled_for).getTime() && row.content_key === sha256(row.content)));
  for (const row of waiting) {
    await deleteGroup(em, rule.organizationId, row.group_id, services.now());
    await em.getConnection().execute('delete from recurring_occurrence where id = ?', [row.id]);
  }
  return waiting.length;
}

/** After a change: the cursor again from now (dates it made already are passed over), `made` what it keeps. */
async function rewind(services: Services, em: EntityManager, rule: RecurringPost): Promise<void> {
  const [kept] = await em.getConnection().execute<{ made: number }[]>('select count(*)::int as made from recurring_occurrence where rule_id = ?', [rule.id]);
  rule.made = kept.made;
  rule.nextAt = nextFor(rule, services.now());
}

export async function changeRule(context: ToolContext, rule: RecurringPost, input: RuleInput): Promise<RecurringPost> {
  const { em, caller, services } = context;
  const now = services.now();
  const changed = Object.keys(input).filter((key) => input[key as keyof RuleInput] !== undefined && key !== 'allowDuplicate');
  const scheduleChanged = changed.some((key) => key !== 'paused');
  if (scheduleChanged) {
    const { fields, integration } = await ruleFields(em, caller.organizationId, input, rule, now);
    await checkRule(context, fields, integration, null, true);
    Object.assign(rule, fields);
    rule.approval = (await approvalRequest(em, context)) ?? null;
  }
  if (input.paused !== undefined) rule.paused = input.paused;
  // What waits follows the change: a paused rule keeps nothing waiting but what people edited, and makes it again when resumed.
  if (scheduleChanged || input.paused !== undefined) {
    await removeWaiting(services, em, rule, false);
    await rewind(services, em, rule);
  }
  rule.updatedAt = now;
  await em.flush();
  await recordChange(em, caller.organizationId, {
    action: input.paused === true ? 'recurring_post.paused' : input.paused === false && !scheduleChanged ? 'recurring_post.resumed' : 'recurring_post.changed',
    target: { kind: 'recurring_post', id: rule.id },
    integrationId: rule.integrationId,
    did: `${input.paused === true ? 'paused' : input.paused === false && !scheduleChanged ? 'resumed' : 'changed'} the recurring post ${ruleLabel(rule)}${scheduleChanged ? ` (${changed.join(', ')})` : ''}`,
    changes: { fields: changed },
  });
  if (!rule.paused) await extendRule(services, em, rule);
  return rule;
}

export async function deleteRule(context: ToolContext, rule: RecurringPost, keepOccurrences: boolean): Promise<number> {
  const { em, services } = context;
  const removed = keepOccurrences ? 0 : await removeWaiting(services, em, rule, true);
  await em.getConnection().execute('delete from recurring_post where id = ? and organization_id = ?', [rule.id, rule.organizationId]);
  em.getUnitOfWork().unsetIdentity(rule);
  await recordChange(em, rule.organizationId, {
    action: 'recurring_post.deleted',
    target: { kind: 'recurring_post', id: rule.id },
    integrationId: rule.integrationId,
    did: `deleted the recurring post ${ruleLabel(rule)} (${keepOccurrences ? 'its waiting occurrences stay as posts' : `${removed} waiting occurrence${removed === 1 ? '' : 's'} deleted`})`,
  });
  return removed;
}

/**
 * Claims the occurrence at the rule's cursor and moves the cursor on (compare-and-set: another run that moved it first
 * wins, and this one stops). `taken`: the date has an occurrence already (one a change kept), passed over.
 */
async function claim(em: EntityManager, rule: RecurringPost, at: Date, outcome: OccurrenceOutcome, error: string | null, now: Date): Promise<{ id?: string; taken?: boolean; stop?: boolean }> {
  const id = newId();
  const inserted = await em.getConnection().execute<{ id: string }[]>(
    `insert into recurring_occurrence (id, rule_id, organization_id, sequence, scheduled_for, outcome, error, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (rule_id, scheduled_for) do nothing returning id`,
    [id, rule.id, rule.organizationId, rule.made, at, outcome, error, now],
  );
  const taken = inserted.length === 0;
  const made = taken ? rule.made : rule.made + 1;
  const nextAt = nextFor({ ...rule, made }, at);
  const moved = await em.nativeUpdate(RecurringPostSchema, { id: rule.id, nextAt: at }, { made, nextAt, updatedAt: now });
  if (moved === 0) {
    if (!taken) await em.getConnection().execute('delete from recurring_occurrence where id = ?', [id]);
    return { stop: true };
  }
  Object.assign(rule, { made, nextAt, updatedAt: now });
  return taken ? { taken } : { id };
}

const INTERRUPTED = 'Herald stopped while making this occurrence: it was not made (an occurrence is never made twice).';

/** Makes occurrence `id` of the rule as a post at `date` (the job's create: Herald's, as the rule's author's post). */
async function makeOccurrence(services: Services, em: EntityManager, rule: RecurringPost, id: string, sequence: number, date: Date): Promise<void> {
  try {
    const postId = await createStandingPost(services, em, {
      organizationId: rule.organizationId,
      creationMethod: rule.creationMethod === 'MCP' ? 'MCP' : 'API',
      createdBy: rule.createdBy,
      approval: rule.approval,
      entry: entryOf(rule, sequence, date),
      // Occurrences of a rule repeat its text on purpose (the duplicate guard's exemption of recurrences).
      allowDuplicate: true,
      summary: (created) => `Herald created post ${created}, occurrence ${sequence + 1} of the recurring post ${rule.id} ${ruleLabel(rule)}.`,
      changes: { recurringPostId: rule.id },
    });
    const [{ content }] = await em.getConnection().execute<{ content: string }[]>('select content from post where id = ?', [postId]);
    await em.getConnection().execute(`update recurring_occurrence set outcome = 'created', error = null, post_id = ?, content_key = ? where id = ?`, [postId, sha256(content), id]);
  } catch (error) {
    if (!(error instanceof DomainError) || error.code === 'internal') throw error;
    await em.getConnection().execute(`update recurring_occurrence set error = ? where id = ?`, [error.message.slice(0, 1000), id]);
  }
}

/**
 * Makes the rule's occurrences due within the horizon. An occurrence whose time passed more than MISSED_AFTER_MS ago (Herald
 * was not running) is not made but recorded as missed and told in one notification; with `missed: "latest"` the latest of
 * them is made now instead. Safe to run from several places at once: each date is claimed once.
 */
export async function extendRule(services: Services, em: EntityManager, rule: RecurringPost): Promise<number> {
  const now = services.now();
  const horizon = now.getTime() + HORIZON_DAYS * 86_400_000;
  const [{ waiting }] = await em.getConnection().execute<{ waiting: number }[]>(
    `select count(*)::int as waiting from recurring_occurrence where rule_id = ? and outcome = 'created' and scheduled_for > ?`,
    [rule.id, now],
  );
  let ahead = waiting;
  let made = 0;
  const missed: Date[] = [];
  let latest: Date | undefined;
  while (!rule.paused && rule.nextAt && rule.nextAt.getTime() <= horizon && ahead < MAX_AHEAD) {
    const at = rule.nextAt;
    const sequence = rule.made;
    if (now.getTime() - at.getTime() > MISSED_AFTER_MS) {
      const following = nextFor({ ...rule, made: rule.made + 1 }, at);
      const isLatest = rule.missed === 'latest' && (!following || now.getTime() - following.getTime() <= MISSED_AFTER_MS);
      const claimed = await claim(em, rule, at, isLatest ? 'failed' : 'missed', isLatest ? INTERRUPTED : 'Its time passed while Herald was not running: skipped.', now);
      if (claimed.stop) break;
      if (!claimed.id) continue;
      if (isLatest) {
        latest = at;
        await makeOccurrence(services, em, rule, claimed.id, sequence, now);
      } else missed.push(at);
      continue;
    }
    const claimed = await claim(em, rule, at, 'failed', INTERRUPTED, now);
    if (claimed.stop) break;
    if (!claimed.id) continue;
    await makeOccurrence(services, em, rule, claimed.id, sequence, at);
    made++;
    if (at.getTime() > now.getTime()) ahead++;
  }
  if (missed.length > 0) await notifyMissed(services, em, rule, missed, latest);
  return made;
}

/** The recurrence job's run: every rule whose next occurrence falls within the horizon is extended. */
export async function extendDueRules(services: Services, limit = 200): Promise<number> {
  const now = services.now();
  const due = await services.orm.em.fork().find(RecurringPostSchema, { paused: false, nextAt: { $lte: new Date(now.getTime() + HORIZON_DAYS * 86_400_000) } }, { orderBy: { nextAt: 'asc' }, limit });
  let made = 0;
  for (const stale of due) {
    const em = services.orm.em.fork();
    const rule = await em.findOne(RecurringPostSchema, { id: stale.id });
    if (!rule) continue;
    try {
      made += await extendRule(services, em, rule);
    } catch (error) {
      services.logger.warn({ err: (error as Error).message, recurringPostId: rule.id }, 'could not extend a recurring post');
    }
  }
  return made;
}
