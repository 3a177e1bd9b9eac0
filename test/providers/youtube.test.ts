// YouTube end to end against the fake Google: OAuth with PKCE and the channel picker, resumable upload in 256 KiB chunks over
// several runs, a crash mid-upload resumed from the byte the session holds, settings, comments, refresh, errors, analytics.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import youtube from '../../providers/youtube/index.js';
import { classify, youtubeUpload } from '../../providers/youtube/upload.js';
import { NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { publishChain } from '../../tools/internal/publish.js';
import { googleError, QUANTUM, startYouTubeFake, type YouTubeFake } from '../fakes/youtube.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { providerContext } from '../helpers/provider-context.js';
import { hoursAgo, loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { mediumMp4, upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, waitForPublished } from '../helpers/posts.js';

let fake: YouTubeFake;
let herald: Herald;
let channelId: string;
let video: { id: string; path: string };
const bytes = mediumMp4();
const saved = { ...youtubeUpload };

const settings = (extra: Record<string, unknown> = {}) => ({ __type: 'youtube', title: 'Launch day', type: 'public', ...extra });

beforeAll(async () => {
  fake = await startYouTubeFake();
  herald = await startHerald(
    {
      YOUTUBE_CLIENT_ID: fake.authority.clientId,
      YOUTUBE_CLIENT_SECRET: fake.authority.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ youtube: fake.endpoints }),
      PUBLISH_RECHECK_MAX_SECONDS: '1',
    },
    { guard: { allowLoopback: true } },
  );
  // 256 KiB chunks, one per run: the ~430 KiB sample goes in two chunks over two runs.
  Object.assign(youtubeUpload, { chunkBytes: QUANTUM, bytesPerRun: QUANTUM });
  const uploaded = await upload(herald.restUrl, herald.apiKey, bytes, 'launch.mp4');
  expect(uploaded.status).toBe(200);
  video = { id: uploaded.body.id, path: uploaded.body.path };
});

afterEach(() => {
  // Every request Herald sent matched YouTube's Discovery documents (test/contracts/youtube/); a mismatch is a bug of Herald's.
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  Object.assign(youtubeUpload, saved);
  await herald.stop();
  await fake.close();
});

const puts = () => fake.server.requestsTo('PUT', '/upload/youtube/v3/videos');

describe('connecting a YouTube channel', () => {
  it('asks Google for offline access with consent and PKCE, then lets the user pick one of several channels', async () => {
    const connected = await connectOAuthChannel(herald, 'youtube');
    expect(connected.inBetweenSteps).toBe(true);
    const query = connected.authorizeUrl.searchParams;
    expect(connected.authorizeUrl.pathname).toBe('/o/oauth2/v2/auth');
    expect([query.get('access_type'), query.get('prompt'), query.get('code_challenge_method')]).toEqual(['offline', 'consent', 'S256']);
    expect(query.get('scope')!.split(' ')).toContain('https://www.googleapis.com/auth/youtube.upload');

    const [exchange] = fake.server.requestsTo('POST', '/token');
    expect(exchange.form?.get('grant_type')).toBe('authorization_code');
    expect(exchange.form?.get('client_id')).toBe(fake.authority.clientId);
    expect(exchange.form?.get('client_secret')).toBe(fake.authority.clientSecret);
    expect(exchange.form?.get('code_verifier')).toMatch(/^[\w-]{43,}$/);

    const accounts = await herald.rest('GET', `/integrations/${connected.integrationId}/accounts`);
    expect(accounts.body).toEqual(fake.channels.map((channel) => ({ id: channel.id, name: channel.title, picture: channel.thumbnail })));
    const chosen = await herald.rest('POST', `/integrations/${connected.integrationId}/accounts`, { id: fake.channels[1].id });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect(chosen.body).toMatchObject({ id: connected.integrationId, name: 'Herald Brand', profile: '@heraldbrand', picture: fake.channels[1].thumbnail });
    channelId = connected.integrationId;

    const refused = await herald.rest('POST', `/integrations/${connected.integrationId}/accounts`, { id: 'UCsomeoneelse' });
    expect(refused.body.message).toContain("channel UCsomeoneelse is not one of this Google account's YouTube channels");
  });

  it('connects at once when the account has a single channel', async () => {
    const second = fake.channels.splice(1, 1);
    try {
      const connected = await connectOAuthChannel(herald, 'youtube');
      expect(connected.inBetweenSteps).toBe(false);
      const list = (await herald.rest('GET', '/integrations')).body as { id: string; name: string }[];
      expect(list.find((item) => item.id === connected.integrationId)?.name).toBe('Herald Main');
    } finally {
      fake.channels.push(...second);
    }
  });

  it('refuses a code exchanged with the wrong PKCE verifier', async () => {
    const redirectUri = 'https://herald.example/api/integrations/social/youtube/callback';
    const code = new URL(fake.authority.approvalRedirect({ clientId: fake.authority.clientId, redirectUri, state: 's', scope: 'x', codeChallenge: 'not-the-hash', codeChallengeMethod: 'S256' })).searchParams.get('code')!;
    const context = providerContext({ endpoints: { ...youtube.endpoints, ...fake.endpoints } });
    const failure = await youtube.exchangeCode!(context, { code, codeVerifier: 'wrong', redirectUri, clientId: fake.authority.clientId, clientSecret: fake.authority.clientSecret }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PlatformHttpError);
    expect((failure as PlatformHttpError).message).toContain('code_verifier does not match');
  });
});

