// Google Business Profile end to end: Google OAuth and the location picker, an OFFER post with a photo through the
// worker, events and buttons, the settings rules, refresh, rate limits and quota, permanent errors, a lost create answer
// and location performance.
import sharp from 'sharp';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationSchema, NotificationSchema } from '../../src/db/entities.js';
import { publishChain } from '../../tools/internal/publish.js';
import gmb from '../../providers/gmb/index.js';
import { startGmbFake, type GmbFake } from '../fakes/gmb.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { goodMp4, uploaded } from '../helpers/media-samples.js';
import { hoursAgo, loseAnswerOf, loseRequestOf } from '../helpers/lost-answer.js';
import { connectOAuthChannel } from '../helpers/oauth-channel.js';
import { chainOf, createPost, publishUntilSettled, waitFor, submitPost } from '../helpers/posts.js';

let fake: GmbFake;
let herald: Herald;
let channel: string;

const photo = () => sharp({ create: { width: 720, height: 540, channels: 3, background: { r: 250, g: 200, b: 40 } } }).jpeg().toBuffer();


const offer = {
  topicType: 'OFFER',
  callToActionType: 'GET_OFFER',
  callToActionUrl: 'https://bakery.example/offer',
  offerCouponCode: 'BREAD20',
  offerTerms: 'One per customer.',
  eventTitle: '20% off sourdough',
  eventStartDate: '2026-12-01',
  eventEndDate: '2026-12-24',
};

beforeAll(async () => {
  fake = await startGmbFake();
  herald = await startHerald(
    { GMB_CLIENT_ID: fake.authority.clientId, GMB_CLIENT_SECRET: fake.authority.clientSecret, SOCIAL_ENDPOINTS: JSON.stringify({ gmb: fake.endpoints }) },
    { guard: { allowLoopback: true } },
  );
});

afterEach(() => {
  // Every request Herald sent matched the Business Profile APIs' Discovery documents (test/contracts/gmb/).
  expect(fake.contractViolations).toEqual([]);
});

afterAll(async () => {
  await herald.stop();
  await fake.close();
});

