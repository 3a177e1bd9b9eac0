// LinkedIn (personal profile): the provider against the fake LinkedIn, then end to end through a real Herald (OAuth round
// trip, carousel, token refresh, retries, permanent errors, an interrupted create).
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import linkedin from '../../providers/linkedin.js';
import { littleText } from '../../providers/linkedin/api.js';
import { CheckAgainLater, type ProviderContext, type PublishItem, type ValidationItem } from '../../providers/types.js';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { publishChain } from '../../tools/internal/publish.js';
import { channelAuth } from '../../tools/internal/integrations.js';
import { startLinkedinFake, unescapeLittleText, SIXTY_DAYS, type LinkedinFake } from '../fakes/linkedin.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { upload } from '../helpers/media-samples.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted, submitPost, waitForPublished } from '../helpers/posts.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';

const picture = (width: number, height: number, format: 'png' | 'jpeg' | 'gif' | 'webp' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } })[format]().toBuffer();

async function failure(promise: Promise<unknown>): Promise<PlatformHttpError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(PlatformHttpError);
  return error as PlatformHttpError;
}

describe('linkedin provider against the fake', () => {
  let fake: LinkedinFake;
  beforeEach(async () => {
    fake = await startLinkedinFake({ partSize: 1000 });
  });
  afterEach(async () => {
    await fake.close();
  });
  const context = (options: { settings?: Record<string, unknown>; steps?: Map<string, unknown>; auth?: ReturnType<LinkedinFake['channelAuth']> } = {}): ProviderContext =>
    providerContext({ endpoints: fake.endpoints, auth: options.auth ?? fake.channelAuth('member'), settings: options.settings, steps: options.steps });
  const item = (text: string, media: PublishItem['media'] = []): PublishItem => ({ postId: 'post-1', text, media });

  it('writes commentary as little text: reserved characters escaped, hashtags as templates, read back unchanged', () => {
    const text = 'Launch (beta) [v2] {x} <y> @team a|b *c* _d_ ~e~ \\ #launch_day #2026 and C# too';
    const escaped = littleText(text);
    expect(escaped).toBe(
      'Launch \\(beta\\) \\[v2\\] \\{x\\} \\<y\\> \\@team a\\|b \\*c\\* \\_d\\_ \\~e\\~ \\\\ {hashtag|\\#|launch\\_day} {hashtag|\\#|2026} and C\\# too',
    );
    expect(unescapeLittleText(escaped)).toBe(text);
    expect(unescapeLittleText('an (unescaped) parenthesis')).toBeUndefined();
  });

  it('publishes a text post with the versioned headers and the documented body, the URN from x-restli-id', async () => {
    const ref = await linkedin.publish!(context(), item('Hello LinkedIn (from Herald)'));
    const [request] = fake.server.requestsTo('POST', '/rest/posts');
    expect(request.headers['linkedin-version']).toBe('202608');
    expect(request.headers['x-restli-protocol-version']).toBe('2.0.0');
    expect(request.headers.authorization).toMatch(/^Bearer access-/);
    expect(request.json).toEqual({
      author: fake.personUrn,
      commentary: 'Hello LinkedIn \\(from Herald\\)',
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      lifecycleState: 'PUBLISHED',
      isReshareDisabledByAuthor: false,
    });
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0].text).toBe('Hello LinkedIn (from Herald)');
    expect(ref).toEqual({ id: fake.posts[0].urn, url: `https://www.linkedin.com/feed/update/${fake.posts[0].urn}` });
  });

  it('uploads pictures through the Images API and posts them as multiImage with their alt texts; other formats become PNG', async () => {
    const webp = await picture(3, 2, 'webp');
    const media = [
      mediaFile(tinyPng(), { alt: 'A red dot' }),
      mediaFile(await picture(4, 4, 'jpeg'), { mimeType: 'image/jpeg' }),
      mediaFile(webp, { mimeType: 'image/webp', alt: 'Converted' }),
    ];
    await linkedin.publish!(context(), item('Three pictures', media));
    const initialized = fake.server.requestsTo('POST', '/rest/images');
    expect(initialized.map((request) => [request.query.get('action'), request.json])).toEqual(
      Array(3).fill(['initializeUpload', { initializeUploadRequest: { owner: fake.personUrn } }]),
    );
    const uploads = fake.server.requestsTo('PUT', '/dms-uploads/image/*');
    expect(uploads.map((request) => request.headers['content-type'])).toEqual(['image/png', 'image/jpeg', 'image/png']);
    expect(uploads.every((request) => request.headers.authorization?.startsWith('Bearer '))).toBe(true);
    expect(uploads[0].body.equals(tinyPng())).toBe(true);
    expect(uploads[2].body.subarray(1, 4).toString()).toBe('PNG');
    const urns = [...fake.images.keys()];
    expect(fake.posts[0].content).toEqual({ multiImage: { images: [{ id: urns[0], altText: 'A red dot' }, { id: urns[1] }, { id: urns[2], altText: 'Converted' }] } });
  });

  it('posts a single picture as content.media', async () => {
    await linkedin.publish!(context(), item('One picture', [mediaFile(tinyPng(), { alt: 'Dot' })]));
    expect(fake.posts[0].content).toEqual({ media: { id: [...fake.images.keys()][0], altText: 'Dot' } });
  });

  it('uploads a video in the parts LinkedIn gives, finalizes with their ETags, and re-schedules while it is PROCESSING', async () => {
    fake.setProcessingPolls(2);
    const bytes = Buffer.alloc(2500, 7);
    const steps = new Map<string, unknown>();
    const video = item('A clip', [mediaFile(bytes, { kind: 'video', mimeType: 'video/mp4' })]);
    for (let run = 0; run < 2; run++) {
      const waiting = await linkedin.publish!(context({ steps }), video).catch((error: unknown) => error);
      expect(waiting).toBeInstanceOf(CheckAgainLater);
      expect((waiting as CheckAgainLater).message).toMatch(/still processing the video/);
    }
    const ref = await linkedin.publish!(context({ steps }), video);
    const [initialize, finalize] = fake.server.requestsTo('POST', '/rest/videos');
    expect(fake.server.requestsTo('POST', '/rest/videos')).toHaveLength(2);
    expect(initialize.json).toEqual({ initializeUploadRequest: { owner: fake.personUrn, fileSizeBytes: 2500, uploadCaptions: false, uploadThumbnail: false } });
    const parts = fake.server.requestsTo('PUT', '/dms-uploads/video/*/*');
    expect(parts.map((request) => request.body.length)).toEqual([1000, 1000, 500]);
    expect(parts.every((request) => request.headers.authorization === undefined)).toBe(true);
    const stored = [...fake.videos.values()][0];
    expect(finalize.json).toEqual({ finalizeUploadRequest: { video: stored.urn, uploadToken: stored.uploadToken, uploadedPartIds: stored.parts.map((part) => part.etag) } });
    expect(stored.bytes!.equals(bytes)).toBe(true);
    expect(fake.server.requestsTo('GET', '/rest/videos/*').map((request) => request.path)).toEqual(Array(3).fill(`/rest/videos/${encodeURIComponent(stored.urn)}`));
    expect(fake.posts.map((post) => post.content)).toEqual([{ media: { id: stored.urn } }]);
    expect(ref.id).toBe(fake.posts[0].urn);
  });

  it('builds the carousel as a PDF, one page per picture at its own size, titled by the first line of the text', async () => {
    const media = [mediaFile(await picture(30, 20)), mediaFile(await picture(40, 50, 'jpeg'), { mimeType: 'image/jpeg' }), mediaFile(await picture(10, 12, 'gif'), { mimeType: 'image/gif' })];
    await linkedin.publish!(context({ settings: { post_as_images_carousel: true } }), item('Our quarter in pictures\nSwipe →', media));
    expect(fake.images.size).toBe(0);
    const [document] = [...fake.documents.values()];
    expect(document.mimeType).toBe('application/pdf');
    const pdf = await PDFDocument.load(document.bytes!);
    expect(pdf.getPages().map((page) => [page.getWidth(), page.getHeight()])).toEqual([[30, 20], [40, 50], [10, 12]]);
    expect(pdf.getTitle()).toBe('Our quarter in pictures');
    expect(fake.posts[0].content).toEqual({ media: { id: document.urn, title: 'Our quarter in pictures' } });
  });

  it('comments on the post as the member, its text escaped as little text like a post\'s commentary', async () => {
    const root = await linkedin.publish!(context(), item('Root'));
    const ref = await linkedin.comment!(context(), item('First comment (plain) for #launch_day, 2*3 <ok> @you'), { root, parent: root });
    const [request] = fake.server.requestsTo('POST', '/rest/socialActions/*/comments');
    expect(request.path).toBe(`/rest/socialActions/${encodeURIComponent(root.id)}/comments`);
    expect(request.json).toEqual({
      actor: fake.personUrn,
      object: root.id,
      message: { text: 'First comment \\(plain\\) for {hashtag|\\#|launch\\_day}, 2\\*3 \\<ok\\> \\@you' },
    });
    // What readers see: the text as written.
    expect(fake.comments[0].text).toBe('First comment (plain) for #launch_day, 2*3 <ok> @you');
    expect(ref.id).toBe(fake.comments[0].urn);
    expect(ref.url).toContain(`commentUrn=${encodeURIComponent(fake.comments[0].urn)}`);
  });

  it('maps LinkedIn errors: duplicate, rate limit with Retry-After, dead token, sunset version, missing permission', async () => {
    await linkedin.publish!(context(), item('Same words'));
    const duplicate = await failure(linkedin.publish!(context(), item('Same words')));
    expect(duplicate.retryable).toBe(false);
    expect(duplicate.message).toMatch(/already posted on this account recently.*duplicate of urn:li:share:/);

    fake.server.failNext('POST', '/rest/posts', { status: 429, headers: { 'retry-after': '60' }, json: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'Resource level throttle limit' } });
    const limited = await failure(linkedin.publish!(context(), item('Later')));
    expect([limited.retryable, limited.retryAfterSeconds]).toEqual([true, 60]);
    expect(limited.message).toContain('Resource level throttle limit');

    const dead = await failure(linkedin.publish!(context({ auth: { ...fake.channelAuth('member'), accessToken: 'revoked' } }), item('x')));
    expect([dead.status, dead.retryable]).toEqual([401, false]);

    fake.state.minimumVersion = '202701';
    const sunset = await failure(linkedin.publish!(context(), item('Old version')));
    expect(sunset.message).toMatch(/linkedinVersion/);
    fake.state.minimumVersion = '202511';

    const foreign = await failure(linkedin.publish!(context({ auth: { ...fake.channelAuth('member'), internalId: 'urn:li:organization:101' } }), item('As a page')));
    expect(foreign.status).toBe(403);
    expect(foreign.message).toMatch(/denied access.*Not enough permissions/);
  });

  it('refreshes with the refresh_token grant when the app has refresh tokens, and refuses to pretend when it has none', async () => {
    const withRefresh = { ...context({ auth: fake.channelAuth('member', { refreshToken: true }) }), client: { clientId: fake.authority.clientId, clientSecret: fake.authority.clientSecret } };
    fake.issueRefreshTokens = true;
    const refreshed = await linkedin.refresh!(withRefresh);
    const [request] = fake.server.requestsTo('POST', '/oauth/v2/accessToken');
    expect(Object.fromEntries(request.form!)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: withRefresh.auth.refreshToken,
      client_id: fake.authority.clientId,
      client_secret: fake.authority.clientSecret,
    });
    expect(refreshed.accessToken).not.toBe(withRefresh.auth.accessToken);
    expect(refreshed.refreshToken).toBe(withRefresh.auth.refreshToken);
    expect(refreshed.expiresAt!.getTime()).toBeGreaterThan(Date.now() + (SIXTY_DAYS - 60) * 1000);

    const none = await failure(linkedin.refresh!({ ...context(), client: withRefresh.client }));
    expect(none.status).toBe(401);
    expect(none.message).toMatch(/no refresh token.*reconnect/);
    expect(fake.server.requestsTo('POST', '/oauth/v2/accessToken')).toHaveLength(1);
  });

  it('refuses a code exchange with the wrong client secret, or a used code, with the OAuth reason', async () => {
    const code = fake.authority.authorize({ clientId: fake.authority.clientId, redirectUri: 'https://herald.example/callback', state: 's', scope: 'openid profile w_member_social' });
    const connect = { fetch: context().fetch, dial: async () => undefined, endpoints: fake.endpoints };
    const options = { code, codeVerifier: 'unused', redirectUri: 'https://herald.example/callback', clientId: fake.authority.clientId };
    const wrongSecret = await failure(linkedin.exchangeCode!(connect, { ...options, clientSecret: 'wrong' }));
    expect([wrongSecret.status, wrongSecret.message]).toEqual([401, 'client_secret is wrong or missing (invalid_client)']);
    const account = await linkedin.exchangeCode!(connect, { ...options, clientSecret: fake.authority.clientSecret });
    expect([account.internalId, account.name]).toEqual([fake.personUrn, 'Ada Lovelace']);
    const used = await failure(linkedin.exchangeCode!(connect, { ...options, clientSecret: fake.authority.clientSecret }));
    expect(used.message).toMatch(/authorization code is invalid, expired or already used \(invalid_grant\)/);
  });

  it('validates media and comments before anything is created', () => {
    const image = { kind: 'image' as const, url: 'https://media.example/a.png' };
    const video = { kind: 'video' as const, url: 'https://media.example/v.mp4' };
    const post = (media: ValidationItem['media'] = [], text = 'x'): ValidationItem => ({ text, media });
    expect(linkedin.validate!([post(Array(20).fill(image))], {})).toBeUndefined();
    expect(linkedin.validate!([post(Array(21).fill(image))], {})).toMatch(/21 pictures; LinkedIn takes at most 20/);
    expect(linkedin.validate!([post([video, image])], {})).toMatch(/video must be the only attachment/);
    expect(linkedin.validate!([post([image])], { post_as_images_carousel: true })).toMatch(/carousel, which needs at least 2 pictures/);
    expect(linkedin.validate!([post([image, video])], { post_as_images_carousel: true })).toMatch(/carousel/);
    expect(linkedin.validate!([post(), post([image])], {})).toMatch(/^Item 2 has attachments/);
    expect(linkedin.validate!([post(), post([], 'y'.repeat(1251))], {})).toMatch(/^Item 2 is a comment of 1251 characters/);
    expect(linkedin.validate!([post([image, image])], { post_as_images_carousel: true })).toBeUndefined();
    expect(linkedin.maxLength({})).toBe(3000);
    expect(linkedin.analytics).toBeUndefined();
    expect(linkedin.rules).toMatch(/Analytics are not available for personal profiles/);
  });
});

