// Pinterest end to end: OAuth with Basic client auth, boards, picture pins by URL and base64, a video pin through the
// media upload and processing checks, settings rules, refresh with rotation, retries, permanent errors and analytics.
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import pinterest from '../../providers/pinterest/index.js';
import { pinterestMedia } from '../../providers/pinterest/media.js';
import { basicCredentials } from '../fakes/oauth-authority.js';
import { startPinterestFake, type PinterestFake } from '../fakes/pinterest.js';
import { contractProblems, pinterestContractSource } from '../contracts/pinterest/contract.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { goodMp4, uploaded } from '../helpers/media-samples.js';
import { hoursAgo, loseAnswerOf, loseRequestOf, withPlatformFetch } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, waitFor, submitPost } from '../helpers/posts.js';

let fake: PinterestFake;
let herald: Herald;
let channel: string;
const pullByUrl = pinterestMedia.pullByUrl;

const picture = (width: number, height: number, format: 'png' | 'jpeg' | 'webp' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 60 } } })[format]().toBuffer();


const board = () => fake.boards[0].id;

beforeAll(async () => {
  fake = await startPinterestFake({ boardCount: 260 });
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
  await herald.stop();
  await fake.close();
});

afterEach(() => {
  pinterestMedia.pullByUrl = pullByUrl;
  // Every request Herald sent matched Pinterest's OpenAPI description (test/contracts/pinterest/openapi.json).
  expect(fake.contractViolations).toEqual([]);
});

