// LinkedIn organizations: the pages a member administers (the page picker and the getCompanies tool), and the analytics
// of a page and of its posts.
// References:
//   https://learn.microsoft.com/linkedin/marketing/community-management/organizations/organization-access-control-by-role
//   https://learn.microsoft.com/linkedin/marketing/community-management/organizations/follower-statistics
//   https://learn.microsoft.com/linkedin/marketing/community-management/organizations/share-statistics
//   https://learn.microsoft.com/linkedin/marketing/community-management/organizations/organization-lookup-api (networkSizes)
import { z } from 'zod';
import type { AnalyticsMetric, PublishedRef } from '../types.js';
import { currentMetric, isoDay } from '../shared.js';
import { authorOf, rest, urnParam, type LinkedinContext } from './api.js';
import type { ProviderContext } from '../types.js';

const logoSchema = z.object({
  'original~': z.object({ elements: z.array(z.object({ identifiers: z.array(z.object({ identifier: z.string() })).default([]) })).default([]) }).optional(),
});

const aclSchema = z.object({
  elements: z.array(
    z.object({
      organization: z.string().startsWith('urn:li:organization:'),
      role: z.string(),
      'organization~': z.object({ localizedName: z.string().optional(), vanityName: z.string().optional(), logoV2: logoSchema.optional() }).optional(),
    }),
  ),
});

export interface Organization {
  /** The organization URN, stored as the channel's internalId. */
  id: string;
  name: string;
  vanityName?: string;
  picture?: string;
}

/** Organizations where the member is an approved ADMINISTRATOR, with their names and logos (decorated in the same call). */
export async function administeredOrganizations(context: LinkedinContext): Promise<Organization[]> {
  const projection = '(elements*(organization,role,organization~(localizedName,vanityName,logoV2(original~:playableStreams))))';
  const { data } = await rest(context, { path: `organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED&count=100&projection=${projection}`, schema: aclSchema });
  const byUrn = new Map<string, Organization>();
  for (const acl of data.elements) {
    if (acl.role !== 'ADMINISTRATOR' || byUrn.has(acl.organization)) continue;
    const organization = acl['organization~'];
    // playableStreams lists the logo's sizes, smallest first.
    const picture = organization?.logoV2?.['original~']?.elements.at(-1)?.identifiers[0]?.identifier;
    byUrn.set(acl.organization, {
      id: acl.organization,
      name: organization?.localizedName ?? acl.organization,
      ...(organization?.vanityName ? { vanityName: organization.vanityName } : {}),
      ...(picture ? { picture } : {}),
    });
  }
  return [...byUrn.values()];
}

const DAY_MS = 86_400_000;
const timeRangeSchema = z.object({ start: z.number(), end: z.number() });
const count = z.number().default(0);
const shareTotalsSchema = z.object({
  impressionCount: count,
  uniqueImpressionsCount: count,
  clickCount: count,
  likeCount: count,
  commentCount: count,
  shareCount: count,
  engagement: count,
});
type ShareTotals = z.infer<typeof shareTotalsSchema>;
const followerStatsSchema = z.object({
  elements: z.array(z.object({ timeRange: timeRangeSchema, followerGains: z.object({ organicFollowerGain: count, paidFollowerGain: count }) })),
});
const shareStatsSchema = z.object({ elements: z.array(z.object({ timeRange: timeRangeSchema.optional(), totalShareStatistics: shareTotalsSchema })) });

const dateOf = (ms: number) => isoDay(new Date(ms));
const round = (value: number) => Math.round(value * 100) / 100;