describe('gmb descriptor', () => {
  it('has the spec settings (topicType, callToActionType, callToActionUrl, offerCouponCode) plus the event and offer fields Google needs', () => {
    const schema = z.toJSONSchema(gmb.settings!) as { properties: Record<string, { type: string; enum?: string[] }>; required?: string[] };
    expect(schema.properties.topicType.enum).toEqual(['STANDARD', 'EVENT', 'OFFER', 'ALERT']);
    expect(schema.properties.callToActionType.enum).toEqual(['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'GET_OFFER', 'CALL']);
    for (const key of ['callToActionUrl', 'offerCouponCode', 'offerTerms', 'eventTitle', 'eventStartDate', 'eventEndDate', 'eventStartTime', 'eventEndTime']) {
      expect(schema.properties[key].type, key).toBe('string');
    }
    expect(schema.required ?? []).toEqual([]);
    expect(gmb.chain).toBe('none');
    expect(gmb.mediaByUrl).toBe(true);
  });
});

describe('gmb connect and the location picker', () => {
  it('connects the Google user, then makes the channel the chosen location', async () => {
    const connected = await connectOAuthChannel(herald, 'gmb');
    expect(connected.inBetweenSteps).toBe(true);
    channel = connected.integrationId;
    expect(connected.authorizeUrl.searchParams.get('access_type')).toBe('offline');
    const [token] = fake.server.requestsTo('POST', '/oauth2/token');
    expect(token.form?.get('client_secret')).toBe(fake.authority.clientSecret);
    // PKCE, as YouTube: the fake checks the verifier against the challenge of the authorization URL.
    expect(connected.authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(token.form?.get('code_verifier')).toMatch(/^[\w-]{43,}$/);

    const choices = await herald.rest('GET', `/integrations/${channel}/accounts`);
    expect(choices.status, JSON.stringify(choices.body)).toBe(200);
    expect(choices.body).toEqual([
      { id: 'accounts/111/locations/1001', name: 'Herald Bakery (1 Main Street, Springfield)', picture: `${fake.url}/img/ada.png` },
      { id: 'accounts/111/locations/1002', name: 'Herald Books (2 Main Street, Springfield)', picture: `${fake.url}/img/ada.png` },
      { id: 'accounts/222/locations/2001', name: 'Herald Cafe (9 Harbour Road, Shelbyville)', picture: `${fake.url}/img/ada.png` },
      { id: 'accounts/222/locations/2002', name: 'Herald Deli (3 Harbour Road, Shelbyville)', picture: `${fake.url}/img/ada.png` },
    ]);
    // Accounts one per page, locations two per page: every page was followed, each with the read mask.
    expect(fake.server.requestsTo('GET', '/accountmanagement/v1/accounts').map((request) => request.query.get('pageToken'))).toEqual([null, '1']);
    expect(fake.server.requestsTo('GET', '/businessinformation/v1/accounts/*/locations').every((request) => request.query.get('readMask') === 'name,title,storefrontAddress')).toBe(true);

    expect((await herald.rest('POST', `/integrations/${channel}/accounts`, { id: 'accounts/999/locations/1' })).status).toBe(404);
    const chosen = await herald.rest('POST', `/integrations/${channel}/accounts`, { id: 'accounts/111/locations/1001' });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect(chosen.body).toMatchObject({ id: channel, name: 'Herald Bakery', profile: '1 Main Street, Springfield', identifier: 'gmb' });
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channel });
    expect(row.inBetweenSteps).toBe(false);
    expect(row.internalId).toBe('accounts/111/locations/1001');
  });
});

describe('gmb local posts', () => {
  it('publishes an OFFER with a photo through the worker: Google fetches the photo by URL', async () => {
    const jpeg = await photo();
    const media = await uploaded(herald, jpeg, 'offer.jpg');
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channel, [{ content: '<p>Fresh <strong>sourdough</strong> deal</p>', image: [media] }], { settings: offer });
      const [root] = await waitFor(async () => {
        const items = await chainOf(herald, rootId);
        return items[0].state === 'PUBLISHED' ? items : undefined;
      });
      const post = fake.posts.at(-1)!;
      expect(post.body).toEqual({
        summary: 'Fresh 𝘀𝗼𝘂𝗿𝗱𝗼𝘂𝗴𝗵 deal',
        topicType: 'OFFER',
        event: {
          title: '20% off sourdough',
          schedule: { startDate: { year: 2026, month: 12, day: 1 }, startTime: { hours: 0, minutes: 0 }, endDate: { year: 2026, month: 12, day: 24 }, endTime: { hours: 23, minutes: 59 } },
        },
        offer: { couponCode: 'BREAD20', redeemOnlineUrl: 'https://bakery.example/offer', termsConditions: 'One per customer.' },
        media: [{ mediaFormat: 'PHOTO', sourceUrl: media.path }],
      });
      expect(post.name.startsWith('accounts/111/locations/1001/localPosts/')).toBe(true);
      expect(post.photo!.equals(jpeg)).toBe(true);
      expect(fake.fetched.at(-1)).toEqual({ url: media.path, status: 200 });
      expect(root.releaseId).toBe(post.name);
      expect(root.releaseUrl).toBe(`${fake.url}/search/posts/${post.name.split('/').pop()}`);
    } finally {
      await worker.stop();
    }
  });

  it('sends an EVENT with times and a LEARN_MORE button, and a STANDARD update with a CALL button and no URL', async () => {
    const event = await createPost(herald, channel, ['Open day'], {
      settings: { topicType: 'EVENT', eventTitle: 'Open day', eventStartDate: '2026-11-07', eventStartTime: '09:30', eventEndDate: '2026-11-07', eventEndTime: '17:00', callToActionType: 'LEARN_MORE', callToActionUrl: 'https://bakery.example/open-day' },
    });
    expect((await publishUntilSettled(herald, event)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)!.body).toMatchObject({
      topicType: 'EVENT',
      callToAction: { actionType: 'LEARN_MORE', url: 'https://bakery.example/open-day' },
      event: { title: 'Open day', schedule: { startTime: { hours: 9, minutes: 30 }, endTime: { hours: 17, minutes: 0 } } },
    });
    const update = await createPost(herald, channel, ['Call us for cakes'], { settings: { callToActionType: 'CALL' } });
    expect((await publishUntilSettled(herald, update)).outcome.kind).toBe('published');
    expect(fake.posts.at(-1)!.body).toEqual({ summary: 'Call us for cakes', topicType: 'STANDARD', callToAction: { actionType: 'CALL' } });
  });

  it('refuses settings and media Google would refuse or ignore, naming the fix', async () => {
    const picture = await uploaded(herald, await photo(), 'p.jpg');
    const video = await uploaded(herald, goodMp4(), 'v.mp4');
    const refused = async (settings: Record<string, unknown>, image = [picture], content = 'Hello') => {
      const response = await submitPost(herald, channel, [{ content, image }], { settings });
      expect(response.status).toBe(400);
      return response.body.message as string;
    };
    expect(await refused({ topicType: 'STANDARD', offerCouponCode: 'X' })).toMatch(/offerCouponCode and offerTerms apply to offers only: set topicType to OFFER/);
    expect(await refused({ offerCouponCode: 'X' })).toMatch(/apply to offers only/);
    expect(await refused({ topicType: 'OFFER', offerCouponCode: 'X' })).toMatch(/An OFFER post needs eventTitle, eventStartDate and eventEndDate/);
    expect(await refused({ ...offer, callToActionType: 'BOOK' })).toMatch(/ignores call-to-action buttons on OFFER posts/);
    expect(await refused({ ...offer, eventEndDate: '2026-11-01' })).toMatch(/ends before it starts/);
    expect(await refused({ ...offer, eventStartDate: '1 December' })).toMatch(/settings\.eventStartDate: must be a date YYYY-MM-DD/);
    expect(await refused({ topicType: 'ALERT' })).toMatch(/no longer lets apps create ALERT posts/);
    expect(await refused({ callToActionType: 'GET_OFFER', callToActionUrl: 'https://bakery.example' })).toMatch(/GET_OFFER is retired by Google: set topicType to OFFER/);
    expect(await refused({ callToActionType: 'CALL', callToActionUrl: 'https://bakery.example' })).toMatch(/CALL button .* remove callToActionUrl/);
    expect(await refused({ callToActionType: 'BOOK' })).toMatch(/The BOOK button needs callToActionUrl/);
    expect(await refused({ callToActionUrl: 'https://bakery.example' })).toMatch(/callToActionUrl needs callToActionType/);
    expect(await refused({ eventTitle: 'Party' })).toMatch(/eventTitle applies to EVENT and OFFER posts only/);
    expect(await refused({}, [picture, picture])).toMatch(/takes one picture/);
    expect(await refused({}, [video])).toMatch(/takes one picture/);
    expect(await refused({}, [picture], 'x'.repeat(1501))).toMatch(/maximum characters is 1500/);
  });
});

