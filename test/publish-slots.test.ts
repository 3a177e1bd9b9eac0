// The publishing gates' estimate of when a post further back goes (tools/internal/publish-slots.ts): a running mean of how
// long a call holds its slot, kept per account when its gate goes, so the next burst on the account starts from what the
// last one saw (and a new account from its platform's) instead of the first guess of a second a call.
import { describe, expect, it } from 'vitest';
import { takeSlot } from '../tools/internal/publish-slots.js';

const platform = (identifier: string) => ({ identifier, concurrency: { perAccount: 1, perPlatform: 100 } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The wait `takeSlot` announces for the third post on a busy account: two calls ahead of it, one at a time. */
async function announcedWait(identifier: string, account: string): Promise<number> {
  const first = await takeSlot(platform(identifier), account, Infinity);
  const second = takeSlot(platform(identifier), account, Infinity);
  const third = await takeSlot(platform(identifier), account, 0);
  if (!('release' in first)) throw new Error('the first call waits');
  first.release();
  const next = await second;
  if ('release' in next) next.release();
  if (!('busy' in third)) throw new Error('the third call was not held back');
  return third.busy.waitMs;
}

describe('the wait announced for a post held back by a platform limit', () => {
  it('starts from a second a call on an account never seen, and from what it measured once calls were made', async () => {
    const fresh = await announcedWait('slots-test', 'a');
    expect(fresh).toBe(2000);
    // Calls of about 20 ms on the account, enough for the running mean to settle near them.
    for (let call = 0; call < 40; call++) {
      const slot = await takeSlot(platform('slots-test'), 'a', Infinity);
      await sleep(20);
      if ('release' in slot) slot.release();
    }
    // The gate went when the last call left; the next burst's estimate is the account's measured mean, not a second.
    const measured = await announcedWait('slots-test', 'a');
    expect(measured).toBeLessThan(400);
    // Another account of the platform starts from the platform's mean.
    expect(await announcedWait('slots-test', 'b')).toBeLessThan(2000);
  });
});