describe('publishing a video', () => {
  it('uploads through the worker in 256 KiB chunks over two runs, with every setting, a playlist and a comment', async () => {
    const worker = await herald.startWorker();
    try {
      const tags = [{ value: 'herald', label: 'herald' }, { value: 'launch day', label: 'launch day' }];
      const rootId = await createPost(herald, channelId, [{ content: '<p>Our <strong>launch</strong> video</p>', image: [video] }, '<p>Links in the description!</p>'], {
        settings: settings({ type: 'unlisted', selfDeclaredMadeForKids: 'no', tags, playlist: 'PLlaunches' }),
      });
      const items = await waitForPublished(herald, rootId);
      expect(fake.sessions).toHaveLength(1);
      expect(fake.sessions[0].metadata).toEqual({
        snippet: { title: 'Launch day', description: 'Our 𝗹𝗮𝘂𝗻𝗰𝗵 video', tags: ['herald', 'launch day'] },
        status: { privacyStatus: 'unlisted', selfDeclaredMadeForKids: false },
      });
      const [session] = fake.server.requestsTo('POST', '/upload/youtube/v3/videos');
      expect(session.headers['x-upload-content-length']).toBe(String(bytes.length));
      expect(session.headers['x-upload-content-type']).toBe('video/mp4');
      // Run 1 sends the first chunk; run 2 asks the session what it holds, then sends the rest.
      expect(puts().map((request) => request.headers['content-range'])).toEqual([`bytes 0-${QUANTUM - 1}/${bytes.length}`, `bytes */${bytes.length}`, `bytes ${QUANTUM}-${bytes.length - 1}/${bytes.length}`]);
      expect(fake.videos).toHaveLength(1);
      expect(fake.videos[0].bytes.equals(bytes)).toBe(true);
      expect(items[0].releaseId).toBe(fake.videos[0].id);
      expect(items[0].releaseUrl).toBe(`https://www.youtube.com/watch?v=${fake.videos[0].id}`);
      expect(fake.playlistItems).toEqual([expect.objectContaining({ playlistId: 'PLlaunches', videoId: fake.videos[0].id })]);
      expect(fake.comments).toEqual([expect.objectContaining({ videoId: fake.videos[0].id, text: 'Links in the description!' })]);
      expect(items[1].releaseId).toBe(fake.comments[0].id);
    } finally {
      await worker.stop();
    }
  });

  it('resumes an upload cut by a crash from the byte the session holds, and YouTube gets one video', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'Crash test', image: [video] }], { settings: settings() });
    const before = { sessions: fake.sessions.length, videos: fake.videos.length, puts: puts().length };
    Object.assign(youtubeUpload, { bytesPerRun: 4 * QUANTUM });
    // The second chunk reaches YouTube, which keeps only its first 100000 bytes, and the answer is lost (the worker died).
    fake.cutChunk(QUANTUM, 100_000);
    const restore = loseAnswerOf(herald, (request) => request.method === 'PUT' && String(request.headers?.['content-range']).startsWith(`bytes ${QUANTUM}-`));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
      Object.assign(youtubeUpload, { bytesPerRun: QUANTUM });
    }
    const [interrupted] = await chainOf(herald, rootId);
    expect(interrupted.publishProgress?.steps.video).toMatchObject({ state: 'started' });
    expect(fake.sessions[before.sessions].held).toBe(QUANTUM + 100_000);

    const { outcome } = await publishUntilSettled(herald, rootId);
    expect(outcome.kind).toBe('published');
    const after = puts().slice(before.puts).map((request) => request.headers['content-range']);
    expect(after).toEqual([
      `bytes 0-${QUANTUM - 1}/${bytes.length}`,
      `bytes ${QUANTUM}-${bytes.length - 1}/${bytes.length}`,
      `bytes */${bytes.length}`, // the interrupted step asks the session
      `bytes */${bytes.length}`, // and the upload starts again from what it holds
      `bytes ${QUANTUM + 100_000}-${bytes.length - 1}/${bytes.length}`,
    ]);
    expect(fake.sessions.length - before.sessions).toBe(1);
    expect(fake.videos.length - before.videos).toBe(1);
    expect(fake.videos.at(-1)!.bytes.equals(bytes)).toBe(true);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(fake.videos.at(-1)!.id);
  });

  it('refreshes an expired token once with the client secret, and publishes', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'After refresh', image: [video] }], { settings: settings() });
    fake.authority.expireAccessTokens();
    const refreshes = () => fake.server.requestsTo('POST', '/token').filter((request) => request.form?.get('grant_type') === 'refresh_token');
    const before = refreshes().length;
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [refresh] = refreshes().slice(before);
    expect(refresh.form?.get('client_id')).toBe(fake.authority.clientId);
    expect(refresh.form?.get('client_secret')).toBe(fake.authority.clientSecret);
    expect(refreshes().length - before).toBe(1);
  });

  it('retries a 429 after the Retry-After Google sent', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'Busy', image: [video] }], { settings: settings() });
    fake.server.failNext('POST', '/upload/youtube/v3/videos', { ...googleError(429, 'rateLimitExceeded', 'The request cannot be completed because you have exceeded your quota.'), headers: { 'retry-after': '600' } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(599_000);
    expect(waiting.lastError).toContain('rateLimitExceeded');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
  });

  it('puts the post in ERROR with a clear message when the YouTube quota is used up, and notifies', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'No quota', image: [video] }], { settings: settings() });
    fake.server.failNext('POST', '/upload/youtube/v3/videos', googleError(403, 'quotaExceeded', 'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.'));
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [failed] = await chainOf(herald, rootId);
    expect(failed.state).toBe('ERROR');
    expect(failed.error).toMatch(/YouTube refused the post: .*daily YouTube API quota \(quotaExceeded\)/);
    const notes = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notes.some((note) => note.content.includes('quotaExceeded'))).toBe(true);
  });

  it('classifies Google errors: upload limit permanent, rate limits and backend errors retryable, 401 refreshes', () => {
    const body = (code: number, reason: string) => JSON.stringify(googleError(code, reason, `message of ${reason}`).json);
    expect(classify(400, body(400, 'uploadLimitExceeded'))).toMatchObject({ retryable: false, message: expect.stringContaining('number of videos it may upload') });
    expect(classify(403, body(403, 'rateLimitExceeded'))).toMatchObject({ retryable: true, status: 429 });
    expect(classify(503, body(503, 'backendError'))).toMatchObject({ retryable: true });
    expect(classify(401, body(401, 'authError'))).toMatchObject({ status: 401 });
    expect(classify(403, body(403, 'forbidden'))).toMatchObject({ retryable: false, message: 'message of forbidden (forbidden)' });
  });
});

