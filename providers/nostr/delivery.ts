// Where a published note stands on each relay of the channel, kept on the item (`meta.relays`, JSON relay → state) and said
// to the person as item warnings. A note is published once one relay accepted it; a relay that was down or gave no answer is
// `pending`: Herald sends it the very same signed event again later (src/jobs/nostr-redelivery.ts), so the relay ends up with
// the note, or says why not. A relay that refused it for a reason another attempt would not change is `refused`.
// OK message prefixes: NIP-01 (https://github.com/nostr-protocol/nips/blob/master/01.md, read 2026-11-26).
import type { Event } from 'nostr-tools/pure';
import { publishToRelays, type RelayAnswer } from './relays.js';
import type { Dial } from '../types.js';

/** OK false prefixes (NIP-01) that another attempt would not change. */
export const FINAL_REFUSALS = ['invalid:', 'blocked:', 'restricted:', 'pow:', 'auth-required:', 'duplicate:'];

/** relay URL → "OK[ message]", "pending: reason", "refused: reason", or "missed: reason" once Herald stopped trying. */
export type Delivery = Record<string, string>;

const isFinal = (answer: RelayAnswer) => answer.answered && FINAL_REFUSALS.some((prefix) => answer.message.startsWith(prefix));

function stateOf(answer: RelayAnswer): string {
  if (answer.accepted) return `OK${answer.message ? ` ${answer.message}` : ''}`;
  return `${isFinal(answer) ? 'refused' : 'pending'}: ${answer.message || 'no reason given'}`;
}

export const deliveryOf = (answers: RelayAnswer[]): Delivery => Object.fromEntries(answers.map((answer) => [answer.relay, stateOf(answer)]));

export const pendingRelays = (delivery: Delivery) => Object.keys(delivery).filter((relay) => delivery[relay].startsWith('pending:'));

/** Every warning of this module starts so, which lets a re-delivery replace them and keep the item's other warnings. */
const PREFIX = 'Relay ';

/** The sentences for the person: one per relay that does not hold the note. */
export function deliveryWarnings(delivery: Delivery): string[] {
  return Object.entries(delivery).flatMap(([relay, state]) => {
    if (state.startsWith('pending:')) return [`${PREFIX}${relay} did not accept the note yet (${state.slice(9)}); Herald will send it again when the relay is back.`];
    if (state.startsWith('refused:')) return [`${PREFIX}${relay} refused the note (${state.slice(9)}); other relays have it.`];
    if (state.startsWith('missed:')) return [`${PREFIX}${relay} never received the note: ${state.slice(8)}; other relays have it.`];
    return [];
  });
}

export const isDeliveryWarning = (warning: string) => warning.startsWith(PREFIX);

/** The item's meta with this delivery: `relays` as JSON, and `pendingRelays` (comma-separated) while any is pending. */
export function deliveryMeta(meta: Record<string, string>, delivery: Delivery): Record<string, string> {
  const { pendingRelays: _previous, ...rest } = meta;
  const pending = pendingRelays(delivery);
  return { ...rest, relays: JSON.stringify(delivery), ...(pending.length > 0 ? { pendingRelays: pending.join(',') } : {}) };
}

/**
 * Sends the same signed event to the relays still pending and answers the delivery after it. `last`: this was the last
 * attempt, so a relay still pending becomes refused, with how many attempts were made. `dial`: the channel's SSRF check
 * (a relay the user typed is dialled at the checked address, as at publish time).
 */
export async function redeliver(delivery: Delivery, event: Event, attempt: number, last: boolean, dial: Dial): Promise<Delivery> {
  const pending = pendingRelays(delivery);
  const answers = pending.length > 0 ? await publishToRelays(pending, event, dial) : [];
  const next: Delivery = { ...delivery, ...deliveryOf(answers) };
  if (last) {
    for (const relay of pendingRelays(next)) next[relay] = `missed: Herald stopped after ${attempt + 1} attempts (the last: ${next[relay].slice(9)})`;
  }
  return next;
}
