// A fake Google (OAuth, userinfo) and Google Business Profile on 127.0.0.1, from Google's references. One server plays
// every host under its own prefix (`endpoints`), so a call sent to the wrong API gets a 404:
//
//   GET  /accounts-google/o/oauth2/v2/auth      consent (response_type=code, access_type=offline, prompt=consent,
//                                               business.manage scope), approved at once
//   POST /oauth2/token                          form; client credentials in the form or HTTP Basic; authorization_code
//                                               answers a refresh token, refresh_token does not rotate it
//   GET  /googleapis/oauth2/v3/userinfo         {sub, name, email, picture}
//   GET  /accountmanagement/v1/accounts         one account per page (nextPageToken)
//   GET  /businessinformation/v1/accounts/{a}/locations   readMask required; two locations per page
//   POST /mybusiness/v4/accounts/{a}/locations/{l}/localPosts   LocalPost checked like Google: topicType required (not
//                                               ALERT), summary ≤ 1500, event with a complete schedule for EVENT and
//                                               OFFER, offer only on OFFER, a CALL button without url and other buttons
//                                               with one, media [{mediaFormat: PHOTO, sourceUrl}] fetched by the fake
//   GET  /mybusiness/v4/accounts/{a}/locations/{l}/localPosts   newest first
//   GET  /performance/v1/locations/{l}:fetchMultiDailyMetricsTimeSeries   dailyMetrics (repeated) and dailyRange.*
// API routes answer 401 UNAUTHENTICATED without a live bearer token, 403 PERMISSION_DENIED for a location of no account.
// References (read 2026-11-27; the v4 localPosts API has a discovery document but no maintained typed client): developers.google.com/
// my-business/reference/rest/v4/accounts.locations.localPosts (LocalPost, createTime, summary 1,500), the Account Management and
// Business Information v1 references (accounts, locations readMask), businessprofileperformance v1 fetchMultiDailyMetricsTimeSeries.
// The contract: before its own checks, every API request is checked against Google's Discovery document of that API, vendored
// in test/contracts/gmb/ (mybusiness v4: Google's mybusiness_google_rest_v4p8.json sample, as copied into
// scottybo/Laravel-Google-My-Business on 2021-02-02; Account Management v1 rev 20230201, Business Information v1 rev 20231212,
// Business Profile Performance v1 rev 20230620, from googleapis/google-api-nodejs-client discovery/ at fd63525, 2024-08-19; read
// 2026-11-27): method and path, known query parameters with their types, enums and required ones, and the JSON body against the
// method's request schema (no field the schema lacks). A request outside it is answered 400 INVALID_ARGUMENT (404 NOT_FOUND for
// a path that is no method) and recorded in `contractViolations`, which the tests require to stay empty.
import { createOAuthAuthority, basicCredentials, OAuthRefusal, type OAuthAuthority } from './oauth-authority.js';
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';
import { contractProblems, type GmbApi } from '../contracts/gmb/contract.js';

export interface GmbFakePost {
  name: string;
  /** The LocalPost as received. */
  body: Record<string, any>;
  /** Bytes of the photo the fake fetched from sourceUrl. */
  photo?: Buffer;
  createTime: string;
  /** Each PATCH applied: its updateMask and body. */
  patches?: { updateMask: string; body: Record<string, any> }[];
  deleted?: boolean;
}

export interface GmbFake {
  server: FakeServer;
  url: string;
  endpoints: Record<string, string>;
  authority: OAuthAuthority;
  accounts: { name: string; accountName: string; type: string; locations: { name: string; title: string; storefrontAddress: { addressLines: string[]; locality: string } }[] }[];
  posts: GmbFakePost[];
  fetched: { url: string; status: number }[];
  /** Requests the Discovery contracts refused, as "METHOD path: problem". */
  contractViolations: string[];
  close(): Promise<void>;
}