describe('what YouTube made of the upload', () => {
  const healthOf = async () => ((await herald.rest('GET', '/integrations')).body as { id: string; health: { notice?: string } }[]).find((item) => item.id === channelId)!.health;

  it('reports a video YouTube locked to private (unverified API project) on the post and in the channel\'s health, until a video goes out as asked', async () => {
    // Earlier tests moved Herald's clock ahead to their retries: these posts are published later than all of them.
    const later = (hours: number) => herald.setNow(new Date(Date.now() + hours * 3_600_000));
    fake.project.unverified = true;
    let rootId;
    try {
      rootId = await createPost(herald, channelId, [{ content: 'Locked', image: [video] }], { settings: settings() });
      later(2);
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      fake.project.unverified = false;
    }
    const [root] = await chainOf(herald, rootId);
    expect(fake.server.requestsTo('GET', '/youtube/v3/videos').at(-1)!.query.get('id')).toBe(root.releaseId);
    expect(root.releaseMeta).toMatchObject({ privacyStatus: 'private', uploadStatus: 'uploaded' });
    expect(root.releaseWarnings).toEqual([expect.stringMatching(/^YouTube kept the video private: uploads from unverified API projects are locked to private/)]);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString();
    const listed = await herald.rest('GET', `/posts?startDate=${day(-1)}&endDate=${day(1)}`);
    expect(JSON.stringify(listed.body)).toContain('YouTube kept the video private');
    expect((await healthOf()).notice).toMatch(/^YouTube kept the video private/);

    const next = await createPost(herald, channelId, [{ content: 'Public at last', image: [video] }], { settings: settings() });
    later(3);
    expect((await publishUntilSettled(herald, next)).outcome.kind).toBe('published');
    const [published] = await chainOf(herald, next);
    expect([published.releaseMeta?.privacyStatus, published.releaseWarnings]).toEqual(['public', null]);
    expect((await healthOf()).notice).toBeUndefined();
  });

  it('fails a video YouTube rejected, with its reason', async () => {
    fake.project.reject = 'duplicate';
    const rootId = await createPost(herald, channelId, [{ content: 'Rejected', image: [video] }], { settings: settings() });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toContain('YouTube rejected the video (duplicate)');
  });
});

