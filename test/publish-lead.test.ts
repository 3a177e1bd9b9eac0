// A post's job runs PUBLISH_LEAD_MS before its date (tools/internal/queue.ts): the run takes the post's lock and reads its
// chain ahead, then waits for the date before it calls the platform. Nothing goes before the date, and a post changed while
// its run waits (an edit, a delete) goes as it is then, or not at all: the attempt is recorded only for the item as the run
// read it (publish-outcome.ts), else the run reads the chain again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { chainOf, createPost, waitFor } from './helpers/posts.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import type { Worker } from '../src/jobs/index.js';
import { PUBLISH_LEAD_MS, publishJobKey } from '../tools/internal/queue.js';

let mastodon: MastodonFake;
let herald: Herald;
let worker: Worker;
let channel: string;
/** When the fake received each status, by its text. */
const receivedAt = new Map<string, number>();

beforeAll(async () => {
  mastodon = await startMastodonFake();
  herald = await startHerald();
  const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channel = connected.body.id;
  worker = await herald.startWorker();
  // The statuses as they arrive (the fake's list, watched every few milliseconds).
  const watch = setInterval(() => {
    for (const status of mastodon.statuses) if (!receivedAt.has(status.status)) receivedAt.set(status.status, Date.now());
  }, 5);
  watch.unref();
});

afterAll(async () => {
  await worker?.stop();
  await herald?.stop();
  await mastodon?.close();
});

/** The publishing job of a post, while it exists: its run time and whether a run holds it. */
async function jobOf(rootId: string): Promise<{ runAt: Date; locked: boolean } | undefined> {
  const rows = await herald.services.orm.em
    .fork()
    .getConnection()
    .execute<{ run_at: Date; locked_at: Date | null }[]>('select run_at, locked_at from graphile_worker.jobs where key = ?', [publishJobKey(rootId)]);
  return rows[0] ? { runAt: new Date(rows[0].run_at), locked: rows[0].locked_at !== null } : undefined;
}

/** Waits until the post's run has started (its job locked): it has read the chain and waits for the post's date. */
const runStarted = (rootId: string) => waitFor(async () => ((await jobOf(rootId))?.locked ? true : undefined), 10_000, 10);

const sent = (text: string) => mastodon.statuses.filter((status) => status.status === text);

describe('a post whose job runs ahead of its date', () => {
  it('has its job a lead ahead of its date, and reaches the platform at its date, not before', async () => {
    const date = new Date(Date.now() + 4000);
    const rootId = await createPost(herald, channel, ['Lead on time'], { date });
    expect((await jobOf(rootId))!.runAt.getTime()).toBe(date.getTime() - PUBLISH_LEAD_MS);
    await runStarted(rootId);
    // The run started ahead of the date.
    expect(Date.now()).toBeLessThan(date.getTime());
    await waitFor(async () => (receivedAt.has('Lead on time') ? true : undefined), 15_000, 10);
    expect(receivedAt.get('Lead on time')!).toBeGreaterThanOrEqual(date.getTime());
    expect(sent('Lead on time')).toHaveLength(1);
  }, 30_000);

  it('edited while its run waits for the date: the edited text goes, once', async () => {
    const date = new Date(Date.now() + 4000);
    const rootId = await createPost(herald, channel, ['Lead before the edit'], { date });
    await runStarted(rootId);
    const edited = await herald.rest('PUT', `/posts/${rootId}`, { value: [{ content: 'Lead after the edit', image: [] }] });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(Date.now()).toBeLessThan(date.getTime());
    await waitFor(async () => (receivedAt.has('Lead after the edit') ? true : undefined), 15_000, 10);
    // The run's chain was read before the edit: had it sent what it read, the old text would be on the platform.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(sent('Lead before the edit')).toHaveLength(0);
    expect(sent('Lead after the edit')).toHaveLength(1);
    const [item] = await chainOf(herald, rootId);
    expect(item.state).toBe('PUBLISHED');
    expect(item.content).toContain('Lead after the edit');
  }, 30_000);

  it('deleted while its run waits for the date: nothing goes', async () => {
    const date = new Date(Date.now() + 4000);
    const rootId = await createPost(herald, channel, ['Lead then deleted'], { date });
    await runStarted(rootId);
    const deleted = await herald.rest('DELETE', `/posts/${rootId}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, date.getTime() - Date.now() + 1500));
    expect(sent('Lead then deleted')).toHaveLength(0);
  }, 30_000);
});

describe('a post scheduled months ahead', () => {
  it('sets no timer in the worker until the look-ahead reaches it (a timer past 24.8 days fired every millisecond)', async () => {
    const overflows: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'TimeoutOverflowWarning') overflows.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      await createPost(herald, channel, ['Lead next season'], { date: new Date(Date.now() + 60 * 86_400_000) });
      // The worker heard the NOTIFY of its job (at commit) well within this.
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      process.off('warning', onWarning);
    }
    expect(overflows).toEqual([]);
  }, 30_000);
});
