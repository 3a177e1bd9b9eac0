// TikTok end to end against the fake: Login Kit v2 with PKCE, creator_info checks, DIRECT_POST and inbox uploads, chunked
// FILE_UPLOAD, photos pulled by URL (PNG converted to JPEG), status checks re-scheduled, missing → release-id → analytics.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tiktok from '../../providers/tiktok/index.js';
import { CHUNK_LIMITS, chunkPlan, tiktokUpload } from '../../providers/tiktok/post.js';
import { CheckAgainLater } from '../../providers/types.js';
import { NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import { startTikTokFake, tiktokError, type TikTokFake } from '../fakes/tiktok.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { acceptedSamples, goodMp4, mediumMp4, uploadAll } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { chainOf, createPost, publishUntilSettled, waitFor, submitPost } from '../helpers/posts.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';

const MB = 1024 * 1024;
let fake: TikTokFake;
let herald: Herald;
let channelId: string;
let media: Record<'video' | 'png' | 'jpeg', { id: string; path: string }>;

const settings = (extra: Record<string, unknown> = {}) => ({
  __type: 'tiktok',
  privacy_level: 'PUBLIC_TO_EVERYONE',
  duet: false,
  stitch: true,
  comment: true,
  autoAddMusic: 'no',
  brand_content_toggle: false,
  brand_organic_toggle: false,
  content_posting_method: 'DIRECT_POST',
  ...extra,
});

/** Runs `body` with the deployment's TikTok app marked audited (TIKTOK_APP_AUDITED=true). */
async function audited<T>(body: () => Promise<T>): Promise<T> {
  const endpoints = herald.services.config.socialEndpoints.tiktok;
  endpoints.appAudited = 'true';
  try {
    return await body();
  } finally {
    endpoints.appAudited = 'false';
  }
}

const post = async (items: Parameters<typeof createPost>[2], extra: Record<string, unknown> = {}) => createPost(herald, channelId, items, { settings: settings(extra) });
const initCalls = () => fake.server.requests.filter((request) => /\/v2\/post\/publish\/(video|inbox\/video|content)\/init\/$/.test(request.path)).length;

beforeAll(async () => {
  fake = await startTikTokFake();
  herald = await startHerald(
    {
      TIKTOK_CLIENT_ID: fake.authority.clientId,
      TIKTOK_CLIENT_SECRET: fake.authority.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ tiktok: fake.endpoints }),
      PUBLISH_RECHECK_MAX_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  const jpeg = acceptedSamples().find((sample) => sample.type === 'image/jpeg')!.bytes;
  media = await uploadAll(herald, { video: [mediumMp4(), 'clip.mp4'], png: [tinyPng(), 'dot.png'], jpeg: [jpeg, 'still.jpg'] });
});

afterAll(async () => {
  await herald.stop();
  await fake.close();
});

describe('connecting a TikTok account', () => {
  it('uses Login Kit v2 with client_key and PKCE, and keeps the username', async () => {
    const connected = await connectOAuthChannel(herald, 'tiktok');
    channelId = connected.integrationId;
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/v2/auth/authorize/');
    expect(query.get('client_key')).toBe(fake.authority.clientId);
    expect(query.has('client_id')).toBe(false);
    expect(query.get('scope')).toBe('user.info.basic,user.info.profile,user.info.stats,video.list,video.publish,video.upload');
    expect(query.get('code_challenge_method')).toBe('S256');
    const [exchange] = fake.server.requestsTo('POST', '/v2/oauth/token/');
    expect(Object.fromEntries(exchange.form!)).toMatchObject({ client_key: fake.authority.clientId, client_secret: fake.authority.clientSecret, grant_type: 'authorization_code' });
    expect(exchange.form?.get('code_verifier')).toMatch(/^[\w-]{43,}$/);
    // TikTok computes the challenge as the hex SHA-256 of the verifier, not RFC 7636's base64url.
    expect(query.get('code_challenge')).toBe(createHash('sha256').update(exchange.form!.get('code_verifier')!).digest('hex'));
    const list = (await herald.rest('GET', '/integrations')).body as { id: string; name: string; profile: string; picture: string }[];
    expect(list.find((item) => item.id === channelId)).toMatchObject({ name: 'Herald on TikTok', profile: 'heraldtok', picture: `${fake.url}/avatar.jpeg` });
  });
});

describe('publishing', () => {
  it('posts a video through the worker: one whole chunk, the settings as post_info, status checked until TikTok is done', async () => {
    fake.setProcessingChecks(2);
    const worker = await herald.startWorker();
    try {
      const item = await audited(async () => {
        const rootId = await post([{ content: 'Our <strong>launch</strong>', image: [media.video] }], { video_made_with_ai: true });
        return waitFor(async () => {
          const [root] = await chainOf(herald, rootId);
          return root.state === 'QUEUE' ? undefined : root;
        });
      });
      expect(item.state).toBe('PUBLISHED');
      const posted = fake.posts.at(-1)!;
      expect(posted.postInfo).toEqual({
        title: 'Our 𝗹𝗮𝘂𝗻𝗰𝗵',
        privacy_level: 'PUBLIC_TO_EVERYONE',
        disable_duet: true,
        disable_stitch: false,
        disable_comment: false,
        brand_content_toggle: false,
        brand_organic_toggle: false,
        is_aigc: true,
      });
      const size = mediumMp4().length;
      expect(posted.sourceInfo).toEqual({ source: 'FILE_UPLOAD', video_size: size, chunk_size: size, total_chunk_count: 1 });
      expect(Buffer.concat(posted.received).equals(mediumMp4())).toBe(true);
      expect(fake.server.requestsTo('POST', '/v2/post/publish/creator_info/query/').length).toBeGreaterThan(0);
      // Two PROCESSING_UPLOAD answers, then PUBLISH_COMPLETE: three checks, across re-scheduled runs.
      expect(fake.server.requestsTo('POST', '/v2/post/publish/status/fetch/')).toHaveLength(3);
      // The 19-digit id arrives as a JSON number: it is read exactly.
      expect(item.releaseId).toBe(posted.publicId);
      expect(item.releaseUrl).toBe(`https://www.tiktok.com/@heraldtok/video/${posted.publicId}`);
    } finally {
      fake.setProcessingChecks(0);
      await worker.stop();
    }
  });

  it('forces SELF_ONLY while the TikTok app is not audited; the private video gets releaseId "missing"', async () => {
    const rootId = await post([{ content: 'Private for now', image: [media.video] }]);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)!.postInfo.privacy_level).toBe('SELF_ONLY');
    expect((await chainOf(herald, rootId))[0].releaseId).toBe('missing');
  });

  it('pulls photos by URL: a PNG is converted to JPEG and stored first, a JPEG goes as it is; photo-only settings apply', async () => {
    const rootId = await audited(async () => {
      const id = await post([{ content: 'Two pictures', image: [media.png, media.jpeg] }], { autoAddMusic: 'yes', stitch: false });
      expect((await publishUntilSettled(herald, id)).outcome.kind).toBe('published');
      return id;
    });
    const posted = fake.posts.at(-1)!;
    expect(posted.kind).toBe('photo');
    expect(posted.photos.map((photo) => photo.type)).toEqual(['image/jpeg', 'image/jpeg']);
    expect(posted.photos[0].url).not.toBe(media.png.path);
    expect(posted.photos[0].url.startsWith(`${herald.url}/uploads/`)).toBe(true);
    expect(posted.photos[1].url).toBe(media.jpeg.path);
    expect(posted.sourceInfo).toMatchObject({ source: 'PULL_FROM_URL', photo_cover_index: 0 });
    expect(posted.postInfo).toEqual({ description: 'Two pictures', privacy_level: 'PUBLIC_TO_EVERYONE', disable_comment: false, auto_add_music: true, brand_content_toggle: false, brand_organic_toggle: false });
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(posted.publicId);
    const library = await herald.rest('GET', '/media?page=0');
    expect(JSON.stringify(library.body)).toContain('tiktok-photo-1.jpg');
  });

  it('sends an UPLOAD to the inbox without settings; the post is "missing" until linked, then its analytics work', async () => {
    const rootId = await post([{ content: 'Finish me in the app', image: [media.video] }], { content_posting_method: 'UPLOAD', duet: true });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const posted = fake.posts.at(-1)!;
    expect(posted.mode).toBe('UPLOAD');
    expect(posted.postInfo).toBeUndefined();
    expect(fake.server.requestsTo('POST', '/v2/post/publish/inbox/video/init/')).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe('missing');

    const missing = await herald.rest('GET', `/posts/${rootId}/missing`);
    expect(missing.status, JSON.stringify(missing.body)).toBe(200);
    expect(missing.body[0]).toEqual({ id: fake.videos[0].id, url: fake.videos[0].cover_image_url });
    expect(missing.body.length).toBe(fake.videos.length);
    const linked = await herald.rest('PUT', `/posts/${rootId}/release-id`, { releaseId: fake.videos[0].id });
    expect(linked.body).toEqual({ id: rootId, releaseId: fake.videos[0].id });
    const analytics = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(analytics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Views', '100'],
      ['Likes', '5'],
      ['Comments', '2'],
      ['Shares', '1'],
    ]);
  });
});