/** The API each host prefix of the fake plays. */
const APIS: Record<string, GmbApi> = {
  '/mybusiness': 'mybusiness.v4',
  '/accountmanagement': 'mybusinessaccountmanagement.v1',
  '/businessinformation': 'mybusinessbusinessinformation.v1',
  '/performance': 'businessprofileperformance.v1',
};

const googleError = (code: number, status: string, message: string, details: unknown[] = []): FakeReply => ({ status: code, json: { error: { code, message, status, ...(details.length ? { details } : {}) } } });
const invalid = (field: string, message: string) =>
  googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [{ '@type': 'type.googleapis.com/google.mybusiness.v4.ValidationError', errorDetails: [{ code: 3, field, message }] }]);
const ACTIONS = ['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'GET_OFFER', 'CALL'];
const METRICS = ['BUSINESS_IMPRESSIONS_DESKTOP_MAPS', 'BUSINESS_IMPRESSIONS_DESKTOP_SEARCH', 'BUSINESS_IMPRESSIONS_MOBILE_MAPS', 'BUSINESS_IMPRESSIONS_MOBILE_SEARCH', 'BUSINESS_CONVERSATIONS', 'BUSINESS_DIRECTION_REQUESTS', 'CALL_CLICKS', 'WEBSITE_CLICKS', 'BUSINESS_BOOKINGS', 'BUSINESS_FOOD_ORDERS'];

export async function startGmbFake(): Promise<GmbFake> {
  const server = await startFakeServer();
  const { url } = server;
  // Routes of the APIs are registered behind their contract check (OAuth and userinfo are not Discovery methods).
  const contractViolations = server.underContract(
    (_method, path) => {
      const prefix = Object.keys(APIS).find((candidate) => path.startsWith(`${candidate}/`));
      return prefix ? (request) => contractProblems(APIS[prefix], request, request.path.slice(prefix.length)) : undefined;
    },
    (problems) => (problems.some((problem) => problem.includes('is not a method of')) ? googleError(404, 'NOT_FOUND', problems.join('; ')) : googleError(400, 'INVALID_ARGUMENT', problems.join('; '))),
  );
  const authority = createOAuthAuthority({ expiresIn: 3599 });
  const bakery = { name: 'locations/1001', title: 'Herald Bakery', storefrontAddress: { addressLines: ['1 Main Street'], locality: 'Springfield' } };
  const accounts = [
    { name: 'accounts/111', accountName: 'Ada Lovelace', type: 'PERSONAL', locations: [bakery, { name: 'locations/1002', title: 'Herald Books', storefrontAddress: { addressLines: ['2 Main Street'], locality: 'Springfield' } }] },
    {
      name: 'accounts/222',
      accountName: 'Herald Group',
      type: 'ORGANIZATION',
      locations: [
        { name: 'locations/1002', title: 'Herald Books', storefrontAddress: { addressLines: ['2 Main Street'], locality: 'Springfield' } },
        { name: 'locations/2001', title: 'Herald Cafe', storefrontAddress: { addressLines: ['9 Harbour Road'], locality: 'Shelbyville' } },
        { name: 'locations/2002', title: 'Herald Deli', storefrontAddress: { addressLines: ['3 Harbour Road'], locality: 'Shelbyville' } },
      ],
    },
  ];
  const posts: GmbFakePost[] = [];
  const fetched: { url: string; status: number }[] = [];
  let nextId = 7_000;

  const authed = authority.guard(() => googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'));
  const pageOf = <T>(items: T[], request: RecordedRequest, size: number) => {
    const start = Number(request.query.get('pageToken') ?? 0);
    return { items: items.slice(start, start + size), next: start + size < items.length ? String(start + size) : undefined };
  };

  server.on('GET', '/accounts-google/o/oauth2/v2/auth', (request) => {
    const query = request.query;
    if (query.get('response_type') !== 'code' || query.get('access_type') !== 'offline' || query.get('prompt') !== 'consent') {
      return { status: 400, body: 'Herald must ask for response_type=code, access_type=offline and prompt=consent to get a refresh token' };
    }
    const scope = query.get('scope') ?? '';
    if (!scope.split(' ').includes('https://www.googleapis.com/auth/business.manage')) return { status: 400, body: 'scope business.manage missing' };
    try {
      return { status: 302, headers: { location: authority.approvalRedirect({ clientId: query.get('client_id') ?? '', redirectUri: query.get('redirect_uri') ?? '', state: query.get('state') ?? '', scope }) } };
    } catch (refusal) {
      return { status: 400, body: (refusal as Error).message };
    }
  });

  server.on('POST', '/oauth2/token', (request) => {
    const form = request.form ?? new URLSearchParams();
    const basic = basicCredentials(request.headers.authorization);
    try {
      authority.checkClient(form.get('client_id') ?? basic.id, form.get('client_secret') ?? basic.secret);
      const grant = form.get('grant_type');
      if (grant === 'authorization_code') {
        const issued = authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined, clientId: form.get('client_id') ?? basic.id });
        return { json: { access_token: issued.accessToken, expires_in: issued.expiresIn, refresh_token: issued.refreshToken, scope: issued.scope, token_type: 'Bearer' } };
      }
      if (grant === 'refresh_token') {
        const issued = authority.redeemRefreshToken(form.get('refresh_token') ?? undefined);
        return { json: { access_token: issued.accessToken, expires_in: issued.expiresIn, scope: 'https://www.googleapis.com/auth/business.manage', token_type: 'Bearer' } };
      }
      throw new OAuthRefusal('unsupported_grant_type', `Invalid grant_type: ${grant}`);
    } catch (refusal) {
      const error = refusal instanceof OAuthRefusal ? refusal.error : 'invalid_request';
      const description = error === 'invalid_grant' ? 'Token has been expired or revoked.' : (refusal as Error).message;
      return { status: error === 'invalid_client' ? 401 : 400, json: { error, error_description: description } };
    }
  });

  server.on('GET', '/googleapis/oauth2/v3/userinfo', authed(() => ({ json: { sub: '1098765', name: 'Ada Lovelace', given_name: 'Ada', email: 'ada@example.com', picture: `${url}/img/ada.png` } })));

  server.on('GET', '/accountmanagement/v1/accounts', authed((request) => {
    const { items, next } = pageOf(accounts, request, 1);
    return { json: { accounts: items.map(({ name, accountName, type }) => ({ name, accountName, type, role: 'PRIMARY_OWNER', verificationState: 'VERIFIED' })), ...(next ? { nextPageToken: next } : {}) } };
  }));

  server.on('GET', '/businessinformation/v1/accounts/*/locations', authed((request) => {
    const account = accounts.find((item) => item.name === `accounts/${request.path.split('/')[4]}`);
    if (!account) return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    const mask = request.query.get('readMask');
    if (!mask) return googleError(400, 'INVALID_ARGUMENT', "Request contains an invalid argument. (readMask: Field is required)");
    const fields = mask.split(',');
    const { items, next } = pageOf(account.locations, request, 2);
    const shaped = items.map((location) => Object.fromEntries(Object.entries(location).filter(([key]) => fields.includes(key))));
    return { json: { locations: shaped, ...(next ? { nextPageToken: next } : {}) } };
  }));

  const managed = (accountId: string, locationId: string) => accounts.find((account) => account.name === `accounts/${accountId}`)?.locations.some((location) => location.name === `locations/${locationId}`);

  const dateOk = (value: any) => Number.isInteger(value?.year) && Number.isInteger(value?.month) && Number.isInteger(value?.day);
  const timeOk = (value: any) => value !== null && typeof value === 'object' && Object.values(value).every((part) => Number.isInteger(part));

  server.on('POST', '/mybusiness/v4/accounts/*/locations/*/localPosts', authed(async (request) => {
    const [, , , , accountId, , locationId] = request.path.split('/');
    if (!managed(accountId, locationId)) return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    const body = request.json ?? {};
    const topic = body.topicType;
    if (!['STANDARD', 'EVENT', 'OFFER'].includes(topic)) return invalid('topic_type', topic === 'ALERT' ? 'Alert posts can no longer be created.' : 'Required field topic_type is missing or invalid.');
    if (typeof body.summary === 'string' && body.summary.length > 1500) return invalid('summary', 'Summary is longer than 1500 characters.');
    if (topic !== 'STANDARD') {
      const schedule = body.event?.schedule;
      if (!body.event?.title) return invalid('event.title', 'Event title is required for EVENT and OFFER posts.');
      if (!dateOk(schedule?.startDate) || !dateOk(schedule?.endDate) || !timeOk(schedule?.startTime) || !timeOk(schedule?.endTime)) return invalid('event.schedule', 'TimeInterval must contain all fields.');
    } else if (body.event) return invalid('event', 'Event is only allowed for EVENT and OFFER posts.');
    if (body.offer && topic !== 'OFFER') return invalid('offer', 'Offer is only allowed for OFFER posts.');
    const action = body.callToAction;
    if (action) {
      if (!ACTIONS.includes(action.actionType)) return invalid('call_to_action.action_type', 'Invalid action type.');
      if (action.actionType === 'CALL' && action.url) return invalid('call_to_action.url', 'The URL should be left unset for Call CTA.');
      if (action.actionType !== 'CALL' && !action.url) return invalid('call_to_action.url', 'A URL is required for this action type.');
    }
    let photo: Buffer | undefined;
    for (const item of body.media ?? []) {
      if (item.mediaFormat !== 'PHOTO' || typeof item.sourceUrl !== 'string') return invalid('media', 'Only PHOTO media with a sourceUrl are supported on local posts.');
      const response = await fetch(item.sourceUrl).catch(() => undefined);
      fetched.push({ url: item.sourceUrl, status: response?.status ?? 0 });
      if (!response?.ok) return invalid('media.source_url', 'The photo could not be fetched from sourceUrl.');
      photo = Buffer.from(await response.arrayBuffer());
    }
    const id = nextId++;
    const post: GmbFakePost = { name: `accounts/${accountId}/locations/${locationId}/localPosts/${id}`, body, ...(photo ? { photo } : {}), createTime: new Date().toISOString() };
    posts.push(post);
    return { json: entity(post) };
  }));

  const entity = (post: GmbFakePost) => ({
    ...post.body,
    name: post.name,
    languageCode: 'en',
    state: 'LIVE',
    searchUrl: `${url}/search/posts/${post.name.split('/').pop()}`,
    createTime: post.createTime,
    updateTime: post.createTime,
    ...(post.body.media ? { media: post.body.media.map((item: object, index: number) => ({ ...item, name: `${post.name}/media/${index}`, googleUrl: `${url}/img/post-${post.name.split('/').pop()}.jpg` })) } : {}),
  });

  // localPosts.patch / localPosts.delete (developers.google.com/my-business/reference/rest/v4/accounts.locations.localPosts,
  // read 2026-11-27): a post of a managed location (403 otherwise), NOT_FOUND when unknown or deleted; patch needs an
  // updateMask of LocalPost fields (topicType cannot be in it here: the fake keeps a post's type) and sets each masked field
  // from the body, clearing one the body leaves out.
  const MASKABLE = ['summary', 'callToAction', 'event', 'offer', 'media', 'languageCode'];
  const postAt = (request: RecordedRequest) => {
    const [, , , , accountId, , locationId] = request.path.split('/');
    const name = request.path.replace(/^\/mybusiness\/v4\//, '');
    return { managed: managed(accountId, locationId), post: posts.find((post) => post.name === name && !post.deleted) };
  };
  server.on('PATCH', '/mybusiness/v4/accounts/*/locations/*/localPosts/*', authed((request) => {
    const { managed: mine, post } = postAt(request);
    if (!mine) return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    if (!post) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
    const mask = (request.query.get('updateMask') ?? '').split(',').filter(Boolean);
    if (mask.length === 0) return invalid('update_mask', 'Field update_mask is required.');
    const unknown = mask.find((field) => !MASKABLE.includes(field));
    if (unknown) return invalid('update_mask', `Invalid field in update_mask: ${unknown}.`);
    const body = request.json ?? {};
    if (typeof body.summary === 'string' && body.summary.length > 1500) return invalid('summary', 'Summary is longer than 1500 characters.');
    (post.patches ??= []).push({ updateMask: mask.join(','), body });
    for (const field of mask) {
      if (field in body) post.body[field] = body[field];
      else delete post.body[field];
    }
    return { json: entity(post) };
  }));
  server.on('DELETE', '/mybusiness/v4/accounts/*/locations/*/localPosts/*', authed((request) => {
    const { managed: mine, post } = postAt(request);
    if (!mine) return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    if (!post) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
    post.deleted = true;
    return { json: {} };
  }));

  server.on('GET', '/mybusiness/v4/accounts/*/locations/*/localPosts', authed((request) => {
    const parent = request.path.replace(/^\/mybusiness\/v4\//, '').replace(/\/localPosts$/, '');
    const size = Number(request.query.get('pageSize') ?? 20);
    if (size < 1 || size > 100) return invalid('page_size', 'The maximum page size is 100.');
    return { json: { localPosts: posts.filter((post) => !post.deleted && post.name.startsWith(`${parent}/`)).reverse().slice(0, size).map(entity) } };
  }));

  server.on('GET', '/performance/v1/locations/*', authed((request) => {
    const match = /^(\d+):fetchMultiDailyMetricsTimeSeries$/.exec(request.path.split('/').pop()!);
    if (!match) return googleError(404, 'NOT_FOUND', 'Method not found.');
    if (!accounts.some((account) => account.locations.some((location) => location.name === `locations/${match[1]}`))) return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    const metrics = request.query.getAll('dailyMetrics');
    if (metrics.length === 0 || metrics.some((metric) => !METRICS.includes(metric))) return googleError(400, 'INVALID_ARGUMENT', 'Invalid dailyMetrics.');
    const edge = (name: string) => ['year', 'month', 'day'].map((part) => Number(request.query.get(`dailyRange.${name}.${part}`)));
    const [startParts, endParts] = [edge('startDate'), edge('endDate')];
    if ([...startParts, ...endParts].some((part) => !Number.isInteger(part) || part <= 0)) return googleError(400, 'INVALID_ARGUMENT', 'dailyRange is required.');
    const start = Date.UTC(startParts[0], startParts[1] - 1, startParts[2]);
    const end = Date.UTC(endParts[0], endParts[1] - 1, endParts[2]);
    const series = metrics.map((metric, index) => {
      const datedValues = [];
      for (let day = start; day <= end; day += 86_400_000) {
        const date = new Date(day);
        const value = (date.getUTCDate() % 2) * (index + 1); // zero on even days: Google then leaves out `value`
        datedValues.push({ date: { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() }, ...(value ? { value: String(value) } : {}) });
      }
      return { dailyMetric: metric, dailySubEntityType: {}, timeSeries: { datedValues } };
    });
    return { json: { multiDailyMetricTimeSeries: [{ dailyMetricTimeSeries: series }] } };
  }));

  return {
    server,
    url,
    endpoints: {
      authorize: `${url}/accounts-google`,
      token: `${url}/oauth2`,
      api: `${url}/googleapis`,
      gmbAccounts: `${url}/accountmanagement`,
      gmbInfo: `${url}/businessinformation`,
      gmbV4: `${url}/mybusiness`,
      gmbPerf: `${url}/performance`,
    },
    authority,
    accounts,
    posts,
    fetched,
    contractViolations,
    close: () => server.close(),
  };
}
