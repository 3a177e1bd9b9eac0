// Instagram (business login through Facebook) end to end against the fake Graph API (test/fakes/facebook.ts): the picker,
// containers that stay IN_PROGRESS for a few checks while the job is re-scheduled, carousels,
// Reels with trial and audio settings, stories, comments, validation, media errors, rate limits, crash recovery without a
// second container or a second media_publish, the publishing limit, analytics and audioSearch.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema } from '../../src/db/entities.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { metaError, startFacebookFake, type FacebookFake } from '../fakes/facebook.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { hoursAgo, loseAnswerOf, loseRequestOf, withPlatformFetch } from '../helpers/lost-answer.js';
import { acceptedSamples, goodMp4, uploaded } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, submitPost, type ItemInput, waitForPublished } from '../helpers/posts.js';

let fake: FacebookFake;
let herald: Herald;
let business = '';
let igId = '';

beforeAll(async () => {
  fake = await startFacebookFake();
  herald = await startHerald({ ...fake.environment(), PUBLISH_RECHECK_MAX_SECONDS: '1' }, { guard: { allowLoopback: true } });
  igId = fake.pages[0].instagram!.id;
});

// Every Graph request Herald sent fits Meta's own node and edge specs (test/contracts/meta/graph.json).
afterEach(() => {
  expect(fake.contractViolations.splice(0)).toEqual([]);
});

afterAll(async () => {
  await herald?.stop();
  await fake?.close();
});

const sample = (type: string) => acceptedSamples().find((entry) => entry.type === type)!.bytes;
const picture = () => uploaded(herald, sample('image/jpeg'), 'loaf.jpg', 'image/jpeg');
const post = (extra: Record<string, unknown> = {}) => ({ settings: { __type: 'instagram', post_type: 'post', ...extra } });
const graphPath = (path: string) => `/${fake.version}/${path}`;
const em = () => herald.services.orm.em.fork();

async function runAt<T>(date: Date, run: () => Promise<T>): Promise<T> {
  herald.setNow(date);
  try {
    return await run();
  } finally {
    herald.setNow(undefined);
  }
}

describe('connecting Instagram through the Facebook business login', () => {
  it('business login: Facebook Login, then the picker lists only Pages with an Instagram professional account', async () => {
    const { integrationId, inBetweenSteps, authorizeUrl } = await connectOAuthChannel(herald, 'instagram');
    expect(inBetweenSteps).toBe(true);
    expect(authorizeUrl.pathname).toBe(`/${fake.version}/dialog/oauth`);
    expect(authorizeUrl.searchParams.get('scope')).toContain('instagram_content_publish');
    const choices = await herald.rest('GET', `/integrations/${integrationId}/accounts`);
    expect(choices.body).toEqual([{ id: igId, name: 'Herald Bakery (@herald.bakery, Page Herald Bakery)', picture: fake.pages[0].instagram!.profile_picture_url }]);
    const refused = await herald.rest('POST', `/integrations/${integrationId}/accounts`, { id: '102' });
    expect(refused.status).toBe(404);
    expect(refused.body.message).toBe('The Instagram account 102 is not one this Facebook account manages.');
    const chosen = await herald.rest('POST', `/integrations/${integrationId}/accounts`, { id: igId });
    expect(chosen.body).toMatchObject({ identifier: 'instagram', name: 'Herald Bakery', profile: 'herald.bakery' });
    const integration = await em().findOneOrFail(IntegrationSchema, { id: integrationId });
    expect(channelAuth(herald.services, integration)).toMatchObject({ accessToken: fake.pageToken('101'), internalId: igId, data: { pageId: '101' } });
    business = integrationId;
  });
});

