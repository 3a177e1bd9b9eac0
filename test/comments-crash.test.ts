// A reply to a comment survives a kill -9 of a real Herald process between "attempt started" and the platform's answer:
// the fake Mastodon made the status and was slow to answer; the next start recovers it (the create's Idempotency-Key
// answers the same status) and the comment gets exactly one reply.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTestDatabase, restCall } from './helpers/harness.js';
import { startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { waitFor } from './helpers/posts.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';

let mastodon: MastodonFake;
const running: HeraldProcess[] = [];

beforeAll(async () => {
  mastodon = await startMastodonFake();
}, 60_000);

afterAll(async () => {
  for (const process of running) await process.stop().catch(() => undefined);
  await mastodon?.close();
});

const rest = (herald: HeraldProcess, apiKey: string, method: string, route: string, body?: unknown) => restCall(`${herald.url}/api/public/v1`, apiKey, method, route, body);

it('publishes the reply once after a kill -9 while the platform was answering', async () => {
  const databaseUrl = await newTestDatabase();
  // The fake instance lives on 127.0.0.1, which the production guard refuses for a typed instance URL.
  const env = { DATABASE_URL: databaseUrl, COMMENT_POLL_SECONDS: '5', DISABLE_SSRF_PROTECTION: 'true' };
  const first = await startHeraldProcess({ env });
  running.push(first);
  const apiKey = first.apiKey!;
  const channel = await rest(first, apiKey, 'POST', '/integrations/mastodon/connect', { instance: mastodon.url, accessToken: mastodon.token });
  expect(channel.status, JSON.stringify(channel.body)).toBe(200);
  const created = await rest(first, apiKey, 'POST', '/posts', {
    type: 'now', date: new Date().toISOString(), shortLink: false, tags: [],
    posts: [{ integration: { id: channel.body.id }, value: [{ content: 'Crash me a reply', image: [] }], settings: {} }],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const postId = created.body[0].postId as string;

  const database = new pg.Client({ connectionString: databaseUrl });
  await database.connect();
  try {
    const releaseId = await waitFor(async () => {
      const { rows } = await database.query<{ release_id: string | null }>(`select release_id from post where id = $1 and state = 'PUBLISHED'`, [postId]);
      return rows[0]?.release_id ?? undefined;
    }, 30_000);
    const question = mastodon.addReply('Will it survive a crash?', { inReplyToId: releaseId });
    const comment = await waitFor(async () => (await rest(first, apiKey, 'GET', `/comments?post=${postId}`)).body.comments?.[0], 30_000);
    expect(comment).toMatchObject({ platformId: question.id, state: 'new' });

    // The instance makes the status at once and answers 5 seconds later: the kill lands in between.
    mastodon.server.setDelay(5000);
    const reply = await rest(first, apiKey, 'POST', `/comments/${comment.id}/reply`, { content: 'It will.' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    await waitFor(async () => (mastodon.statuses.some((status) => status.in_reply_to_id === question.id) ? true : undefined), 30_000);
    const { rows: inFlight } = await database.query<{ attempt_started_at: Date | null; state: string }>(`select attempt_started_at, state from post where id = $1`, [reply.body.postId]);
    expect(inFlight[0]).toMatchObject({ state: 'QUEUE', attempt_started_at: expect.any(Date) });
    first.kill('group');
    await first.exited;
    mastodon.server.setDelay(0);

    const second = await startHeraldProcess({ env });
    running.push(second);
    const settled = await waitFor(async () => {
      const { rows } = await database.query<{ state: string; release_id: string | null }>(`select state, release_id from post where id = $1`, [reply.body.postId]);
      return rows[0]?.state === 'PUBLISHED' || rows[0]?.state === 'ERROR' ? rows[0] : undefined;
    }, 60_000);
    const replies = mastodon.statuses.filter((status) => status.in_reply_to_id === question.id);
    expect(replies.map((status) => status.status)).toEqual(['It will.']);
    expect(settled).toEqual({ state: 'PUBLISHED', release_id: replies[0].id });
    const { rows: stored } = await database.query<{ state: string }>(`select state from comment where id = $1`, [comment.id]);
    expect(stored[0].state).toBe('answered');
  } finally {
    await database.end();
  }
}, 240_000);
