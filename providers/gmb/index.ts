// Google Business Profile: local posts (updates, events, offers) on a location chosen after Google OAuth.
// References: https://developers.google.com/my-business/reference/rest/v4/accounts.locations.localPosts (LocalPost,
// CallToAction, LocalPostEvent, LocalPostOffer; `event` is required for EVENT and OFFER, `callToAction` is ignored for
// OFFER, a CALL button takes no url, GET_OFFER is deprecated in favour of topicType OFFER, ALERT posts are COVID-19 alerts
// that can no longer be created; media: sourceUrl only), plus google.ts and locations.ts for OAuth, the picker and
// performance (read 2026-11-27). Changes (read 2026-11-27): accounts.locations.localPosts/patch (PATCH v4/{name} with
// updateMask, "you must specify each field that is being updated in the mask"; a field in the mask but absent from the body is
// cleared) and localPosts/delete (DELETE v4/{name}; NOT_FOUND when the post does not exist, which a repeat counts as done).
// There is no comments API and no post-level metrics. A lost create is looked up among the location's newest
// posts with the same text and topic created since the attempt began (LocalPost.createTime; providers/recovery.ts).
import { z } from 'zod';
import { notFound } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { EditItem, Provider, ProviderContext, PublishedRef, PublishItem } from '../types.js';
import { createdSince, onlyCandidate } from '../recovery.js';
import { firstProblem, googleAuthorizeUrl, googleEndpoints, googleScope, httpUrl, permanent, versionedBase } from '../shared.js';
import { googleCall } from './google.js';
import { exchangeGoogleCode, googleUserInfo, refreshGoogleToken } from '../google.js';
import { locationPerformance, managedLocations } from './locations.js';

const scopes = ['userinfo.profile', 'userinfo.email', 'business.manage'].map(googleScope);

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD');
const time = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time HH:MM (24 hours)');