describe('publishing with containers', () => {
  it('publishes a carousel whose containers stay IN_PROGRESS for two checks, re-scheduling instead of sleeping, then a comment', async () => {
    const pictures = [await picture(), await picture(), await picture()];
    fake.setProcessingChecks(2);
    let runs: string[] = [];
    let rootId = '';
    try {
      rootId = await createPost(herald, business, [{ content: '<p>Three loaves</p>', image: pictures }, '<p>Recipe in bio</p>'], post({ collaborators: [{ label: '@friend.baker' }] }));
      runs = (await publishUntilSettled(herald, rootId)).runs.map((run) => run.kind);
    } finally {
      fake.setProcessingChecks(0);
    }
    expect(runs).toEqual(['waiting', 'waiting', 'waiting', 'waiting', 'published']);
    const created = fake.server.requestsTo('POST', graphPath(`${igId}/media`)).map((call) => call.json);
    expect(created.slice(0, 3)).toEqual(pictures.map((item) => ({ image_url: item.path, is_carousel_item: true })));
    const children = fake.containers.slice(-4, -1).map((container) => container.id);
    expect(created[3]).toEqual({ media_type: 'CAROUSEL', children, caption: 'Three loaves', collaborators: ['friend.baker'] });
    expect(created).toHaveLength(4);
    expect(fake.server.requestsTo('POST', graphPath(`${igId}/media_publish`)).map((call) => call.json)).toEqual([{ creation_id: fake.containers.at(-1)!.id }]);
    expect(fake.server.requestsTo('GET', graphPath(`${igId}/content_publishing_limit`))).toHaveLength(1);
    for (const item of pictures) expect(fake.fetches).toContainEqual({ url: item.path, status: 200, bytes: sample('image/jpeg').length });
    const media = fake.media.at(-1)!;
    expect(media).toMatchObject({ mediaType: 'CAROUSEL_ALBUM', caption: 'Three loaves' });
    const chain = await chainOf(herald, rootId);
    const comment = fake.comments.at(-1)!;
    expect(comment).toMatchObject({ parentId: media.id, message: 'Recipe in bio' });
    expect(chain.map((item) => item.releaseId)).toEqual([media.id, comment.id]);
    expect(chain[0].releaseUrl).toBe(media.permalink);
    expect(chain[0].releaseMeta).toEqual({ kind: 'carousel' });
  });

  it('publishes a single video as a trial Reel with licensed audio, through the real worker', async () => {
    const video = await uploaded(herald, goodMp4(), 'reel.mp4', 'video/mp4');
    fake.setProcessingChecks(1);
    const worker = await herald.startWorker();
    let rootId = '';
    try {
      rootId = await createPost(herald, business, [{ content: '<p>Behind the oven</p>', image: [video] }], post({ is_trial_reel: true, audio: { id: 'aud-1', audio_volume: 80, video_volume: 20 } }));
      await waitForPublished(herald, rootId);
    } finally {
      await worker.stop();
      fake.setProcessingChecks(0);
    }
    expect(fake.server.requestsTo('POST', graphPath(`${igId}/media`)).at(-1)!.json).toEqual({
      media_type: 'REELS',
      video_url: video.path,
      caption: 'Behind the oven',
      trial_params: { graduation_strategy: 'MANUAL' },
      audio_configuration: { audio_id: 'aud-1', audio_volume: 80, video_volume: 20 },
    });
    expect(fake.fetches).toContainEqual({ url: video.path, status: 200, bytes: goodMp4().length });
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBe(fake.media.at(-1)!.id);
    expect(fake.media.at(-1)!.productType).toBe('REELS');
    expect(root.releaseMeta).toEqual({ kind: 'reel' });
  });

  it('publishes a story of one picture, without caption or collaborators', async () => {
    const image = await picture();
    const rootId = await createPost(herald, business, [{ content: '<p>Not shown on stories</p>', image: [image] }], post({ post_type: 'story' }));
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('POST', graphPath(`${igId}/media`)).at(-1)!.json).toEqual({ media_type: 'STORIES', image_url: image.path });
    expect(fake.media.at(-1)!.productType).toBe('STORY');
    expect((await chainOf(herald, rootId))[0].releaseMeta).toEqual({ kind: 'story' });
  });

  it('publishes a story of one video, which the API takes as media_type STORIES with video_url', async () => {
    const video = await uploaded(herald, goodMp4(), 'story.mp4', 'video/mp4');
    const rootId = await createPost(herald, business, [{ content: '<p>Behind the counter</p>', image: [video] }], post({ post_type: 'story' }));
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.server.requestsTo('POST', graphPath(`${igId}/media`)).at(-1)!.json).toEqual({ media_type: 'STORIES', video_url: video.path });
    expect(fake.media.at(-1)).toMatchObject({ productType: 'STORY', mediaType: 'VIDEO' });
    expect((await chainOf(herald, rootId))[0]).toMatchObject({ releaseId: fake.media.at(-1)!.id, releaseMeta: { kind: 'story' } });
  });

  it('refuses at validation what Instagram would refuse, naming the fix', async () => {
    const image = await picture();
    const png = await uploaded(herald, sample('image/png'), 'flat.png', 'image/png');
    const video = await uploaded(herald, goodMp4(), 'v.mp4', 'video/mp4');
    const attempt = async (integration: string, value: ItemInput[], extra: Record<string, unknown>) => {
      const response = await submitPost(herald, integration, value, { type: 'now', settings: { __type: 'instagram', post_type: 'post', ...extra } });
      expect(response.status).toBe(400);
      return response.body.message as string;
    };
    const item = (...media: { id: string; path: string }[]) => [{ content: 'x', image: media }];
    expect(await attempt(business, item(png), {})).toContain('has a PNG picture, but Instagram publishes JPEG only: convert it to JPEG');
    expect(await attempt(business, item(), {})).toContain('needs at least one picture or video');
    expect(await attempt(business, item(image, video), { post_type: 'story' })).toContain('is a story, which takes exactly one picture or one video');
    expect(await attempt(business, item(...Array(11).fill(image)), {})).toContain('an Instagram carousel takes at most 10');
    expect(await attempt(business, item(image), { is_trial_reel: true })).toContain('trial reel, which takes a single video');
    expect(await attempt(business, item(video, image), { audio: { id: 'aud-1' } })).toContain('sets audio, which needs a single video');
    expect(await attempt(business, item(image), { collaborators: [1, 2, 3, 4].map((n) => ({ label: `c${n}` })) })).toContain('at most 3');
    expect(await attempt(business, [{ content: 'x', image: [image] }, { content: 'y', image: [image] }], {})).toContain('Item 2 has attachments, but comments on Instagram take text only');
  });
});