describe('comments published exactly once', () => {
  // The token acts as the channel chosen at connection (Herald Brand).
  beforeAll(() => fake.actAs(fake.channels[1].id));
  const isComment = (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith('/youtube/v3/commentThreads');
  const olderComment = (videoId: string, text: string) =>
    fake.comments.push({ id: `UgOld${fake.comments.length}`, commentId: `UgOldC${fake.comments.length}`, videoId, text, channelId: fake.channels[1].id, publishedAt: hoursAgo(30).toISOString(), moderationStatus: 'published' });

  it('posts the comment once when its insert never reached YouTube, never taking an older comment of the channel with the same text', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'With a comment', image: [video] }, 'First!'], { settings: settings() });
    const restore = loseRequestOf(herald, (request) => isComment(request) && Boolean(olderComment(fake.videos.at(-1)!.id, 'First!')));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const [, reply] = await chainOf(herald, rootId);
    const same = fake.comments.filter((comment) => comment.text === 'First!' && comment.videoId === fake.videos.at(-1)!.id);
    expect(same).toHaveLength(2);
    expect(reply.releaseId).toBe(same.find((comment) => !comment.id.startsWith('UgOld'))!.id);
  });

  it('links the comment whose answer was lost after YouTube made it', async () => {
    const rootId = await createPost(herald, channelId, [{ content: 'Lost comment answer', image: [video] }, 'Second!'], { settings: settings() });
    const restore = loseAnswerOf(herald, isComment);
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const made = fake.comments.filter((comment) => comment.text === 'Second!');
    expect(made).toHaveLength(1);
    expect((await chainOf(herald, rootId))[1].releaseId).toBe(made[0].id);
  });
});

