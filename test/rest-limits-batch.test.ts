// Concurrent REST requests share one statement for their keys and rate-limit counts (tools/internal/credentials.ts,
// countInBatch): what each of them gets must be exactly what the same requests counted one after another would get.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { resolveApiKeyCounting } from '../tools/internal/credentials.js';
import { MINUTE_MS } from '../src/lib/rate-limit.js';

const AT = new Date('2031-03-10T10:30:30.000Z');
const NEXT_MINUTE = new Date('2031-03-10T10:31:30.000Z');

describe('REST keys and rate limits counted in batches', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald();
  });
  afterAll(async () => herald?.stop());

  const count = (key: string, limit: number, now: Date) =>
    resolveApiKeyCounting(herald.services.orm.em.fork(), key, { name: 'rest_minute', limit, windowMs: MINUTE_MS, now });

  it('twelve requests at once against a limit of 5: the first five allowed (4..0 remaining), seven refused, then the next one too', async () => {
    const { apiKey } = await herald.newOrganization('Batch one');
    const answers = await Promise.all(Array.from({ length: 12 }, () => count(apiKey, 5, AT)));
    const allowed = answers.filter((answer) => answer!.limit.allowed);
    expect(allowed.map((answer) => answer!.limit.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
    const refused = answers.filter((answer) => !answer!.limit.allowed);
    expect(refused).toHaveLength(7);
    for (const answer of refused) expect(answer!.limit).toMatchObject({ remaining: 0, resetSeconds: 42 });
    expect((await count(apiKey, 5, AT))!.limit.allowed).toBe(false);
  });

  it('the previous minute weighs in: 4 requests then, half a minute into the next, 3 of 6 fit a limit of 5', async () => {
    const { apiKey } = await herald.newOrganization('Batch two');
    await Promise.all(Array.from({ length: 4 }, () => count(apiKey, 5, AT)));
    const answers = await Promise.all(Array.from({ length: 6 }, () => count(apiKey, 5, NEXT_MINUTE)));
    expect(answers.filter((answer) => answer!.limit.allowed)).toHaveLength(3);
  });

  it('one batch of several organizations, an unknown key and a revoked one: each counted on its own, the others not at all', async () => {
    const first = await herald.newOrganization('Batch three');
    const second = await herald.newOrganization('Batch four');
    const made = await herald.rest('POST', '/keys', { name: 'Soon revoked' }, { authorization: second.apiKey });
    expect(made.status).toBe(201);
    expect((await herald.rest('DELETE', `/keys/${made.body.key.id}`, undefined, { authorization: second.apiKey })).status).toBe(200);
    const keys = [first.apiKey, second.apiKey, 'hrld_unknown-key-value', made.body.secret, first.apiKey, second.apiKey, first.apiKey];
    const answers = await Promise.all(keys.map((key) => count(key, 2, AT)));
    expect(answers[2]).toBeUndefined();
    expect(answers[3]).toBeUndefined();
    const of = (organizationId: string) => answers.filter((answer) => answer?.caller.organizationId === organizationId).map((answer) => answer!.limit.allowed);
    expect(of(first.organizationId)).toEqual([true, true, false]);
    expect(of(second.organizationId)).toEqual([true, true]);
  });

  it("a key's own per-minute limit is counted in the same batch and named as the key's", async () => {
    const made = await herald.rest('POST', '/keys', { name: 'Throttled in a batch', requestsPerMinute: 2 });
    expect(made.status).toBe(201);
    const secret = made.body.secret;
    const answers = await Promise.all(Array.from({ length: 5 }, () => count(secret, 100, AT)));
    expect(answers.map((answer) => answer!.limit.allowed)).toEqual([true, true, false, false, false]);
    expect(answers.slice(2).every((answer) => answer!.limitOfKey)).toBe(true);
    // The organization's window counted all five.
    expect((await count(herald.apiKey, 100, AT))!.limit.remaining).toBe(94);
  });
});
