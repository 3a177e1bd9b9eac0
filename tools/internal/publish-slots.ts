// Publishing calls in flight, bounded per account and per platform by what each platform allows (Provider.concurrency,
// defaults in providers/shared.ts), in this worker process (DESIGN.md §11): waiting on a platform costs a slot of these
// gates, never one of the worker's CPU slots, and holds no database connection. A post whose slot is further off than the
// caller accepts is not queued here: it is told when it will go (publish.ts re-schedules it and says why).
import { concurrencyOf } from '../../providers/shared.js';
import type { Provider } from '../../providers/types.js';

/**
 * How long a call holds its slot (ms), a running mean per gate key, kept when the gate goes (the next burst on the account
 * starts from what the last one saw); a new account starts from its platform's, a new platform from a second.
 */
const heldMs = new Map<string, number>();
const HELD_KEYS = 10_000;
const FIRST_GUESS_MS = 1000;

class Gate {
  active = 0;
  readonly waiting: (() => void)[] = [];
  /** A running mean of how long a call holds its slot (ms), to say when a post further back will go. */
  meanMs: number;
  constructor(
    readonly limit: number,
    key: string,
  ) {
    this.meanMs = heldMs.get(key) ?? heldMs.get(key.split('\u0000')[0]) ?? FIRST_GUESS_MS;
  }
  /** How long the next comer would wait for a slot (0 when one is free). */
  waitMs(): number {
    if (this.active < this.limit) return 0;
    return Math.ceil((this.waiting.length + 1) / this.limit) * this.meanMs;
  }
}

/** The gates in use: one per account and one per platform; a gate goes once nothing holds or awaits it. */
const gates = new Map<string, Gate>();

const gate = (key: string, limit: number) => gates.get(key) ?? new Gate(limit, key);

/** Takes a slot of the gate `key` (looked up at the moment of entering: a gate left empty is gone), waiting for one. */
async function enter(key: string, limit: number): Promise<Gate> {
  let entered = gates.get(key);
  if (!entered) gates.set(key, (entered = new Gate(limit, key)));
  if (entered.active < entered.limit && entered.waiting.length === 0) {
    entered.active += 1;
    return entered;
  }
  // The slot is handed over by `leave` (active stays counted, so the gate stays).
  await new Promise<void>((resolve) => entered.waiting.push(resolve));
  return entered;
}

function leave(key: string, left: Gate, held: number): void {
  left.meanMs = left.meanMs * 0.8 + held * 0.2;
  heldMs.delete(key);
  heldMs.set(key, left.meanMs);
  if (heldMs.size > HELD_KEYS) heldMs.delete(heldMs.keys().next().value!);
  const next = left.waiting.shift();
  if (next) return next();
  left.active -= 1;
  if (left.active === 0) gates.delete(key);
}

/** A platform's limit that keeps a post from going now: which one, how many it allows, and when the post would go. */
export interface Busy {
  scope: 'account' | 'platform';
  limit: number;
  /** Calls in flight and posts waiting before this one. */
  ahead: number;
  waitMs: number;
}

/**
 * Takes a slot of `provider` for the account `account` (its id on the platform), waiting for one when the wait is at most
 * `maxWaitMs`; answers the release (call it once the platform answered), or what stands in the way when the wait is longer.
 */
export async function takeSlot(provider: Pick<Provider, 'identifier' | 'concurrency'>, account: string, maxWaitMs: number): Promise<{ release: () => void } | { busy: Busy }> {
  const limits = concurrencyOf(provider);
  const accountKey = `${provider.identifier}\u0000${account}`;
  const platformKey = provider.identifier;
  const perAccount = gate(accountKey, limits.perAccount);
  const perPlatform = gate(platformKey, limits.perPlatform);
  // The longer of the two waits decides (the account's gate is taken first, then the platform's: the same order for every
  // post, so no two deadlock).
  const accountWait = perAccount.waitMs();
  const platformWait = perPlatform.waitMs();
  const scope = accountWait >= platformWait ? 'account' : 'platform';
  const waitMs = Math.max(accountWait, platformWait);
  if (waitMs > maxWaitMs) {
    const busy = scope === 'account' ? perAccount : perPlatform;
    return { busy: { scope, limit: busy.limit, ahead: busy.active + busy.waiting.length, waitMs } };
  }
  const accountGate = await enter(accountKey, limits.perAccount);
  const platformGate = await enter(platformKey, limits.perPlatform);
  const started = Date.now();
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      const held = Date.now() - started;
      leave(platformKey, platformGate, held);
      leave(accountKey, accountGate, held);
    },
  };
}

/**
 * Forgets the call times measured so far: every gate estimates from the first guess again. For tests that hold a slot to see
 * a post told it is far off (with the times of earlier tests in the same process it would be told it goes soon, and wait).
 */
export function forgetCallTimes(): void {
  heldMs.clear();
}

/** Publishing calls in flight in this process, per platform (for /metrics and tests). */
export function slotsInUse(identifier: string): number {
  return gates.get(identifier)?.active ?? 0;
}