/** Levels (followers) change from the first to the last day; daily counts from the first half of the period to the second. */
function metric(label: string, points: { date: string; value: number }[], kind: 'level' | 'daily'): AnalyticsMetric {
  const values = points.map((point) => point.value);
  const sum = (list: number[]) => list.reduce((total, value) => total + value, 0);
  const half = Math.floor(values.length / 2);
  const [before, after] = kind === 'level' ? [values[0] ?? 0, values.at(-1) ?? 0] : [sum(values.slice(0, half)), sum(values.slice(values.length - half))];
  return { label, data: points.map(({ date, value }) => ({ total: String(round(value)), date })), percentageChange: before === 0 ? 0 : round(((after - before) / before) * 100) };
}

const shareMetrics: [string, (totals: ShareTotals) => number][] = [
  ['Impressions', (totals) => totals.impressionCount],
  ['Unique impressions', (totals) => totals.uniqueImpressionsCount],
  ['Clicks', (totals) => totals.clickCount],
  ['Likes', (totals) => totals.likeCount],
  ['Comments', (totals) => totals.commentCount],
  ['Shares', (totals) => totals.shareCount],
  ['Engagement (%)', (totals) => totals.engagement * 100],
];

/**
 * Daily points of the page over the last `days` (LinkedIn keeps 12 months): followers (the current total minus the later
 * gains), new followers, and the share statistics of the page's posts.
 */
export async function pageAnalytics(context: ProviderContext, days: number): Promise<AnalyticsMetric[]> {
  const organization = urnParam(authorOf(context));
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const start = end - Math.min(days, 364) * DAY_MS;
  const intervals = `timeIntervals=(timeRange:(start:${start},end:${end}),timeGranularityType:DAY)`;
  const [followers, size, shares] = await Promise.all([
    rest(context, { path: `organizationalEntityFollowerStatistics?q=organizationalEntity&organizationalEntity=${organization}&${intervals}`, schema: followerStatsSchema }),
    rest(context, { path: `networkSizes/${organization}?edgeType=COMPANY_FOLLOWED_BY_MEMBER`, schema: z.object({ firstDegreeSize: z.number() }) }),
    rest(context, { path: `organizationalEntityShareStatistics?q=organizationalEntity&organizationalEntity=${organization}&${intervals}`, schema: shareStatsSchema }),
  ]);
  const gains = [...followers.data.elements]
    .sort((a, b) => a.timeRange.start - b.timeRange.start)
    .map((element) => ({ date: dateOf(element.timeRange.start), value: element.followerGains.organicFollowerGain + element.followerGains.paidFollowerGain }));
  let running = size.data.firstDegreeSize - gains.reduce((total, gain) => total + gain.value, 0);
  const levels = gains.map((gain) => ({ date: gain.date, value: (running += gain.value) }));
  const daily = shares.data.elements
    .filter((element) => element.timeRange)
    .sort((a, b) => a.timeRange!.start - b.timeRange!.start)
    .map((element) => ({ date: dateOf(element.timeRange!.start), totals: element.totalShareStatistics }));
  return [
    metric('Followers', levels, 'level'),
    metric('New followers', gains, 'daily'),
    ...shareMetrics.map(([label, pick]) => metric(label, daily.map(({ date, totals }) => ({ date, value: pick(totals) })), 'daily')),
  ];
}

/** Lifetime statistics of one page post; LinkedIn leaves out posts without impressions, which are zeros. Comments have none. */
export async function pagePostAnalytics(context: ProviderContext, post: PublishedRef): Promise<AnalyticsMetric[]> {
  const finder = post.id.startsWith('urn:li:ugcPost:') ? 'ugcPosts' : post.id.startsWith('urn:li:share:') ? 'shares' : undefined;
  if (!finder) return [];
  const { data } = await rest(context, {
    path: `organizationalEntityShareStatistics?q=organizationalEntity&organizationalEntity=${urnParam(authorOf(context))}&${finder}=List(${urnParam(post.id)})`,
    schema: shareStatsSchema,
  });
  const totals = data.elements[0]?.totalShareStatistics ?? shareTotalsSchema.parse({});
  return shareMetrics.map(([label, pick]) => currentMetric(label, round(pick(totals))));
}