describe('linkedin through Herald', () => {
  let fake: LinkedinFake;
  let herald: Herald;
  let channelId: string;
  const library: Record<string, { id: string; path: string }> = {};

  beforeAll(async () => {
    fake = await startLinkedinFake({ partSize: 1000 });
    herald = await startHerald(fake.heraldEnvironment({ PUBLISH_RECHECK_MAX_SECONDS: '1' }), { guard: { allowLoopback: true } });
    for (const [name, bytes] of [['wide.png', await picture(60, 30)], ['tall.jpg', await picture(20, 40, 'jpeg')]] as const) {
      const response = await upload(herald.restUrl, herald.apiKey, bytes, name);
      expect(response.status).toBe(200);
      library[name] = response.body;
    }
  });
  afterAll(async () => {
    await herald?.stop();
    await fake?.close();
  });

  const integration = () => herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
  const notifications = async (type: string) =>
    (await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type }, { orderBy: { createdAt: 'desc' } })).map((item) => item.content);

  it('connects through the OAuth round trip: no PKCE, OpenID profile, the member URN and a 60-day expiry', async () => {
    const connected = await connectOAuthChannel(herald, 'linkedin');
    channelId = connected.integrationId;
    const query = Object.fromEntries(connected.authorizeUrl.searchParams);
    expect(`${connected.authorizeUrl.origin}${connected.authorizeUrl.pathname}`).toBe(`${fake.url}/oauth/v2/authorization`);
    expect(query).toEqual({ response_type: 'code', client_id: fake.authority.clientId, redirect_uri: `${herald.url}/api/integrations/social/linkedin/callback`, state: expect.any(String), scope: 'openid profile w_member_social' });
    const [token] = fake.server.requestsTo('POST', '/oauth/v2/accessToken');
    expect(Object.fromEntries(token.form!)).toEqual({
      grant_type: 'authorization_code',
      code: expect.stringMatching(/^code-/),
      redirect_uri: query.redirect_uri,
      client_id: fake.authority.clientId,
      client_secret: fake.authority.clientSecret,
    });
    const channel = await integration();
    expect([channel.name, channel.profile, channel.picture, channel.internalId, channel.inBetweenSteps]).toEqual(['Ada Lovelace', 'Ada Lovelace', fake.member.picture, fake.personUrn, false]);
    expect(Math.abs(channel.tokenExpiresAt!.getTime() - (Date.now() + SIXTY_DAYS * 1000))).toBeLessThan(60_000);
    expect(channelAuth(herald.services, channel).refreshToken).toBeUndefined();
    const settings = await herald.rest('GET', `/integration-settings/${channelId}`);
    expect(settings.body.output.tools).toEqual([]);
  });

  it('publishes pictures with two comments through the real worker', async () => {
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>Pictures (two)</p>', image: [library['wide.png'], library['tall.jpg']] }, '<p>Comment one</p>', '<p>Comment two</p>']);
      const items = await waitForPublished(herald, rootId);
      const post = fake.posts.at(-1)!;
      expect(post.text).toBe('Pictures (two)');
      expect(post.content.multiImage.images).toHaveLength(2);
      expect(fake.comments.slice(-2).map((comment) => [comment.text, comment.object, comment.actor])).toEqual([
        ['Comment one', post.urn, fake.personUrn],
        ['Comment two', post.urn, fake.personUrn],
      ]);
      expect(items.map((item) => item.releaseId)).toEqual([post.urn, ...fake.comments.slice(-2).map((comment) => comment.urn)]);
    } finally {
      await worker.stop();
    }
  });

  it('publishes the carousel setting as a PDF document and refuses a carousel of one picture at validation', async () => {
    const refused = await submitPost(herald, channelId, [{ content: '<p>Solo</p>', image: [library['wide.png']] }], { type: 'now', settings: { __type: 'linkedin', post_as_images_carousel: true } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/carousel, which needs at least 2 pictures/);

    const rootId = await createPost(herald, channelId, [{ content: '<p>Deck</p>', image: [library['wide.png'], library['tall.jpg']] }], { settings: { __type: 'linkedin', post_as_images_carousel: true } });
    const settled = await publishUntilSettled(herald, rootId);
    expect(settled.outcome, JSON.stringify(settled.outcome)).toEqual({ kind: 'published' });
    const pdf = await PDFDocument.load([...fake.documents.values()].at(-1)!.bytes!);
    expect(pdf.getPages().map((page) => [page.getWidth(), page.getHeight()])).toEqual([[60, 30], [20, 40]]);
    expect(fake.posts.at(-1)!.content.media.title).toBe('Deck');
  });

  it('retries a 429 after its Retry-After, and publishes once', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Rate limited</p>']);
    fake.server.failNext('POST', '/rest/posts', { status: 429, headers: { 'retry-after': '120' }, json: { status: 429, message: 'Member level throttle limit reached' } });
    const before = Date.now();
    const first = await publishChain(herald.services, rootId);
    expect(first.kind).toBe('waiting');
    const [root] = await chainOf(herald, rootId);
    expect(root.state).toBe('QUEUE');
    expect(root.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before + 120_000);
    expect(root.lastError).toContain('Member level throttle limit reached');
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.posts.filter((post) => post.text === 'Rate limited')).toHaveLength(1);
  });

  it("puts a refused post in ERROR with LinkedIn's message and notifies; a duplicate says so", async () => {
    const rootId = await createPost(herald, channelId, ['<p>Refused</p>']);
    fake.server.failNext('POST', '/rest/posts', { status: 422, json: { status: 422, serviceErrorCode: 0, code: 'UNPROCESSABLE_ENTITY', message: '/commentary :: contains a banned link' } });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect([root.state, root.error]).toEqual(['ERROR', 'LinkedIn refused the post: /commentary :: contains a banned link (UNPROCESSABLE_ENTITY)']);
    expect((await notifications('post_failed'))[0]).toContain('contains a banned link');

    const again = await createPost(herald, channelId, ['<p>Rate limited</p>'], { allowDuplicate: true });
    await publishChain(herald.services, again);
    const [duplicate] = await chainOf(herald, again);
    expect(duplicate.state).toBe('ERROR');
    expect(duplicate.error).toMatch(/already posted on this account recently/);
  });

  it('resumes after a failed comment without posting twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Resume me</p>', '<p>Then this</p>']);
    fake.server.failNext('POST', '/rest/socialActions/*/comments', { status: 503, json: { status: 503, message: 'Service Unavailable' } });
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    expect((await chainOf(herald, rootId)).map((item) => item.state)).toEqual(['PUBLISHED', 'QUEUE']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.posts.filter((post) => post.text === 'Resume me')).toHaveLength(1);
    expect(fake.comments.filter((comment) => comment.text === 'Then this')).toHaveLength(1);
  });

  it('stops an interrupted create with "could not confirm" (a member cannot read its posts back) and posts nothing twice', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Interrupted</p>']);
    await publishChain(herald.services, rootId);
    const count = fake.posts.length;
    await reopenAsInterrupted(herald, rootId, 'post');
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    const [after] = await chainOf(herald, rootId);
    expect(after.error).toMatch(/Could not confirm whether LinkedIn published this item/);
    expect(fake.posts).toHaveLength(count);
  });

  it('refreshes the token on a 401 when the app has refresh tokens', async () => {
    fake.issueRefreshTokens = true;
    await connectOAuthChannel(herald, 'linkedin', { refresh: channelId });
    const stored = channelAuth(herald.services, await integration());
    expect(stored.refreshToken).toMatch(/^refresh-/);
    expect(stored.data.refreshTokenExpiresAt).toBeDefined();
    fake.authority.expireAccessTokens();
    const rootId = await createPost(herald, channelId, ['<p>After refresh</p>']);
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const refreshCall = fake.server.requestsTo('POST', '/oauth/v2/accessToken').at(-1)!;
    expect(refreshCall.form!.get('grant_type')).toBe('refresh_token');
    const refreshed = channelAuth(herald.services, await integration());
    expect(refreshed.accessToken).not.toBe(stored.accessToken);
    expect(refreshed.refreshToken).toBe(stored.refreshToken);
    expect((await integration()).refreshNeeded).toBe(false);
    fake.issueRefreshTokens = false;
  });
});
