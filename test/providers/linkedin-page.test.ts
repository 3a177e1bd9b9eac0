// LinkedIn Page: the organization picker, posting as the organization, page analytics, then end to end through a real
// Herald (OAuth with the picker, getCompanies, video through the worker, an interrupted create looked up, reconnection).
import { PDFDocument } from 'pdf-lib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import linkedinPage from '../../providers/linkedin-page.js';
import type { ProviderContext, PublishItem } from '../../providers/types.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { publishChain } from '../../tools/internal/publish.js';
import { dailyStatistics, startLinkedinFake, SIXTY_DAYS, type LinkedinFake } from '../fakes/linkedin.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { goodMp4, upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, waitForPublished, reopenAsInterrupted } from '../helpers/posts.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';
import { hoursAgo, loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';

const ORGANIZATION = 'urn:li:organization:101';
const DAY_MS = 86_400_000;

describe('linkedin-page provider against the fake', () => {
  let fake: LinkedinFake;
  beforeEach(async () => {
    fake = await startLinkedinFake();
  });
  afterEach(async () => {
    await fake.close();
  });
  const context = (settings: Record<string, unknown> = {}, auth = fake.channelAuth('page')): ProviderContext => providerContext({ endpoints: fake.endpoints, auth, settings });
  const item = (text: string, media: PublishItem['media'] = []): PublishItem => ({ postId: 'post-1', text, media });

  it('lists the organizations the member administers, with names and their largest logo', async () => {
    const accounts = await linkedinPage.accounts!(context());
    expect(accounts).toEqual([
      { id: 'urn:li:organization:101', name: 'Herald Labs', picture: `${fake.url}/media/herald-400.png` },
      { id: 'urn:li:organization:202', name: 'Second Page', picture: `${fake.url}/media/second-400.png` },
    ]);
    const [request] = fake.server.requestsTo('GET', '/rest/organizationAcls');
    expect(Object.fromEntries(request.query)).toMatchObject({ q: 'roleAssignee', role: 'ADMINISTRATOR', state: 'APPROVED' });
    expect(request.query.get('projection')).toContain('organization~(localizedName,vanityName,logoV2(original~:playableStreams))');
  });

  it("makes the channel the chosen organization with the member's token, expiry and refresh token", async () => {
    const member = { ...fake.channelAuth('page', { refreshToken: true }), internalId: fake.personUrn };
    const account = await linkedinPage.selectAccount!(context({}, member), 'urn:li:organization:202');
    expect(account).toEqual({
      internalId: 'urn:li:organization:202',
      name: 'Second Page',
      profile: 'second-page',
      picture: `${fake.url}/media/second-400.png`,
      accessToken: member.accessToken,
      refreshToken: member.refreshToken,
      expiresAt: member.expiresAt,
      data: { member: fake.personUrn },
    });
    const refused = await linkedinPage.selectAccount!(context({}, member), 'urn:li:organization:303').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('invalid_input');
  });

  it('runs getCompanies', async () => {
    const tool = linkedinPage.tools.find((candidate) => candidate.methodName === 'getCompanies')!;
    expect(await tool.run!(context(), {})).toEqual([
      { id: 'urn:li:organization:101', name: 'Herald Labs', vanityName: 'herald-labs', picture: `${fake.url}/media/herald-400.png` },
      { id: 'urn:li:organization:202', name: 'Second Page', vanityName: 'second-page', picture: `${fake.url}/media/second-400.png` },
    ]);
  });

  it('posts as the organization: uploads owned by it, the carousel titled by carousel_name, comments by it', async () => {
    const root = await linkedinPage.publish!(context({ post_as_images_carousel: true, carousel_name: 'Q3 deck' }), item('Deck', [mediaFile(tinyPng()), mediaFile(tinyPng())]));
    expect(fake.server.requestsTo('POST', '/rest/documents')[0].json).toEqual({ initializeUploadRequest: { owner: ORGANIZATION } });
    const [document] = [...fake.documents.values()];
    expect((await PDFDocument.load(document.bytes!)).getPageCount()).toBe(2);
    expect(fake.posts[0]).toMatchObject({ author: ORGANIZATION, content: { media: { id: document.urn, title: 'Q3 deck' } } });
    await linkedinPage.comment!(context(), item('By the page'), { root, parent: root });
    expect(fake.comments[0]).toMatchObject({ actor: ORGANIZATION, object: root.id, text: 'By the page' });
  });

  it('reports followers and share statistics as daily points over the period', async () => {
    const metrics = await linkedinPage.analytics!(context(), 7);
    const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const days = Array.from({ length: 7 }, (_, index) => end - (7 - index) * DAY_MS);
    const dates = days.map((day) => new Date(day).toISOString().slice(0, 10));
    const byLabel = Object.fromEntries(metrics.map((metric) => [metric.label, metric]));
    expect(metrics.map((metric) => metric.label)).toEqual(['Followers', 'New followers', 'Impressions', 'Unique impressions', 'Clicks', 'Likes', 'Comments', 'Shares', 'Engagement (%)']);
    const gains = days.map((day) => dailyStatistics(day).followerGains.organicFollowerGain + dailyStatistics(day).followerGains.paidFollowerGain);
    expect(byLabel['New followers'].data).toEqual(gains.map((gain, index) => ({ total: String(gain), date: dates[index] })));
    expect(byLabel.Followers.data.at(-1)).toEqual({ total: '5000', date: dates[6] });
    expect(byLabel.Followers.data[0].total).toBe(String(5000 - gains.slice(1).reduce((sum, gain) => sum + gain, 0)));
    expect(byLabel.Impressions.data.map((point) => point.total)).toEqual(days.map((day) => String(dailyStatistics(day).totalShareStatistics.impressionCount)));
    expect(byLabel['Engagement (%)'].data[0].total).toBe('5');
    const [request] = fake.server.requestsTo('GET', '/rest/organizationalEntityShareStatistics');
    expect(request.query.get('timeIntervals')).toBe(`(timeRange:(start:${days[0]},end:${end}),timeGranularityType:DAY)`);
  });

  it('reports the lifetime statistics of a post, zeros when LinkedIn lists none, nothing for a comment', async () => {
    const ref = await linkedinPage.publish!(context(), item('Counted'));
    expect((await linkedinPage.postAnalytics!(context(), ref, 7)).map((metric) => metric.data[0].total)).toEqual(['0', '0', '0', '0', '0', '0', '0']);
    fake.postStatistics.set(ref.id, { impressionCount: 321, uniqueImpressionsCount: 300, clickCount: 12, likeCount: 9, commentCount: 2, shareCount: 1, engagement: 0.0748 });
    const metrics = await linkedinPage.postAnalytics!(context(), ref, 7);
    expect(metrics.map((metric) => [metric.label, metric.data[0].total])).toEqual([
      ['Impressions', '321'], ['Unique impressions', '300'], ['Clicks', '12'], ['Likes', '9'], ['Comments', '2'], ['Shares', '1'], ['Engagement (%)', '7.48'],
    ]);
    expect(fake.server.requestsTo('GET', '/rest/organizationalEntityShareStatistics').at(-1)!.query.get('shares')).toBe(`List(${ref.id})`);
    expect(await linkedinPage.postAnalytics!(context(), { id: 'urn:li:comment:(urn:li:activity:1,2)' }, 7)).toEqual([]);
  });

  it("lists the page's recent posts", async () => {
    const first = await linkedinPage.publish!(context(), item('One'));
    const second = await linkedinPage.publish!(context(), item('Two'));
    expect(await linkedinPage.recent!(context())).toEqual([
      { id: second.id, url: `https://www.linkedin.com/feed/update/${second.id}` },
      { id: first.id, url: `https://www.linkedin.com/feed/update/${first.id}` },
    ]);
  });
});

describe('linkedin-page through Herald', () => {
  let fake: LinkedinFake;
  let herald: Herald;
  let channelId: string;

  beforeAll(async () => {
    fake = await startLinkedinFake({ partSize: 20_000 });
    herald = await startHerald(fake.heraldEnvironment({ PUBLISH_RECHECK_MAX_SECONDS: '1' }), { guard: { allowLoopback: true } });
  });
  afterAll(async () => {
    await herald?.stop();
    await fake?.close();
  });
  const integration = () => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });

  it('connects through OAuth, then the organization picker, keeping the member token and its expiry', async () => {
    const connected = await connectOAuthChannel(herald, 'linkedin-page');
    channelId = connected.integrationId;
    expect(connected.inBetweenSteps).toBe(true);
    expect(connected.authorizeUrl.searchParams.get('scope')).toBe('r_basicprofile w_member_social r_organization_social w_organization_social rw_organization_admin');
    expect(connected.authorizeUrl.searchParams.has('code_challenge')).toBe(false);
    const waiting = await integration();
    expect([waiting.name, waiting.profile, waiting.internalId]).toEqual(['Ada Lovelace', 'ada-lovelace', fake.personUrn]);

    const accounts = await herald.rest('GET', `/integrations/${channelId}/accounts`);
    expect(accounts.status).toBe(200);
    expect(accounts.body.map((account: { id: string; name: string }) => [account.id, account.name])).toEqual([
      ['urn:li:organization:101', 'Herald Labs'],
      ['urn:li:organization:202', 'Second Page'],
    ]);
    const chosen = await herald.rest('POST', `/integrations/${channelId}/accounts`, { id: ORGANIZATION });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect(chosen.body).toMatchObject({ id: channelId, name: 'Herald Labs', profile: 'herald-labs', picture: `${fake.url}/media/herald-400.png`, identifier: 'linkedin-page' });
    const channel = await integration();
    expect([channel.internalId, channel.inBetweenSteps]).toEqual([ORGANIZATION, false]);
    expect(Math.abs(channel.tokenExpiresAt!.getTime() - (Date.now() + SIXTY_DAYS * 1000))).toBeLessThan(60_000);
    expect(channelAuth(herald.services, channel).accessToken).toBe(channelAuth(herald.services, waiting).accessToken);
  });

  it('lists getCompanies in the settings and runs it through POST /integration-trigger', async () => {
    const settings = await herald.rest('GET', `/integration-settings/${channelId}`);
    expect(settings.body.output.tools.map((tool: { methodName: string }) => tool.methodName)).toEqual(['getCompanies']);
    const companies = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'getCompanies' });
    expect(companies.status).toBe(200);
    expect(companies.body.output.map((company: { id: string }) => company.id)).toEqual(['urn:li:organization:101', 'urn:li:organization:202']);
  });

  it('publishes a video through the real worker: multi-part upload, PROCESSING re-checks, then the post and two comments', async () => {
    const video = goodMp4();
    const stored = await upload(herald.restUrl, herald.apiKey, video, 'clip.mp4');
    fake.setProcessingPolls(2);
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>Our clip</p>', image: [stored.body] }, '<p>Comment one</p>', '<p>Comment two</p>']);
      const items = await waitForPublished(herald, rootId);
      const [uploaded] = [...fake.videos.values()];
      expect(uploaded.parts.length).toBe(Math.ceil(video.length / 20_000));
      expect(uploaded.bytes!.equals(video)).toBe(true);
      expect(fake.server.requestsTo('GET', '/rest/videos/*')).toHaveLength(3);
      expect(fake.server.requestsTo('POST', '/rest/videos').map((request) => request.query.get('action'))).toEqual(['initializeUpload', 'finalizeUpload']);
      const post = fake.posts.at(-1)!;
      expect(post).toMatchObject({ author: ORGANIZATION, text: 'Our clip', content: { media: { id: uploaded.urn } } });
      expect(fake.comments.map((comment) => [comment.text, comment.actor])).toEqual([['Comment one', ORGANIZATION], ['Comment two', ORGANIZATION]]);
      expect(items[0].releaseId).toBe(post.urn);
    } finally {
      await worker.stop();
      fake.setProcessingPolls(0);
    }
  });

  it('looks an interrupted post create up among the page posts, and an interrupted comment among its comments: nothing twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Looked up (later)</p>', '<p>And its comment</p>']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [posts, comments] = [fake.posts.length, fake.comments.length];
    const before = await chainOf(herald, rootId);
    await reopenAsInterrupted(herald, rootId, (item) => ({ [item.position === 0 ? 'post' : 'comment']: { state: 'started' } }), { wholeChain: true });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const after = await chainOf(herald, rootId);
    expect(after.map((item) => item.releaseId)).toEqual(before.map((item) => item.releaseId));
    expect([fake.posts.length, fake.comments.length]).toEqual([posts, comments]);
  });

  const olderPost = (text: string, hours: number) => {
    const id = String(10_000 + fake.posts.length);
    fake.posts.push({ urn: `urn:li:share:${id}`, activity: `urn:li:activity:${id}`, author: ORGANIZATION, commentary: text, text, createdAt: hoursAgo(hours).getTime() });
    return `urn:li:share:${id}`;
  };
  const olderComment = (object: string, text: string) => {
    const id = String(20_000 + fake.comments.length);
    fake.comments.push({ id, urn: `urn:li:comment:(${object},${id})`, object, actor: ORGANIZATION, message: text, text, createdAt: hoursAgo(5).getTime() });
  };
  const isCreate = (path: string) => (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith(path);
  const isComment = (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith('/comments');

  it('publishes once when the create never reached LinkedIn, never taking an older post or comment with the same text for it', async () => {
    const old = olderPost('Weekly notes', 72);
    const rootId = await createPost(herald, channelId, ['<p>Weekly notes</p>', '<p>See you Monday</p>']);
    const restorePost = loseRequestOf(herald, isCreate('/rest/posts'));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restorePost();
    }
    // The comment's request is lost too, while an older comment of the page with the same text sits on the post.
    const restoreComment = loseRequestOf(herald, (request) => {
      if (!isComment(request)) return false;
      olderComment(fake.posts.at(-1)!.urn, 'See you Monday');
      return true;
    });
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restoreComment();
    }
    const [root, comment] = await chainOf(herald, rootId);
    expect(fake.posts.filter((post) => post.text === 'Weekly notes').map((post) => post.urn)).toEqual([old, root.releaseId]);
    expect(fake.comments.filter((entry) => entry.text === 'See you Monday')).toHaveLength(2);
    expect(comment.releaseId).toBe(fake.comments.at(-1)!.urn);
  });

  it('links the post and comment whose answers were lost after LinkedIn made them, even with an older identical post listed first', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Monthly notes</p>', '<p>More soon</p>']);
    // LinkedIn lists by last modification: an older post with the same text, edited since, comes first.
    let old = '';
    const restorePost = loseAnswerOf(herald, (request) => isCreate('/rest/posts')(request) && Boolean((old = olderPost('Monthly notes', 48))));
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    } finally {
      restorePost();
    }
    const restoreComment = loseAnswerOf(herald, isComment);
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restoreComment();
    }
    const [root, comment] = await chainOf(herald, rootId);
    const made = fake.posts.filter((post) => post.text === 'Monthly notes').map((post) => post.urn);
    expect(made).toHaveLength(2);
    expect(root.releaseId).toBe(made.find((urn) => urn !== old));
    expect(fake.comments.filter((entry) => entry.text === 'More soon').map((entry) => entry.urn)).toEqual([comment.releaseId]);
  });

  it('answers page and post analytics over REST', async () => {
    const metrics = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(metrics.status).toBe(200);
    expect(metrics.body.find((metric: { label: string }) => metric.label === 'Followers').data).toHaveLength(7);
    const rootId = await createPost(herald, channelId, ['<p>Measured</p>']);
    await publishChain(herald.services, rootId);
    const [root] = await chainOf(herald, rootId);
    fake.postStatistics.set(root.releaseId!, { impressionCount: 50, uniqueImpressionsCount: 40, clickCount: 3, likeCount: 4, commentCount: 1, shareCount: 0, engagement: 0.16 });
    const post = await herald.rest('GET', `/analytics/post/${rootId}?date=7`);
    expect(post.body.find((metric: { label: string }) => metric.label === 'Likes').data[0].total).toBe('4');
  });

  it('flags the channel for reconnection when its token dies and LinkedIn gave no refresh token; the trigger then answers 401', async () => {
    expect(channelAuth(herald.services, await integration()).refreshToken).toBeUndefined();
    fake.authority.expireAccessTokens();
    const rootId = await createPost(herald, channelId, ['<p>Too late</p>']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toMatch(/disconnected because its token expired or was revoked/);
    expect((await integration()).refreshNeeded).toBe(true);
    const notices = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'channel_reconnect' });
    expect(notices.map((notice) => notice.content)).toEqual(['Your LinkedIn Page channel "Herald Labs" needs to be reconnected.']);
    expect(fake.server.requestsTo('POST', '/oauth/v2/accessToken')).toHaveLength(1);
    const trigger = await herald.rest('POST', `/integration-trigger/${channelId}`, { methodName: 'getCompanies' });
    expect(trigger.status).toBe(401);
  });
});