describe("the creator's limits and the settings rules", () => {
  const refused = async (extra: Record<string, unknown>, change: () => () => void, expected: RegExp) => {
    const restore = change();
    const before = initCalls();
    try {
      const rootId = await post([{ content: 'Refused', image: [media.video] }], extra);
      const { outcome } = await audited(() => publishUntilSettled(herald, rootId));
      expect(outcome.kind).toBe('failed');
      const [root] = await chainOf(herald, rootId);
      expect(root.error).toMatch(expected);
      expect(initCalls()).toBe(before);
    } finally {
      restore();
    }
  };
  const set = <K extends keyof TikTokFake['creator']>(key: K, value: TikTokFake['creator'][K]) => () => {
    const saved = fake.creator[key];
    fake.creator[key] = value;
    return () => void (fake.creator[key] = saved);
  };

  it('refuses a privacy level the creator does not allow, naming the allowed ones', () =>
    refused({}, set('privacy_level_options', ['FOLLOWER_OF_CREATOR', 'SELF_ONLY']), /TikTok refused the post: this TikTok account allows the privacy levels FOLLOWER_OF_CREATOR, SELF_ONLY; PUBLIC_TO_EVERYONE is not one of them/));

  it('refuses comments or duets the creator turned off', async () => {
    await refused({}, set('comment_disabled', true), /comments are turned off .*set comment to false/);
    await refused({ duet: true }, set('duet_disabled', true), /duets are turned off/);
  });

  it('refuses a video longer than the creator may post', () => refused({}, set('max_video_post_duration_sec', 1), /the video lasts 2 s; this TikTok account takes videos of at most 1 s/));

  it('refuses video-only settings on photos, and photo-only settings on a video, before anything is created', async () => {
    const attempt = (image: { id: string; path: string }[], extra: Record<string, unknown>) =>
      submitPost(herald, channelId, [{ content: 'x', image }], { settings: settings(extra) });
    expect((await attempt([media.jpeg], { duet: true })).body.message).toMatch(/duet applies to videos only/);
    expect((await attempt([media.video], { autoAddMusic: 'yes' })).body.message).toMatch(/autoAddMusic applies to photo posts only/);
    expect((await attempt([media.video, media.jpeg], {})).body.message).toMatch(/mixes media/);
    expect((await attempt([], {})).body.message).toMatch(/no media/);
    expect((await attempt([media.jpeg], { content_posting_method: 'UPLOAD', duet: true })).status).toBe(200);
  });

  it('takes a photo description of up to 4,000 characters, and refuses a video caption over 2,200 before anything is created', async () => {
    const long = (length: number) => 'a'.repeat(length);
    const attempt = (content: string, image: { id: string; path: string }[], extra: Record<string, unknown> = {}) =>
      submitPost(herald, channelId, [{ content, image }], { settings: settings(extra) });
    expect((await attempt(long(4001), [media.jpeg], { stitch: false })).body.message).toMatch(/4000/);
    expect((await attempt(long(2201), [media.video])).body.message).toMatch(/is a video whose caption has 2201 characters; TikTok takes 2200 for a video/);
    // An inbox upload sends no text at all.
    expect((await attempt(long(2201), [media.video], { content_posting_method: 'UPLOAD' })).status).toBe(200);
    const rootId = await post([{ content: long(3000), image: [media.jpeg] }], { stitch: false });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)!.postInfo.description).toHaveLength(3000);
  });
});

