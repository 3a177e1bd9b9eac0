// Dribbble end to end: OAuth, a shot through the worker (multipart, id from Location), the picture rules at validation
// and at publish time, teams, rate limits, permanent errors, a dead token, and a lost create answer.
import sharp from 'sharp';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import dribbble from '../../providers/dribbble.js';
import { startDribbbleFake, type DribbbleFake } from '../fakes/dribbble.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { goodMp4, uploaded } from '../helpers/media-samples.js';
import { hoursAgo, loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, waitFor, submitPost, type ItemInput } from '../helpers/posts.js';

let fake: DribbbleFake;
let herald: Herald;
let channel: string;

const picture = (width: number, height: number, format: 'png' | 'jpeg' | 'gif' | 'webp' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: { r: 234, g: 76, b: 137 } } })[format]().toBuffer();


function createRaw(value: ItemInput[], settings: Record<string, unknown>) {
  return submitPost(herald, channel, value, { settings });
}

beforeAll(async () => {
  fake = await startDribbbleFake();
  herald = await startHerald(
    { DRIBBBLE_CLIENT_ID: fake.authority.clientId, DRIBBBLE_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ dribbble: fake.endpoints }) },
    { guard: { allowLoopback: true } },
  );
  channel = (await connectOAuthChannel(herald, 'dribbble')).integrationId;
});

afterAll(async () => {
  await herald.stop();
  await fake.close();
});

describe('dribbble descriptor', () => {
  it('has the spec setting title (required), plus the optional team; no refresh, comments or analytics', () => {
    const schema = z.toJSONSchema(dribbble.settings!) as { properties: Record<string, { type: string }>; required: string[] };
    expect(schema.properties.title.type).toBe('string');
    expect(schema.properties.team.type).toBe('string');
    expect(schema.required).toEqual(['title']);
    expect(dribbble.chain).toBe('none');
    expect(dribbble.refresh).toBeUndefined();
    expect(dribbble.analytics).toBeUndefined();
    expect(dribbble.rules).toMatch(/400x300, 800x600 or 1600x1200/);
  });
});

describe('dribbble connect and helpers', () => {
  it('trades the code with the client credentials in the form and loads the user', async () => {
    const [token] = fake.server.requestsTo('POST', '/web/oauth/token');
    expect(Object.fromEntries(token.form!)).toEqual({
      client_id: fake.authority.clientId,
      client_secret: fake.authority.clientSecret,
      code: expect.any(String),
      redirect_uri: `${herald.url}/api/integrations/social/dribbble/callback`,
    });
    expect(fake.server.requestsTo('GET', '/web/oauth/authorize')[0].query.get('scope')).toBe('public upload');
    const list = await herald.rest('GET', '/integrations');
    expect(list.body.find((item: { id: string }) => item.id === channel)).toMatchObject({ name: 'Herald Designs', profile: 'herald', picture: fake.user.avatar_url });
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channel });
    expect(row.tokenExpiresAt).toBeNull(); // Dribbble tokens do not expire
  });

  it('lists the teams of the account through the teams helper', async () => {
    const response = await herald.rest('POST', `/integration-trigger/${channel}`, { methodName: 'teams' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.output).toEqual([{ id: '39', name: 'Herald Studio', login: 'heraldstudio' }]);
  });

  it('answers [] for analytics: the API has none', async () => {
    const response = await herald.rest('GET', `/analytics/${channel}?date=30`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });
});