describe("Pinterest's OpenAPI contract", () => {
  const request = (method: string, query: Record<string, string>, json?: unknown) => ({ method, query: new URLSearchParams(query), json, body: Buffer.from(json ? JSON.stringify(json) : '') });

  it('is pinned to a dated release, and refuses what the description refuses', () => {
    expect(pinterestContractSource).toMatchObject({ version: '5.23.0', retrieved: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(contractProblems(request('POST', {}, { board_id: '900000', description: 'ok', media_source: { source_type: 'image_url', url: 'https://example.com/a.png' } }), '/pins')).toEqual([]);
    expect(contractProblems(request('POST', {}, { board_id: '900000', title: 'x'.repeat(101), media_source: { source_type: 'image_url', url: 'https://example.com/a.png' } }), '/pins').join()).toMatch(/title must NOT have more than 100 characters/);
    expect(contractProblems(request('POST', {}, { board_id: '900000', media_source: { source_type: 'image_link', url: 'https://example.com/a.png' } }), '/pins')).not.toEqual([]);
    expect(contractProblems(request('GET', { page_size: '500' }), '/boards').join()).toMatch(/page_size must be <= 250/);
    expect(contractProblems(request('GET', { pageSize: '5' }), '/boards')).toEqual(['query parameter pageSize is not in the contract']);
    expect(contractProblems(request('DELETE', {}), '/user_account')).toEqual(['DELETE /user_account is not an operation of Pinterest API 5.23.0']);
  });
});

describe('pinterest media by URL', () => {
  it('lets Pinterest fetch a picture only from a public https URL', () => {
    expect(pullByUrl('https://herald.example.com/uploads/a.png')).toBe(true);
    for (const url of ['http://herald.example.com/a.png', 'https://127.0.0.1/a.png', 'https://192.168.1.20/a.png', 'https://[::1]/a.png', 'https://box.local/a.png', 'https://localhost/a.png', 'not a url']) {
      expect(pullByUrl(url), url).toBe(false);
    }
  });
});

describe('pinterest connect', () => {
  it('runs the OAuth round trip with HTTP Basic client auth and loads the profile', async () => {
    const [tokenRequest] = fake.server.requestsTo('POST', '/api/v5/oauth/token');
    expect(basicCredentials(tokenRequest.headers.authorization)).toEqual({ id: fake.authority.clientId, secret: fake.authority.clientSecret });
    expect(tokenRequest.form?.get('grant_type')).toBe('authorization_code');
    expect(tokenRequest.form?.get('redirect_uri')).toBe(`${herald.url}/api/integrations/social/pinterest/callback`);
    const [consent] = fake.server.requestsTo('GET', '/web/oauth/');
    expect(consent.query.get('scope')).toBe('boards:read,boards:write,pins:read,pins:write,user_accounts:read');
    const list = await herald.rest('GET', '/integrations');
    expect(list.body.find((item: { id: string }) => item.id === channel)).toMatchObject({
      identifier: 'pinterest',
      name: 'Herald Pins',
      profile: 'heraldpins',
      picture: fake.account.profile_image,
    });
  });

  it('lists every board through getBoards, following the bookmark', async () => {
    const response = await herald.rest('POST', `/integration-trigger/${channel}`, { methodName: 'getBoards' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.output).toHaveLength(260);
    expect(response.body.output[0]).toEqual({ id: fake.boards[0].id, name: 'Board 1', privacy: 'PUBLIC' });
    expect(fake.server.requestsTo('GET', '/api/v5/boards').map((request) => [request.query.get('page_size'), request.query.get('bookmark')])).toEqual([
      ['250', null],
      ['250', '250'],
    ]);
  });
});

describe('pinterest pins', () => {
  it('publishes a picture pin by URL: Pinterest fetches our public media URL', async () => {
    pinterestMedia.pullByUrl = () => true;
    const png = await picture(600, 900);
    const media = await uploaded(herald, png, 'pin.png');
    const rootId = await createPost(herald, channel, [{ content: '<p>Autumn <strong>palette</strong></p>', image: [media] }], {
      settings: { board: board(), title: 'Autumn palette', link: 'https://example.com/autumn' },
    });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const pin = fake.pins.at(-1)!;
    expect(pin).toMatchObject({ board_id: board(), title: 'Autumn palette', link: 'https://example.com/autumn', description: 'Autumn 𝗽𝗮𝗹𝗲𝘁𝘁𝗲' });
    expect(pin.media_source).toEqual({ source_type: 'image_url', url: media.path });
    expect(fake.fetched.at(-1)).toEqual({ url: media.path, status: 200 });
    expect(pin.images[0].bytes.equals(png)).toBe(true);
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBe(pin.id);
    expect(root.releaseUrl).toBe(`${fake.endpoints.web}/pin/${pin.id}/`);
  });

  it('sends pictures inline (base64) when their URL is not public, a carousel as multiple_image_base64, WebP re-encoded as JPEG', async () => {
    const first = await uploaded(herald, await picture(500, 500), 'a.png');
    const second = await uploaded(herald, await picture(500, 500, 'webp'), 'b.webp');
    const rootId = await createPost(herald, channel, [{ content: 'Two views', image: [first, second] }], { settings: { board: board() } });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const pin = fake.pins.at(-1)!;
    expect(pin.media_source.source_type).toBe('multiple_image_base64');
    expect(pin.media_source.items.map((item: { content_type: string }) => item.content_type)).toEqual(['image/png', 'image/jpeg']);
    expect((await sharp(pin.images[1].bytes).metadata()).format).toBe('jpeg');
    expect(fake.fetched.filter((entry) => entry.url === first.path)).toHaveLength(0);
  });

  it('publishes a video pin through the worker: upload to the S3 form, processing checks, then the pin with a frame as cover', async () => {
    fake.setProcessingPolls(2);
    const video = await uploaded(herald, goodMp4(), 'clip.mp4');
    const mediaCreates = fake.server.requestsTo('POST', '/api/v5/media').length;
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channel, [{ content: 'Watch this', image: [video] }], { settings: { board: board(), title: 'Clip' } });
      const [root] = await waitFor(async () => {
        const items = await chainOf(herald, rootId);
        return items[0].state === 'PUBLISHED' ? items : undefined;
      });
      const pin = fake.pins.at(-1)!;
      expect(root.releaseId).toBe(pin.id);
      expect(pin.media_source).toMatchObject({ source_type: 'video_id', media_id: fake.media.at(-1)!.id, cover_image_content_type: 'image/jpeg' });
      expect(pin.images[0].bytes.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
      // One registration, one upload with every signed field and the bytes, three status checks (2 processing, then done).
      expect(fake.server.requestsTo('POST', '/api/v5/media').length - mediaCreates).toBe(1);
      expect(fake.media.at(-1)!.uploaded!.bytes.equals(goodMp4())).toBe(true);
      expect(fake.server.requestsTo('POST', '/s3/pinterest-media-upload').at(-1)!.headers.authorization).toBeUndefined();
      expect(fake.server.requestsTo('GET', `/api/v5/media/${pin.media_source.media_id}`)).toHaveLength(3);
    } finally {
      await worker.stop();
      fake.setProcessingPolls(0);
    }
  });

  it('uses the picture after the video as its cover, by URL when public', async () => {
    pinterestMedia.pullByUrl = () => true;
    const video = await uploaded(herald, goodMp4(), 'clip.mp4');
    const cover = await uploaded(herald, await picture(320, 240, 'jpeg'), 'cover.jpg');
    const rootId = await createPost(herald, channel, [{ content: 'With a cover', image: [video, cover] }], { settings: { board: board() } });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.pins.at(-1)!.media_source).toMatchObject({ source_type: 'video_id', cover_image_url: cover.path });
    expect(fake.fetched.at(-1)).toEqual({ url: cover.path, status: 200 });
  });
});

describe('pinterest settings and media rules', () => {
  const refused = async (items: Parameters<typeof submitPost>[2], settings: Record<string, unknown>) => {
    const response = await submitPost(herald, channel, items, { settings });
    expect(response.status).toBe(400);
    return response.body.message as string;
  };

  it('refuses what Pinterest would refuse, naming the fix', async () => {
    const image = await uploaded(herald, await picture(400, 400), 'p.png');
    const wide = await uploaded(herald, await picture(800, 400), 'w.png');
    const video = await uploaded(herald, goodMp4(), 'v.mp4');
    expect(await refused([{ content: 'x', image: [image] }], {})).toMatch(/settings\.board/);
    expect(await refused([{ content: 'x', image: [image] }], { board: board(), title: 'x'.repeat(101) })).toMatch(/settings\.title/);
    expect(await refused([{ content: 'x', image: [image] }], { board: board(), link: 'ftp://example.com' })).toMatch(/settings\.link/);
    expect(await refused(['no media'], { board: board() })).toMatch(/needs a picture or a video/);
    expect(await refused([{ content: 'x', image: [image] }, 'a comment'], { board: board() })).toMatch(/does not support threads or comments/);
    expect(await refused([{ content: 'x', image: Array(6).fill(image) }], { board: board() })).toMatch(/at most 5/);
    expect(await refused([{ content: 'x', image: [image, wide] }], { board: board() })).toMatch(/different sizes \(400x400, 800x400\)/);
    expect(await refused([{ content: 'x', image: [video, image, image] }], { board: board() })).toMatch(/at most one cover picture/);
    expect(await refused([{ content: 'x'.repeat(801), image: [image] }], { board: board() })).toMatch(/maximum characters is 800/);
  });

  it('refuses extra items itself too, saying Pinterest has no comments', () => {
    const media = [{ kind: 'image' as const, url: 'https://media.example/a.png' }];
    expect(pinterest.validate!([{ text: 'a', media }, { text: 'b', media: [] }], { board: '1' })).toMatch(/no comments API/);
    expect(pinterest.chain).toBe('none');
  });
});

describe('pinterest failures', () => {
  it('refreshes an expired token with the rotated refresh token, and publishes', async () => {
    const image = await uploaded(herald, await picture(300, 300), 'r.png');
    for (const text of ['After refresh one', 'After refresh two']) {
      fake.authority.expireAccessTokens();
      const rootId = await createPost(herald, channel, [{ content: text, image: [image] }], { settings: { board: board() } });
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
      expect(fake.pins.at(-1)!.description).toBe(text);
    }
    const refreshes = fake.server.requestsTo('POST', '/api/v5/oauth/token').filter((request) => request.form?.get('grant_type') === 'refresh_token');
    expect(refreshes).toHaveLength(2);
    // Each refresh token is single use: the second refresh used the one the first answered.
    expect(refreshes[1].form?.get('refresh_token')).not.toBe(refreshes[0].form?.get('refresh_token'));
    expect(basicCredentials(refreshes[1].headers.authorization).id).toBe(fake.authority.clientId);
  });

  it('retries a 429 after Pinterest\'s Retry-After, then publishes once', async () => {
    const image = await uploaded(herald, await picture(300, 300), 'l.png');
    const rootId = await createPost(herald, channel, [{ content: 'Busy', image: [image] }], { settings: { board: board() } });
    fake.server.failNext('POST', '/api/v5/pins', { status: 429, headers: { 'retry-after': '300' }, json: { code: 8, message: 'Rate limit exceeded. Please try again later.' } });
    const started = Date.now();
    const first = await publishChain(herald.services, rootId);
    expect(first.kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.state).toBe('QUEUE');
    expect(waiting.lastError).toContain('Rate limit exceeded');
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(299_000);
    const count = fake.pins.length;
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.pins.length).toBe(count + 1);
  });

  it('puts the post in ERROR with Pinterest\'s message on a permanent error, and notifies', async () => {
    const image = await uploaded(herald, await picture(300, 300), 'e.png');
    const rootId = await createPost(herald, channel, [{ content: 'Refused', image: [image] }], { settings: { board: board() } });
    fake.server.failNext('POST', '/api/v5/pins', { status: 400, json: { code: 1, message: 'Invalid request: this link is not allowed on Pinterest.' } });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.state).toBe('ERROR');
    expect(root.error).toBe('Pinterest refused the post: Invalid request: this link is not allowed on Pinterest.');
    const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notifications.some((notification) => notification.content.includes('this link is not allowed on Pinterest'))).toBe(true);
  });

  it('fails a video Pinterest could not process, without creating a pin', async () => {
    const video = await uploaded(herald, goodMp4(), 'bad.mp4');
    const rootId = await createPost(herald, channel, [{ content: 'Broken', image: [video] }], { settings: { board: board() } });
    const count = fake.pins.length;
    const settled = await withPlatformFetch(
      herald.services,
      (real) => async (request) => {
        const response = await real(request);
        if (request.url.endsWith('/s3/pinterest-media-upload')) fake.media.at(-1)!.failed = true;
        return response;
      },
      () => publishUntilSettled(herald, rootId),
    );
    expect(settled.outcome.kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/could not process the video/);
    expect(fake.pins.length).toBe(count);
  });
});