describe('exactly once', () => {
  const isInit = (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith('/v2/post/publish/video/init/');
  const since = (count: number) => fake.posts.slice(count);

  it('starts the video again when its init never reached TikTok: one post, and an older video with that caption is never looked at', async () => {
    fake.videos.push({ id: '7100000000000000002', title: 'Same caption', cover_image_url: `${fake.url}/covers/same.jpeg`, like_count: 0, comment_count: 0, share_count: 0, view_count: 0 });
    const before = fake.posts.length;
    const rootId = await post([{ content: 'Same caption', image: [media.video] }]);
    const restore = loseRequestOf(herald, isInit);
    try {
      expect((await audited(() => publishChain(herald.services, rootId))).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await audited(() => publishUntilSettled(herald, rootId))).outcome.kind).toBe('published');
    expect(since(before)).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(since(before)[0].publicId);
  });

  it('after an init whose answer was lost, uploads to a new one: the first never gets a byte, and one post is published', async () => {
    const before = fake.posts.length;
    const rootId = await post([{ content: 'Init answer lost', image: [media.video] }]);
    const restore = loseAnswerOf(herald, isInit);
    try {
      expect((await audited(() => publishChain(herald.services, rootId))).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await audited(() => publishUntilSettled(herald, rootId))).outcome.kind).toBe('published');
    const [orphan, used] = since(before);
    expect([orphan.uploaded, orphan.done]).toEqual([0, false]);
    expect(used.done).toBe(true);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(used.publicId);
  });

  it('recognizes a chunk whose answer was lost by the bytes TikTok counts, and does not send it again', async () => {
    const before = fake.posts.length;
    const rootId = await post([{ content: 'Chunk answer lost', image: [media.video] }]);
    const restore = loseAnswerOf(herald, (request) => request.method === 'PUT' && request.url.includes('/video/upload/'));
    try {
      expect((await audited(() => publishChain(herald.services, rootId))).kind).toBe('waiting');
    } finally {
      restore();
    }
    expect((await audited(() => publishUntilSettled(herald, rootId))).outcome.kind).toBe('published');
    const [posted] = since(before);
    expect(since(before)).toHaveLength(1);
    expect(posted.received).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(posted.publicId);
  });
});

describe('tokens and errors', () => {
  it('refreshes an expired token and stores the rotated refresh token', async () => {
    const refreshes = () => fake.server.requestsTo('POST', '/v2/oauth/token/').filter((request) => request.form?.get('grant_type') === 'refresh_token');
    const before = refreshes().length;
    for (const round of [1, 2]) {
      fake.authority.expireAccessTokens();
      const rootId = await post([{ content: `After refresh ${round}`, image: [media.video] }]);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    }
    // The second refresh used the token the first one rotated in (a used one is refused by the fake).
    const [first, second] = refreshes().slice(before);
    expect(first.form?.get('client_key')).toBe(fake.authority.clientId);
    expect(second.form?.get('refresh_token')).not.toBe(first.form?.get('refresh_token'));
  });

  it('retries rate_limit_exceeded (429) with backoff', async () => {
    const rootId = await post([{ content: 'Busy', image: [media.video] }]);
    fake.server.failNext('POST', '/v2/post/publish/creator_info/query/', tiktokError(429, 'rate_limit_exceeded', 'The API rate limit was exceeded. Please try again later.'));
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(29_000);
    expect(waiting.lastError).toContain('rate limit');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('puts a post refused by TikTok in ERROR with its reason, and notifies', async () => {
    const rootId = await post([{ content: 'Too many', image: [media.video] }]);
    fake.server.failNext('POST', '/v2/post/publish/video/init/', tiktokError(403, 'spam_risk_too_many_posts', 'The daily post cap has been reached.'));
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [failed] = await chainOf(herald, rootId);
    expect(failed.error).toBe("TikTok refused the post: the account reached TikTok's daily post limit (spam_risk_too_many_posts): retry tomorrow");
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('spam_risk_too_many_posts'))).toBe(true);
  });
});

describe('chunked upload', () => {
  it('plans chunks as TikTok requires: whole up to 64 MB, else floor(size / chunk) with the rest in the last', () => {
    expect(chunkPlan(3 * MB)).toEqual({ chunkSize: 3 * MB, count: 1 });
    expect(chunkPlan(64 * MB)).toEqual({ chunkSize: 64 * MB, count: 1 });
    expect(chunkPlan(105 * MB, 10 * MB)).toEqual({ chunkSize: 10 * MB, count: 10 });
    expect(() => chunkPlan(100 * MB, 4 * MB)).toThrow(/5 to 64 MB/);
    expect(CHUNK_LIMITS.max).toBe(64 * MB);
  });

  it('sends a large video in 5 MB chunks, a bounded number per run, in order', async () => {
    const saved = { ...tiktokUpload };
    Object.assign(tiktokUpload, { chunkBytes: 5 * MB, chunksPerRun: 1 });
    try {
      const bytes = Buffer.concat([goodMp4(), Buffer.alloc(65 * MB + 12345, 7)]);
      const steps = new Map<string, unknown>();
      const issued = fake.authority.issue();
      const context = providerContext({
        endpoints: { ...tiktok.endpoints, ...fake.endpoints, appAudited: 'true' },
        auth: { accessToken: issued.accessToken, internalId: 'open-id', data: { username: 'heraldtok' } },
        settings: settings(),
        steps,
      });
      const item = { postId: 'p1', text: 'Big', media: [mediaFile(bytes, { kind: 'video', mimeType: 'video/mp4' })] };
      let runs = 0;
      let result;
      while (!result) {
        runs += 1;
        result = await tiktok.publish!(context, item).catch((error: unknown) => {
          if (error instanceof CheckAgainLater) return undefined;
          throw error;
        });
      }
      const posted = fake.posts.at(-1)!;
      expect(posted.sourceInfo).toMatchObject({ video_size: bytes.length, chunk_size: 5 * MB, total_chunk_count: 13 });
      expect(runs).toBe(13);
      expect(posted.received.map((chunk) => chunk.length)).toEqual([...Array(12).fill(5 * MB), bytes.length - 12 * 5 * MB]);
      expect(Buffer.concat(posted.received).equals(bytes)).toBe(true);
      expect(fake.server.requestsTo('POST', '/v2/post/publish/video/init/').filter((request) => request.json?.source_info?.video_size === bytes.length)).toHaveLength(1);
      expect(result.id).toBe(posted.publicId);
    } finally {
      Object.assign(tiktokUpload, saved);
    }
  });
});

describe('analytics and helpers', () => {
  it('reads the account figures from user/info', async () => {
    const metrics = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(metrics.body.map((metric: { label: string; data: { total: string }[] }) => [metric.label, metric.data[0].total])).toEqual([
      ['Followers', '1234'],
      ['Following', '56'],
      ['Likes', '7890'],
      ['Videos', '12'],
    ]);
  });

  it("answers creatorInfo through the trigger endpoint, and 401 once the account's tokens are dead", async () => {
    const info = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'creatorInfo' });
    expect(info.body).toEqual({
      output: { privacyLevels: ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'], commentDisabled: false, duetDisabled: false, stitchDisabled: false, maxVideoSeconds: 600 },
    });
    fake.authority.revokeAll();
    expect((await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'creatorInfo' })).status).toBe(401);
  });
});
