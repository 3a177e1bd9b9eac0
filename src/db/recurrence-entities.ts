// Recurring posts (tools/internal/recurrence.ts): a rule that repeats a post every N days or weeks on chosen weekdays at a
// wall-clock time of a zone, and the occurrences it made (each an ordinary post, or a date it skipped). An occurrence row
// is claimed (unique per rule and date) before its post is made, so no date is ever made twice.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PostApproval, StoredMedia } from './entities.js';

const timestamp = () => p.datetime().columnType('timestamptz');

export const recurrenceUnits = ['day', 'week'] as const;
export type RecurrenceUnit = (typeof recurrenceUnits)[number];
/** After downtime: `skip` every missed occurrence (each told in a notification), or publish only the `latest` one. */
export const missedPolicies = ['skip', 'latest'] as const;
export type MissedPolicy = (typeof missedPolicies)[number];

export const RecurringPostSchema = defineEntity({
  name: 'RecurringPost',
  tableName: 'recurring_post',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    integrationId: p.string(),
    /** The text (HTML as in posts) and its variations: occurrence n uses texts[n % texts.length]. */
    texts: p.json<string[]>(),
    settings: p.json<Record<string, unknown>>(),
    media: p.json<StoredMedia[]>(),
    unit: p.string().$type<RecurrenceUnit>(),
    interval: p.integer().fieldName('interval_count'),
    /** Monday = 0 … Sunday = 6; for days, the weekdays kept (empty: every day). */
    weekdays: p.json<number[]>(),
    /** Minutes after midnight, a wall-clock time of `timeZone`. */
    minuteOfDay: p.integer(),
    timeZone: p.string(),
    /** `YYYY-MM-DD` in `timeZone`: the first day; `endDate` the last (inclusive), or null. */
    startDate: p.string(),
    endDate: p.string().nullable(),
    /** The number of occurrences after which it ends (made, missed or failed alike), or null. */
    count: p.integer().nullable(),
    missed: p.string().$type<MissedPolicy>(),
    paused: p.boolean().default(false),
    /** Occurrences made so far (rows of recurring_occurrence): the next one's sequence number. */
    made: p.integer().default(0),
    /** The next occurrence not made yet; null once it ended. */
    nextAt: timestamp().nullable(),
    /** `credentialRef` of who made it (its posts are theirs) and how (API or MCP). */
    createdBy: p.string(),
    creationMethod: p.string(),
    /** Set when it was made or changed under the approval gate: its occurrences wait for approval. */
    approval: p.json<PostApproval>().nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
});
export type RecurringPost = InferEntity<typeof RecurringPostSchema>;

/** created: its post was made; missed: its time passed while Herald was not running (skipped); failed: the create was refused. */
export const occurrenceOutcomes = ['created', 'missed', 'failed'] as const;
export type OccurrenceOutcome = (typeof occurrenceOutcomes)[number];

export const RecurringOccurrenceSchema = defineEntity({
  name: 'RecurringOccurrence',
  tableName: 'recurring_occurrence',
  properties: {
    id: p.string().primary(),
    ruleId: p.string(),
    organizationId: p.string(),
    sequence: p.integer(),
    scheduledFor: timestamp(),
    postId: p.string().nullable(),
    outcome: p.string().$type<OccurrenceOutcome>(),
    /** SHA-256 of the post's text as made: an occurrence whose text or date a person changed keeps their edit when the rule changes. */
    contentKey: p.string().nullable(),
    error: p.text().nullable(),
    createdAt: timestamp(),
  },
});
export type RecurringOccurrence = InferEntity<typeof RecurringOccurrenceSchema>;

export const recurrenceEntities = [RecurringPostSchema, RecurringOccurrenceSchema];
