// The locations a Google account manages (the picker after OAuth) and a location's performance.
// References: https://developers.google.com/my-business/reference/accountmanagement/rest/v1/accounts/list,
// https://developers.google.com/my-business/reference/businessinformation/rest/v1/accounts.locations/list (readMask
// required), https://developers.google.com/my-business/reference/performance/rest/v1/locations/fetchMultiDailyMetricsTimeSeries.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { AnalyticsMetric, ProviderContext } from '../types.js';
import { analyticsPeriod, dailyMetric, everyPage, versionedBase } from '../shared.js';
import { googleCall } from './google.js';

const accountSchema = z.object({ name: z.string(), accountName: z.string().optional() });
const addressSchema = z.object({ addressLines: z.array(z.string()).optional(), locality: z.string().optional(), postalCode: z.string().optional() });
const locationSchema = z.object({ name: z.string(), title: z.string().optional(), storefrontAddress: addressSchema.optional() });

export interface ManagedLocation {
  /** `accounts/{a}/locations/{l}`: the v4 local posts parent, and the channel's internal id. */
  id: string;
  title: string;
  address?: string;
}

/** Every page of a Google list (`nextPageToken`), 20 pages at most. */
function googleList<T>(context: ProviderContext, url: string, key: string, item: z.ZodType<T>, query: Record<string, string | number>): Promise<T[]> {
  const schema = z.object({ [key]: z.array(item).optional(), nextPageToken: z.string().optional() });
  return everyPage(20, async (pageToken) => {
    const data = (await googleCall(context, context.auth.accessToken, { url, query: { ...query, pageToken }, schema })) as { nextPageToken?: string } & Record<string, T[] | undefined>;
    return { items: data[key] ?? [], next: data.nextPageToken };
  });
}

export async function managedLocations(context: ProviderContext): Promise<ManagedLocation[]> {
  const accounts = await googleList(context, `${versionedBase(context.endpoints, 'gmbAccounts', 'accountsVersion')}/accounts`, 'accounts', accountSchema, { pageSize: 20 });
  const found = new Map<string, ManagedLocation>(); // by location name
  for (const account of accounts) {
    const url = `${versionedBase(context.endpoints, 'gmbInfo', 'businessInfoVersion')}/${account.name}/locations`;
    const locations = await googleList(context, url, 'locations', locationSchema, { readMask: 'name,title,storefrontAddress', pageSize: 100 });
    for (const location of locations) {
      // A location managed through several accounts (personal and organization) is listed once.
      if (found.has(location.name)) continue;
      const address = [location.storefrontAddress?.addressLines?.join(', '), location.storefrontAddress?.locality].filter(Boolean).join(', ');
      found.set(location.name, { id: `${account.name}/${location.name}`, title: location.title || location.name, ...(address ? { address } : {}) });
    }
  }
  return [...found.values()];
}

const METRICS: Record<string, string> = {
  BUSINESS_IMPRESSIONS_DESKTOP_MAPS: 'Impressions (desktop Maps)',
  BUSINESS_IMPRESSIONS_DESKTOP_SEARCH: 'Impressions (desktop Search)',
  BUSINESS_IMPRESSIONS_MOBILE_MAPS: 'Impressions (mobile Maps)',
  BUSINESS_IMPRESSIONS_MOBILE_SEARCH: 'Impressions (mobile Search)',
  CALL_CLICKS: 'Call clicks',
  WEBSITE_CLICKS: 'Website clicks',
  BUSINESS_DIRECTION_REQUESTS: 'Direction requests',
};

const dateSchema = z.object({ year: z.number(), month: z.number(), day: z.number() });
const seriesSchema = z.object({
  multiDailyMetricTimeSeries: z
    .array(
      z.object({
        dailyMetricTimeSeries: z
          .array(z.object({ dailyMetric: z.string(), timeSeries: z.object({ datedValues: z.array(z.object({ date: dateSchema, value: z.string().optional() })).default([]) }).optional() }))
          .default([]),
      }),
    )
    .default([]),
});

const pad = (value: number) => String(value).padStart(2, '0');

/** Daily performance of the channel's location; empty when Google has none for it (an unverified location). */
export async function locationPerformance(context: ProviderContext, days: number): Promise<AnalyticsMetric[]> {
  const location = context.auth.internalId.replace(/^accounts\/[^/]+\//, ''); // locations/{l}
  const { start, end } = analyticsPeriod(days, 540); // the API goes back 18 months
  const query = new URLSearchParams();
  for (const metric of Object.keys(METRICS)) query.append('dailyMetrics', metric);
  for (const [edge, date] of [['startDate', start], ['endDate', end]] as const) {
    query.set(`dailyRange.${edge}.year`, String(date.getUTCFullYear()));
    query.set(`dailyRange.${edge}.month`, String(date.getUTCMonth() + 1));
    query.set(`dailyRange.${edge}.day`, String(date.getUTCDate()));
  }
  const url = `${versionedBase(context.endpoints, 'gmbPerf', 'performanceVersion')}/${location}:fetchMultiDailyMetricsTimeSeries?${query}`;
  let data: z.infer<typeof seriesSchema>;
  try {
    data = await googleCall(context, context.auth.accessToken, { url, schema: seriesSchema });
  } catch (error) {
    if (error instanceof PlatformHttpError && error.status === 400 && /FAILED_PRECONDITION/.test(error.bodyExcerpt)) return [];
    throw error;
  }
  const series = data.multiDailyMetricTimeSeries.flatMap((group) => group.dailyMetricTimeSeries);
  return Object.entries(METRICS).map(([metric, label]) => {
    const values = series.find((item) => item.dailyMetric === metric)?.timeSeries?.datedValues ?? [];
    // Google leaves out `value` on a day with zero.
    return dailyMetric(label, values.map(({ date, value }) => ({ date: `${date.year}-${pad(date.month)}-${pad(date.day)}`, value: Number(value ?? 0) })));
  });
}