describe('dribbble shots', () => {
  it('publishes a shot through the worker: multipart upload, 202, the id from Location', async () => {
    const png = await picture(800, 600);
    const media = await uploaded(herald, png, 'shot.png');
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channel, [{ content: '<p>A new dashboard</p>', image: [media] }], { settings: { title: 'Dashboard', team: '39' } });
      const [root] = await waitFor(async () => {
        const items = await chainOf(herald, rootId);
        return items[0].state === 'PUBLISHED' ? items : undefined;
      });
      const shot = fake.shots.at(-1)!;
      expect(shot).toMatchObject({ title: 'Dashboard', description: 'A new dashboard', team_id: '39' });
      expect(shot.image.bytes.equals(png)).toBe(true);
      expect(shot.image.contentType).toBe('image/png');
      expect(root.releaseId).toBe(String(shot.id));
      expect(root.releaseUrl).toBe(`${fake.endpoints.web}/shots/${shot.id}`);
    } finally {
      await worker.stop();
    }
  });

  it('refuses at validation what Dribbble refuses, naming the sizes', async () => {
    const wrong = await uploaded(herald, await picture(640, 480), 'wrong.png');
    const webp = await uploaded(herald, await picture(400, 300, 'webp'), 'shot.webp');
    const good = await uploaded(herald, await picture(400, 300, 'gif'), 'shot.gif');
    const video = await uploaded(herald, goodMp4(), 'clip.mp4');
    const message = async (value: ItemInput[], settings: Record<string, unknown> = { title: 'T' }) => {
      const response = await createRaw(value, settings);
      expect(response.status).toBe(400);
      return response.body.message as string;
    };
    expect(await message([{ content: 'x', image: [wrong] }])).toContain(
      'Dribbble takes a picture of exactly 400x300, 800x600 or 1600x1200 pixels; this one is 640x480: resize or crop it to one of these sizes.',
    );
    expect(await message([{ content: 'x', image: [webp] }])).toContain('Dribbble takes a PNG, JPG or GIF picture; this one is image/webp: convert it.');
    expect(await message([{ content: 'x', image: [good, good] }])).toMatch(/exactly one picture/);
    expect(await message([{ content: 'x', image: [video] }])).toMatch(/exactly one picture/);
    expect(await message([{ content: 'x', image: [good] }], {})).toMatch(/settings\.title/);
    expect(await message([{ content: 'x', image: [good] }, { content: 'more', image: [] }])).toMatch(/does not support threads or comments/);
    expect((await createRaw([{ content: 'x', image: [good] }], { title: 'GIF shot' })).status).toBe(200);
  });

  it('measures a picture given by URL at publish time and fails with the same sentence, sending nothing', async () => {
    fake.pictures.set('client.png', await picture(640, 480));
    const url = `${fake.url}/img/client.png`;
    const rootId = await createPost(herald, channel, [{ content: 'By URL', image: [{ id: url, path: url }] }], { settings: { title: 'By URL' } });
    const count = fake.shots.length;
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe('Dribbble takes a picture of exactly 400x300, 800x600 or 1600x1200 pixels; this one is 640x480: resize or crop it to one of these sizes.');
    expect(fake.shots.length).toBe(count);
  });
});