describe('pinterest exactly once', () => {
  const loseAnswerOfPost = (suffix: string) => loseAnswerOf(herald, (request) => request.method === 'POST' && request.url.endsWith(suffix));

  it('resumes after an upload whose answer was lost: the video is sent once and the pin created once', async () => {
    const video = await uploaded(herald, goodMp4(), 'once.mp4');
    const rootId = await createPost(herald, channel, [{ content: 'Once', image: [video] }], { settings: { board: board() } });
    const uploads = fake.server.requestsTo('POST', '/s3/pinterest-media-upload').length;
    const restore = loseAnswerOfPost('/s3/pinterest-media-upload');
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await chainOf(herald, rootId))[0].publishProgress?.steps['media:upload']).toMatchObject({ state: 'started' });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('POST', '/s3/pinterest-media-upload').length - uploads).toBe(1);
    expect(fake.pins.filter((pin) => pin.description === 'Once')).toHaveLength(1);
  });

  /** A pin of the account made earlier with the same board, title and description. */
  const olderPin = (description: string, title: string) => {
    fake.pins.push({ id: `9${fake.pins.length}`, board_id: board(), title, description, media_source: { source_type: 'image_url', url: 'https://example.com/a.png' }, images: [], created_at: hoursAgo(72).toISOString(), updates: [] });
    return fake.pins.at(-1)!.id;
  };

  it('finds the pin of a create whose answer was lost instead of creating it again, passing over an older identical pin listed first', async () => {
    const image = await uploaded(herald, await picture(300, 300), 'lost.png');
    const rootId = await createPost(herald, channel, [{ content: 'Lost answer', image: [image] }], { settings: { board: board(), title: 'Lost' } });
    let old = '';
    const restore = loseAnswerOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/v5/pins') && Boolean((old = olderPin('Lost answer', 'Lost'))));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const created = fake.pins.filter((pin) => pin.description === 'Lost answer' && pin.id !== old);
    expect(created).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(created[0].id);
  });

  it('creates the pin once when the create never reached Pinterest, never taking an older identical pin for it', async () => {
    const old = olderPin('Spring collection', 'Spring');
    const image = await uploaded(herald, await picture(300, 300), 'spring.png');
    const rootId = await createPost(herald, channel, [{ content: 'Spring collection', image: [image] }], { settings: { board: board(), title: 'Spring' } });
    const restore = loseRequestOf(herald, (request) => request.method === 'POST' && request.url.endsWith('/api/v5/pins'));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const pins = fake.pins.filter((pin) => pin.description === 'Spring collection').map((pin) => pin.id);
    expect(pins).toHaveLength(2);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(pins.find((id) => id !== old));
  });
});

