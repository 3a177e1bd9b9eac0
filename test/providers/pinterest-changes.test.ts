// Changing what went out on Pinterest (issue 24) through Herald against the fake API v5, every request checked against the
// vendored OpenAPI release: pins/update with the new description, title, link and board, once; a title taken out of the
// settings cleared with null; an app without the pins/update beta refused with Pinterest's words; pins/delete, and its repeat
// after a lost answer (404) counted as done; another account's pin refused.
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChangeOutcome } from '../../tools/internal/platform-change-run.js';
import { startPinterestFake, type PinterestFake } from '../fakes/pinterest.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { uploaded } from '../helpers/media-samples.js';
import { loseAnswerOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled } from '../helpers/posts.js';
import { changeUntilSettled } from '../helpers/after-publishing.js';

let fake: PinterestFake;
let herald: Herald;
let channel: string;

beforeAll(async () => {
  fake = await startPinterestFake();
  herald = await startHerald(
    {
      PINTEREST_CLIENT_ID: fake.authority.clientId,
      PINTEREST_CLIENT_SECRET: fake.authority.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ pinterest: fake.endpoints }),
      PUBLISH_RECHECK_MAX_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  channel = (await connectOAuthChannel(herald, 'pinterest')).integrationId;
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

afterEach(() => {
  expect(fake.contractViolations).toEqual([]);
  fake.pinUpdateBeta = true;
});

const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'pinterest', board: fake.boards[0].id, ...extra });

async function publishedPin(text: string, extra: Record<string, unknown>) {
  const png = await sharp({ create: { width: 60, height: 90, channels: 3, background: { r: 20, g: 90, b: 60 } } }).png().toBuffer();
  const media = await uploaded(herald, png, 'pin.png');
  const id = await createPost(herald, channel, [{ content: text, image: [media] }], { settings: settings(extra), allowDuplicate: true });
  expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
  const [item] = await chainOf(herald, id);
  return { id, item, media, pin: fake.pins.find((pin) => pin.id === item.releaseId)! };
}

const settleChanges = (rootId: string) => changeUntilSettled(herald, rootId);

describe('editing a pin', () => {
  it('updates the description, title, link and board with one PATCH, and clears a title taken out', async () => {
    const { id, media, pin } = await publishedPin('Frist palette', { title: 'Autumn', link: 'https://example.com/a' });
    const answer = await herald.rest('PUT', `/posts/${id}`, {
      value: [{ content: 'First palette', image: [media] }],
      settings: settings({ board: fake.boards[1].id, link: 'https://example.com/b' }),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await settleChanges(id)).at(-1)).toEqual({ kind: 'done' });
    expect(pin.updates).toEqual([{ board_id: fake.boards[1].id, title: null, description: 'First palette', link: 'https://example.com/b' }]);
    expect(pin).toMatchObject({ board_id: fake.boards[1].id, title: undefined, description: 'First palette', link: 'https://example.com/b' });
    expect(fake.server.requestsTo('PATCH', '/api/v5/pins/*')).toHaveLength(1);
    const [item] = await chainOf(herald, id);
    expect(item.content).toContain('First palette');
  });

  it("fails the edit with Pinterest's words when the app has no access to the pins/update beta, changing nothing", async () => {
    const { id, media, pin } = await publishedPin('Beta only', { title: 'Beta' });
    fake.pinUpdateBeta = false;
    expect((await herald.rest('PUT', `/posts/${id}`, { value: [{ content: 'Beta only, edited', image: [media] }], settings: settings({ title: 'Beta' }) })).status).toBe(200);
    expect((await settleChanges(id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/beta endpoint/) });
    expect(pin.description).toBe('Beta only');
    expect(pin.updates).toEqual([]);
  });
});

describe('deleting a pin', () => {
  it('deletes the pin once; the repeat after a lost answer (404) is done and deletes nothing else', async () => {
    const other = await publishedPin('Stays', {});
    const { id, pin } = await publishedPin('Short-lived', {});
    expect((await herald.rest('DELETE', `/posts/${id}`, { deleteOnPlatform: true })).status).toBe(200);
    const restore = loseAnswerOf(herald, (request) => request.method === 'DELETE');
    let runs: ChangeOutcome[];
    try {
      runs = await settleChanges(id);
    } finally {
      restore();
    }
    expect(runs.at(-1)).toEqual({ kind: 'done' });
    expect(pin.deleted).toBe(true);
    expect(other.pin.deleted).toBeUndefined();
    expect(fake.server.requestsTo('DELETE', '/api/v5/pins/*').map((request) => request.path)).toEqual([`/api/v5/pins/${pin.id}`, `/api/v5/pins/${pin.id}`]);
  });

  it("fails the deletion of a pin Pinterest says is not the account's", async () => {
    const { id, pin } = await publishedPin('Not mine any more', {});
    pin.foreign = true;
    expect((await herald.rest('DELETE', `/posts/${id}`, { deleteOnPlatform: true })).status).toBe(200);
    expect((await settleChanges(id)).at(-1)).toMatchObject({ kind: 'failed', error: expect.stringMatching(/not permitted/) });
    expect(pin.deleted).toBeUndefined();
  });
});