describe('dribbble failures', () => {
  it('retries a 429 at the X-RateLimit-Reset time', async () => {
    const media = await uploaded(herald, await picture(400, 300), 'limit.png');
    const rootId = await createPost(herald, channel, [{ content: 'Later', image: [media] }], { settings: { title: 'Rate limited' } });
    const reset = Math.floor(Date.now() / 1000) + 600;
    fake.server.failNext('POST', '/api/v2/shots', { status: 429, headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }, json: { message: 'API rate limit exceeded.' } });
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(Math.abs(waiting.nextAttemptAt!.getTime() - reset * 1000)).toBeLessThan(2000);
    expect(waiting.lastError).toContain('API rate limit exceeded.');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.shots.filter((shot) => shot.title === 'Rate limited')).toHaveLength(1);
  });

  it('puts the post in ERROR with Dribbble\'s validation message, and notifies', async () => {
    const media = await uploaded(herald, await picture(400, 300), 'refused.png');
    const rootId = await createPost(herald, channel, [{ content: 'x', image: [media] }], { settings: { title: 'Refused' } });
    fake.server.failNext('POST', '/api/v2/shots', { status: 422, json: { message: 'Validation failed.', errors: [{ attribute: 'title', message: 'has already been taken' }] } });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe('Dribbble refused the post: Validation failed.: title has already been taken');
    const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notifications.some((notification) => notification.content.includes('title has already been taken'))).toBe(true);
  });

  /** A shot of the user published earlier with the same title. */
  const olderShot = (title: string) => {
    fake.shots.push({ id: 400_000 + fake.shots.length, title, image: { bytes: Buffer.alloc(0), contentType: 'image/png', width: 400, height: 300 }, pendingListings: 0, publishedAt: hoursAgo(72).toISOString() });
    return fake.shots.at(-1)!.id;
  };

  it('looks the shot up after a create whose answer was lost, waiting while Dribbble processes it, passing over an older shot of that title', async () => {
    const media = await uploaded(herald, await picture(1600, 1200), 'lost.png');
    const rootId = await createPost(herald, channel, [{ content: 'x', image: [media] }], { settings: { title: 'Lost answer' } });
    fake.setListingDelay(1);
    // An older shot with the same title, listed first (the listing is newest first; it was edited since).
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/api/v2/shots') && Boolean(olderShot('Lost answer')));
    try {
      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('published');
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'waiting', 'published']); // lost answer, not listed yet, found
    } finally {
      restore();
      fake.setListingDelay(0);
    }
    const created = fake.shots.filter((shot) => shot.title === 'Lost answer' && shot.image.bytes.length > 0);
    expect(created).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(String(created[0].id));
  });

  it('never takes an older shot of the same title for a create that never reached Dribbble: the post stops with "could not confirm"', async () => {
    const old = olderShot('Never sent');
    const media = await uploaded(herald, await picture(400, 300), 'never.png');
    const rootId = await createPost(herald, channel, [{ content: 'x', image: [media] }], { settings: { title: 'Never sent' } });
    const restore = loseRequestOf(herald, (request) => request.url.endsWith('/api/v2/shots'));
    try {
      // Dribbble lists a shot only once processed, so not finding one proves nothing: Herald looks for 15 minutes, then stops.
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    } finally {
      restore();
    }
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBeNull();
    expect(root.error).toContain('Could not confirm whether Dribbble created the shot');
    expect(fake.shots.filter((shot) => shot.title === 'Never sent').map((shot) => shot.id)).toEqual([old]);
  });

  // Issue 31: a "Weekly" shot went up 35 s ago, inside the two minutes the lookup reaches back for clock skew; only the
  // description (answered as HTML) tells the new one from it. The request that never arrived comes first: the older shot
  // is then the only one of that title.
  const weeklyShot = (description: string) => {
    fake.shots.push({ id: 500_000 + fake.shots.length, title: 'Weekly', description, image: { bytes: Buffer.alloc(0), contentType: 'image/png', width: 400, height: 300 }, pendingListings: 0, publishedAt: new Date(Date.now() - 35_000).toISOString().replace(/\.\d{3}Z$/, 'Z') });
    return fake.shots.at(-1)!.id;
  };

  it('stops with "could not confirm" at once when the create never reached Dribbble and a shot of that title went up 35 s before (issue 31)', async () => {
    const older = weeklyShot('Last issue');
    const media = await uploaded(herald, await picture(400, 300), 'weekly.png');
    const rootId = await createPost(herald, channel, [{ content: 'This issue', image: [media] }], { settings: { title: 'Weekly' } });
    const restore = loseRequestOf(herald, (request) => request.url.endsWith('/api/v2/shots'));
    try {
      const { outcome, runs } = await publishUntilSettled(herald, rootId);
      expect(outcome.kind).toBe('failed');
      expect(runs.map((run) => run.kind)).toEqual(['waiting', 'failed']); // the lost request, then the lookup: no 15 minutes of looking
    } finally {
      restore();
    }
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBeNull();
    expect(root.error).toMatch(/^Could not confirm whether Dribbble published this item: shots titled "Weekly" matching it only in part/);
    expect(fake.shots.filter((shot) => shot.title === 'Weekly').map((shot) => shot.id)).toEqual([older]);
  });

  it('takes the new shot by its description when only the answer was lost, not the one of that title from 35 s before (issue 31)', async () => {
    const older = weeklyShot('Last issue, again');
    const media = await uploaded(herald, await picture(400, 300), 'weekly-next.png');
    const rootId = await createPost(herald, channel, [{ content: 'Next issue', image: [media] }], { settings: { title: 'Weekly' } });
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/api/v2/shots'));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const made = fake.shots.filter((shot) => shot.title === 'Weekly' && shot.image.bytes.length > 0);
    expect(made.map((shot) => shot.description)).toEqual(['Next issue']);
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBe(String(made[0].id));
    expect(root.releaseId).not.toBe(String(older));
  });

  it('flags the channel for reconnection when its token is revoked (Dribbble tokens do not refresh), and helpers answer 401', async () => {
    const media = await uploaded(herald, await picture(400, 300), 'revoked.png');
    const rootId = await createPost(herald, channel, [{ content: 'x', image: [media] }], { settings: { title: 'Revoked' } });
    fake.authority.revokeAll();
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/disconnected because its token expired or was revoked/);
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channel });
    expect(row.refreshNeeded).toBe(true);
    const response = await herald.rest('POST', `/integration-trigger/${channel}`, { methodName: 'teams' });
    expect(response.status).toBe(401);
  });
});