describe('gmb failures', () => {
  it('refreshes an expired token with the client credentials and the stored refresh token', async () => {
    fake.authority.expireAccessTokens();
    const rootId = await createPost(herald, channel, ['After refresh']);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const refresh = fake.server.requestsTo('POST', '/oauth2/token').find((request) => request.form?.get('grant_type') === 'refresh_token')!;
    expect(refresh.form?.get('client_id')).toBe(fake.authority.clientId);
    expect(refresh.form?.get('client_secret')).toBe(fake.authority.clientSecret);
    expect(refresh.form?.get('refresh_token')).toMatch(/^refresh-/);
    expect(fake.posts.at(-1)!.body.summary).toBe('After refresh');
  });

  it('retries a 429 RESOURCE_EXHAUSTED after Retry-After, then publishes once', async () => {
    const rootId = await createPost(herald, channel, ['Busy']);
    fake.server.failNext('POST', '/mybusiness/v4/accounts/*/locations/*/localPosts', { status: 429, headers: { 'retry-after': '120' }, json: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } } });
    const started = Date.now();
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.nextAttemptAt!.getTime() - started).toBeGreaterThanOrEqual(119_000);
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    expect(fake.posts.filter((post) => post.body.summary === 'Busy')).toHaveLength(1);
  });

  it('fails at once with what to do when the Google project has no Business Profile quota yet', async () => {
    const rootId = await createPost(herald, channel, ['No quota']);
    fake.server.failNext('POST', '/mybusiness/v4/accounts/*/locations/*/localPosts', {
      status: 429,
      json: { error: { code: 429, message: "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute'", status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', metadata: { quota_limit_value: '0' } }] } },
    });
    expect((await publishChain(herald.services, rootId)).kind).toBe('failed');
    expect((await chainOf(herald, rootId))[0].error).toMatch(/no quota for the Business Profile APIs yet: request access/);
  });

  it('puts the post in ERROR with Google\'s message and field on a permanent error, and notifies', async () => {
    const rootId = await createPost(herald, channel, ['Refused']);
    fake.server.failNext('POST', '/mybusiness/v4/accounts/*/locations/*/localPosts', {
      status: 400,
      json: { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.mybusiness.v4.ValidationError', errorDetails: [{ code: 3, field: 'summary', message: 'Phone numbers are not allowed in the summary.' }] }] } },
    });
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
    const [root] = await chainOf(herald, rootId);
    expect(root.error).toBe('Google Business Profile refused the post: Request contains an invalid argument. (summary: Phone numbers are not allowed in the summary.)');
    const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
    expect(notifications.some((notification) => notification.content.includes('Phone numbers are not allowed'))).toBe(true);
  });

  /** An update of the location made earlier with the same text. */
  const olderPost = (summary: string) => {
    fake.posts.push({ name: `accounts/111/locations/1001/localPosts/old${fake.posts.length}`, body: { summary, topicType: 'STANDARD', languageCode: 'en' }, createTime: hoursAgo(72).toISOString() });
    return fake.posts.at(-1)!.name;
  };
  const isCreate = (request: { method?: string; url: string }) => request.method === 'POST' && request.url.endsWith('/localPosts');

  it('finds the post of a create whose answer was lost instead of creating it twice, passing over an older identical post listed first', async () => {
    const rootId = await createPost(herald, channel, ['Lost answer']);
    let old = '';
    const restore = loseAnswerOf(herald, (request) => isCreate(request) && Boolean((old = olderPost('Lost answer'))));
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const created = fake.posts.filter((post) => post.body.summary === 'Lost answer' && post.name !== old);
    expect(created).toHaveLength(1);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(created[0].name);
  });

  it('creates the post once when the create never reached Google, never taking an older post with the same text for it', async () => {
    const old = olderPost('Closed on Monday');
    const rootId = await createPost(herald, channel, ['Closed on Monday']);
    const restore = loseRequestOf(herald, isCreate);
    try {
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    } finally {
      restore();
    }
    const names = fake.posts.filter((post) => post.body.summary === 'Closed on Monday').map((post) => post.name);
    expect(names).toHaveLength(2);
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(names.find((name) => name !== old));
  });
});

describe('gmb analytics', () => {
  it('answers the location performance as daily points, a day Google leaves out counting 0', async () => {
    const response = await herald.rest('GET', `/analytics/${channel}?date=7`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((metric: { label: string }) => metric.label)).toEqual([
      'Impressions (desktop Maps)',
      'Impressions (desktop Search)',
      'Impressions (mobile Maps)',
      'Impressions (mobile Search)',
      'Call clicks',
      'Website clicks',
      'Direction requests',
    ]);
    const [request] = fake.server.requestsTo('GET', '/performance/v1/locations/*');
    expect(request.path).toBe('/performance/v1/locations/1001:fetchMultiDailyMetricsTimeSeries');
    expect(request.query.getAll('dailyMetrics')).toHaveLength(7);
    const impressions = response.body[0].data as { total: string; date: string }[];
    expect(impressions).toHaveLength(7);
    for (const point of impressions) expect(point.total).toBe(Number(point.date.slice(8)) % 2 ? '1' : '0');
  });

  it('answers 401 when the Google grant is revoked and the refresh fails, flagging the channel', async () => {
    fake.authority.revokeAll();
    const response = await herald.rest('GET', `/analytics/${channel}?date=7`);
    expect(response.status).toBe(401);
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channel });
    expect(row.refreshNeeded).toBe(true);
  });
});