describe('pinterest analytics and helpers', () => {
  it('answers account analytics as daily points of impressions, saves, pin clicks, outbound clicks and engagement', async () => {
    const response = await herald.rest('GET', `/analytics/${channel}?date=7`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((metric: { label: string }) => metric.label)).toEqual(['Impressions', 'Saves', 'Pin clicks', 'Outbound clicks', 'Engagement']);
    expect(response.body[0].data).toHaveLength(7);
    const [request] = fake.server.requestsTo('GET', '/api/v5/user_account/analytics');
    expect(request.query.get('metric_types')).toBe('IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK,ENGAGEMENT');
    const day = response.body[0].data.at(-1);
    expect(day.total).toBe(String(10 * Number(day.date.slice(8, 10))));
  });

  it('answers pin analytics for a published pin, 90 days at most', async () => {
    const posts = await herald.services.orm.em.fork().find(PostSchema, { state: 'PUBLISHED', integrationId: channel }, { limit: 1 });
    const response = await herald.rest('GET', `/analytics/post/${posts[0].id}?date=365`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((metric: { label: string }) => metric.label)).toEqual(['Impressions', 'Saves', 'Pin clicks', 'Outbound clicks']);
    expect(response.body[0].data).toHaveLength(90);
    expect(fake.server.requestsTo('GET', `/api/v5/pins/${posts[0].releaseId}/analytics`)).toHaveLength(1);
  });

  it('answers 401 from a helper when the token is revoked and the refresh fails', async () => {
    fake.authority.revokeAll();
    const response = await herald.rest('POST', `/integration-trigger/${channel}`, { methodName: 'getBoards' });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('reauth_required');
  });
});
