// The Discovery checker (test/contracts/discovery.ts) on the Business Profile APIs' vendored documents: the requests Herald
// sends fit, and what Google refuses (a field LocalPost does not have, a topic or button it does not know, a path that is no
// method, a metric that does not exist, a parameter of another method) is named. The fake answers such a request 400/404.
import { describe, expect, it } from 'vitest';
import { contractProblems } from './contract.js';
import { startGmbFake } from '../../fakes/gmb.js';

const request = (method: string, query: Record<string, string | string[]>, json?: unknown) => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) for (const item of [value].flat()) params.append(key, item);
  return { method, query: params, json, body: Buffer.from(json === undefined ? '' : JSON.stringify(json)), headers: {} };
};
const posts = '/v4/accounts/111/locations/1001/localPosts';
const event = { title: 'Open day', schedule: { startDate: { year: 2026, month: 12, day: 1 }, startTime: { hours: 9, minutes: 0 }, endDate: { year: 2026, month: 12, day: 2 }, endTime: { hours: 17, minutes: 0 } } };

describe("Google Business Profile's Discovery contracts", () => {
  it('accepts the requests Herald sends', () => {
    const offer = { summary: 'Half price', topicType: 'OFFER', event, offer: { couponCode: 'HALF', redeemOnlineUrl: 'https://example.com', termsConditions: 'Today only' }, media: [{ mediaFormat: 'PHOTO', sourceUrl: 'https://example.com/a.jpg' }] };
    expect(contractProblems('mybusiness.v4', request('POST', {}, offer), posts)).toEqual([]);
    expect(contractProblems('mybusiness.v4', request('PATCH', { updateMask: 'summary,callToAction' }, { summary: 'x', callToAction: { actionType: 'CALL' } }), `${posts}/7000`)).toEqual([]);
    expect(contractProblems('mybusiness.v4', request('GET', { pageSize: '20' }), posts)).toEqual([]);
    expect(contractProblems('mybusinessaccountmanagement.v1', request('GET', { pageSize: '20' }), '/v1/accounts')).toEqual([]);
    expect(contractProblems('mybusinessbusinessinformation.v1', request('GET', { readMask: 'name,title,storefrontAddress', pageSize: '100' }), '/v1/accounts/111/locations')).toEqual([]);
    const range = { 'dailyRange.startDate.year': '2026', 'dailyRange.startDate.month': '1', 'dailyRange.startDate.day': '1', 'dailyRange.endDate.year': '2026', 'dailyRange.endDate.month': '1', 'dailyRange.endDate.day': '31' };
    expect(contractProblems('businessprofileperformance.v1', request('GET', { dailyMetrics: ['CALL_CLICKS', 'WEBSITE_CLICKS'], ...range }), '/v1/locations/1001:fetchMultiDailyMetricsTimeSeries')).toEqual([]);
  });

  it('names what Google would refuse', () => {
    // The flat event fields some clients send are not LocalPost's: Google answers "Unknown name".
    expect(contractProblems('mybusiness.v4', request('POST', {}, { summary: 'x', topicType: 'EVENT', eventTitle: 'Open day' }), posts)).toEqual([expect.stringMatching(/body must NOT have additional properties \(eventTitle\)/)]);
    expect(contractProblems('mybusiness.v4', request('POST', {}, { summary: 'x', topicType: 'PRODUCT', callToAction: { actionType: 'BUY', url: 'https://example.com' } }), posts)).toEqual([
      expect.stringMatching(/body\/callToAction\/actionType must be equal to one of the allowed values/),
      expect.stringMatching(/body\/topicType must be equal to one of the allowed values/),
    ]);
    expect(contractProblems('mybusiness.v4', request('POST', {}, { summary: 'x', topicType: 'STANDARD' }), '/v4/locations/1001/localPosts')).toEqual([expect.stringMatching(/is not a method of/)]);
    expect(contractProblems('mybusiness.v4', request('POST', {}), posts)).toEqual([expect.stringMatching(/needs a JSON LocalPost body/)]);
    expect(contractProblems('mybusinessbusinessinformation.v1', request('GET', { read_mask: 'name' }), '/v1/accounts/111/locations')).toEqual([expect.stringMatching(/query parameter read_mask is not in the contract/)]);
    expect(contractProblems('businessprofileperformance.v1', request('GET', { dailyMetrics: 'VIEWS' }), '/v1/locations/1001:fetchMultiDailyMetricsTimeSeries')).toEqual([expect.stringMatching(/dailyMetrics must be one of .*, not "VIEWS"/)]);
  });

  it('the fake answers a request outside the contract 400 INVALID_ARGUMENT before its own checks, and records it', async () => {
    const fake = await startGmbFake();
    try {
      const wrong = await fetch(`${fake.endpoints.gmbInfo}/v1/accounts/111/locations?read_mask=name`);
      expect(wrong.status).toBe(400);
      expect((await wrong.json()).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('read_mask is not in the contract') });
      expect(fake.contractViolations).toEqual([expect.stringContaining('read_mask is not in the contract')]);
    } finally {
      await fake.close();
    }
  });
});
