// Google Business Profile changes through Herald against the fake (issue 24): localPosts.patch with an updateMask of every
// field the post's type carries (a button taken out is cleared), once; a change of type refused before anything is sent;
// localPosts.delete, and its repeat after a lost answer (NOT_FOUND) counted as done; a location no longer managed refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { startGmbFake, type GmbFake } from '../fakes/gmb.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, publishedPost } from '../helpers/posts.js';
import { changeUntilSettled } from '../helpers/after-publishing.js';

let fake: GmbFake;
let herald: Herald;
let channel: string;

beforeAll(async () => {
  fake = await startGmbFake();
  herald = await startHerald(
    { GMB_CLIENT_ID: fake.authority.clientId, GMB_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ gmb: fake.endpoints }) },
    { guard: { allowLoopback: true } },
  );
  channel = (await connectOAuthChannel(herald, 'gmb')).integrationId;
  const chosen = await herald.rest('POST', `/integrations/${channel}/accounts`, { id: 'accounts/111/locations/1001' });
  expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
});

afterEach(() => {
  // Every request Herald sent matched the Business Profile APIs' Discovery documents (test/contracts/gmb/).
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

async function published(text: string, settings: Record<string, unknown>) {
  const id = await publishedPost(herald, channel, [text], { settings: { __type: 'gmb', ...settings }, allowDuplicate: true });
  const [item] = await chainOf(herald, id);
  return { id, item, post: fake.posts.find((post) => post.name === item.releaseId)! };
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

describe('editing a local post', () => {
  it('patches the summary with every field of its type in the mask, clearing a button taken out, once', async () => {
    const { id, post } = await published('Fresh bread every mornnig', { topicType: 'STANDARD', callToActionType: 'LEARN_MORE', callToActionUrl: 'https://bakery.example' });
    const answer = await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Fresh bread every morning', image: [] }], settings: { __type: 'gmb', topicType: 'STANDARD' } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
    expect(post.patches).toEqual([{ updateMask: 'summary,callToAction', body: { summary: 'Fresh bread every morning' } }]);
    expect(post.body.summary).toBe('Fresh bread every morning');
    expect(post.body.callToAction).toBeUndefined();
    expect(post.body.topicType).toBe('STANDARD');
  });

  it('refuses a change of type before anything is sent', async () => {
    const { id, post } = await published('Plain update', { topicType: 'STANDARD' });
    const answer = await herald.rest('PUT', `/posts/${id}`, {
      value: [{ content: 'Now an event', image: [] }],
      settings: { __type: 'gmb', topicType: 'EVENT', eventTitle: 'Open day', eventStartDate: '2026-12-01', eventEndDate: '2026-12-02' },
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(answer.body)).toMatch(/keeps its type/);
    expect(post.patches).toBeUndefined();
  });
});

describe('deleting a local post', () => {
  it('deletes it once; the repeat after a lost answer (NOT_FOUND) is done and deletes nothing else', async () => {
    const keep = await published('Stays', { topicType: 'STANDARD' });
    const { id, post } = await published('Short-lived', { topicType: 'STANDARD' });
    expect((await herald.rest('DELETE', `/posts/${id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE');
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(post.deleted).toBe(true);
    expect(keep.post.deleted).toBeUndefined();
    expect(fake.server.requestsTo('DELETE', '/mybusiness/v4/accounts/*/locations/*/localPosts/*').map((request) => request.path)).toEqual([`/mybusiness/v4/${post.name}`, `/mybusiness/v4/${post.name}`]);
  });
});