const settings = z.object({
  topicType: z.enum(['STANDARD', 'EVENT', 'OFFER', 'ALERT']).optional().describe('STANDARD update (default), EVENT or OFFER'),
  callToActionType: z.enum(['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'GET_OFFER', 'CALL']).optional().describe('Button shown on the post'),
  callToActionUrl: httpUrl().optional().describe('Where the button leads; for an OFFER, the link to redeem it online'),
  offerCouponCode: z.string().optional().describe('Coupon code of an OFFER'),
  offerTerms: z.string().optional().describe('Terms and conditions of an OFFER'),
  eventTitle: z.string().optional().describe('Title of an EVENT or OFFER'),
  eventStartDate: day.optional().describe('First day of an EVENT or OFFER (YYYY-MM-DD)'),
  eventEndDate: day.optional().describe('Last day of an EVENT or OFFER (YYYY-MM-DD)'),
  eventStartTime: time.optional().describe('Start time on the first day (HH:MM, default 00:00)'),
  eventEndTime: time.optional().describe('End time on the last day (HH:MM, default 23:59)'),
});
type Settings = z.infer<typeof settings>;

const EVENT_KEYS = ['eventTitle', 'eventStartDate', 'eventEndDate', 'eventStartTime', 'eventEndTime'] as const;

/** The first settings combination Google would refuse or silently ignore, as a sentence naming the fix. */
function settingsProblem(options: Settings): string | undefined {
  const topic = options.topicType ?? 'STANDARD';
  const { callToActionType: button, callToActionUrl: link } = options;
  if (topic === 'ALERT') return 'Google no longer lets apps create ALERT posts (its only alert type, COVID-19, is closed to new posts): use STANDARD or EVENT.';
  if (topic !== 'OFFER' && (options.offerCouponCode || options.offerTerms)) return 'offerCouponCode and offerTerms apply to offers only: set topicType to OFFER or remove them.';
  if (topic === 'STANDARD') {
    const eventKey = EVENT_KEYS.find((key) => options[key]);
    if (eventKey) return `${eventKey} applies to EVENT and OFFER posts only: set topicType or remove it.`;
  } else {
    if (!options.eventTitle || !options.eventStartDate || !options.eventEndDate) {
      return `An ${topic} post needs eventTitle, eventStartDate and eventEndDate (Google shows its title and dates).`;
    }
    const start = `${options.eventStartDate}T${options.eventStartTime ?? '00:00'}`;
    const end = `${options.eventEndDate}T${options.eventEndTime ?? '23:59'}`;
    if (Number.isNaN(Date.parse(`${start}Z`)) || Number.isNaN(Date.parse(`${end}Z`))) return 'eventStartDate or eventEndDate is not a real date.';
    if (end < start) return `The ${topic === 'OFFER' ? 'offer' : 'event'} ends before it starts: check eventStartDate and eventEndDate.`;
  }
  if (topic === 'OFFER') {
    if (button && button !== 'GET_OFFER') return `Google ignores call-to-action buttons on OFFER posts: remove callToActionType ${button} (callToActionUrl is the link to redeem the offer).`;
    return undefined;
  }
  if (button === 'GET_OFFER') return 'GET_OFFER is retired by Google: set topicType to OFFER (callToActionUrl becomes the link to redeem it).';
  if (button === 'CALL' && link) return "A CALL button calls the business's phone number: remove callToActionUrl.";
  if (button && button !== 'CALL' && !link) return `The ${button} button needs callToActionUrl.`;
  if (link && !button) return 'callToActionUrl needs callToActionType (BOOK, ORDER, SHOP, LEARN_MORE or SIGN_UP).';
  return undefined;
}

const dateOf = (value: string) => {
  const [year, month, dayOfMonth] = value.split('-').map(Number);
  return { year, month, day: dayOfMonth };
};
const timeOf = (value: string) => {
  const [hours, minutes] = value.split(':').map(Number);
  return { hours, minutes };
};

/** The LocalPost resource of an item. */
function localPost(options: Settings, item: PublishItem): Record<string, unknown> {
  const topicType = options.topicType ?? 'STANDARD';
  const photo = item.media.find((media) => media.kind === 'image');
  return {
    ...(item.text ? { summary: item.text } : {}),
    topicType,
    ...(topicType !== 'OFFER' && options.callToActionType
      ? { callToAction: { actionType: options.callToActionType, ...(options.callToActionUrl ? { url: options.callToActionUrl } : {}) } }
      : {}),
    ...(topicType === 'STANDARD'
      ? {}
      : {
          event: {
            title: options.eventTitle,
            schedule: {
              startDate: dateOf(options.eventStartDate!),
              startTime: timeOf(options.eventStartTime ?? '00:00'),
              endDate: dateOf(options.eventEndDate!),
              endTime: timeOf(options.eventEndTime ?? '23:59'),
            },
          },
        }),
    ...(topicType === 'OFFER'
      ? {
          offer: {
            ...(options.offerCouponCode ? { couponCode: options.offerCouponCode } : {}),
            ...(options.callToActionUrl ? { redeemOnlineUrl: options.callToActionUrl } : {}),
            ...(options.offerTerms ? { termsConditions: options.offerTerms } : {}),
          },
        }
      : {}),
    ...(photo ? { media: [{ mediaFormat: 'PHOTO', sourceUrl: photo.url }] } : {}),
  };
}

const postSchema = z.object({
  name: z.string(),
  summary: z.string().optional(),
  topicType: z.string().optional(),
  state: z.string().optional(),
  searchUrl: z.string().optional(),
  createTime: z.string().optional(),
  media: z.array(z.object({ googleUrl: z.string().optional(), sourceUrl: z.string().optional() })).optional(),
});

const postsUrl = (context: ProviderContext) => `${versionedBase(context.endpoints, 'gmbV4', 'localPostsVersion')}/${context.auth.internalId}/localPosts`;

const listPosts = async (context: ProviderContext) =>
  (await googleCall(context, context.auth.accessToken, { url: postsUrl(context), query: { pageSize: 20 }, schema: z.object({ localPosts: z.array(postSchema).default([]) }) }))
    .localPosts;

const recorded = (post: z.infer<typeof postSchema>) => ({ name: post.name, searchUrl: post.searchUrl ?? null, state: post.state ?? null });

async function publishLocalPost(context: ProviderContext, item: PublishItem) {
  const body = localPost(settings.parse(context.settings), item);
  const post = await context.step(
    'localPost',
    async () => recorded(await googleCall(context, context.auth.accessToken, { method: 'POST', url: postsUrl(context), json: body, schema: postSchema })),
    async (attempt) => {
      // Google creates synchronously: a post of an interrupted create is among the newest, with the same text and topic, and
      // created since the attempt began (an older post with the same text is another post).
      const same = (await listPosts(context)).filter(
        (candidate) => (candidate.summary ?? '') === (item.text ?? '') && candidate.topicType === body.topicType && createdSince(attempt, candidate.createTime),
      );
      const found = onlyCandidate(same, 'Google Business Profile', 'posts');
      return found ? recorded(found) : undefined;
    },
  );
  if (post.state === 'REJECTED') {
    throw permanent('Google rejected the post for a content policy violation; edit it and post again.', 422);
  }
  return { id: post.name, ...(post.searchUrl ? { url: post.searchUrl } : {}) };
}

const postUrl = (context: ProviderContext, ref: PublishedRef) => `${versionedBase(context.endpoints, 'gmbV4', 'localPostsVersion')}/${ref.id}`;

/** The fields an edit of a post of this topic sets: all it may carry, so one left out of the new settings is cleared. */
const EDITABLE: Record<string, string[]> = { STANDARD: ['summary', 'callToAction'], EVENT: ['summary', 'callToAction', 'event'], OFFER: ['summary', 'event', 'offer'] };

/** localPosts.patch with the new summary and settings (the photo and the topic stay); the same patch again is harmless. */
async function editLocalPost(context: ProviderContext, ref: PublishedRef, item: EditItem): Promise<PublishedRef> {
  const { topicType, media: _media, ...body } = localPost(settings.parse(context.settings), { ...item, media: [] });
  const post = await context.step('edit', async () =>
    recorded(await googleCall(context, context.auth.accessToken, { method: 'PATCH', url: postUrl(context, ref), query: { updateMask: EDITABLE[String(topicType)].join(',') }, json: body, schema: postSchema })),
  );
  return { id: post.name, ...(post.searchUrl ? { url: post.searchUrl } : ref.url ? { url: ref.url } : {}) };
}

/** localPosts.delete; NOT_FOUND (already gone, e.g. a repeat after a lost answer) counts as deleted. */
async function deleteLocalPost(context: ProviderContext, ref: PublishedRef): Promise<void> {
  await context.step('delete', async () => {
    try {
      await googleCall(context, context.auth.accessToken, { method: 'DELETE', url: postUrl(context, ref) });
    } catch (error) {
      if (!(error instanceof PlatformHttpError && error.status === 404)) throw error;
    }
    return true;
  });
}

const gmb: Provider = {
  identifier: 'gmb',
  name: 'Google Business Profile',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: {
    ...googleEndpoints,
    gmbV4: 'https://mybusiness.googleapis.com',
    localPostsVersion: 'v4',
    gmbAccounts: 'https://mybusinessaccountmanagement.googleapis.com',
    accountsVersion: 'v1',
    gmbInfo: 'https://mybusinessbusinessinformation.googleapis.com',
    businessInfoVersion: 'v1',
    gmbPerf: 'https://businessprofileperformance.googleapis.com',
    performanceVersion: 'v1',
  },
  maxLength: () => 1500,
  rules:
    'A local post on the chosen location: text up to 1500 characters and at most one picture (fetched by Google from its public ' +
    'https URL), no video, no comments. topicType STANDARD (default), EVENT or OFFER; EVENT and OFFER need eventTitle, ' +
    'eventStartDate and eventEndDate (YYYY-MM-DD; eventStartTime/eventEndTime HH:MM). A STANDARD or EVENT post may have a button: ' +
    'callToActionType BOOK, ORDER, SHOP, LEARN_MORE or SIGN_UP with callToActionUrl, or CALL without a URL. An OFFER takes ' +
    'offerCouponCode, offerTerms and callToActionUrl as its redemption link (callToActionType GET_OFFER or none); offer fields are ' +
    'refused on other posts. ALERT posts can no longer be created.',
  settings,
  chain: 'none',
  mediaByUrl: true,
  recordsSteps: true,
  validate: (items, values) =>
    firstProblem(
      items,
      ({ images, videos }) => (videos > 0 || images > 1 ? 'has more than one picture or a video; Google Business Profile takes one picture.' : undefined),
      'first',
    ) ?? settingsProblem(settings.safeParse(values).data ?? {}),
  tools: [],
  authorizeUrl: (options) => googleAuthorizeUrl(options, scopes),

  async exchangeCode(context, options) {
    const tokens = await exchangeGoogleCode(context, options, []);
    if (!tokens.refreshToken) {
      // Without one the channel would die within the hour.
      throw permanent('Google sent no refresh token: remove Herald from https://myaccount.google.com/permissions and connect again.');
    }
    const user = await googleUserInfo(context, tokens.accessToken);
    return {
      internalId: user.sub,
      name: user.name ?? user.email ?? user.sub,
      profile: user.email ?? user.sub,
      picture: user.picture,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: tokens.expiresAt,
      data: user.picture ? { picture: user.picture } : ({} as Record<string, string>),
      inBetweenSteps: true,
    };
  },

  async accounts(context) {
    return (await managedLocations(context)).map((location) => ({
      id: location.id,
      name: location.address ? `${location.title} (${location.address})` : location.title,
      ...(context.auth.data.picture ? { picture: context.auth.data.picture } : {}),
    }));
  },

  async selectAccount(context, id) {
    const location = (await managedLocations(context)).find((candidate) => candidate.id === id);
    if (!location) throw notFound(`Location ${id} is not managed by this Google account.`, { hint: 'Choose an id from GET /integrations/{id}/accounts.' });
    const { accessToken, refreshToken, expiresAt, data } = context.auth;
    return { internalId: location.id, name: location.title, profile: location.address ?? location.title, picture: data.picture, accessToken, refreshToken, expiresAt, data };
  },

  refresh: refreshGoogleToken,

  publish: publishLocalPost,
  editPublished: (context, ref, item) => editLocalPost(context, ref, item),
  deletePublished: (context, ref) => deleteLocalPost(context, ref),
  // Herald keeps a post's type: an update, event or offer is edited as such (delete it and post again to change the type).
  editProblem: (before, after) =>
    (before.topicType ?? 'STANDARD') !== (after.topicType ?? 'STANDARD') ? 'A Google Business Profile post keeps its type (update, event or offer) when edited: delete it and post again to change the type.' : undefined,

  analytics: locationPerformance,

  async recent(context) {
    return (await listPosts(context)).map((post) => ({ id: post.name, url: post.media?.[0]?.googleUrl ?? post.searchUrl ?? '' }));
  },
};

export default gmb;
