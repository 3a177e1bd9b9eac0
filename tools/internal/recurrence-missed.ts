// After downtime Herald never publishes a backlog of a recurring post (the anchor re-published a whole backlog at once and
// got a customer's account banned). An occurrence is missed when its time passed more than MISSED_AFTER_MS before Herald
// got to it (it was not running, or not publishing) and nobody touched it since: it is skipped (its post goes to ERROR
// with the reason, and can be retried by hand) and the organization is told. With `missed: "latest"` only the latest
// missed occurrence of the rule goes, late, once.
//
// Two places meet missed occurrences: the publish job of an occurrence made ahead (`skipMissedOccurrence`, called by
// tools/internal/publish.ts before anything is sent), and the recurrence job for dates it had not made yet
// (recurrence.ts `extendRule`). Either order gives the same answer: an occurrence is the latest missed one when no later
// occurrence of its rule is due already, made or not.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post } from '../../src/db/entities.js';
import type { RecurringPost } from '../../src/db/recurrence-entities.js';
import { excerpt } from '../../src/lib/content.js';
import { dateKey, timeKey, wallClockOf, zoneAbbreviation } from '../../src/lib/time-zone.js';
import type { Services } from '../types.js';
import { notify } from './notifications.js';
import { attachChain } from './publish-chain.js';

/** Later than this after its time, an occurrence nobody touched since counts as missed. */
export const MISSED_AFTER_MS = 15 * 60_000;

/** A rule as people call it: the start of its text. */
export const ruleLabel = (rule: Pick<RecurringPost, 'texts'>) => `"${excerpt(rule.texts[0] ?? '', 60)}"`;

/** An instant as people read it in the rule's zone: `2027-03-29 09:00 CEST`. */
export function localWhen(instant: Date, zone: string): string {
  const wall = wallClockOf(instant, zone);
  return `${dateKey(wall)} ${timeKey(wall)} ${zoneAbbreviation(instant, zone)}`;
}

/** One notification for the occurrences of a rule that were skipped (`latest`: the one that goes now instead, if any). */
export async function notifyMissed(services: Services, em: EntityManager, rule: Pick<RecurringPost, 'id' | 'organizationId' | 'integrationId' | 'texts' | 'timeZone'>, missed: Date[], latest?: Date): Promise<void> {
  const dates = missed.map((at) => localWhen(at, rule.timeZone));
  const which = dates.length === 1 ? `the occurrence of ${dates[0]} was` : `${dates.length} occurrences (${dates[0]} to ${dates.at(-1)}) were`;
  notify(
    em,
    rule.organizationId,
    'recurrence_missed',
    `Recurring post ${ruleLabel(rule)}: ${which} skipped, because their time passed while Herald was not running; Herald never publishes a backlog.` +
      (latest ? ` As the rule asks, only the latest missed one (${localWhen(latest, rule.timeZone)}) is published now.` : ' The next occurrences follow the rule.'),
    `${services.config.publicUrl}/recurring-posts/${rule.id}`,
    undefined,
    rule.integrationId,
    { target: { kind: 'recurring_post', id: rule.id } },
  );
  await em.flush();
}

/**
 * Before an occurrence made ahead is published: skips it when it was missed (see the top of this file) and it is not the
 * one a `latest` rule lets go. Answers true when it was skipped (the chain is in ERROR, the organization told).
 */
export async function skipMissedOccurrence(services: Services, em: EntityManager, chain: Post[]): Promise<boolean> {
  const root = chain[0];
  const now = services.now();
  if (root.releaseId || root.attemptStartedAt || root.attempts > 0) return false;
  // Touched after its time (approved late, retried, moved): a person's decision, not a backlog.
  const since = Math.max(root.publishDate.getTime(), root.updatedAt.getTime());
  if (now.getTime() - since <= MISSED_AFTER_MS) return false;
  const [occurrence] = await em.getConnection().execute<{ id: string; scheduled_for: Date; missed: string; later: boolean; rule_id: string; texts: string[]; time_zone: string }[]>(
    `select o.id, o.scheduled_for, o.rule_id, r.missed, r.texts, r.time_zone,
            (exists (select 1 from recurring_occurrence later where later.rule_id = o.rule_id and later.scheduled_for > o.scheduled_for and later.scheduled_for <= ?)
              or (r.next_at is not null and r.next_at <= ? and not r.paused)) as later
       from recurring_occurrence o join recurring_post r on r.id = o.rule_id where o.post_id = ?`,
    [now, now, root.id],
  );
  if (!occurrence || (occurrence.missed === 'latest' && !occurrence.later)) return false;
  const at = new Date(occurrence.scheduled_for);
  // The publication read the chain detached (publish-chain.ts): attached, the skip below is written by the flush.
  attachChain(em, chain);
  for (const item of chain) {
    item.state = 'ERROR';
    item.error = `Skipped: its time (${localWhen(root.publishDate, occurrence.time_zone)}) passed while Herald was not running, and a recurring post never publishes a backlog. Retry it to publish it now.`;
  }
  await em.getConnection().execute(`update recurring_occurrence set outcome = 'missed', error = ? where id = ?`, ['Its time passed while Herald was not running: skipped.', occurrence.id]);
  await notifyMissed(services, em, { id: occurrence.rule_id, organizationId: root.organizationId, integrationId: root.integrationId, texts: occurrence.texts, timeZone: occurrence.time_zone }, [at]);
  return true;
}