describe('failures, retries and recovery', () => {
  it('stops a post whose container ends in ERROR with the fix, and notifies', async () => {
    const video = await uploaded(herald, goodMp4(), 'broken.mp4', 'video/mp4');
    fake.setProcessingChecks(1);
    const rootId = await createPost(herald, business, [{ content: '<p>Broken clip</p>', image: [video] }], post());
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      fake.setProcessingChecks(0);
    }
    fake.containers.at(-1)!.failure = 2207026;
    const outcome = await runAt(new Date(Date.now() + 60_000), () => publishChain(herald.services, rootId));
    expect(outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toContain('Instagram (Facebook Business) refused the post: the video format is not supported: send an MP4 or MOV');
    expect(root.error).toContain('container status: Error: Media upload has failed with error code 2207026');
    expect(fake.server.requestsTo('POST', graphPath(`${igId}/media_publish`)).map((call) => call.json)).not.toContainEqual({ creation_id: fake.containers.at(-1)!.id });
    const notifications = await herald.rest('GET', '/notifications');
    expect(notifications.body.notifications[0]).toMatchObject({ type: 'post_failed', content: expect.stringContaining('MP4 or MOV') });
  });

  it('puts a refused image (36001/2207005) in ERROR with a sentence naming the fix', async () => {
    const rootId = await createPost(herald, business, [{ content: '<p>Odd format</p>', image: [await picture()] }], post());
    fake.server.failNext('POST', graphPath(`${igId}/media`), metaError(36001, 'The image format is not supported.', { subcode: 2207005 }));
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toContain('the image must be a JPEG (Instagram publishes no PNG, WebP, GIF or HEIC): convert it to JPEG');
  });

  it('retries a rate limit on media_publish at Meta\'s reset, without creating a second container', async () => {
    const rootId = await createPost(herald, business, [{ content: '<p>Rate limited</p>', image: [await picture()] }], post());
    const usage = JSON.stringify({ 101: [{ type: 'instagram', call_count: 100, estimated_time_to_regain_access: 2 }] });
    fake.server.failNext('POST', graphPath(`${igId}/media_publish`), metaError(17, 'User request limit reached', { headers: { 'x-business-use-case-usage': usage } }));
    const containersBefore = fake.containers.length;
    const before = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(119_000);
    expect(waiting.nextAttemptAt!.getTime() - before).toBeLessThan(125_000);
    expect((await runAt(new Date(waiting.nextAttemptAt!.getTime() + 1000), () => publishChain(herald.services, rootId))).kind).toBe('published');
    expect(fake.containers.length - containersBefore).toBe(1);
    expect(fake.media.filter((media) => media.caption === 'Rate limited')).toHaveLength(1);
  });

  it('resumes after a crash between container creation and publishing, and after a lost media_publish answer, creating nothing twice', async () => {
    const rootId = await createPost(herald, business, [{ content: '<p>Crash test</p>', image: [await picture()] }], post());
    const containersBefore = fake.containers.length;
    const publishCalls = () => fake.server.requestsTo('POST', graphPath(`${igId}/media_publish`)).length;
    const publishesBefore = publishCalls();
    // Run 1: the container is created and recorded, then the worker dies before the status check.
    let crashed = false;
    const first = await withPlatformFetch(
      herald.services,
      (real) => async (request) => {
        if (!crashed && request.query?.fields === 'status_code,status') {
          crashed = true;
          throw new Error('worker crashed');
        }
        return real(request);
      },
      () => publishChain(herald.services, rootId),
    );
    expect(first.kind).toBe('waiting');
    expect(fake.containers.length - containersBefore).toBe(1);
    // Run 2, at its retry time: media_publish reaches Instagram but its answer is lost: the step stays open.
    const restore = loseAnswerOf(herald, (request) => request.url.endsWith('/media_publish'));
    let second;
    try {
      second = await runAt(new Date((first as { runAt: Date }).runAt.getTime() + 1000), () => publishChain(herald.services, rootId));
      expect(second.kind).toBe('waiting');
    } finally {
      restore();
    }
    // Run 3: the container answers PUBLISHED; the post is found among recent media. Nothing is created again.
    expect((await runAt(new Date((second as { runAt: Date }).runAt.getTime() + 1000), () => publishChain(herald.services, rootId))).kind).toBe('published');
    expect(fake.containers.length - containersBefore).toBe(1);
    expect(publishCalls() - publishesBefore).toBe(1);
    const published = fake.media.filter((media) => media.caption === 'Crash test');
    expect(published).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(published[0].id);
  });

  const olderMedia = (caption: string) => {
    fake.media.push({ id: `1791${fake.media.length}`, owner: igId, containerId: 'old', caption, mediaType: 'IMAGE', productType: 'FEED', permalink: 'https://www.instagram.com/p/older/', timestamp: hoursAgo(72).toISOString() });
    return fake.media.at(-1)!.id;
  };
  const isPublish = (request: { url: string }) => request.url.endsWith('/media_publish');

  it('publishes once when media_publish never reached Instagram, and never takes an older comment of the account for a lost one', async () => {
    const old = olderMedia('Fresh loaves');
    const rootId = await createPost(herald, business, [{ content: '<p>Fresh loaves</p>', image: [await picture()] }, '<p>Order by noon</p>'], post());
    const restorePublish = loseRequestOf(herald, isPublish);
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restorePublish();
    }
    // The comment's request is lost too, while a comment of the account with the same text, older than the attempt, is there.
    const isComment = (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith('/comments');
    const restoreComment = loseRequestOf(herald, (request) => {
      if (!isComment(request)) return false;
      fake.comments.push({ id: '17800001', parentId: fake.media.at(-1)!.id, authorId: igId, message: 'Order by noon', createdTime: hoursAgo(3).toISOString() });
      return true;
    });
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restoreComment();
    }
    const [root, reply] = await chainOf(herald, rootId);
    expect(fake.media.filter((media) => media.caption === 'Fresh loaves').map((media) => media.id)).toEqual([old, root.releaseId]);
    expect(fake.comments.filter((comment) => comment.message === 'Order by noon')).toHaveLength(2);
    expect(reply.releaseId).toBe(fake.comments.at(-1)!.id);
  });

  it('links a lost media_publish to the new post even while Instagram still lists only an older one with the same caption', async () => {
    const old = olderMedia('Sourdough Saturday');
    const rootId = await createPost(herald, business, [{ content: '<p>Sourdough Saturday</p>', image: [await picture()] }], post());
    const restore = loseAnswerOf(herald, isPublish);
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    fake.setListingLag(1);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const made = fake.media.filter((media) => media.caption === 'Sourdough Saturday');
    expect(made).toHaveLength(2);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(made.find((media) => media.id !== old)!.id);
  });

  it('links a lost story to the new one, never to a story posted 90 s before while Instagram does not list the new one yet (issue 31)', async () => {
    // A story has no caption to compare: inside the clock-skew allowance only a story made since the attempt began is it.
    // The stories earlier tests made (within the same second, on a fast run) are dated back out of this attempt's window.
    for (const media of fake.media) if (media.productType === 'STORY') media.timestamp = new Date(Date.now() - 3_600_000).toISOString();
    fake.media.push({ id: `1792${fake.media.length}`, owner: igId, containerId: 'old', mediaType: 'IMAGE', productType: 'STORY', permalink: 'https://www.instagram.com/stories/older/', timestamp: new Date(Date.now() - 90_000).toISOString() });
    const older = fake.media.at(-1)!.id;
    const publishes = () => fake.server.requestsTo('POST', graphPath(`${igId}/media_publish`)).length;
    const before = publishes();
    const rootId = await createPost(herald, business, [{ content: '<p>Story time</p>', image: [await picture()] }], post({ post_type: 'story' }));
    const restore = loseAnswerOf(herald, isPublish);
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restore();
    }
    fake.setListingLag(1);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const stories = fake.media.filter((media) => media.productType === 'STORY' && media.id !== older);
    const [root] = await chainOf(herald, rootId);
    expect(root.releaseId).toBe(stories.at(-1)!.id);
    expect(root.releaseId).not.toBe(older);
    expect(publishes() - before).toBe(1);
  });

  it('waits an hour, creating nothing, when the account used its publishing limit', async () => {
    fake.setQuota(0);
    const rootId = await createPost(herald, business, [{ content: '<p>Over the limit</p>', image: [await picture()] }], post());
    const containersBefore = fake.containers.length;
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      fake.setQuota(100);
    }
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.lastError).toContain('API posts Instagram allows in 24 hours');
    expect(waiting.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(3500_000);
    expect(fake.containers.length).toBe(containersBefore);
  });
});

