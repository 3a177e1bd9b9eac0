// What the chat providers' recoveries share (DESIGN.md §9 "Recovery identifies exactly one item"): the clock skew allowed
// between Herald and a platform when a lookup asks for "created at or after the interrupted call began", and the error
// that stops an item when a lookup can neither find the item nor prove that nothing was created.
import { notSupported } from '../src/errors.js';

/** How far a platform's clock may run behind Herald's: a lookup reads from this long before the call began. */
export const CLOCK_SKEW_MS = 2 * 60_000;

/** The earliest time the interrupted call's item may carry on the platform's clock. */
export const earliestCreation = (startedAt: Date) => startedAt.getTime() - CLOCK_SKEW_MS;

/**
 * Stops the item with "could not confirm": its words are stored as the item's error as they are (the core keeps the message of
 * a not_supported error verbatim), so the person checks the account instead of Herald posting a second copy.
 */
export function couldNotConfirm(platform: string, why: string, where = 'the account'): Error {
  return notSupported(`Could not confirm whether ${platform} published this item: ${why}. Check ${where} before publishing again, to avoid a duplicate.`);
}