describe('settings and media rules', () => {
  const attempt = (items: { content: string; image: { id: string; path: string }[] }[], extra: Record<string, unknown>) =>
    submitPost(herald, channelId, items, { settings: { __type: 'youtube', ...extra } });

  it.each([
    ['no title', [{ content: 'x', image: [] as { id: string; path: string }[] }], { type: 'public' }, /settings\.title/],
    ['a privacy type YouTube does not have', 'video', { title: 'Title', type: 'friends' }, /settings\.type/],
    ['a picture instead of a video', 'image', { title: 'Title', type: 'public' }, /exactly one video/],
    ['a title with <', 'video', { title: 'a <b> title', type: 'public' }, /title cannot contain < or >/],
    ['tags over 500 characters', 'video', { title: 'Title', type: 'public', tags: Array.from({ length: 60 }, (_, index) => ({ value: `tag number ${index}`, label: 'x' })) }, /YouTube allows 500/],
  ])('refuses %s', async (_name, media, extra, expected) => {
    const image = media === 'video' ? [video] : media === 'image' ? [{ id: 'i', path: 'https://media.example/a.png' }] : [];
    const items = Array.isArray(media) ? media : [{ content: 'Hello', image }];
    const response = await attempt(items, extra);
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(expected);
  });

  it('counts the description in bytes, as YouTube does: 3,000 Japanese characters (9,000 bytes) are refused, 1,600 (4,800 bytes) pass', async () => {
    const japanese = (count: number) => '日'.repeat(count);
    const refused = await attempt([{ content: japanese(3000), image: [video] }], { title: 'Title', type: 'public' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/The text takes 9000 bytes; YouTube allows 5000 bytes/);
    expect((await attempt([{ content: japanese(1600), image: [video] }], { title: 'Title', type: 'public' })).status).toBe(200);
  });

  it('shows the description\'s length in bytes beside the byte limit: POST /posts/validate agrees with its own refusal', async () => {
    const response = await herald.rest('POST', '/posts/validate', {
      type: 'schedule',
      date: new Date(Date.now() + 86_400_000).toISOString(),
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: channelId }, value: [{ content: '日'.repeat(1700), image: [video] }], settings: { title: 'Title', type: 'public' } }],
    });
    const [entry] = response.body.entries;
    expect(entry.problem).toMatch(/The text takes 5100 bytes; YouTube allows 5000 bytes/);
    expect({ lengthMethod: entry.lengthMethod, maxLength: entry.maxLength }).toEqual({ lengthMethod: 'bytes', maxLength: 5000 });
    expect(entry.items[0]).toMatchObject({ length: 5100, withinLimit: false });
  });

  it('refuses a description with < or >, and a comment with media', async () => {
    expect((await attempt([{ content: '<p>1 &lt; 2</p>', image: [video] }], { title: 'Title', type: 'public' })).body.message).toMatch(/description cannot contain/);
    expect((await attempt([{ content: 'ok', image: [video] }, { content: 'c', image: [video] }], { title: 'Title', type: 'public' })).body.message).toMatch(/Item 2 is a comment/);
  });
});

describe('analytics and helpers', () => {
  it('reads channel and video analytics from the YouTube Analytics API, day by day', async () => {
    const channel = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    expect(channel.body.map((metric: { label: string }) => metric.label)).toEqual(['Views', 'Minutes watched', 'Likes', 'Comments', 'Subscribers gained', 'Subscribers lost']);
    expect(channel.body[0].data).toHaveLength(8);
    expect(channel.body[0].data[0]).toEqual({ total: '100', date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(channel.body[0].percentageChange).toBeGreaterThan(0);

    const [published] = await herald.services.orm.em.fork().find(PostSchema, { integrationId: channelId, state: 'PUBLISHED', position: 0 }, { limit: 1 });
    const post = await herald.rest('GET', `/analytics/post/${published.id}?date=7`);
    expect(post.body.map((metric: { label: string }) => metric.label)).toContain('Views');
    const request = fake.server.requestsTo('GET', '/v2/reports').at(-1)!;
    expect(request.query.get('filters')).toBe(`video==${published.releaseId}`);
    expect(request.query.get('ids')).toBe('channel==MINE');
  });

  it('lists playlists with getPlaylists, and answers 401 once the token is dead', async () => {
    const listed = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'getPlaylists' });
    expect(listed.body).toEqual({ output: [{ id: 'PLfavourites', name: 'Favourites' }, { id: 'PLlaunches', name: 'Launches' }] });
    fake.authority.revokeAll();
    const dead = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'getPlaylists' });
    expect(dead.status).toBe(401);
  });
});