describe('analytics and helpers', () => {
  it('reads account insights: followers, daily reach and new followers, the period\'s views and profile views', async () => {
    const response = await herald.rest('GET', `/analytics/${business}?date=90`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((entry: { label: string }) => entry.label)).toEqual(['Followers', 'Reach', 'New followers', 'Views', 'Profile views', 'Accounts engaged', 'Interactions']);
    expect(response.body[0].data[0].total).toBe('1200');
    expect(response.body[1].data).toHaveLength(30);
    expect(response.body[3].data).toEqual([{ total: '900', date: new Date().toISOString().slice(0, 10) }]);
    const [series, totals] = fake.server.requestsTo('GET', graphPath(`${igId}/insights`)).slice(-2);
    expect(series.query.get('metric')).toBe('reach,follower_count');
    expect(Number(series.query.get('until')) - Number(series.query.get('since'))).toBe(30 * 86_400);
    expect(totals.query.get('metric_type')).toBe('total_value');
  });

  it('reads media insights, with the story metrics for a story', async () => {
    const [carousel] = fake.media.filter((media) => media.caption === 'Three loaves');
    const feed = await herald.services.orm.em.fork().getConnection().execute(`select id from post where release_id = '${carousel.id}'`);
    const response = await herald.rest('GET', `/analytics/post/${feed[0].id}`);
    expect(response.body.map((entry: { label: string; data: { total: string }[] }) => [entry.label, entry.data[0].total])).toEqual([
      ['Views', '900'], ['Reach', '200'], ['Likes', '21'], ['Comments', '4'], ['Saves', '6'], ['Shares', '2'],
    ]);
    const story = fake.media.find((media) => media.productType === 'STORY')!;
    const storyPost = await herald.services.orm.em.fork().getConnection().execute(`select id from post where release_id = '${story.id}'`);
    const storyMetrics = await herald.rest('GET', `/analytics/post/${storyPost[0].id}`);
    expect(storyMetrics.body.map((entry: { label: string }) => entry.label)).toEqual(['Views', 'Reach', 'Replies', 'Shares']);
  });

  it('runs audioSearch through POST /integration-trigger, and answers 401 once the token is dead', async () => {
    const settingsRecord = await herald.rest('GET', `/integration-settings/${business}`);
    expect(settingsRecord.body.output.tools.map((tool: { methodName: string }) => tool.methodName)).toEqual(['audioSearch']);
    const trending = await herald.rest('POST', `/integration-trigger/${business}`, { methodName: 'audioSearch', data: { q: '', type: 'music' } });
    expect(trending.status, JSON.stringify(trending.body)).toBe(200);
    expect(trending.body.output).toEqual([
      { id: 'aud-1', title: 'Morning Bread', artist: 'The Ovens', image: `${fake.url}/pictures/aud-1.jpg`, duration: 30000, previewUrl: `${fake.url}/audio/aud-1.m4a` },
    ]);
    const request = fake.server.requestsTo('GET', graphPath('ig_audio')).at(-1)!;
    expect(Object.fromEntries(request.query)).toEqual({ audio_type: 'music', user_id: igId });
    const sounds = await herald.rest('POST', `/integration-trigger/${business}`, { methodName: 'audioSearch', data: { q: 'original', type: 'original_sound' } });
    expect(sounds.body.output).toEqual([expect.objectContaining({ id: 'aud-2', artist: 'baker.joe' })]);
    expect(fake.server.requestsTo('GET', graphPath('ig_audio')).at(-1)!.query.get('search_query')).toBe('original');
    const wrongType = await herald.rest('POST', `/integration-trigger/${business}`, { methodName: 'audioSearch', data: { type: 'podcast' } });
    expect(wrongType.status).toBe(400);

    fake.tokens.get(fake.pageToken('101'))!.revoked = true;
    const dead = await herald.rest('POST', `/integration-trigger/${business}`, { methodName: 'audioSearch', data: {} });
    expect(dead.status).toBe(401);
    expect(dead.body.code).toBe('reauth_required');
  });
});
